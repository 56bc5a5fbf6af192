//! Thin entry point: parse the command line, run it, print an error once, exit with its code.
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Output piped into `head` ends quietly, as for other command-line tools.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = scaffold::cli::Cli::parse();
    match scaffold::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

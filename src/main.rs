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
    scaffold::signals::install();
    let cli = scaffold::cli::Cli::parse();
    match scaffold::cli::run(cli) {
        // A signal that came after a change's commit point let it finish; still say so.
        Ok(()) if scaffold::signals::interrupted() => {
            eprintln!("interrupted after the change was committed; it is complete");
            ExitCode::from(scaffold::signals::INTERRUPTED_EXIT as u8)
        }
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

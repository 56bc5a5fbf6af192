//! Thin entry point: parse the command line, run it, print an error once, exit with its code.
use std::process::ExitCode;

use clap::Parser;

/// EX_SOFTWARE (sysexits.h): a bug in scaffold itself.
const INTERNAL_ERROR: u8 = 70;

#[allow(unsafe_code)] // the SIGPIPE disposition, before any thread starts
fn main() -> ExitCode {
    // Output piped into `head` ends quietly, as for other command-line tools.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    scaffold::signals::install();
    scaffold::git::enable_fsync();
    // A bug must not reach the user as a Rust backtrace: one line, what to do, exit 70.
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error in scaffold{at}; nothing half-done stays: run the command again (it rolls back an interrupted change) and report this bug"
        );
    }));
    let cli = scaffold::cli::Cli::parse();
    let result = std::panic::catch_unwind(|| scaffold::cli::run(cli));
    let Ok(result) = result else {
        return ExitCode::from(INTERNAL_ERROR);
    };
    match result {
        // A signal after the commit point let the change finish: a success, said so.
        Ok(()) if scaffold::signals::interrupted() && scaffold::signals::committed() => {
            eprintln!("note: interrupted after the change was committed; it is complete");
            ExitCode::SUCCESS
        }
        // 130 means nothing changed.
        Ok(()) if scaffold::signals::interrupted() => {
            eprintln!("interrupted; nothing was changed");
            ExitCode::from(scaffold::signals::INTERRUPTED_EXIT as u8)
        }
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

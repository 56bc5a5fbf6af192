//! Thin entry point, wiring only: parse the command line → its settings → the command →
//! an exit code (an error printed once, as one line).
// The error line, the signal outcome and the panic line.
#![allow(clippy::print_stderr)]

use clap::Parser;
use scaffold::outcome::ExitStatus;

/// mimalloc: `new` allocates many small values (YAML nodes, JSON contexts, rendered files)
/// and glibc's malloc was a quarter of its CPU (BENCHMARKS.md, round two).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A value the command line refused (as `Error::Input`).
const BAD_INPUT: u8 = 2;

/// EX_SOFTWARE (sysexits.h): a bug in scaffold itself.
const INTERNAL_ERROR: u8 = 70;

fn main() {
    let code = run();
    exit_without_teardown(code)
}

/// Ends the process with `code` once stdout and stderr are flushed, without the teardown
/// `exit` runs: mimalloc, linked statically, hands every page of its arenas back one
/// `madvise` (and TLB flush) at a time, and libgit2 frees its caches, all of which the
/// kernel reclaims at once when the process ends (BENCHMARKS.md, round three f). Every
/// file, lock and staging is settled before: `run` has returned, its values dropped.
#[allow(unsafe_code)] // `_exit`
fn exit_without_teardown(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: ends the process; nothing after it runs, and no destructor is owed.
    unsafe { libc::_exit(libc::c_int::from(code)) }
}

/// The command line run; its exit code.
#[allow(unsafe_code)] // the SIGPIPE disposition, before any thread starts
fn run() -> u8 {
    scaffold::memory::purge_freed_pages_at_once();
    // Output piped into `head` ends quietly, as for other command-line tools.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    scaffold_core::signals::install();
    scaffold_git::git::enable_fsync();
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
    let cli = match scaffold::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // A value refused by one of cli's parsers: one line naming the flag and the fix,
        // as every other refusal (clap's own errors keep clap's form).
        Err(err) => match std::error::Error::source(&err)
            .and_then(|e| e.downcast_ref::<scaffold::cli::BadValue>())
        {
            Some(bad) => {
                eprintln!("error: {bad}");
                return BAD_INPUT;
            }
            None => err.exit(),
        },
    };
    let result = std::panic::catch_unwind(|| {
        let settings = scaffold::settings::resolve(cli)?;
        let reporter = scaffold::ui::Reporter::new(settings.verbosity);
        scaffold::commands::run(settings.command, &reporter)
    });
    let Ok(result) = result else {
        return INTERNAL_ERROR;
    };
    match result {
        // A signal after the commit point let the change finish: a success, said so.
        Ok(ExitStatus::Success)
            if scaffold_core::signals::interrupted() && scaffold_core::signals::committed() =>
        {
            eprintln!("note: interrupted after the change was committed; it is complete");
            0
        }
        // 130 means nothing changed.
        Ok(ExitStatus::Success) if scaffold_core::signals::interrupted() => {
            eprintln!("interrupted; nothing was changed");
            scaffold_core::signals::INTERRUPTED_EXIT as u8
        }
        Ok(status) => status.code(),
        Err(err) => {
            eprintln!("error: {err}");
            err.exit_code()
        }
    }
}

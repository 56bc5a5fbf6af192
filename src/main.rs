//! Thin entry point: parse the command line, run it, print an error once, exit with its code.
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = scaffold::cli::Cli::parse();
    match scaffold::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}

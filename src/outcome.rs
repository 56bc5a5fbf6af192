//! What a command that ran to its end returns, and how a fleet's results fold into one.
use crate::error::Result;
use crate::ui::Reporter;

/// How a command that ran to its end went. Findings are a result, not an error: they
/// were reported (with a one-line summary on stderr) and the run exits 1. The exit codes
/// are listed in `scaffold --help` (`cli::EXIT_CODES`); errors carry their own
/// (`Error::exit_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exit 0.
    Success,
    /// Exit 1: lint or `blueprint test` or `check` found problems, `blueprint rebase`
    /// or `update --conflicts=markers` left conflicts, `update --dry-run` of a fleet
    /// found some.
    Findings,
}

impl ExitStatus {
    /// The worst status of a fleet: the error of a repo that could not be handled (the
    /// highest exit code), else findings when any repo `found` some (said with `summary`),
    /// else success.
    pub fn of_fleet<T>(
        results: impl IntoIterator<Item = Result<T>>,
        found: bool,
        summary: &str,
        out: &Reporter,
    ) -> Result<ExitStatus> {
        let worst = results
            .into_iter()
            .filter_map(|r| r.err())
            .max_by_key(|e| e.exit_code());
        match worst {
            Some(e) => Err(e),
            None if found => {
                out.findings(summary);
                Ok(ExitStatus::Findings)
            }
            None => Ok(ExitStatus::Success),
        }
    }

    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Findings => 1,
        }
    }
}

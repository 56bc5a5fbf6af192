//! The terminal conventions every command shares, in one place: results go to stdout,
//! notes and progress to stderr (`-q` silences them, `-v` adds detail), colour only on a
//! terminal that wants it (`NO_COLOR`, `TERM=dumb` and pipes turn it off), `--json`
//! documents one per line on stdout. Commands print through a [`Reporter`] and nothing
//! else; the core below them says what it did in return values, or (for the few notes
//! that arise deep in it, such as a fetched base) through [`note`], which honours the same
//! verbosity. The verbosity is set once from the command line, before any command runs.
// The one writer of stdout and stderr for commands.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use std::io::{IsTerminal, Write};

pub use crate::notes::{Verbosity, detail, note, set_verbosity, verbosity};

/// Whether stdout may carry colour: a terminal, `NO_COLOR` unset, `TERM` not `dumb`.
pub fn stdout_colored() -> bool {
    std::io::stdout().is_terminal() && wants_color()
}

/// Whether a terminal should be drawn in colour (the prompt theme asks this of stderr).
pub fn wants_color() -> bool {
    scaffold_support::process_env::snapshot().wants_color()
}

/// What a command prints, and where: the one writer of stdout and stderr for commands.
/// Copy: a fleet's workers and the edit session share it.
#[derive(Debug, Clone, Copy)]
pub struct Reporter {
    verbosity: Verbosity,
    colour: bool,
}

impl Reporter {
    /// The reporter for this run; sets the verbosity [`note`] and [`detail`] follow too.
    pub fn new(verbosity: Verbosity) -> Self {
        set_verbosity(verbosity);
        Reporter {
            verbosity,
            colour: stdout_colored(),
        }
    }

    pub fn verbosity(&self) -> Verbosity {
        self.verbosity
    }

    /// Whether stdout carries colour (one policy: a terminal, `NO_COLOR` unset, `TERM`
    /// not `dumb`).
    pub fn colour(&self) -> bool {
        self.colour
    }

    /// A result line on stdout (never silenced: `-q` keeps results).
    pub fn line(&self, text: impl std::fmt::Display) {
        println!("{text}");
    }

    /// Result text on stdout as it is (it carries its own newlines).
    pub fn text(&self, text: &str) {
        print!("{text}");
    }

    /// Bytes on stdout as they are (a stored file, a manual page).
    pub fn bytes(&self, bytes: &[u8]) -> crate::error::Result<()> {
        std::io::stdout()
            .write_all(bytes)
            .map_err(|e| crate::error::Error::io("write to stdout", e))
    }

    /// One `--json` document on stdout.
    pub fn json<T: serde::Serialize>(&self, value: &T) {
        println!("{}", crate::report::to_json(value));
    }

    /// A unified diff on stdout, coloured by kind when stdout takes colour.
    pub fn diff(&self, diff: &str) {
        if self.colour {
            print!("{}", color_diff(diff));
        } else {
            print!("{diff}");
        }
    }

    /// A note or progress line on stderr; `-q` silences it.
    pub fn note(&self, message: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Normal {
            eprintln!("{message}");
        }
    }

    /// Detail on stderr that only `-v` shows.
    pub fn detail(&self, message: impl std::fmt::Display) {
        if self.verbosity >= Verbosity::Verbose {
            eprintln!("{message}");
        }
    }

    /// What a refusal or a finding's summary points at (conflict hunks, lint findings
    /// beside a JSON report): stderr, kept under `-q` as the error it explains is.
    pub fn problem(&self, text: impl std::fmt::Display) {
        eprintln!("{text}");
    }

    /// Like [`Reporter::problem`], the text carrying its own newlines.
    pub fn problem_text(&self, text: &str) {
        eprint!("{text}");
    }

    /// The one-line summary of findings that end the run with exit 1, said as an error
    /// is (`error: …` on stderr) though it is a result, not a failure.
    pub fn findings(&self, summary: impl std::fmt::Display) {
        eprintln!("error: {summary}");
    }
}

/// A unified diff with additions green, removals red and hunk headers cyan.
pub fn color_diff(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let code = if body.starts_with("+++") || body.starts_with("---") {
            "1"
        } else if body.starts_with('+') {
            "32"
        } else if body.starts_with('-') {
            "31"
        } else if body.starts_with("@@") {
            "36"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&format!("\x1b[{code}m{body}\x1b[0m{newline}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::color_diff;

    #[test]
    fn diff_lines_are_coloured_by_kind() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same\n";
        assert_eq!(
            color_diff(diff),
            "\x1b[1m--- a/x\x1b[0m\n\x1b[1m+++ b/x\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n same\n"
        );
    }
}

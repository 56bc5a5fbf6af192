//! The top-level error: one line naming the field or file and the fix, plus an exit code.
use thiserror::Error;

/// Exit codes: 1 findings (lint, test), 2 bad input or usage, 3 refused to protect existing data, 4 IO or git failure,
/// 5 a blueprint that does not render (a bug in the blueprint, not in the answers).
#[derive(Debug, Error)]
pub enum Error {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Refused(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("git: {0}")]
    Git(String),
    #[error("blueprint {0}")]
    Blueprint(String),
    /// A blueprint bug at a place in one of its files (a template, the manifest, an entry).
    #[error("blueprint {0}")]
    Located(Located),
    /// Findings were printed (lint, test); this is their summary.
    #[error("{0}")]
    Findings(String),
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_) => 2,
            Error::Refused(_) => 3,
            Error::Io { .. } | Error::Git(_) => 4,
            Error::Blueprint(_) | Error::Located(_) => 5,
            Error::Findings(_) => 1,
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    pub fn io_path(verb: &str, path: &std::path::Path, source: std::io::Error) -> Self {
        Error::io(format!("cannot {verb} `{}`", path.display()), source)
    }
}

impl From<git2::Error> for Error {
    fn from(err: git2::Error) -> Self {
        Error::Git(err.message().to_string())
    }
}

/// Where a blueprint is wrong: a blueprint-relative file, 1-based line and column, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Located {
    pub fn new(
        file: impl Into<String>,
        (line, column): (usize, usize),
        message: impl Into<String>,
    ) -> Self {
        Located {
            file: file.into(),
            line,
            column,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Located {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl From<Located> for Error {
    fn from(located: Located) -> Self {
        Error::Located(located)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

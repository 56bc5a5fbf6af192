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
            Error::Blueprint(_) => 5,
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

pub type Result<T> = std::result::Result<T, Error>;

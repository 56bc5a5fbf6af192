//! The top-level error: one line naming the field or file and the fix, plus an exit code.
use thiserror::Error;

/// Exit codes (findings, exit 1, are a result: `commands::ExitStatus`): 2 bad input or usage, 3 refused to protect existing data
/// (including a repository in the middle of a merge, rebase, …), 4 IO or git failure, 5 a blueprint
/// that does not render (a bug in the blueprint, not in the answers), 130 interrupted.
#[derive(Debug, Error)]
pub enum Error {
    #[error("{0}")]
    Input(Problem),
    #[error("{0}")]
    Refused(Problem),
    #[error("{context}: {source}{}", io_hint(source))]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A git operation failed; the message names the operation, the repo and, where the
    /// cause is known, the command that fixes it.
    #[error("git: cannot {op} in `{}`: {}", path.display(), explain(source))]
    Git {
        op: String,
        path: std::path::PathBuf,
        #[source]
        source: git2::Error,
    },
    /// The repository is in a state scaffold must not change (merge in progress, lock, …).
    #[error("{0}")]
    RepoState(Problem),
    /// The change failed and undoing it failed too: the cause is what to fix (and decides
    /// the exit code); the journal stays, and the next run finishes the rollback.
    #[error("{cause}; the rollback stopped too ({undo}): `{}` stays, and the next scaffold command in this repo finishes the rollback once that is fixed", journal.display())]
    Unfinished {
        cause: Box<Error>,
        undo: Box<Error>,
        journal: std::path::PathBuf,
    },
    /// SIGINT or SIGTERM stopped the run before its commit point; everything was restored.
    #[error("interrupted; {0}")]
    Interrupted(String),
    #[error("blueprint {0}")]
    Blueprint(Problem),
    /// A blueprint bug at a place in one of its files (a template, the manifest, an entry).
    #[error("blueprint {0}")]
    Located(Located),
    /// Several independent blueprint bugs found in one pass (a manifest's entries), each
    /// at its place: lint reports every one, not the first only.
    #[error("{}", .0.iter().map(|at| format!("blueprint {at}")).collect::<Vec<_>>().join("\n"))]
    LocatedMany(Vec<Located>),
}

impl Error {
    /// The answer (question key) a bad-input error is about, when it says.
    pub fn answer_key(&self) -> Option<&str> {
        match self {
            Error::Input(problem) => problem.key.as_deref(),
            _ => None,
        }
    }

    /// The blueprint bugs at `places` (at least one) as one error.
    pub fn located_all(mut places: Vec<Located>) -> Error {
        match places.len() {
            1 => Error::Located(places.remove(0)),
            _ => Error::LocatedMany(places),
        }
    }

    /// Bad input (a flag, an answer, a `--values` file): exit 2.
    pub fn input(problem: impl Into<Problem>) -> Error {
        Error::Input(problem.into())
    }

    /// Refused to protect the user's data: exit 3.
    pub fn refused(problem: impl Into<Problem>) -> Error {
        Error::Refused(problem.into())
    }

    /// The repository is in a state scaffold must not change: exit 3.
    pub fn repo_state(problem: impl Into<Problem>) -> Error {
        Error::RepoState(problem.into())
    }

    /// A blueprint that does not load or render: exit 5.
    pub fn blueprint(problem: impl Into<Problem>) -> Error {
        Error::Blueprint(problem.into())
    }

    /// What fixes it, when the error knows.
    pub fn fix(&self) -> Option<&str> {
        match self {
            Error::Input(p) | Error::Refused(p) | Error::RepoState(p) | Error::Blueprint(p) => {
                p.fix.as_deref()
            }
            _ => None,
        }
    }

    /// A libgit2 call that failed: what scaffold was doing, in which repository.
    pub fn git(op: &str, dir: &std::path::Path, source: git2::Error) -> Error {
        Error::Git {
            op: op.to_string(),
            path: dir.to_path_buf(),
            source,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Input(_) => 2,
            Error::Refused(_) | Error::RepoState(_) => 3,
            Error::Io { .. } | Error::Git { .. } => 4,
            Error::Interrupted(_) => 130,
            Error::Unfinished { cause, .. } => cause.exit_code(),
            Error::Blueprint(_) | Error::Located(_) | Error::LocatedMany(_) => 5,
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

/// The fix an IO failure's cause points to, when it points to one.
fn io_hint(source: &std::io::Error) -> &'static str {
    match source.raw_os_error() {
        // EPERM on a file root may write: an immutable or append-only attribute.
        Some(libc::EPERM) => {
            " (check the file's attributes with `lsattr`: an immutable file needs `chattr -i`)"
        }
        Some(libc::EACCES) => " (check the permissions of the file and its directory)",
        Some(libc::EROFS) => " (the filesystem is read-only)",
        Some(libc::ENOSPC) => " (the disk is full: free space, then run the command again)",
        _ => "",
    }
}

impl From<git2::Error> for Error {
    fn from(source: git2::Error) -> Self {
        Error::Git {
            op: "complete a git operation".into(),
            path: std::path::PathBuf::from("."),
            source,
        }
    }
}

/// What went wrong and, apart from it, what fixes it. An error prints as one line,
/// `what; fix`; a report can give the fix as data (a fleet's `--json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub what: String,
    pub fix: Option<String>,
    /// The answer (question key) it is about, when it is about one: what a `blueprint
    /// test` case's `expect_error: {key: …}` pins.
    pub key: Option<String>,
}

impl Problem {
    pub fn new(what: impl Into<String>) -> Problem {
        Problem {
            what: what.into(),
            fix: None,
            key: None,
        }
    }

    /// Says which answer it is about.
    pub fn about(mut self, key: impl Into<String>) -> Problem {
        self.key = Some(key.into());
        self
    }

    pub fn fix(mut self, fix: impl Into<String>) -> Problem {
        self.fix = Some(fix.into());
        self
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.fix {
            Some(fix) => write!(f, "{}; {fix}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl From<String> for Problem {
    fn from(what: String) -> Problem {
        Problem::new(what)
    }
}

impl From<&str> for Problem {
    fn from(what: &str) -> Problem {
        Problem::new(what)
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

/// libgit2's message plus what to do about the common causes.
fn explain(source: &git2::Error) -> String {
    use git2::ErrorCode;
    let fix = match source.code() {
        ErrorCode::Locked => {
            "another git command holds a lock; wait for it, or remove the stale .git/*.lock file if no git is running"
        }
        ErrorCode::NotFound => {
            "the repository or an object is missing; check the path and run `git fsck`"
        }
        ErrorCode::Unmerged | ErrorCode::Conflict | ErrorCode::MergeConflict => {
            "the index has conflicts; resolve them and commit, or abort the merge (`git merge --abort`)"
        }
        ErrorCode::Modified => "the branch moved while scaffold ran; run the command again",
        ErrorCode::UnbornBranch => {
            "the branch has no commit yet; commit once, then run scaffold again"
        }
        _ => match source.class() {
            git2::ErrorClass::Os => "check the permissions and free space of the repository",
            git2::ErrorClass::Odb | git2::ErrorClass::Object => {
                "the object database looks damaged; run `git fsck`"
            }
            _ => "run `git status` to see the repository's state",
        },
    };
    format!("{}; {fix}", source.message())
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unfinished_rollback_is_one_line_with_its_cause_and_code() {
        let cause = Error::repo_state(Problem::new("the branch moved").fix("run it again"));
        let undo = Error::io("cannot write `a`", std::io::Error::other("disk full"));
        let error = Error::Unfinished {
            cause: Box::new(cause),
            undo: Box::new(undo),
            journal: std::path::PathBuf::from(".git/scaffold-journal"),
        };
        let line = error.to_string();
        assert_eq!(error.exit_code(), 3);
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("the branch moved; run it again; the rollback stopped too (cannot write `a`: disk full): `.git/scaffold-journal` stays"),
            "{line}"
        );
    }
}

//! One findings type for every command that judges something (`check`, and in time
//! `blueprint lint`/`blueprint test`): a rule id, a severity, where, what, and how to fix it.
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Will break the platform (or is forbidden): exit code 1.
    Error,
    /// Worth a look; does not change the exit code.
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A finding at a place in a file (paths are relative to the checked directory, `/`-separated).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub rule: &'static str,
    pub severity: Severity,
    pub file: String,
    /// 1-based; 0 when the finding concerns the whole file.
    pub line: usize,
    /// 1-based; 0 when unknown.
    pub column: usize,
    pub message: String,
    pub hint: String,
    /// The environment (cluster) whose files or build the finding is about, in a repo of
    /// several; several names, comma-separated, for a shared file found wanting in some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl Diagnostic {
    /// `FILE:LINE[:COL]` as editors and terminals link it.
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (0, _) => self.file.clone(),
            (line, 0) => format!("{}:{line}", self.file),
            (line, column) => format!("{}:{line}:{column}", self.file),
        }
    }
}

//! One findings type for every command that judges something (`check`, `blueprint lint`,
//! `blueprint test`): a rule id, a severity, where, what, and how to fix it. Its JSON is the
//! `Finding` of docs/json.md.
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
    pub fn new(
        rule: &'static str,
        severity: Severity,
        file: impl Into<String>,
        (line, column): (usize, usize),
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            rule,
            severity,
            file: file.into(),
            line,
            column,
            message: message.into(),
            hint: String::new(),
            environment: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Orders findings as they are reported: by file, line, column, then errors first.
    pub fn sort_key(&self) -> (&str, usize, usize, Severity, &str) {
        (
            &self.file,
            self.line,
            self.column,
            self.severity,
            &self.message,
        )
    }

    /// `FILE:LINE[:COL]: [RULE] MESSAGE`, one line among others (`blueprint test`'s FAIL).
    pub fn with_rule(&self) -> String {
        format!("{}: [{}] {}", self.location(), self.rule, self.message)
    }

    /// `FILE:LINE[:COL]` as editors and terminals link it.
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (0, _) => self.file.clone(),
            (line, 0) => format!("{}:{line}", self.file),
            (line, column) => format!("{}:{line}:{column}", self.file),
        }
    }
}

/// `FILE:LINE:COL: SEVERITY: MESSAGE`, as compilers print a finding (`blueprint lint`).
impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}: {}",
            self.location(),
            self.severity.as_str(),
            self.message
        )
    }
}

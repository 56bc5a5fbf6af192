//! The values a template works on, and why one does not render: shared by the parser and
//! the evaluator (`eval`), and by `kops`, which marks Terraform outputs [`UNKNOWN`].
use serde_json::Value as Json;

/// A value: JSON, or one only known once Terraform has run.
#[derive(Debug, Clone)]
pub enum V {
    J(Json),
    Unknown,
}

/// Marks a value only known once Terraform has run (a string in the data given to
/// `render`); the engine treats it as [`V::Unknown`].
pub const UNKNOWN: &str = "\u{0}tf-output";

/// Why a template does not render, at the line of the action.
#[derive(Debug, Clone)]
pub struct RenderError {
    pub line: usize,
    pub message: String,
}

/// The variables in scope (`$`, `$x`), innermost last.
pub type Vars = Vec<(String, V)>;

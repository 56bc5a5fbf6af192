//! The leaves every layer stands on: errors and diagnostics, the one YAML layer, JSON and
//! its merges, the file tree a plan is (`tree`), what git accepts as a path (`git_paths`),
//! three-way text merges, fleets over the cores (`parallel`), notes to stderr, suggestions.
//! Nothing of scaffold's own above it.
#![deny(clippy::unwrap_used)]

pub mod diagnostic;
pub mod error;
pub mod git_paths;
pub mod json;
pub mod json_merge;
pub mod merge;
pub mod names;
pub mod notes;
pub mod parallel;
pub mod pattern;
pub mod process_env;
pub mod suggest;
pub mod tree;
pub mod version;
pub mod yaml;

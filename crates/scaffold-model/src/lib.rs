//! The pure model: blueprints and their catalogs, answers, rendering and the plan (answers
//! → the files in memory). No git, no writing, no terminal.

pub mod answers;
pub mod blueprint;
pub mod catalog;
pub mod generate;
pub mod helm_values;
pub mod manifest;
pub mod overrides;
pub mod plan;
pub mod prebuilt;
pub mod record;
pub mod render;
pub mod scope;

// The layers below, by the names this crate's code uses for them.
use scaffold_check as check;
use scaffold_support::{
    error, git_paths, json, json_merge, parallel, pattern, process_env, suggest, tree, version,
    yaml,
};

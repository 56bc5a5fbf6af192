//! Git as scaffold writes it: objects and packs, commits with the repo's identity, signing,
//! hooks and attributes, the pristine base under `refs/scaffold/base`, the repo lock and
//! linked work trees. It knows files and paths, never a blueprint.

pub mod attributes;
pub mod deflate;
pub mod durability;
pub mod git;
pub mod git_state;
pub mod hooks;
pub mod identity;
pub mod lock;
pub mod pack;
pub mod pristine;
pub mod seams;
pub mod snapshot;
pub mod worktree;

// The layers below, by the names this crate's code uses for them.
use scaffold_support::{error, notes, process_env, tree};

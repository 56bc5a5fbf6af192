//! Editing a repo: opening a scaffold repo, the transaction that changes its work tree,
//! index and commit, writing a new repo, update, promotion, environments' addons and the
//! rendered diff. Commands in the binary crate are short scripts over these.

pub mod addon_envs;
pub mod diff;
pub mod edit;
pub mod environments;
pub mod flags;
pub mod migrate;
pub mod promotion;
pub mod publish;
pub mod relocate;
pub mod repo;
pub mod signals;
pub mod transaction;
pub mod update;
pub mod write;

// The layers below, by the names this crate's code uses for them.
use scaffold_check as check;
use scaffold_git::{
    attributes, git, git_state, hooks, identity, lock, pack, pristine, snapshot, worktree,
};
use scaffold_model::{answers, blueprint, catalog, generate, manifest, plan, record, render};
use scaffold_support::{
    error, json, json_merge, merge, notes, parallel, process_env, suggest, tree, version, yaml,
};

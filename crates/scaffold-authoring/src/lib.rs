//! What a blueprint author runs: lint (every mistake at its line, before a repo is
//! written), `blueprint test` and `blueprint rebase`.

pub mod blueprint_test;
pub mod lint;
pub mod rebase;

// The layers below, by the names this crate's code uses for them.
use scaffold_check as check;
use scaffold_git::attributes;
use scaffold_model::{
    answers, blueprint, catalog, generate, manifest, overrides, plan, record, render,
};
use scaffold_support::{diagnostic, error, pattern, suggest, tree, version, yaml};

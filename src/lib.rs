//! scaffold: generate and grow GitOps platform repositories from blueprints.
//!
//! This crate is the face: the command line (`cli`, clap only), each command's settings
//! (`settings`), the commands as short scripts over the layers below (`commands`, with the
//! edit pipeline they share in `edit_session`), the typed `--json` reports (`report`) and
//! the terminal (`ui::Reporter`, `prompt`), and when freed memory goes back (`memory`). The
//! layers below are crates (docs/architecture.md, "The workspace"): scaffold-core (editing
//! a repo), scaffold-authoring (lint, test, rebase), scaffold-model (blueprints, answers,
//! rendering), scaffold-git, scaffold-check and scaffold-support.
#![deny(clippy::unwrap_used)]

pub mod cli;
pub mod commands;
pub mod edit_session;
pub mod memory;
pub mod outcome;
pub mod prompt;
pub mod report;
pub mod settings;
pub mod ui;

// The layers below, by the names the face's code uses for them.
use scaffold_authoring::{blueprint_test, lint, rebase};
use scaffold_check as check;
use scaffold_core::{
    addon_envs, diff, edit, environments, flags, promotion, publish, repo, signals, transaction,
    update, write,
};
use scaffold_git::{git, hooks, identity, lock, pristine, snapshot, worktree};
use scaffold_model::{
    answers, blueprint, catalog, generate, helm_values, manifest, overrides, plan, record, render,
};
use scaffold_support::{
    diagnostic, error, git_paths, json, merge, names, notes, parallel, process_env, suggest,
    version, yaml,
};

//! scaffold: generate and grow GitOps platform repositories from blueprints.
//!
//! Data flows one way: answers → plan (rendered in memory) → write (staged, then renamed)
//! → commit. The core (`answers`, `catalog`, `render`, `plan`, `generate`, `merge`, `edit`,
//! `relocate`, `blueprint_test`) is pure; files are read by `blueprint`, `lint`, `repo` (a
//! scaffold repo: record, base, rendering), `update` and `flags` (`--values` files), written
//! only by `write`, `git` and `pristine` (the base under `refs/scaffold/base`); the terminal
//! belongs to `commands` and `prompt`. `parallel` spreads fleets of repos and a repo's
//! environments over the cores; `check` judges a repo (one environment at a time).
#![deny(clippy::unwrap_used)]

pub mod answers;
pub(crate) mod attributes;
pub mod blueprint;
pub(crate) mod blueprint_test;
pub(crate) mod catalog;
pub mod check;
pub mod cli;
pub mod commands;
pub mod diagnostic;
pub(crate) mod edit;
pub mod error;
pub mod flags;
pub mod generate;
pub mod git;
pub(crate) mod git_paths;
pub(crate) mod git_state;
pub(crate) mod helm_values;
pub(crate) mod identity;
pub(crate) mod lint;
pub(crate) mod lock;
pub(crate) mod manifest;
pub(crate) mod merge;
pub(crate) mod migrate;
pub(crate) mod overrides;
pub(crate) mod pack;
pub(crate) mod parallel;
pub mod plan;
pub(crate) mod pristine;
pub(crate) mod prompt;
pub mod record;
pub(crate) mod references;
pub(crate) mod relocate;
pub mod render;
pub(crate) mod repo;
pub(crate) mod report;
pub(crate) mod scope;
pub mod signals;
pub(crate) mod transaction;
pub(crate) mod ui;
pub(crate) mod update;
pub(crate) mod version;
pub mod write;
pub(crate) mod yaml;

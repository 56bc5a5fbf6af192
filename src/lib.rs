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
pub mod attributes;
pub mod blueprint;
pub mod blueprint_test;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod commands;
pub mod diagnostic;
pub mod edit;
pub mod error;
pub mod flags;
pub mod generate;
pub mod git;
pub mod git_paths;
pub mod git_state;
pub mod helm_values;
pub mod identity;
pub mod lint;
pub mod locate;
pub mod lock;
pub mod manifest;
pub mod merge;
pub mod migrate;
pub mod overrides;
pub mod pack;
pub mod parallel;
pub mod plan;
pub mod pristine;
pub mod prompt;
pub mod record;
pub mod references;
pub mod relocate;
pub mod render;
pub mod repo;
pub mod report;
pub mod scope;
pub mod signals;
pub mod transaction;
pub mod ui;
pub mod update;
pub mod version;
pub mod write;

//! scaffold: generate and grow GitOps platform repositories from blueprints.
//!
//! Data flows one way: answers → plan (rendered in memory) → write (staged, then renamed)
//! or a transaction (an existing repo) → commit. docs/architecture.md is the map; in short:
//! - leaves: `tree` (`Plan`, `RelPath`, `FileTree`), `suggest`, `json`, `diagnostic`,
//!   `error`, `git_paths` (what git refuses, branch names included), `deflate` (zlib
//!   streams for the pack);
//! - the pure core: `answers`, `manifest`, `scope`, `catalog`, `overrides`, `render`,
//!   `plan`, `generate`, `merge`, `edit`, `helm_values`, `json_merge`, `version`,
//!   `blueprint_test`; it
//!   never imports git or writing code (`scripts/module-graph` checks that, and that the
//!   module graph has no cycle);
//! - reading: `blueprint` (and its sources), `lint`, `flags` (`--values`), `record`, `repo`
//!   (a scaffold repo: record, base, rendering), `update`, `relocate`, `check` (judges a
//!   repo, one environment at a time);
//! - writing: `write` (new repos, staged), `transaction` (existing repos: journal, work
//!   tree, index, commit), `git` and `pack` (objects and refs), `pristine` (the base under
//!   `refs/scaffold/base`), `attributes`, `identity`, `lock`, `git_state`, `signals`;
//! - the command line: `cli` (clap only), `settings` (each command's options), `commands`
//!   (one pipeline each, over the core: `edit_session`, `addon_envs`, `promotion`); the terminal belongs
//!   to `ui::Reporter` and `prompt`; `parallel` spreads fleets of repos and a repo's
//!   environments over the cores.
#![deny(clippy::unwrap_used)]

pub(crate) mod addon_envs;
pub mod answers;
pub(crate) mod attributes;
pub mod blueprint;
pub(crate) mod blueprint_test;
pub(crate) mod catalog;
pub mod check;
pub mod cli;
pub mod commands;
pub(crate) mod deflate;
pub mod diagnostic;
pub mod diff;
pub(crate) mod edit;
pub(crate) mod edit_session;
pub mod error;
pub mod flags;
pub mod generate;
pub mod git;
pub(crate) mod git_paths;
pub(crate) mod git_state;
pub(crate) mod helm_values;
pub(crate) mod hooks;
pub(crate) mod identity;
pub(crate) mod json;
pub(crate) mod json_merge;
pub(crate) mod lint;
pub(crate) mod lock;
pub(crate) mod manifest;
pub(crate) mod merge;
pub(crate) mod migrate;
pub mod notes;
pub(crate) mod overrides;
pub(crate) mod pack;
pub(crate) mod parallel;
pub(crate) mod pattern;
pub mod plan;
pub(crate) mod prebuilt;
pub(crate) mod pristine;
pub(crate) mod promotion;
pub(crate) mod prompt;
pub(crate) mod rebase;
pub mod record;
pub(crate) mod relocate;
pub mod render;
pub(crate) mod repo;
pub(crate) mod report;
pub(crate) mod scope;
pub mod settings;
pub mod signals;
pub(crate) mod suggest;
pub(crate) mod transaction;
pub(crate) mod tree;
pub mod ui;
pub(crate) mod update;
pub(crate) mod version;
pub mod worktree;
pub mod write;
pub(crate) mod yaml;

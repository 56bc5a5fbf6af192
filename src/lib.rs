//! scaffold: generate and grow GitOps platform repositories from blueprints.
//!
//! Data flows one way: answers → plan (rendered in memory) → write (staged, then renamed)
//! → commit. The core (`answers`, `catalog`, `render`, `plan`, `generate`, `merge`, `edit`,
//! `blueprint_test`) is pure; files are read by `blueprint` and `lint`, written only by
//! `write` and `git`; the terminal belongs to `commands` and `prompt`.
#![deny(clippy::unwrap_used)]

pub mod answers;
pub mod blueprint;
pub mod blueprint_test;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod commands;
pub mod diagnostic;
pub mod edit;
pub mod error;
pub mod generate;
pub mod git;
pub mod lint;
pub mod manifest;
pub mod merge;
pub mod plan;
pub mod prompt;
pub mod record;
pub mod render;
pub mod write;

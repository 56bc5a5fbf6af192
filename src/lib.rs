//! scaffold: generate and grow GitOps platform repositories from blueprints.
//!
//! Data flows one way: answers → plan (rendered in memory) → write (staged, then renamed)
//! → commit. Only `write`, `git` and `cli` touch the filesystem or the terminal.
#![deny(clippy::unwrap_used)]

pub mod answers;
pub mod blueprint;
pub mod blueprint_test;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod edit;
pub mod error;
pub mod generate;
pub mod git;
pub mod lint;
pub mod merge;
pub mod plan;
pub mod prompt;
pub mod record;
pub mod render;
pub mod write;

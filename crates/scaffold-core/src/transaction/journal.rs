//! The journal of a change to a repo: what it will do and the saved copies of what it
//! replaces, written before the first file changes so a kill can be rolled back or
//! forward (`recovery`).
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub(super) const JOURNAL: &str = "scaffold-transaction";

/// What the journal saves: enough to undo the work tree, and to tell rolled-back from
/// committed. Kept as JSON in `.git/scaffold-transaction/journal.json`.
#[derive(Serialize, Deserialize)]
pub(super) struct Journal {
    pub(super) pid: u32,
    pub(super) branch: String,
    pub(super) old_head: String,
    pub(super) tree: String,
    /// The pristine base the change publishes with it (`pristine::BASE_REF` moves from
    /// `base_old` to `base_new`); absent when the base does not change.
    #[serde(default)]
    pub(super) base_old: Option<String>,
    #[serde(default)]
    pub(super) base_new: Option<String>,
    pub(super) files: Vec<Saved>,
    /// Directories the run created, outermost first.
    pub(super) created_dirs: Vec<String>,
}

#[derive(Serialize, Deserialize)]
pub(super) struct Saved {
    pub(super) path: String,
    /// The file's permission bits before the run; None when it did not exist.
    pub(super) mode: Option<u32>,
}

/// Renames the journal out of the way first, so a kill while deleting it never leaves a
/// journal that looks complete but is not; the next run deletes what is left.
pub(super) fn remove_journal(dir: &Path) {
    let done = dir.with_extension(format!("done-{}", std::process::id()));
    if fs::rename(dir, &done).is_ok() {
        let _ = fs::remove_dir_all(&done);
    }
}

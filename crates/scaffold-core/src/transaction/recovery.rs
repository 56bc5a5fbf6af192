//! Undoing a change (on failure, on a signal, or after a SIGKILL on the next run) and
//! finishing one whose commit point had passed.
use std::fs;
use std::path::Path;

use git2::{Oid, Repository};

use super::journal::{JOURNAL, Journal, remove_journal};
use super::work_tree::{permissions, remove_file, set_mode, update_index};
use crate::error::{Error, Problem, Result};
use crate::lock::process_alive;
use crate::pristine;
use crate::signals;

/// What settling an interrupted run did; the caller says it (a note on stderr).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// The run (this pid) stopped before its commit point: undone.
    RolledBack { pid: u32 },
    /// The run (this pid) stopped after its commit point: finished.
    Finished { pid: u32 },
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovered::RolledBack { pid } => write!(
                f,
                "note: rolled back a scaffold run that was interrupted (pid {pid}); the repo is at its last commit"
            ),
            Recovered::Finished { pid } => write!(
                f,
                "note: finished a scaffold run that was interrupted after its commit (pid {pid})"
            ),
        }
    }
}

/// Settles what an interrupted run left under `.git/`, and returns what it did (None:
/// nothing was left).
pub(super) fn recover(repo: &Repository, root: &Path) -> Result<Option<Recovered>> {
    remove_stale_drafts(repo);
    let dir = repo.path().join(JOURNAL);
    let text = match fs::read(dir.join("journal.json")) {
        Ok(text) => text,
        Err(_) if dir.exists() => {
            let _ = fs::remove_dir_all(&dir);
            return Ok(None);
        }
        Err(_) => return Ok(None),
    };
    let journal: Journal = serde_json::from_slice(&text).map_err(|e| {
        Error::repo_state(
            Problem::new(format!("`{}` is damaged ({e})", dir.display())).fix(
                "restore the files with `git status`/`git restore`, then remove that directory",
            ),
        )
    })?;
    if journal.pid != std::process::id() && process_alive(journal.pid) {
        let what = format!(
            "another scaffold run (pid {}) is changing this repo",
            journal.pid
        );
        let fix = format!(
            "wait for it to finish (if it is gone, remove `{}`)",
            dir.display()
        );
        return Err(Error::repo_state(Problem::new(what).fix(fix)));
    }
    let _guard = signals::TransactionGuard::enter();
    // Locks the dead run held: the base ref's (only scaffold writes that ref), and the
    // branch's when it was taken after the journal was written (by that run's commit).
    let _ = fs::remove_file(repo.path().join(format!("{}.lock", pristine::BASE_REF)));
    let branch_lock = repo.path().join(format!("{}.lock", journal.branch));
    let modified = |path: &Path| fs::metadata(path).and_then(|m| m.modified()).ok();
    // The same for the index's lock: a run killed while it wrote the index leaves it.
    let index_lock = repo.path().join("index.lock");
    for lock in [&branch_lock, &index_lock] {
        if let (Some(taken), Some(started)) = (modified(lock), modified(&dir.join("journal.json")))
            && taken >= started
        {
            let _ = fs::remove_file(lock);
        }
    }
    let (head, tree) = head_and_tree(repo, &journal)?;
    if head == journal.old_head {
        rollback(repo, root, &journal, &dir)?;
        Ok(Some(Recovered::RolledBack { pid: journal.pid }))
    } else if tree.as_deref() == Some(journal.tree.as_str()) {
        roll_forward(repo, root, &journal, &dir)?;
        Ok(Some(Recovered::Finished { pid: journal.pid }))
    } else {
        Err(Error::repo_state(
            Problem::new(format!(
                "an interrupted scaffold run left `{}`, and {} has moved since",
                dir.display(),
                journal.branch
            ))
            .fix("check `git status`, restore what you need, then remove that directory"),
        ))
    }
}

/// The branch's commit, and its tree when its parent is the journal's old head.
fn head_and_tree(repo: &Repository, journal: &Journal) -> Result<(String, Option<String>)> {
    let workdir = repo.path();
    let commit = repo
        .find_reference(&journal.branch)
        .and_then(|r| r.peel_to_commit())
        .map_err(|e| Error::git("read the branch", workdir, e))?;
    let from_old = commit
        .parent_id(0)
        .is_ok_and(|p| p.to_string() == journal.old_head);
    Ok((
        commit.id().to_string(),
        from_old.then(|| commit.tree_id().to_string()),
    ))
}

/// Restores every saved file, removes the files and directories the run created, puts
/// the branch and the index back, and drops the journal.
pub(super) fn rollback(
    repo: &Repository,
    root: &Path,
    journal: &Journal,
    dir: &Path,
) -> Result<()> {
    let (head, tree) = head_and_tree(repo, journal)?;
    if head != journal.old_head && tree.as_deref() == Some(journal.tree.as_str()) {
        let old =
            Oid::from_str(&journal.old_head).map_err(|e| Error::git("read the journal", dir, e))?;
        let new = Oid::from_str(&head).map_err(|e| Error::git("read the journal", dir, e))?;
        repo.reference_matching(&journal.branch, old, true, new, "scaffold: roll back")
            .map_err(|e| Error::git("move the branch back", root, e))?;
    }
    for (n, saved) in journal.files.iter().enumerate() {
        let full = root.join(&saved.path);
        match saved.mode {
            Some(mode) => {
                // Renamed, not copied: a full disk cannot stop the restore. A missing copy
                // was already put back by an earlier, interrupted rollback.
                let old = dir.join(format!("old-{n}"));
                if !old.exists() {
                    continue;
                }
                // Never written (the run stopped before it): nothing to put back, and a file
                // scaffold cannot write (immutable, read-only) must not block the rollback.
                if unchanged(&old, &full, mode) {
                    let _ = fs::remove_file(&old);
                    continue;
                }
                set_mode(&old, mode)?;
                if let Some(parent) = full.parent() {
                    fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
                }
                fs::rename(&old, &full)
                    .or_else(|_| fs::copy(&old, &full).map(|_| ()))
                    .map_err(|e| Error::io_path("restore", &full, e))?;
            }
            None => remove_file(root, &full)?,
        }
    }
    for created in journal.created_dirs.iter().rev() {
        let _ = fs::remove_dir(root.join(created));
    }
    if let Some(next) = next_base(journal, dir)? {
        pristine::unpublish(repo, root, &next)?;
    }
    let saved_index = dir.join("index");
    if saved_index.exists() {
        let target = repo.path().join("index");
        fs::rename(&saved_index, &target).map_err(|e| Error::io_path("restore", &target, e))?;
    }
    remove_journal(dir);
    Ok(())
}

/// Whether `full` still has the saved copy's bytes and mode.
fn unchanged(saved: &Path, full: &Path, mode: u32) -> bool {
    let same_mode = fs::symlink_metadata(full)
        .is_ok_and(|meta| meta.file_type().is_file() && permissions(&meta) == mode);
    same_mode
        && match (fs::read(saved), fs::read(full)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
}

/// The branch already holds the change: write its files and index entries, drop the journal.
fn roll_forward(repo: &Repository, root: &Path, journal: &Journal, dir: &Path) -> Result<()> {
    let tree = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(|e| Error::git("read HEAD", root, e))?;
    for saved in &journal.files {
        let full = root.join(&saved.path);
        match tree.get_path(Path::new(&saved.path)) {
            Ok(entry) => {
                let blob = repo
                    .find_blob(entry.id())
                    .map_err(|e| Error::git("read a committed file", root, e))?;
                if let Some(parent) = full.parent() {
                    fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
                }
                fs::write(&full, blob.content()).map_err(|e| Error::io_path("write", &full, e))?;
                set_mode(
                    &full,
                    if entry.filemode() == 0o100755 {
                        0o755
                    } else {
                        0o644
                    },
                )?;
            }
            Err(_) => remove_file(root, &full)?,
        }
    }
    if let Some(next) = next_base(journal, dir)? {
        pristine::publish(repo, root, &next)?;
    }
    update_index(repo, root, journal.files.iter().map(|s| s.path.as_str()))?;
    remove_journal(dir);
    Ok(())
}

/// The base move the journal's change made with it, if any.
fn next_base(journal: &Journal, dir: &Path) -> Result<Option<pristine::NextBase>> {
    let parse = |id: &str| Oid::from_str(id).map_err(|e| Error::git("read the journal", dir, e));
    let Some(new) = &journal.base_new else {
        return Ok(None);
    };
    Ok(Some(pristine::NextBase {
        old: journal.base_old.as_deref().map(parse).transpose()?,
        new: parse(new)?,
    }))
}

/// Journals a dead run was still writing (`.tmp-PID`: it touched nothing else yet) or
/// deleting (`.done-PID`: its change was complete).
fn remove_stale_drafts(repo: &Repository) {
    let Ok(entries) = fs::read_dir(repo.path()) else {
        return;
    };
    let prefix = format!("{JOURNAL}.");
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(_, pid)| pid.parse().ok());
        if let Some(pid) = pid
            && !process_alive(pid)
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

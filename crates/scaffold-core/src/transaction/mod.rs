//! Applying a change to an existing repo as one unit: after `prepare` has checked the
//! repository, `commit` builds the commit's tree from the planned bytes, saves what it
//! will overwrite in a journal under `.git/`, writes the work tree, moves the branch (the
//! commit point) and updates the index for scaffold's paths only. A failure or SIGINT/SIGTERM
//! before the commit point restores the work tree and index exactly; a SIGKILL leaves the
//! journal, and the next run rolls it back (or forward, if the branch already moved).
//! Nothing temporary is ever written inside the work tree.
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use crate::edit::Change;
use crate::error::{Error, Problem, Result};
use crate::git::{self, Author};
use crate::git_state;
use crate::plan::{Plan, RelPath};
use crate::pristine;
use crate::signals;

/// A repo cleared for a change.
pub struct Prepared<'a> {
    repo: Repository,
    root: PathBuf,
    changes: &'a [Change],
    /// Paths the new rendering writes with mode 755 (a new file takes its mode from here;
    /// an existing one keeps the mode it has).
    executable: &'a BTreeSet<RelPath>,
    /// Files with uncommitted edits that the commit will include (`--allow-dirty`).
    pub dirty: Vec<String>,
    /// The repo's line-ending conversions: blobs get the canonical bytes, files what git
    /// would check out.
    eol: crate::attributes::Eol,
    /// What settling an interrupted run did first, for the caller to say.
    pub recovered: Option<Recovered>,
}

/// Settles what an interrupted run left in the git repository containing `dir`, before
/// anything reads the repo's files, and returns what it did for the caller to say; then
/// checks the repository's state (`check`, a second call so the note comes first). Not a
/// git repository: nothing to settle.
pub fn settle(dir: &Path) -> Result<Option<Recovered>> {
    let Ok(repo) = Repository::discover(dir) else {
        return Ok(None);
    };
    let Some(root) = repo.workdir().map(Path::to_path_buf) else {
        return Ok(None);
    };
    recover(&repo, &root)
}

/// Refuses a repository in a state scaffold must not change (a merge in progress, …).
pub fn check_state(dir: &Path) -> Result<()> {
    let Ok(repo) = Repository::discover(dir) else {
        return Ok(());
    };
    let Some(root) = repo.workdir().map(Path::to_path_buf) else {
        return Ok(());
    };
    git_state::check_state(&repo, &root)
}

/// Recovers what an interrupted run left, then checks the repository's state.
pub fn prepare<'a>(
    root: &Path,
    changes: &'a [Change],
    executable: &'a BTreeSet<RelPath>,
    allow_dirty: bool,
) -> Result<Prepared<'a>> {
    let repo = Repository::open(root).map_err(|e| Error::git("open the repository", root, e))?;
    let recovered = recover(&repo, root)?;
    let paths: Vec<&str> = changes.iter().map(|c| c.path().as_str()).collect();
    let clearance = git_state::check(&repo, root, &paths, allow_dirty)?;
    let eol = crate::attributes::Eol::of(root);
    eol.check_drivers(paths.iter().copied())?;
    Ok(Prepared {
        repo,
        root: root.to_path_buf(),
        changes,
        executable,
        dirty: clearance.dirty,
        eol,
        recovered,
    })
}

impl Prepared<'_> {
    /// Applies the change, publishes `base` as the repo's pristine base with it (one commit
    /// point), and returns the new commit's id.
    pub fn commit(
        self,
        author: &Author,
        message: &str,
        base: &Plan,
        hooks: Option<&crate::hooks::Hooks>,
    ) -> Result<String> {
        self.run(Some((author, message, hooks)), base, message, author)
            .map(Option::unwrap_or_default)
    }

    /// Writes the change into the work tree and records `base` (by `author`, signed when
    /// the repo signs commits), leaving the commit to the user (conflict markers to
    /// resolve); a failure or signal still restores everything.
    pub fn write_only(self, base: &Plan, message: &str, author: &Author) -> Result<()> {
        self.run(None, base, message, author).map(|_| ())
    }

    fn run(
        self,
        commit: Option<Commit<'_>>,
        base: &Plan,
        base_message: &str,
        base_author: &Author,
    ) -> Result<Option<String>> {
        let _guard = signals::TransactionGuard::enter();
        let (repo, root) = (&self.repo, self.root.as_path());
        let fail = |op| move |e| Error::git(op, root, e);
        let head = repo.head().map_err(fail("read HEAD"))?;
        let branch = head
            .name()
            .map_err(|_| {
                Error::repo_state(
                    Problem::new("the branch name is not UTF-8").fix("switch to another branch"),
                )
            })?
            .to_string();
        let parent = head.peel_to_commit().map_err(fail("read HEAD"))?;
        let tree = pristine::retrying_object_writes("tree", root, || {
            tree_from_plan(
                repo,
                root,
                &self.eol,
                self.changes,
                self.executable,
                &parent,
            )
        })?;
        let by = crate::git::base_by(base_author)?;
        let next_base = pristine::prepare(repo, root, base, base_message, &by)?;
        let journal_dir = repo.path().join(JOURNAL);
        let journal = Journal {
            pid: std::process::id(),
            branch: branch.clone(),
            old_head: parent.id().to_string(),
            tree: tree.to_string(),
            base_old: next_base.and_then(|b| b.old).map(|id| id.to_string()),
            base_new: next_base.map(|b| b.new.to_string()),
            files: Vec::new(),
            created_dirs: Vec::new(),
        };
        let mut journal = write_journal(repo, root, journal, self.changes)?;
        // A bug (panic) mid-way is undone here as well, then goes on as a panic.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.write_and_commit(&mut journal, &journal_dir, tree, &parent, commit, next_base)
        }))
        .unwrap_or_else(|panic| {
            let _ = rollback(repo, root, &journal, &journal_dir);
            std::panic::resume_unwind(panic)
        });
        match result {
            Ok(oid) => {
                remove_journal(&journal_dir);
                Ok(oid.map(|oid| oid.to_string()))
            }
            Err(err) => {
                // The run's own failure is what the user must fix; a rollback that fails
                // too (the same cause, usually) is said after it, and the journal stays
                // for the next run to finish.
                if let Err(undo) = rollback(repo, root, &journal, &journal_dir) {
                    return Err(Error::Unfinished {
                        cause: Box::new(err),
                        undo: Box::new(undo),
                        journal: journal_dir,
                    });
                }
                Err(err)
            }
        }
    }

    fn write_and_commit(
        &self,
        journal: &mut Journal,
        journal_dir: &Path,
        tree: Oid,
        parent: &git2::Commit<'_>,
        commit: Option<Commit<'_>>,
        next_base: Option<pristine::NextBase>,
    ) -> Result<Option<Oid>> {
        let (repo, root) = (&self.repo, self.root.as_path());
        checkpoint("before-write")?;
        for (n, change) in self.changes.iter().enumerate() {
            let full = root.join(change.path().as_str());
            match change {
                Change::Write { contents, .. } => {
                    create_parents(root, &full, journal, journal_dir)?;
                    let temp = journal_dir.join(format!("new-{n}"));
                    let contents = &*self.eol.to_work_tree(change.path().as_str(), contents);
                    fs::write(&temp, contents).map_err(|e| Error::io_path("write", &temp, e))?;
                    let mode = journal.files[n]
                        .mode
                        .unwrap_or(new_file_mode(change, self.executable));
                    set_mode(&temp, mode)?;
                    move_into_place(&temp, &full, contents)?;
                }
                Change::Delete { .. } => remove_file(root, &full)?,
            }
            checkpoint("write")?;
        }
        let Some((author, message, hooks)) = commit else {
            checkpoint("before-base")?;
            // Nothing to commit: recording the base is this change's commit point.
            if let Some(next) = &next_base {
                pristine::publish(repo, root, next)?;
            }
            signals::mark_committed();
            return Ok(None);
        };
        let tree = repo
            .find_tree(tree)
            .map_err(|e| Error::git("read the new tree", root, e))?;
        // git's hooks, before the commit point: one that rejects rolls the change back.
        let message = match hooks {
            Some(hooks) => {
                hooks.pre_commit(&hook_index(root, &tree, journal_dir)?)?;
                hooks.message(message)?
            }
            None => message.to_string(),
        };
        checkpoint("before-commit")?;
        // The commit point: HEAD moves only if it is still the commit the change was made on.
        let oid = git::commit_on(repo, root, &journal.branch, author, &message, &tree, parent)?;
        signals::mark_committed();
        checkpoint("after-commit")?;
        // Part of the same change: a SIGKILL from here on is rolled forward by the next run.
        if let Some(next) = &next_base {
            pristine::publish(repo, root, next)?;
        }
        checkpoint("after-base")?;
        update_index(repo, root, self.changes.iter().map(|c| c.path().as_str()))?;
        if let Some(hooks) = hooks {
            hooks.post_commit();
        }
        Ok(Some(oid))
    }
}

/// What a change commits: by whom, its message, and the repo's hooks to run.
type Commit<'a> = (&'a Author, &'a str, Option<&'a crate::hooks::Hooks>);

/// An index of `tree` in the journal's directory, for `pre-commit` (`GIT_INDEX_FILE`): the
/// commit's content, as `git commit` shows its hook.
fn hook_index(
    root: &Path,
    tree: &git2::Tree<'_>,
    journal_dir: &Path,
) -> Result<std::path::PathBuf> {
    let path = journal_dir.join("hook-index");
    let fail = |e| Error::git("write the index for the pre-commit hook", root, e);
    let mut index = git2::Index::open(&path).map_err(fail)?;
    index.read_tree(tree).map_err(fail)?;
    index.write().map_err(fail)?;
    Ok(path)
}

/// A step boundary: the test seam (`signals::test_seam`), then the signal check.
fn checkpoint(step: &str) -> Result<()> {
    signals::test_seam(step)?;
    // Before the commit point a signal rolls the change back; after it, the change finishes.
    if !signals::committed() && signals::interrupted() {
        return Err(Error::Interrupted(
            "the change was rolled back; the repository is as it was".into(),
        ));
    }
    Ok(())
}

fn new_file_mode(change: &Change, executable: &BTreeSet<RelPath>) -> u32 {
    if executable.contains(change.path()) {
        0o755
    } else {
        0o644
    }
}

/// Saves the index and every file the change overwrites or deletes, then publishes the
/// journal by renaming its directory into place (it exists only when complete).
fn write_journal(
    repo: &Repository,
    root: &Path,
    journal: Journal,
    changes: &[Change],
) -> Result<Journal> {
    let dir = repo
        .path()
        .join(format!("{JOURNAL}.tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let written = draft_journal(repo, root, journal, changes, &dir);
    if written.is_err() {
        let _ = fs::remove_dir_all(&dir);
    }
    written
}

fn draft_journal(
    repo: &Repository,
    root: &Path,
    mut journal: Journal,
    changes: &[Change],
    dir: &Path,
) -> Result<Journal> {
    let final_dir = repo.path().join(JOURNAL);
    fs::create_dir_all(dir).map_err(|e| Error::io_path("create", dir, e))?;
    let index = repo.path().join("index");
    if index.exists() {
        copy_durably(&index, &dir.join("index"))?;
    }
    for (n, change) in changes.iter().enumerate() {
        let full = root.join(change.path().as_str());
        let mode = match fs::symlink_metadata(&full) {
            Ok(meta) => {
                copy_durably(&full, &dir.join(format!("old-{n}")))?;
                Some(permissions(&meta))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io_path("inspect", &full, e)),
        };
        journal.files.push(Saved {
            path: change.path().as_str().to_string(),
            mode,
        });
    }
    signals::test_seam("journal")?;
    save_json(dir, &journal)?;
    sync_dir(dir)?;
    fs::rename(dir, &final_dir).map_err(|e| Error::io_path("create", &final_dir, e))?;
    sync_dir(repo.path())?;
    Ok(journal)
}

/// Copies `from` to `to` and fsyncs the copy: a saved copy is what a rollback after a
/// power loss restores, so it must be on disk before the journal names it.
fn copy_durably(from: &Path, to: &Path) -> Result<()> {
    fs::copy(from, to).map_err(|e| Error::io_path("save", from, e))?;
    fs::File::open(to)
        .and_then(|file| file.sync_all())
        .map_err(|e| Error::io_path("save", to, e))
}

/// fsyncs a directory, so the names created in it (the journal's files, its rename into
/// place) survive a power loss.
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)
            .and_then(|file| file.sync_all())
            .map_err(|e| Error::io_path("sync", dir, e))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Writes the journal under a temporary name and renames it over the old one: it is
/// rewritten while the change runs (each directory created is recorded first), and a
/// SIGKILL mid-write must leave the previous, whole journal, never a truncated one.
fn save_json(dir: &Path, journal: &Journal) -> Result<()> {
    let path = dir.join("journal.json");
    let temporary = dir.join("journal.json.tmp");
    let text = serde_json::to_vec(journal).map_err(|e| Error::io("journal", e.into()))?;
    let file = fs::File::create(&temporary).map_err(|e| Error::io_path("create", &temporary, e))?;
    std::io::Write::write_all(&mut &file, &text)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io_path("write", &temporary, e))?;
    fs::rename(&temporary, &path).map_err(|e| Error::io_path("write", &path, e))
}

/// Renames a prepared file over `full`; across filesystems (a separate git dir) it writes
/// in place instead, which the journal can still undo.
fn move_into_place(temp: &Path, full: &Path, contents: &[u8]) -> Result<()> {
    match fs::rename(temp, full) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            fs::write(full, contents).map_err(|e| Error::io_path("write", full, e))?;
            let _ = fs::remove_file(temp);
            Ok(())
        }
        Err(e) => Err(Error::io_path("replace", full, e)),
    }
}

fn create_parents(root: &Path, full: &Path, journal: &mut Journal, dir: &Path) -> Result<()> {
    let mut missing = Vec::new();
    let mut cursor = full.parent();
    while let Some(d) = cursor {
        if d == root || d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        cursor = d.parent();
    }
    for d in missing.iter().rev() {
        let rel = d.strip_prefix(root).unwrap_or(d).display().to_string();
        journal.created_dirs.push(rel);
        save_json(dir, journal)?;
        fs::create_dir(d).map_err(|e| Error::io_path("create", d, e))?;
    }
    Ok(())
}

mod recovery;
pub use recovery::Recovered;
use recovery::{recover, rollback};
mod branch;
mod journal;
use branch::tree_from_plan;
pub use branch::{BranchCommit, commit_on_new_branch};
mod work_tree;
use journal::{JOURNAL, Journal, Saved, remove_journal};
use work_tree::{permissions, remove_file, set_mode, update_index};

//! A change committed on a new branch without a checkout (`update --branch` in a repo no
//! commit hook or attribute change asks a work tree of): the commit's tree is its
//! parent's with the planned bytes stored over it, as a checkout's commit would be; the
//! base is published, then the branch is made at the commit, refused if it exists. No
//! work tree or index changes, so nothing needs rolling back: a failure leaves at most
//! objects no ref names, or a base no branch holds yet (as an unmerged branch's base is).
use std::collections::BTreeSet;
use std::path::Path;

use git2::{Oid, Repository};

use crate::edit::Change;
use crate::error::{Error, Result};
use crate::git::{self, Author};
use crate::plan::{Plan, RelPath};
use crate::pristine;

/// What one commit on a new branch holds.
pub struct BranchCommit<'a> {
    /// The commit the branch starts from.
    pub parent: Oid,
    pub changes: &'a [Change],
    /// Paths the new rendering writes with mode 755.
    pub executable: &'a BTreeSet<RelPath>,
    /// The rendering the changes come from: the repo's next pristine base.
    pub base: &'a Plan,
    pub author: &'a Author,
    pub message: &'a str,
    /// The branch's short name (`refs/heads/` is added).
    pub branch: &'a str,
}

/// Commits `change` on its new branch in the repository at `root`; returns the commit.
pub fn commit_on_new_branch(root: &Path, change: &BranchCommit<'_>) -> Result<String> {
    let repo = Repository::open(root).map_err(|e| Error::git("open the repository", root, e))?;
    let fail = |op| move |e| Error::git(op, root, e);
    let eol = crate::attributes::Eol::of(root);
    eol.check_drivers(change.changes.iter().map(|c| c.path().as_str()))?;
    let parent = repo.find_commit(change.parent).map_err(fail("read HEAD"))?;
    let tree = pristine::retrying_object_writes("tree", root, || {
        tree_from_plan(
            &repo,
            root,
            &eol,
            change.changes,
            change.executable,
            &parent,
        )
    })?;
    let tree = repo.find_tree(tree).map_err(fail("read the new tree"))?;
    let by = git::base_by(change.author)?;
    let next_base = pristine::prepare(&repo, root, change.base, change.message, &by)?;
    let oid = pristine::retrying_object_writes("commit", root, || {
        git::write_commit(
            &repo,
            root,
            change.author,
            change.message,
            &tree,
            &[&parent],
        )
    })?;
    if let Some(next) = &next_base {
        pristine::publish(&repo, root, next)?;
    }
    let summary = change.message.lines().next().unwrap_or_default();
    let name = format!("refs/heads/{}", change.branch);
    pristine::waiting_for_ref_lock(|| {
        repo.reference(&name, oid, false, &format!("commit: {summary}"))
    })
    .map_err(|e| match e.code() {
        git2::ErrorCode::Exists => crate::worktree::branch_exists(&repo, root, change.branch),
        _ => Error::git("create a branch", root, e),
    })?;
    Ok(oid.to_string())
}

/// The commit's tree: `parent`'s tree with the planned bytes written over it, each stored
/// as `git add` would store it; a new file takes its mode from `executable`.
pub(super) fn tree_from_plan(
    repo: &Repository,
    root: &Path,
    eol: &crate::attributes::Eol,
    changes: &[Change],
    executable: &BTreeSet<RelPath>,
    parent: &git2::Commit<'_>,
) -> Result<Oid> {
    let base = parent
        .tree()
        .map_err(|e| Error::git("read HEAD's tree", root, e))?;
    let odb = repo
        .odb()
        .map_err(|e| Error::git("open the object store", root, e))?;
    let mut update = git2::build::TreeUpdateBuilder::new();
    for change in changes {
        let path = change.path().as_str();
        match change {
            Change::Write { contents, .. } => {
                let id = pristine::store_blob(&odb, &eol.to_blob(root, path, contents)?)
                    .map_err(|e| Error::git("store a file", root, e))?;
                let mode = base
                    .get_path(Path::new(path))
                    .map(|e| e.filemode())
                    .unwrap_or(if executable.contains(change.path()) {
                        0o100755
                    } else {
                        0o100644
                    });
                update.upsert(path, id, file_mode(mode));
            }
            Change::Delete { .. } => {
                update.remove(path);
            }
        }
    }
    update
        .create_updated(repo, &base)
        .map_err(|e| Error::git("build the commit's tree", root, e))
}

fn file_mode(mode: i32) -> git2::FileMode {
    if mode == 0o100755 {
        git2::FileMode::BlobExecutable
    } else {
        git2::FileMode::Blob
    }
}

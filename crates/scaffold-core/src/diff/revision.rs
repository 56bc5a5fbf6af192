//! The two sides of `scaffold diff` as file maps: a revision's tree read from git (nothing
//! is checked out), or the work tree as `check` reads it.
use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Problem, Result};

/// Every file (relative, `/`-separated) with its text; `None` for binary files.
pub type Files = BTreeMap<String, Option<String>>;

/// The files of revision `rev` (anything `git rev-parse` takes: a branch, tag, commit,
/// `HEAD~1`), and the short commit id it names.
pub fn files_at(repo: &git2::Repository, dir: &Path, rev: &str) -> Result<(Files, String)> {
    let commit = repo
        .revparse_single(rev)
        .and_then(|object| object.peel_to_commit())
        .map_err(|_| {
            Error::input(
                Problem::new(format!("`{rev}` names no commit of `{}`", dir.display()))
                    .fix("give a branch, tag or commit (git log --oneline lists them)"),
            )
        })?;
    let tree = commit
        .tree()
        .map_err(|e| Error::git("read a tree", dir, e))?;
    let mut files = Files::new();
    let mut failed = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        if entry.kind() != Some(git2::ObjectType::Blob) {
            return git2::TreeWalkResult::Ok;
        }
        let path = format!("{parent}{}", entry.name().unwrap_or_default());
        match repo.find_blob(entry.id()) {
            Ok(blob) => {
                files.insert(path, String::from_utf8(blob.content().to_vec()).ok());
                git2::TreeWalkResult::Ok
            }
            Err(e) => {
                failed = Some(e);
                git2::TreeWalkResult::Abort
            }
        }
    })
    .map_err(|e| Error::git("walk a tree", dir, e))?;
    if let Some(e) = failed {
        return Err(Error::git("read a file", dir, e));
    }
    Ok((files, short(commit.id())))
}

/// Where the current branch left the default branch: the merge-base of `HEAD` with
/// `origin/HEAD` (what the remote calls its default branch), else with the first of
/// `origin/main`, `main`, `origin/master`, `master` that exists.
pub fn default_base(repo: &git2::Repository, dir: &Path) -> Result<String> {
    let head = repo.head().ok().and_then(|h| h.target()).ok_or_else(|| {
        Error::input(
            Problem::new(format!("`{}` has no commit yet", dir.display()))
                .fix("commit first, or give BASE and HEAD"),
        )
    })?;
    let candidates = [
        "origin/HEAD",
        "origin/main",
        "main",
        "origin/master",
        "master",
    ];
    let default = candidates.iter().find_map(|name| {
        repo.revparse_single(name)
            .ok()
            .and_then(|o| o.peel_to_commit().ok())
            .map(|c| c.id())
    });
    let Some(default) = default else {
        return Err(Error::input(
            Problem::new(format!(
                "`{}` has no default branch to compare with (none of {})",
                dir.display(),
                candidates.join(", ")
            ))
            .fix("give BASE: scaffold diff BRANCH"),
        ));
    };
    let base = repo
        .merge_base(head, default)
        .map_err(|e| Error::git("find the merge-base with the default branch", dir, e))?;
    Ok(base.to_string())
}

fn short(id: git2::Oid) -> String {
    id.to_string().chars().take(12).collect()
}

//! A new branch checked out in a linked work tree of its own, for a command that writes its
//! change as a commit on that branch (`update --branch`): the repo's checked-out branch,
//! index and work tree are never touched. The work tree lives under the repo's git
//! directory and is removed when done; the branch stays only when it got a commit.
use std::path::{Path, PathBuf};

use crate::error::{Error, Problem, Result};

/// A branch made at `HEAD`'s commit and checked out in a temporary linked work tree.
pub struct BranchWorktree {
    repo: git2::Repository,
    name: String,
    branch: String,
    path: PathBuf,
}

impl BranchWorktree {
    /// Makes `branch` at `HEAD` of the repo at `dir` and checks it out in a new linked
    /// work tree. Refused when the branch exists already: scaffold never moves a branch.
    pub fn create(dir: &Path, branch: &str) -> Result<BranchWorktree> {
        let repo = git2::Repository::open(dir).map_err(|e| Error::git("open", dir, e))?;
        let head = repo.head().and_then(|h| h.peel_to_commit()).map_err(|_| {
            Error::repo_state(
                Problem::new(format!("`{}` has no commit to branch from", dir.display()))
                    .fix("commit first, then rerun"),
            )
        })?;
        if repo.find_branch(branch, git2::BranchType::Local).is_ok() {
            return Err(branch_exists(&repo, dir, branch));
        }
        let made = repo
            .branch(branch, &head, false)
            .map_err(|e| Error::git("create a branch", dir, e))?;
        // Worktree names are single path segments; the branch name may hold slashes.
        let name = format!("scaffold-{}-{}", std::process::id(), sanitized(branch));
        // The work tree's own directory takes the repo's name, which a blueprint may read
        // (`target_dir_name`).
        let repo_name = std::fs::canonicalize(dir)
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_os_string()))
            .unwrap_or_else(|| name.clone().into());
        let path = repo
            .commondir()
            .join("scaffold-worktrees")
            .join(&name)
            .join(repo_name);
        let created = std::fs::create_dir_all(path.parent().unwrap_or(&path))
            .map_err(|e| Error::io_path("create", &path, e))
            .and_then(|()| {
                let mut options = git2::WorktreeAddOptions::new();
                options.reference(Some(made.get()));
                repo.worktree(&name, &path, Some(&options))
                    .map_err(|e| Error::git("add a work tree", dir, e))
            });
        drop(made);
        drop(head);
        let worktree = BranchWorktree {
            repo,
            name,
            branch: branch.to_string(),
            path,
        };
        match created {
            Ok(_) => Ok(worktree),
            Err(e) => {
                worktree.finish(false);
                Err(e)
            }
        }
    }

    /// Runs `change` in a new branch's work tree (given its root) and keeps the branch only
    /// when `change` committed on it; returns what `change` returned and the branch's new
    /// commit, if any. The work tree is removed either way.
    pub fn run<T>(
        dir: &Path,
        branch: &str,
        change: impl FnOnce(&Path) -> Result<T>,
    ) -> Result<(T, Option<String>)> {
        let worktree = BranchWorktree::create(dir, branch)?;
        let before = worktree.tip();
        let result = change(worktree.path());
        let after = worktree.tip();
        let committed = result.is_ok() && after.is_some() && after != before;
        worktree.finish(committed);
        Ok((result?, after.filter(|_| committed)))
    }

    /// The branch's commit now.
    fn tip(&self) -> Option<String> {
        self.repo
            .find_branch(&self.branch, git2::BranchType::Local)
            .ok()
            .and_then(|b| b.get().target())
            .map(|id| id.to_string())
    }

    /// The work tree's root, where the command runs.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the work tree; keeps the branch when `keep_branch`, else deletes it.
    /// Best effort: what is left is what `git worktree prune` removes.
    pub fn finish(self, keep_branch: bool) {
        let _ = std::fs::remove_dir_all(self.path.parent().unwrap_or(&self.path));
        if let Ok(worktree) = self.repo.find_worktree(&self.name) {
            let mut options = git2::WorktreePruneOptions::new();
            options.valid(true).working_tree(true);
            let _ = worktree.prune(Some(&mut options));
        }
        if !keep_branch
            && let Ok(mut branch) = self.repo.find_branch(&self.branch, git2::BranchType::Local)
        {
            let _ = branch.delete();
        }
    }
}

/// The refusal of a `branch` that exists already in the repository at `dir`: scaffold
/// never moves a branch.
pub fn branch_exists(repo: &git2::Repository, dir: &Path, branch: &str) -> Error {
    let at = repo
        .find_branch(branch, git2::BranchType::Local)
        .ok()
        .and_then(|existing| existing.get().target())
        .map(|id| id.to_string()[..12].to_string())
        .unwrap_or_default();
    Error::refused(
        Problem::new(format!(
            "branch {branch} already exists in `{}` (at {at}): scaffold never moves a branch",
            dir.display()
        ))
        .fix(format!(
            "merge or delete it first (git branch -D {branch}), or choose another --branch"
        )),
    )
}

fn sanitized(branch: &str) -> String {
    branch
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

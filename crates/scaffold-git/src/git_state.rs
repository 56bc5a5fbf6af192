//! Whether scaffold may change a repository now: no operation in progress, HEAD on a
//! branch, no lock, nothing staged that is not scaffold's, and (unless allowed) no
//! uncommitted edit in a file scaffold must change. Each refusal names the state and
//! the command that gets out of it.
use std::path::Path;

use git2::{Repository, RepositoryState, Status, StatusOptions, StatusShow};

use crate::error::{Error, Problem, Result};

/// What the checks found that `--allow-dirty` lets through: files whose uncommitted edits
/// go into scaffold's commit.
pub struct Clearance {
    pub dirty: Vec<String>,
}

/// `paths` are the repo-relative files scaffold will write or delete.
pub fn check(
    repo: &Repository,
    root: &Path,
    paths: &[&str],
    allow_dirty: bool,
) -> Result<Clearance> {
    check_state(repo, root)?;
    check_links(root, paths)?;
    check_files(repo, root, paths, allow_dirty)
}

/// scaffold writes regular files: a path it must change that is a symbolic link (or lies
/// under one) is refused, never replaced by a file with the link's permissions.
fn check_links(root: &Path, paths: &[&str]) -> Result<()> {
    for path in paths {
        let mut prefix = root.to_path_buf();
        for part in Path::new(path).components() {
            prefix.push(part);
            if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                let link = prefix
                    .strip_prefix(root)
                    .unwrap_or(&prefix)
                    .display()
                    .to_string();
                return Err(Error::refused(Problem::new(format!("`{link}` is a symbolic link, and scaffold must change `{path}`")).fix("scaffold writes regular files and never replaces a link: replace the link with a regular file or directory and commit, then run scaffold again (nothing was changed)")));
            }
        }
    }
    Ok(())
}

/// Whether the ref lock `lock` is gone, or goes within git's `core.filesRefLockTimeout`
/// (100 ms by default): `git gc`'s pack-refs holds a branch's lock that briefly, and git
/// waits that long for a ref lock before it refuses.
fn lock_released(lock: &Path) -> bool {
    const TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);
    let start = std::time::Instant::now();
    while lock.exists() {
        if start.elapsed() >= TIMEOUT {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    true
}

/// What does not depend on the change: checked before anything reads the repo's files.
pub fn check_state(repo: &Repository, root: &Path) -> Result<()> {
    if let Some((what, fix)) = operation_in_progress(repo.state()) {
        return Err(Error::repo_state(
            Problem::new(format!("{} has {what} in progress", root.display())).fix(format!(
                "{fix}, then run scaffold again (nothing was changed)"
            )),
        ));
    }
    let lock = repo.path().join("index.lock");
    if lock.exists() {
        let lock = lock.display();
        return Err(Error::repo_state(
            Problem::new(format!(
                "`{lock}` exists: another git command is running in this repo, or one crashed"
            ))
            .fix(format!(
                "wait for it, or if no git is running remove it (`rm {lock}`), then run scaffold again"
            )),
        ));
    }
    match repo.head() {
        Ok(head) if head.is_branch() => {
            // A crashed git leaves the branch's ref lock: found here, not at commit time.
            if let Ok(name) = head.name() {
                let lock = repo.path().join(format!("{name}.lock"));
                if !lock_released(&lock) {
                    let lock = lock.display();
                    return Err(Error::repo_state(
                        Problem::new(format!(
                            "`{lock}` exists: another git command is moving the branch, or one crashed"
                        ))
                        .fix(format!(
                            "wait for it, or if no git is running remove it (`rm {lock}`), then run scaffold again"
                        )),
                    ));
                }
            }
        }
        Ok(_) => {
            return Err(Error::repo_state(
                Problem::new(format!(
                    "{}: HEAD is detached (not on a branch)",
                    root.display()
                ))
                .fix("switch to the branch to change (`git switch main`), then run scaffold again"),
            ));
        }
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => {
            return Err(Error::repo_state(
                Problem::new(format!(
                    "{}: the current branch has no commit yet",
                    root.display()
                ))
                .fix("commit once (`git commit`), then run scaffold again"),
            ));
        }
        Err(e) => return Err(Error::git("read HEAD", root, e)),
    }
    Ok(())
}

fn check_files(
    repo: &Repository,
    root: &Path,
    paths: &[&str],
    allow_dirty: bool,
) -> Result<Clearance> {
    let index = repo
        .index()
        .map_err(|e| Error::git("read the index", root, e))?;
    if index.has_conflicts() {
        return Err(Error::repo_state(
            Problem::new(format!(
                "{}: the index has unresolved conflicts",
                root.display()
            ))
            .fix("resolve them and commit (or `git reset --merge`), then run scaffold again"),
        ));
    }
    // Two questions, asked so that the cost follows scaffold's files, not the repo: what
    // is staged anywhere (the index against HEAD, no work-tree scan), and the full status
    // of scaffold's own paths only (matched literally, so the work tree is read for them).
    let read = |options: &mut StatusOptions| {
        repo.statuses(Some(options))
            .map_err(|e| Error::git("read the status", root, e))
    };
    let staged = read(StatusOptions::new().show(StatusShow::Index))?;
    let mut ours_options = StatusOptions::new();
    ours_options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .disable_pathspec_match(true);
    for path in paths {
        ours_options.pathspec(path);
    }
    let ours = if paths.is_empty() {
        None
    } else {
        Some(read(&mut ours_options)?)
    };
    let mut foreign_staged = Vec::new();
    let mut dirty = Vec::new();
    for entry in staged.iter() {
        let Ok(path) = entry.path() else { continue };
        if !paths.contains(&path) && !entry.status().is_empty() {
            foreign_staged.push(path.to_string());
        }
    }
    for entry in ours.iter().flat_map(|statuses| statuses.iter()) {
        let Ok(path) = entry.path() else { continue };
        let status = entry.status();
        if paths.contains(&path) && !status.is_empty() && status != Status::IGNORED {
            dirty.push(path.to_string());
        }
    }
    if !foreign_staged.is_empty() {
        return Err(Error::repo_state(
            Problem::new(format!(
                "staged changes that are not scaffold's: {}",
                foreign_staged.join(", ")
            ))
            .fix(format!(
                "commit them or unstage them (`git restore --staged {}`), then run scaffold again",
                foreign_staged.join(" ")
            )),
        ));
    }
    if !dirty.is_empty() && !allow_dirty {
        return Err(Error::refused(format!(
            "uncommitted changes in {}: commit or stash them first (`git stash`), or pass --allow-dirty to commit them together with scaffold's change",
            dirty.join(", ")
        )));
    }
    Ok(Clearance { dirty })
}

/// (what is in progress, how to finish or abort it) for every state but a clean one.
fn operation_in_progress(state: RepositoryState) -> Option<(&'static str, &'static str)> {
    use RepositoryState::*;
    Some(match state {
        Clean => return None,
        Merge => (
            "a merge",
            "finish it (`git commit`) or abort it (`git merge --abort`)",
        ),
        Revert | RevertSequence => (
            "a revert",
            "finish it (`git revert --continue`) or abort it (`git revert --abort`)",
        ),
        CherryPick | CherryPickSequence => (
            "a cherry-pick",
            "finish it (`git cherry-pick --continue`) or abort it (`git cherry-pick --abort`)",
        ),
        Bisect => ("a bisect", "end it (`git bisect reset`)"),
        Rebase | RebaseInteractive | RebaseMerge => (
            "a rebase",
            "finish it (`git rebase --continue`) or abort it (`git rebase --abort`)",
        ),
        ApplyMailbox | ApplyMailboxOrRebase => (
            "a `git am`",
            "finish it (`git am --continue`) or abort it (`git am --abort`)",
        ),
    })
}

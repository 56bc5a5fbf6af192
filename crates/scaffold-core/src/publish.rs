//! A new repo published (`scaffold new`'s last step): the plan written into a staging
//! directory beside the target and committed there, with git's commit hooks as `git
//! commit` runs them and the pristine base stored, then moved into place. A signal waits
//! until the repo is complete or the staging is gone, never between.
use std::path::Path;

use crate::error::Result;
use crate::git;
use crate::plan::Plan;
use crate::signals;
use crate::write;

/// Where and how a new repo is committed.
pub struct NewRepo<'a> {
    pub dir: &'a Path,
    /// `--author`, else git's own configuration.
    pub author: Option<&'a str>,
    pub message: &'a str,
    /// Whether git's commit hooks run (`--no-verify` skips them).
    pub verify: bool,
}

/// A new repository asked for and made before its files exist: its staging directory
/// made (and registered: a signal from now on removes it), then on a second thread `git
/// var -l` started for the git directory the repository will have (so `includeIf
/// "gitdir:…"` matches: in place, the target's; else the staging's) and, at once, the
/// repository initialised (`git init`'s directories, templates and config) in a
/// directory of the staging that no plan can have, and moved to the staging's `.git` once
/// git has answered: git never finds a repository half made where it looks, so what it
/// answers does not depend on how far the initialisation has got. `new` starts both
/// before it renders, so git answers and the repository is made while the repo is
/// rendered; the files are written as soon as it is rendered.
pub struct Asked {
    /// None once published.
    made: Option<Made>,
}

struct Made {
    git_home: std::path::PathBuf,
    staged: write::Staged,
    /// The thread making the repository in the staging: git's answers and the repository.
    initialising: std::thread::JoinHandle<(crate::identity::Place, Result<git2::Repository>)>,
}

impl Asked {
    /// Makes `dir`'s staging directory and starts the thread that starts `git var -l` for
    /// it and initialises the repository there: starting git is the thread's (the caller
    /// renders on meanwhile; a spawn waits for git's `execve`, 0.3–1.4 ms here). git runs
    /// in the directory the staging is made in: with `GIT_DIR` set, git reads no work
    /// tree, so where it starts changes nothing it says. The staging exists before git
    /// starts (git resolves the parent of the git directory it is given). The
    /// initialisation needs nothing git answers: `git init` syncs none of its files
    /// whatever `core.fsync` says, nor does `git::init`.
    pub fn ahead(dir: &Path) -> Result<Asked> {
        let staging = write::staging_name(dir)?;
        let git_home = match staging.in_place() {
            true => dir.to_path_buf(),
            false => staging.path().to_path_buf(),
        };
        let place = crate::identity::Place::new_repo_from(&git_home, staging.parent());
        let mut critical = signals::Critical::enter();
        let staged = staging.create()?;
        critical.staging(staged.path().to_path_buf());
        let root = staged.path().to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("new-repo".into())
            .spawn(move || {
                place.ask_listing_ahead();
                let aside = {
                    let _writing = signals::writing_staging();
                    git::init_aside(&root)
                };
                place.await_listing();
                let _writing = signals::writing_staging();
                let repo = aside.and_then(|aside| aside.move_in());
                (place, repo)
            });
        // Without the thread, the region ends here and removes the staging.
        let initialising = spawned.map_err(|e| crate::error::Error::io("start a thread", e))?;
        critical.leave_staged();
        Ok(Asked {
            made: Some(Made {
                git_home,
                staged,
                initialising,
            }),
        })
    }
}

impl Drop for Asked {
    /// Never published (the run failed first): the staging goes, and with it what a signal
    /// would remove.
    fn drop(&mut self) {
        if let Some(made) = self.made.take() {
            let _ = made.initialising.join();
            let _region = signals::Critical::enter();
            drop(made.staged);
        }
    }
}

/// The repository to commit in, and how: what `fill_and_commit`'s second thread waits for
/// once it has hashed the blobs.
pub struct Ready {
    pub repo: git2::Repository,
    pub committing: git::Committing,
    /// The repository's commit hooks (`Hooks::find_in`), if any.
    pub hooks: Option<crate::hooks::Hooks>,
}

/// Writes and commits `plan` as the new repo `target.dir` where `asked` made its staging;
/// returns the commit's id. A hook that rejects the commit fails the run before the repo
/// moves into place: nothing is written.
pub fn publish(target: &NewRepo<'_>, plan: &Plan, mut asked: Asked) -> Result<String> {
    let Some(Made {
        git_home,
        staged,
        initialising,
    }) = asked.made.take()
    else {
        unreachable!("an Asked is published once")
    };
    let mut critical = signals::Critical::enter();
    critical.staging(staged.path().to_path_buf());
    signals::test_seam("new-staged")?;
    let ready = || -> Result<Ready> {
        let (mut place, repo) = initialising
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let repo = repo?;
        // From here git (and a signing program) runs at the top of the repository's work
        // tree, as for `git commit`.
        place.cwd = std::path::absolute(&git_home).unwrap_or(git_home);
        let hooks = crate::hooks::Hooks::find_in(&repo, staged.path(), &place, target.verify);
        Ok(Ready {
            repo,
            committing: git::resolve_committing(target.author, &place)?,
            hooks,
        })
    };
    let (commit, hooks) = fill_and_commit(&staged, plan, ready, target.message)?;
    signals::test_seam("new-committed")?;
    let in_place = target.dir.is_dir();
    staged.finish()?;
    if in_place {
        git::refresh_top_level_stat(target.dir)?;
    }
    critical.done();
    if let Some(hooks) = hooks {
        hooks.moved_to(target.dir).post_commit();
    }
    Ok(commit)
}

/// Writes the plan into `staged` and commits it in the repository there: the route `new`
/// takes, and what the commit benches time. While the files are written, a second thread
/// hashes and packs the blobs, waits for `ready` (the repository, author, signing, syncing
/// and hooks) and, when the repository has no commit hooks, writes the commit: its
/// objects, pack synced, and refs. Only the index, which records the files as written,
/// waits for them.
pub fn fill_and_commit(
    staged: &write::Staged,
    plan: &Plan,
    ready: impl FnOnce() -> Result<Ready> + Send,
    message: &str,
) -> Result<(String, Option<crate::hooks::Hooks>)> {
    // Blobs hold the plan's bytes; the files are what git would check out.
    let attributes = crate::attributes::work_tree_for_new(plan)?;
    let work_tree = attributes.work_tree.as_ref().unwrap_or(plan);
    if !attributes.filtered.is_empty() {
        // A filter driver runs in the repository (git-lfs keeps its objects there), on the
        // files as written: the repo exists first, the blobs follow the files. The base
        // stores what `git add` stores too (LFS pointers), as every later base does.
        let Ready {
            repo,
            committing,
            hooks,
        } = ready()?;
        let written = write::fill(staged, work_tree)?;
        let blob_plan =
            crate::attributes::blobs_for_new(staged.path(), plan, &attributes.filtered)?;
        let blobs = git::Blobs::of(&blob_plan)?;
        signals::test_seam("new-written")?;
        let commit = git::commit(
            repo,
            staged.path(),
            &blob_plan,
            written.stats(),
            blobs,
            &committing,
            message,
            hooks,
        )?;
        let by = git::base_by(&committing.author)?;
        crate::pristine::store(staged.path(), plan, message, &by)?;
        return Ok(commit);
    }
    let (prepared, written) = scaffold_support::parallel::beside(
        || -> Result<_> {
            let blobs = git::Blobs::of(plan)?;
            let Ready {
                repo,
                committing,
                hooks,
            } = ready()?;
            let ahead = match hooks {
                None => Ahead::Written(git::write_first_commit(
                    repo,
                    staged.path(),
                    plan,
                    blobs,
                    &committing,
                    message,
                )?),
                Some(hooks) => Ahead::Hooked(repo, blobs, hooks),
            };
            Ok((ahead, committing))
        },
        || write::fill(staged, work_tree),
    );
    // A file that could not be written is said first, as when nothing ran beside it.
    let written = written?;
    let (ahead, committing) = prepared?;
    signals::test_seam("new-written")?;
    match ahead {
        Ahead::Written(first) => Ok((
            first.write_index(plan, written.stats(), committing.fsync)?,
            None,
        )),
        // Hooks read the index and may change the message: the commit waits for the files.
        Ahead::Hooked(repo, blobs, hooks) => git::commit(
            repo,
            staged.path(),
            plan,
            written.stats(),
            blobs,
            &committing,
            message,
            Some(hooks),
        ),
    }
}

/// What `new`'s second thread got done while the files were written.
enum Ahead {
    /// The commit, on disk and on `main`: the index follows.
    Written(git::FirstCommit),
    /// The repo has commit hooks: the commit is made after the files.
    Hooked(git2::Repository, git::Blobs, crate::hooks::Hooks),
}

/// `new` inside another repository makes a repository of its own there: said, since the
/// outer one then sees it only as an untracked directory (not a submodule).
pub fn nested_note(dir: &Path) -> Option<String> {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let parent = absolute.ancestors().skip(1).find(|d| d.is_dir())?;
    let outer = git2::Repository::discover(parent).ok()?;
    let workdir = outer.workdir()?;
    Some(format!(
        "note: `{}` is inside the git repository `{}`; it becomes a repository of its own, which the outer one sees as an untracked directory (add it to that repo's .gitignore, or make it elsewhere)",
        dir.display(),
        workdir.display()
    ))
}

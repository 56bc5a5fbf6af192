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
/// named, `git var -l` started for the git directory the repository will have (so
/// `includeIf "gitdir:…"` matches: in place, the target's; else the staging's), and on a
/// second thread, once git answers, the staging directory made and the repository
/// initialised in it (`git init`'s directories, templates and config). `new` starts it
/// before it renders, so all of that happens while the repo is rendered, and the commit,
/// the first to need it, does not wait.
pub struct Asked {
    git_home: std::path::PathBuf,
    preparing: Option<std::thread::JoinHandle<Prepared>>,
}

/// What the second thread of `Asked` made: git's answers, and the staging directory with
/// an empty repository in it (or why not).
struct Prepared {
    place: crate::identity::Place,
    repo: Result<(write::Staged, git2::Repository)>,
}

impl Asked {
    /// Names `dir`'s staging directory, starts `git var -l` for it and the thread that
    /// makes it. git runs in the directory the staging will be made in (it exists; the
    /// staging may not yet): with `GIT_DIR` set, git reads no work tree, so where it starts
    /// changes nothing it says.
    pub fn ahead(dir: &Path) -> Result<Asked> {
        let staging = write::staging_name(dir)?;
        let git_home = match staging.in_place() {
            true => dir.to_path_buf(),
            false => staging.path().to_path_buf(),
        };
        let place = crate::identity::Place::new_repo_from(&git_home, staging.parent());
        place.ask_listing_ahead();
        let preparing = std::thread::Builder::new()
            .name("new-repo".into())
            .spawn(move || prepare(staging, place))
            .map_err(|e| crate::error::Error::io("start a thread", e))?;
        Ok(Asked {
            git_home,
            preparing: Some(preparing),
        })
    }

    /// Waits for the second thread.
    fn prepared(mut self) -> Prepared {
        let preparing = self.preparing.take();
        match preparing.map(std::thread::JoinHandle::join) {
            Some(Ok(prepared)) => prepared,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            // `preparing` is taken only here and in `drop`.
            None => unreachable!("an Asked is prepared once"),
        }
    }
}

impl Drop for Asked {
    /// Never published (the run failed first): the staging goes, and with it what a signal
    /// would remove. Joined before the region is entered, which the thread enters too.
    fn drop(&mut self) {
        if let Some(preparing) = self.preparing.take() {
            let prepared = preparing.join();
            let _region = signals::Critical::enter();
            drop(prepared);
        }
    }
}

/// `Asked`'s second thread: once git has answered (its `core.fsync`), the staging directory
/// made and registered (a signal from now on removes it) and the repository initialised.
fn prepare(staging: write::StagingName, place: crate::identity::Place) -> Prepared {
    let fsync = place.fsync();
    let mut critical = signals::Critical::enter();
    let repo = staging.create().and_then(|staged| {
        critical.staging(staged.path().to_path_buf());
        let repo = git::init_for_commit(staged.path(), fsync)?;
        Ok((staged, repo))
    });
    if repo.is_ok() {
        critical.leave_staged();
    }
    Prepared { place, repo }
}

/// Writes and commits `plan` as the new repo `target.dir` where `asked` made it; returns
/// the commit's id. A hook that rejects the commit fails the run before the repo moves
/// into place: nothing is written.
pub fn publish(target: &NewRepo<'_>, plan: &Plan, asked: Asked) -> Result<String> {
    let git_home = asked.git_home.clone();
    let Prepared { mut place, repo } = asked.prepared();
    let mut critical = signals::Critical::enter();
    let (staged, repo) = repo?;
    critical.staging(staged.path().to_path_buf());
    // From here git (and a signing program) runs at the top of the repository's work tree,
    // as for `git commit`.
    place.cwd = std::path::absolute(&git_home).unwrap_or(git_home);
    let committing = || git::resolve_committing(target.author, &place);
    signals::test_seam("new-staged")?;
    let find_hooks = |root: &Path| crate::hooks::Hooks::find(root, &place, target.verify);
    let (commit, hooks) =
        fill_and_commit(&staged, repo, plan, committing, target.message, find_hooks)?;
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

/// Writes the plan into `staged` and commits it in `repo`, the empty repository there: the
/// route `new` takes, and what the commit benches time. While the files are written, a
/// second thread hashes and packs the blobs, resolves `committing` (author, signing,
/// syncing) and, when the repository has no commit hooks (`find_hooks`), writes the
/// commit: its objects, pack synced, and refs. Only the index, which records the files as
/// written, waits for them.
pub fn fill_and_commit(
    staged: &write::Staged,
    repo: git2::Repository,
    plan: &Plan,
    committing: impl FnOnce() -> Result<git::Committing> + Send,
    message: &str,
    find_hooks: impl FnOnce(&Path) -> Option<crate::hooks::Hooks> + Send,
) -> Result<(String, Option<crate::hooks::Hooks>)> {
    // Blobs hold the plan's bytes; the files are what git would check out.
    let attributes = crate::attributes::work_tree_for_new(plan)?;
    let work_tree = attributes.work_tree.as_ref().unwrap_or(plan);
    if !attributes.filtered.is_empty() {
        // A filter driver runs in the repository (git-lfs keeps its objects there), on the
        // files as written: the repo exists first, the blobs follow the files. The base
        // stores what `git add` stores too (LFS pointers), as every later base does.
        let committing = committing()?;
        let written = write::fill(staged, work_tree)?;
        let blob_plan =
            crate::attributes::blobs_for_new(staged.path(), plan, &attributes.filtered)?;
        let blobs = git::Blobs::of(&blob_plan)?;
        signals::test_seam("new-written")?;
        let hooks = find_hooks(staged.path());
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
            let committing = committing()?;
            let ahead = match find_hooks(staged.path()) {
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

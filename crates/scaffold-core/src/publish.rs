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

/// git asked about a new repository before anything of it exists: its staging directory
/// named, and `git var -l` started for the git directory the repository will have, so
/// `includeIf "gitdir:…"` matches (in place: the target's; else the staging's). `new`
/// starts it before it renders, so git answers while the repo is rendered, and the
/// commit, the first to need the answer, does not wait for it.
pub struct Asked {
    staging: write::StagingName,
    place: crate::identity::Place,
    git_home: std::path::PathBuf,
}

impl Asked {
    /// Names `dir`'s staging directory and starts `git var -l` for it. git runs in the
    /// directory the staging will be made in (it exists; the staging does not yet): with
    /// `GIT_DIR` set, git reads no work tree, so where it starts changes nothing it says.
    pub fn ahead(dir: &Path) -> Result<Asked> {
        let staging = write::staging_name(dir)?;
        let git_home = match staging.in_place() {
            true => dir.to_path_buf(),
            false => staging.path().to_path_buf(),
        };
        let place = crate::identity::Place::new_repo_from(&git_home, staging.parent());
        place.ask_listing_ahead();
        Ok(Asked {
            staging,
            place,
            git_home,
        })
    }
}

/// Writes and commits `plan` as the new repo `target.dir` where `asked` named its staging;
/// returns the commit's id. A hook that rejects the commit fails the run before the repo
/// moves into place: nothing is written.
pub fn publish(target: &NewRepo<'_>, plan: &Plan, asked: Asked) -> Result<String> {
    let Asked {
        staging,
        mut place,
        git_home,
    } = asked;
    let mut critical = signals::Critical::enter();
    let staged = staging.create()?;
    critical.staging(staged.path().to_path_buf());
    // From here git (and a signing program) runs at the top of the repository's work tree,
    // as for `git commit`.
    place.cwd = std::path::absolute(&git_home).unwrap_or(git_home);
    let committing = || git::resolve_committing(target.author, &place);
    signals::test_seam("new-staged")?;
    let find_hooks = |root: &Path| crate::hooks::Hooks::find(root, &place, target.verify);
    let (commit, hooks) = fill_and_commit(&staged, plan, committing, target.message, find_hooks)?;
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

/// Writes the plan into `staged` and commits it there: the route `new` takes, and what the
/// commit benches time. While the files are written, a second thread hashes and packs the
/// blobs, resolves `committing` (author, signing, syncing: it waits for the `git var -l`
/// `Asked::ahead` started), initialises the repository (git is asked where no repository
/// exists yet, as before, and `git init`'s work leaves the critical path) and, when it has
/// no commit hooks, writes the commit's objects, pack synced, for the index and refs to
/// follow once the files are written. `find_hooks` is asked once the repository exists.
pub fn fill_and_commit(
    staged: &write::Staged,
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
        let repo = git::init_for_commit(staged.path(), &committing)?;
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
            let repo = git::init_for_commit(staged.path(), &committing)?;
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
            first.publish(plan, written.stats(), committing.fsync)?,
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
    /// The commit's objects, on disk: the index and refs follow.
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

//! `update [REPO…] --branch NAME`: each repo's update prepared and committed in a linked
//! work tree of a new branch (`worktree`), repos side by side on every core; the checked
//! out branch and work tree of each repo are never touched. Reported per repo, in the
//! order given, with one summary; pushing the branches is the user's (or a workflow's).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::edit_session::apply;
use crate::error::Result;
use crate::flags::read_values;
use crate::outcome::ExitStatus;
use crate::settings::{EditOptions, UpdateOptions};
use crate::snapshot::CommitFiles;
use crate::transaction::BranchCommit;
use crate::ui::Reporter;
use crate::update::{self, Request};
use crate::worktree::BranchWorktree;

/// What became of one repo.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Outcome {
    /// The update is commit `commit` on the new branch.
    Changed {
        branch: String,
        commit: String,
        files: usize,
        blueprint: String,
    },
    /// Nothing to update: no branch was made.
    UpToDate { blueprint: String },
    /// The update conflicts with the repo's edits in these files: no branch was made.
    Conflicts {
        blueprint: String,
        files: Vec<String>,
    },
}

/// One repo's line of the `--json` document.
#[derive(Debug, Serialize)]
struct Entry {
    root: String,
    #[serde(flatten)]
    result: EntryResult,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum EntryResult {
    Done(Outcome),
    Refused {
        outcome: &'static str,
        error: String,
        exit: u8,
    },
}

#[derive(Debug, Default, Serialize)]
struct Summary {
    repos: usize,
    changed: usize,
    up_to_date: usize,
    with_conflicts: usize,
    refused: usize,
}

#[derive(Debug, Serialize)]
struct Document {
    version: u8,
    branch: String,
    repos: Vec<Entry>,
    summary: Summary,
}

pub(super) fn run(args: &UpdateOptions, branch: &str, out: &Reporter) -> Result<ExitStatus> {
    let values = match &args.values {
        Some(path) => read_values(path)?,
        None => BTreeMap::new(),
    };
    let repos: &[PathBuf] = &args.fleet;
    let one = |dir: &PathBuf| on_branch(dir, branch, args, &values, out);
    let results: Vec<Result<Outcome>> = crate::parallel::map(repos, one);
    let mut summary = Summary {
        repos: repos.len(),
        ..Summary::default()
    };
    for result in &results {
        match result {
            Ok(Outcome::Changed { .. }) => summary.changed += 1,
            Ok(Outcome::UpToDate { .. }) => summary.up_to_date += 1,
            Ok(Outcome::Conflicts { .. }) => summary.with_conflicts += 1,
            Err(_) => summary.refused += 1,
        }
    }
    let line = format!(
        "update --branch {branch}: {} repos: {} changed, {} up to date, {} with conflicts, {} refused",
        summary.repos, summary.changed, summary.up_to_date, summary.with_conflicts, summary.refused
    );
    let conflicted = summary.with_conflicts > 0;
    if args.edit.json {
        let entries = repos.iter().zip(&results).map(|(dir, result)| Entry {
            root: dir.display().to_string(),
            result: match result {
                Ok(outcome) => EntryResult::Done(outcome.clone()),
                Err(e) => EntryResult::Refused {
                    outcome: "refused",
                    error: e.to_string(),
                    exit: e.exit_code(),
                },
            },
        });
        out.json(&Document {
            version: 1,
            branch: branch.to_string(),
            repos: entries.collect(),
            summary,
        });
    } else {
        for (dir, result) in repos.iter().zip(&results) {
            out.line(format!("{}: {}", dir.display(), describe(result)));
        }
        out.line(&line);
    }
    ExitStatus::of_fleet(results, conflicted, &line, out)
}

/// The update of the repo at `dir`, committed on the new `branch` when it changes
/// anything. From HEAD's commit without a checkout where nothing asks for a work tree
/// (`snapshot::head_without_checkout`); else in a linked work tree of the branch, removed
/// either way, the branch kept only with a commit.
fn on_branch(
    dir: &Path,
    branch: &str,
    args: &UpdateOptions,
    values: &BTreeMap<String, serde_json::Value>,
    out: &Reporter,
) -> Result<Outcome> {
    // One scaffold at a time in a repository, its linked work trees included.
    let lock = crate::lock::acquire(dir, &format!("update --branch {branch}"))?;
    let place = crate::identity::Place::repo(dir);
    let files = crate::snapshot::head_without_checkout(dir, &place, !args.edit.no_verify)?;
    let Some(files) = files else {
        let worktree = BranchWorktree::create(dir, branch)?;
        let outcome = update_in(worktree.path(), branch, args, values, &lock, None, out);
        worktree.finish(matches!(outcome, Ok(Outcome::Changed { .. })));
        return outcome;
    };
    if let Ok(repo) = git2::Repository::open(dir)
        && repo.find_branch(branch, git2::BranchType::Local).is_ok()
    {
        return Err(crate::worktree::branch_exists(&repo, dir, branch));
    }
    update_in(dir, branch, args, values, &lock, Some((files, place)), out)
}

/// The update of the repo at `root` (its work tree, or `from_commit`'s commit, with where
/// git was asked for its hooks) and its commit on `branch`.
fn update_in(
    root: &Path,
    branch: &str,
    args: &UpdateOptions,
    values: &BTreeMap<String, serde_json::Value>,
    lock: &crate::lock::RepoLock,
    from_commit: Option<(CommitFiles, crate::identity::Place)>,
    out: &Reporter,
) -> Result<Outcome> {
    let (files, place) = from_commit.unzip();
    let parent = files.as_ref().map(CommitFiles::commit);
    let update = update::prepare(Request {
        start: root,
        lock,
        blueprint: args.edit.blueprint.as_deref(),
        set: args.set.clone(),
        secrets: args.edit.secrets.clone(),
        values: values.clone(),
        prompter: None,
        commit: files,
    })?;
    let blueprint = format!("{} {}", update.to.name, update.to.version);
    let merge = &update.merge;
    if !merge.conflicts.is_empty() {
        let files = merge
            .conflicts
            .iter()
            .map(|c| c.path.as_str().to_string())
            .collect();
        return Ok(Outcome::Conflicts { blueprint, files });
    }
    if merge.changes.is_empty() {
        return Ok(Outcome::UpToDate { blueprint });
    }
    let message = update.message();
    let commit = match parent.zip(place) {
        Some((parent, place)) => {
            let author = crate::git::resolve_author(args.edit.author.as_deref(), &place)?;
            let change = BranchCommit {
                parent,
                changes: &merge.changes,
                executable: &update.next.executable,
                base: &update.next,
                author: &author,
                message: &message,
                branch,
            };
            crate::transaction::commit_on_new_branch(&update.root, &change)?
        }
        None => {
            // `json` keeps apply from printing its own line: this command reports per repo.
            let quiet = EditOptions {
                json: true,
                ..args.edit.clone()
            };
            apply(
                &update.root,
                &merge.changes,
                &update.next,
                &quiet,
                Some(&message),
                None,
                out,
            )?
            .unwrap_or_default()
        }
    };
    Ok(Outcome::Changed {
        branch: branch.to_string(),
        commit,
        files: merge.changes.len(),
        blueprint,
    })
}

fn describe(result: &Result<Outcome>) -> String {
    match result {
        Ok(Outcome::Changed {
            branch,
            commit,
            files,
            blueprint,
        }) => format!(
            "{blueprint}: {files} file(s) changed, commit {} on branch {branch}",
            &commit[..commit.len().min(12)]
        ),
        Ok(Outcome::UpToDate { blueprint }) => format!("{blueprint}: up to date; no branch made"),
        Ok(Outcome::Conflicts { blueprint, files }) => format!(
            "{blueprint}: conflicts with your edits in {}; no branch made (run `scaffold update` there to resolve them)",
            files.join(", ")
        ),
        Err(e) => format!("refused: {e}"),
    }
}

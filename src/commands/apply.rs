//! What every command that changes an existing repo shares: opening it, the edit report,
//! and the last step: refuse to touch uncommitted files, preview (`--dry-run`), or write
//! the changes and commit them as one. Commands import this, never one another.
use std::path::Path;

use crate::cli::EditArgs;
use crate::edit::{self, Change};
use crate::error::Result;
use crate::generate::Rendered;
use crate::git;
use crate::plan::Plan;
use crate::repo::Repo;
use crate::report::{self, Action, ChangeEntry, EditReport};
use crate::transaction;
use crate::ui;

pub struct ApplyOptions<'a> {
    pub allow_dirty: bool,
    pub dry_run: bool,
    pub author: Option<&'a str>,
    pub json: bool,
}

impl<'a> From<&'a EditArgs> for ApplyOptions<'a> {
    fn from(args: &'a EditArgs) -> Self {
        ApplyOptions {
            allow_dirty: args.allow_dirty,
            dry_run: args.dry_run,
            author: args.author.as_deref(),
            json: args.json,
        }
    }
}

/// Writes `changes` into the repo at `root`, records `base` (the rendering they come from)
/// as its pristine base, and commits them with `message`; with no message, leaves the
/// commit to the user. With a `report`, the result is that report (JSON under `--json`);
/// under `--json` without one, nothing is printed on stdout: the caller prints its own.
/// Returns the commit made.
pub fn apply(
    root: &Path,
    changes: &[Change],
    base: &Plan,
    options: &ApplyOptions,
    message: Option<&str>,
    mut report: Option<EditReport>,
) -> Result<Option<String>> {
    let caller_prints = options.json && report.is_none();
    let prepared = transaction::prepare(root, changes, &base.executable, options.allow_dirty)?;
    if options.dry_run {
        if caller_prints {
            return Ok(None);
        }
        match &report {
            Some(report) if options.json => println!("{}", report::to_json(report)),
            _ => {
                let diff = edit::unified_diff(changes);
                if ui::stdout_colored() {
                    print!("{}", ui::color_diff(&diff));
                } else {
                    print!("{diff}");
                }
            }
        }
        for dep in report.iter().flat_map(|r| &r.added_dependencies) {
            ui::note(format!(
                "adding {} too (needed by {})",
                dep.addon, dep.needed_by
            ));
        }
        ui::note(format!(
            "dry run: {} file(s) would change; nothing written",
            changes.len()
        ));
        return Ok(None);
    }
    if !prepared.dirty.is_empty() {
        ui::note(format!(
            "--allow-dirty: {} your uncommitted edits in {} together with scaffold's change",
            if message.is_some() {
                "committing"
            } else {
                "keeping"
            },
            prepared.dirty.join(", ")
        ));
    }
    let (author, fallback) =
        git::resolve_author(options.author, &crate::identity::Place::repo(root))?;
    let Some(message) = message else {
        prepared.write_only(
            base,
            "scaffold: base (commit left to the user)",
            author.signing.as_ref(),
        )?;
        return Ok(None);
    };
    if fallback {
        ui::note(git::FALLBACK_AUTHOR_NOTE);
    }
    let commit = prepared.commit(&author, message, base)?;
    if let Some(note) = crate::identity::hooks_note(root, &commit, false) {
        ui::note(note);
    }
    let written = changes
        .iter()
        .filter(|c| matches!(c, Change::Write { .. }))
        .count();
    let subject = message.lines().next().unwrap_or_default();
    let short = commit[..commit.len().min(12)].to_string();
    if let Some(report) = report.as_mut() {
        for change in &report.changes {
            ui::detail(format!("{:?} {}", change.action, change.path).to_lowercase());
        }
        report.commit = Some(commit.clone());
        if options.json {
            println!("{}", report::to_json(report));
            return Ok(Some(commit));
        }
        for dep in &report.added_dependencies {
            println!("adding {} too (needed by {})", dep.addon, dep.needed_by);
        }
    }
    if !caller_prints {
        println!(
            "{subject}: {written} file(s) written, {} removed, commit {short}",
            changes.len() - written,
        );
    }
    Ok(Some(commit))
}

/// Merges the repo's difference to `next` into the work tree and commits it, reporting
/// the changes as `report` says.
pub fn change_to(
    repo: &Repo,
    next: &Rendered,
    args: &EditArgs,
    message: &str,
    mut report: EditReport,
) -> Result<()> {
    let changes = repo.changes_to(next)?;
    report.changes = changes.iter().map(change_entry).collect();
    apply(
        &repo.root,
        &changes,
        &next.plan,
        &args.into(),
        Some(message),
        Some(report),
    )
    .map(|_| ())
}

pub fn edit_report(
    command: &'static str,
    addon: &str,
    version: &str,
    args: &EditArgs,
    added: &[(String, String)],
) -> EditReport {
    EditReport {
        command,
        addon: addon.to_string(),
        version: version.to_string(),
        dry_run: args.dry_run,
        commit: None,
        changes: Vec::new(),
        added_dependencies: report::dependencies(added),
    }
}

/// One change as the JSON reports list it.
pub fn change_entry(change: &Change) -> ChangeEntry {
    let (action, bytes) = match change {
        Change::Write {
            contents,
            before: None,
            ..
        } => (Action::Create, contents.len()),
        Change::Write { contents, .. } => (Action::Modify, contents.len()),
        Change::Delete { .. } => (Action::Delete, 0),
    };
    ChangeEntry {
        path: change.path().as_str().to_string(),
        action,
        bytes,
    }
}

/// The repo around `--directory` (settled by `Found::open` under `lock`); secrets from
/// `--secret` or the environment.
pub fn open(edit: &EditArgs, lock: &crate::lock::RepoLock) -> Result<Repo> {
    let secrets = crate::flags::parse_pairs(&edit.secret, "--secret")?;
    Repo::open(&edit.directory, lock, edit.blueprint.as_deref(), &secrets)
}

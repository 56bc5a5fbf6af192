//! The edit session every command that changes an existing repo goes through: open the
//! repo (settled under its lock), build the edit report, and the last step: refuse to touch
//! uncommitted files, preview (`--dry-run`), or write the changes and commit them as one.
//! Commands import this, never one another.
use std::path::Path;

use crate::edit::{self, Change};
use crate::error::Result;
use crate::generate::Rendered;
use crate::git;
use crate::plan::Plan;
use crate::repo::Repo;
use crate::report::{self, Action, ChangeEntry, EditReport};
use crate::settings::EditOptions;
use crate::transaction;
use crate::ui::Reporter;

/// Writes `changes` into the repo at `root`, records `base` (the rendering they come from)
/// as its pristine base, and commits them with `message`; with no message, leaves the
/// commit to the user. With a `report`, the result is that report (JSON under `--json`);
/// under `--json` without one, nothing is printed on stdout: the caller prints its own.
/// Returns the commit made.
pub fn apply(
    root: &Path,
    changes: &[Change],
    base: &Plan,
    options: &EditOptions,
    message: Option<&str>,
    mut report: Option<EditReport>,
    out: &Reporter,
) -> Result<Option<String>> {
    let caller_prints = options.json && report.is_none();
    let prepared = transaction::prepare(root, changes, &base.executable, options.allow_dirty)?;
    if let Some(recovered) = &prepared.recovered {
        out.note(recovered);
    }
    if options.dry_run {
        if caller_prints {
            return Ok(None);
        }
        match &report {
            Some(report) if options.json => out.json(report),
            _ => out.diff(&edit::unified_diff(changes)),
        }
        for dep in report.iter().flat_map(|r| &r.added_dependencies) {
            out.note(format!(
                "adding {} too (needed by {})",
                dep.addon, dep.needed_by
            ));
        }
        out.note(format!(
            "dry run: {} file(s) would change; nothing written",
            changes.len()
        ));
        return Ok(None);
    }
    if !prepared.dirty.is_empty() {
        out.note(format!(
            "--allow-dirty: {} your uncommitted edits in {} together with scaffold's change",
            if message.is_some() {
                "committing"
            } else {
                "keeping"
            },
            prepared.dirty.join(", ")
        ));
    }
    let place = crate::identity::Place::repo(root);
    let author = git::resolve_author(options.author.as_deref(), &place)?;
    let Some(message) = message else {
        prepared.write_only(base, "scaffold: base (commit left to the user)", &author)?;
        return Ok(None);
    };
    let hooks = crate::hooks::Hooks::find(root, &place, !options.no_verify);
    let commit = prepared.commit(&author, message, base, hooks.as_ref())?;
    let written = changes
        .iter()
        .filter(|c| matches!(c, Change::Write { .. }))
        .count();
    let subject = message.lines().next().unwrap_or_default();
    let short = commit[..commit.len().min(12)].to_string();
    if let Some(report) = report.as_mut() {
        for change in &report.changes {
            out.detail(format!("{:?} {}", change.action, change.path).to_lowercase());
        }
        report.commit = Some(commit.clone());
        if options.json {
            out.json(report);
            return Ok(Some(commit));
        }
        for dep in &report.added_dependencies {
            out.line(format!(
                "adding {} too (needed by {})",
                dep.addon, dep.needed_by
            ));
        }
    }
    if !caller_prints {
        out.line(format!(
            "{subject}: {written} file(s) written, {} removed, commit {short}",
            changes.len() - written,
        ));
    }
    Ok(Some(commit))
}

/// Merges the repo's difference to `next` into the work tree and commits it, reporting
/// the changes as `report` says.
pub fn change_to(
    repo: &Repo,
    next: &Rendered,
    options: &EditOptions,
    message: &str,
    mut report: EditReport,
    out: &Reporter,
) -> Result<()> {
    let changes = repo.changes_to(next)?;
    report.changes = changes.iter().map(change_entry).collect();
    apply(
        &repo.root,
        &changes,
        &next.plan,
        options,
        Some(message),
        Some(report),
        out,
    )
    .map(|_| ())
}

pub fn edit_report(
    command: &'static str,
    addon: &str,
    version: &str,
    options: &EditOptions,
    added: &[(String, String)],
) -> EditReport {
    EditReport {
        command,
        addon: addon.to_string(),
        version: version.to_string(),
        dry_run: options.dry_run,
        commit: None,
        changes: Vec::new(),
        added_dependencies: report::dependencies(added),
        promoted: None,
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

/// The repo around `--directory` (settled by `Found::open` under `lock`, which says what
/// it settled); secrets from `--secret` or the environment.
pub fn open(options: &EditOptions, lock: &crate::lock::RepoLock) -> Result<Repo> {
    Repo::open(
        &options.directory,
        lock,
        options.blueprint.as_deref(),
        &options.secrets,
    )
}

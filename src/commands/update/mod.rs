//! `scaffold update`: answers from the command line → `update::prepare` → apply and commit
//! once; a no-op says so, conflicts are shown hunk by hunk (or written as markers).
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use crate::outcome::ExitStatus;
use crate::report::{FleetDocument, FleetEntry};

mod branches;
use crate::edit::{Conflict, ConflictKind};
use crate::edit_session::{apply, change_entry};
use crate::error::{Error, Problem, Result};
use crate::flags::read_values;
use crate::plan::RelPath;
use crate::pristine;
use crate::prompt::Terminal;
use crate::report::{self, AnswerEntry, UpdateReport};
use crate::settings::{OnConflict, UpdateOptions};
use crate::signals;
use crate::ui::Reporter;
use crate::update::{self, Request};

pub fn run(args: UpdateOptions, out: &Reporter) -> Result<ExitStatus> {
    if let Some(branch) = &args.branch {
        return branches::run(&args, branch, out);
    }
    if !args.fleet.is_empty() {
        return fleet(&args, out);
    }
    let set = args.set.clone();
    let values = match &args.values {
        Some(path) => read_values(path)?,
        None => BTreeMap::new(),
    };
    let lock = crate::lock::acquire(&args.edit.directory, "update")?;
    let mut terminal = Terminal::new();
    // Under --json the answers come from flags only: stdout is the JSON document.
    let interactive =
        !args.edit.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let update = update::prepare(Request {
        start: &args.edit.directory,
        lock: &lock,
        blueprint: args.edit.blueprint.as_deref(),
        set,
        secrets: args.edit.secrets.clone(),
        values,
        prompter: if interactive {
            Some(&mut terminal)
        } else {
            None
        },
        commit: None,
    })?;
    let to = format!("blueprint {} {}", update.to.name, update.to.version);
    let mut report = update_report(&update, args.edit.dry_run);
    for warning in &update.warnings {
        out.note(format!("warning: {warning}"));
    }
    let merge = &update.merge;
    if merge.conflicts.is_empty() && merge.changes.is_empty() {
        return nothing_to_change(&args, &update, &report, &to, out);
    }
    if merge.conflicts.is_empty() {
        report.commit = apply(
            &update.root,
            &merge.changes,
            &update.next,
            &args.edit,
            Some(&update.message()),
            None,
            out,
        )?;
        if args.edit.json {
            out.json(&report);
        }
        return Ok(ExitStatus::Success);
    }
    out.problem_text(&describe(&merge.conflicts, &to));
    match args.conflicts {
        OnConflict::Refuse => Err(refusal(&merge.conflicts)),
        OnConflict::Markers => leave_markers(&args, &update, report, out),
    }
}

/// Nothing in the files changes: the base moves to what they now match (that one ref
/// write is the run's commit point), and the run says so.
fn nothing_to_change(
    args: &UpdateOptions,
    update: &update::Update,
    report: &UpdateReport,
    to: &str,
    out: &Reporter,
) -> Result<ExitStatus> {
    let stored = update.base_stored && update.up_to_date && !update.remote_unmerged;
    if !stored && !args.edit.dry_run {
        let author = crate::git::resolve_author(
            args.edit.author.as_deref(),
            &crate::identity::Place::repo(&update.root),
        )?;
        let _guard = signals::TransactionGuard::enter();
        pristine::store(
            &update.root,
            &update.next,
            "scaffold: base recorded by update",
            &crate::git::base_by(&author)?,
        )?;
        signals::mark_committed();
        out.note(format!(
            "note: recorded the pristine base in {}",
            pristine::BASE_REF
        ));
    }
    if args.edit.json {
        out.json(report);
    } else if update.up_to_date {
        out.line(format!("already up to date with {to}; nothing to do"));
    } else {
        out.line(format!("your files already match {to}; nothing to commit"));
    }
    Ok(ExitStatus::Success)
}

/// `--conflicts=refuse`: nothing written, the hunks counted.
fn refusal(conflicts: &[Conflict]) -> Error {
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    let hunks: usize = conflicts
        .iter()
        .map(|c| match &c.kind {
            ConflictKind::Lines { hunks, .. } => hunks.len(),
            _ => 1,
        })
        .sum();
    Error::refused(
        Problem::new(format!(
            "update conflicts with your edits in {} ({hunks} hunk(s) above)",
            paths.join(", ")
        ))
        .fix("nothing was written: undo those edits, or rerun with --conflicts=markers to resolve them in the files"),
    )
}

/// `--conflicts=markers`: the update written with its conflicts marked in the files (and
/// the blueprint's version of a file-level conflict beside yours), left for you to
/// resolve and commit with the message kept under .git/.
fn leave_markers(
    args: &UpdateOptions,
    update: &update::Update,
    mut report: UpdateReport,
    out: &Reporter,
) -> Result<ExitStatus> {
    let marked = update::with_markers(&update.merge, &update.next)?;
    for (path, copy) in &marked.copies {
        out.problem(format!(
            "  the blueprint's version of {} is in {}",
            path.as_str(),
            copy.as_str()
        ));
    }
    let changes = &marked.changes;
    apply(
        &update.root,
        changes,
        &update.next,
        &args.edit,
        None,
        None,
        out,
    )?;
    if args.edit.json {
        report.changes = changes.iter().map(change_entry).collect();
        out.json(&report);
    }
    if args.edit.dry_run {
        return Ok(ExitStatus::Success);
    }
    // Only the files scaffold wrote: the user's other work stays out of the commit, and
    // the whole message (its "Answers:" body too) is kept in a file under .git/.
    let copies: Vec<&RelPath> = marked.copies.iter().map(|(_, copy)| copy).collect();
    let written: Vec<String> = changes
        .iter()
        .filter(|c| !copies.contains(&c.path()))
        .map(|c| shell_quote(c.path().as_str()))
        .collect();
    let message_file = git_dir(&update.root).join(COMMIT_MESSAGE);
    std::fs::write(&message_file, update.message())
        .map_err(|e| Error::io_path("write", &message_file, e))?;
    let root = shell_quote(&update.root.display().to_string());
    let copies_note = if copies.is_empty() {
        String::new()
    } else {
        format!(
            " (merge each {} copy into its file by hand, then delete it: {})",
            update::BLUEPRINT_COPY,
            copies
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let paths: Vec<&str> = update
        .merge
        .conflicts
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    out.findings(format!(
        "conflicts left in {}: resolve them (the markers, or the files listed above){copies_note}, then `git -C {root} add -- {} && git -C {root} commit -F {}`",
        paths.join(", "),
        written.join(" "),
        shell_quote(&message_file.display().to_string())
    ));
    Ok(ExitStatus::Findings)
}

/// `update --dry-run REPO REPO…`: each repo's update prepared on every core (nothing
/// written, nobody asked), reported in the order given with one summary; the exit status
/// is the worst: a repo that could not be prepared (its own code), then conflicts (1).
fn fleet(args: &UpdateOptions, out: &Reporter) -> Result<ExitStatus> {
    let set = args.set.clone();
    let secrets = args.edit.secrets.clone();
    let values = match &args.values {
        Some(path) => read_values(path)?,
        None => BTreeMap::new(),
    };
    let repos = args.fleet.as_slice();
    let one = |dir: &std::path::PathBuf| -> Result<UpdateReport> {
        let lock = crate::lock::acquire(dir, "update --dry-run")?;
        let update = update::prepare(Request {
            start: dir,
            lock: &lock,
            blueprint: args.edit.blueprint.as_deref(),
            set: set.clone(),
            secrets: secrets.clone(),
            values: values.clone(),
            prompter: None,
            commit: None,
        })?;
        Ok(update_report(&update, true))
    };
    let results: Vec<(usize, Result<UpdateReport>)> = crate::parallel::map(repos, one)
        .into_iter()
        .enumerate()
        .collect();
    let (mut current, mut changing, mut conflicted, mut failed) = (0, 0, 0, 0);
    for (_, result) in &results {
        match result {
            Ok(r) if !r.conflicts.is_empty() => conflicted += 1,
            Ok(r) if r.changes.is_empty() => current += 1,
            Ok(_) => changing += 1,
            Err(_) => failed += 1,
        }
    }
    let summary = format!(
        "{} repos: {current} up to date, {changing} would change, {conflicted} with conflicts, {failed} not prepared",
        repos.len()
    );
    if args.edit.json {
        let entries = results
            .iter()
            .map(|(i, result)| {
                let root = repos[*i].display().to_string();
                match result {
                    Ok(update) => FleetEntry::Done(report::UpdateFleetEntry { root, update }),
                    Err(e) => FleetEntry::Failed(report::fleet_error(&root, e)),
                }
            })
            .collect();
        out.json(&FleetDocument {
            version: 1,
            repos: entries,
            summary: report::UpdateFleetSummary {
                repos: repos.len(),
                up_to_date: current,
                would_change: changing,
                with_conflicts: conflicted,
                not_prepared: failed,
            },
        });
    } else {
        for (i, result) in &results {
            let dir = repos[*i].display();
            match result {
                Ok(r) => {
                    let blueprint = if r.from.name == r.to.name && r.from.version == r.to.version {
                        format!("{} {}", r.to.name, r.to.version)
                    } else {
                        format!(
                            "{} {} → {} {}",
                            r.from.name, r.from.version, r.to.name, r.to.version
                        )
                    };
                    let what = if !r.conflicts.is_empty() {
                        format!(
                            "{} file(s) would change, conflicts in {}",
                            r.changes.len(),
                            r.conflicts.join(", ")
                        )
                    } else if r.changes.is_empty() {
                        "up to date".to_string()
                    } else {
                        format!("{} file(s) would change", r.changes.len())
                    };
                    out.line(format!("{dir}: {blueprint}: {what}"));
                    for warning in &r.warnings {
                        out.line(format!("  warning: {warning}"));
                    }
                }
                Err(e) => out.line(format!("{dir}: not prepared: {e}")),
            }
        }
        out.line(format!("update --dry-run: {summary}"));
    }
    let results = results.into_iter().map(|(_, r)| r);
    let summary = format!("update --dry-run: {summary}");
    ExitStatus::of_fleet(results, conflicted > 0, &summary, out)
}

/// The `--json` report of `update`, before anything is written.
fn update_report(update: &update::Update, dry_run: bool) -> UpdateReport {
    let id = |b: &crate::record::BlueprintId| report::BlueprintId {
        name: b.name.clone(),
        version: b.version.clone(),
    };
    UpdateReport {
        command: "update",
        from: id(&update.from),
        to: id(&update.to),
        dry_run,
        commit: None,
        up_to_date: update.up_to_date,
        answers: update
            .answers
            .iter()
            .map(|a| AnswerEntry {
                key: a.key.clone(),
                before: a.before.clone(),
                after: a.after.clone(),
            })
            .collect(),
        warnings: update.warnings.clone(),
        changes: update.merge.changes.iter().map(change_entry).collect(),
        conflicts: update
            .merge
            .conflicts
            .iter()
            .map(|c| c.path.as_str().to_string())
            .collect(),
    }
}

/// Where a `--conflicts=markers` run leaves the commit message for the user's commit.
const COMMIT_MESSAGE: &str = "SCAFFOLD_COMMIT_MSG";

/// The repository's git directory (`.git`, or where a `.git` file points).
fn git_dir(root: &std::path::Path) -> std::path::PathBuf {
    git2::Repository::open(root)
        .map(|r| r.path().to_path_buf())
        .unwrap_or_else(|_| root.join(".git"))
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Each conflict as `CONFLICT file:line: why`, then its base, your and the new lines.
fn describe(conflicts: &[Conflict], theirs: &str) -> String {
    let mut out = String::new();
    for conflict in conflicts {
        let path = conflict.path.as_str();
        match &conflict.kind {
            ConflictKind::Lines { hunks, .. } => {
                for hunk in hunks {
                    let _ = writeln!(out, "CONFLICT {path}:{}: {}", hunk.line, conflict.why());
                    for (label, text) in [
                        ("base", &hunk.base),
                        ("yours", &hunk.ours),
                        (theirs, &hunk.theirs),
                    ] {
                        let _ = writeln!(out, "  {label}:");
                        if text.is_empty() {
                            let _ = writeln!(out, "    (no lines)");
                        }
                        for line in text.lines() {
                            let _ = writeln!(out, "    {line}");
                        }
                    }
                }
            }
            _ => {
                let _ = writeln!(out, "CONFLICT {path}: {}", conflict.why());
            }
        }
    }
    out
}

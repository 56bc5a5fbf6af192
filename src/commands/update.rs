//! `scaffold update`: answers from the command line → `update::prepare` → apply and commit
//! once; a no-op says so, conflicts are shown hunk by hunk (or written as markers).
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use crate::cli::{Conflicts, UpdateArgs};
use crate::commands::apply::{ApplyOptions, apply};
use crate::commands::new::{parse_pairs, read_values};
use crate::edit::{Change, Conflict, ConflictKind};
use crate::error::{Error, Result};
use crate::pristine;
use crate::prompt::Terminal;
use crate::signals;
use crate::update::{self, Request};

pub fn run(args: UpdateArgs) -> Result<()> {
    if args.edit.json {
        return Err(Error::Input(
            "--json: update has no JSON output yet; drop --json (the result is the commit it prints)".into(),
        ));
    }
    let set = parse_pairs(&args.set, "--set")?;
    let values = match &args.values {
        Some(path) => read_values(path)?,
        None => BTreeMap::new(),
    };
    let mut terminal = Terminal::new();
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let update = update::prepare(Request {
        start: &args.edit.directory,
        blueprint: args.edit.blueprint.as_deref(),
        set,
        secrets: parse_pairs(&args.edit.secret, "--secret")?,
        values,
        prompter: if interactive {
            Some(&mut terminal)
        } else {
            None
        },
    })?;
    let to = format!("blueprint {} {}", update.to.name, update.to.version);
    let options = ApplyOptions::from(&args.edit);
    let merge = &update.merge;
    if merge.conflicts.is_empty() && merge.changes.is_empty() {
        let stored = update.base_stored && update.up_to_date;
        if !stored && !args.edit.dry_run {
            // Nothing to commit, but the base moves to what the files now match: that one
            // ref write is this run's commit point.
            let _guard = signals::TransactionGuard::enter();
            pristine::store(
                &update.root,
                &update.next,
                "scaffold: base recorded by update",
            )?;
            signals::mark_committed();
            eprintln!("note: recorded the pristine base in {}", pristine::BASE_REF);
        }
        if update.up_to_date {
            println!("already up to date with {to}; nothing to do");
        } else {
            println!("your files already match {to}; nothing to commit");
        }
        return Ok(());
    }
    if merge.conflicts.is_empty() {
        return apply(
            &update.root,
            &merge.changes,
            &update.next,
            &options,
            Some(&update.message()),
            None,
        );
    }
    eprint!("{}", describe(&merge.conflicts, &to));
    let paths: Vec<&str> = merge.conflicts.iter().map(|c| c.path.as_str()).collect();
    match args.conflicts {
        Conflicts::Refuse => Err(Error::Refused(format!(
            "update conflicts with your edits in {} ({} hunk(s) above); nothing was written: undo those edits, or rerun with --conflicts=markers to resolve them in the files",
            paths.join(", "),
            merge
                .conflicts
                .iter()
                .map(|c| match &c.kind {
                    ConflictKind::Lines { hunks, .. } => hunks.len(),
                    _ => 1,
                })
                .sum::<usize>()
        ))),
        Conflicts::Markers => {
            let mut changes = merge.changes.clone();
            for conflict in &merge.conflicts {
                if let ConflictKind::Lines { marked, before, .. } = &conflict.kind {
                    changes.push(Change::Write {
                        path: conflict.path.clone(),
                        contents: marked.clone(),
                        before: Some(before.clone()),
                    });
                }
            }
            apply(&update.root, &changes, &update.next, &options, None, None)?;
            if args.edit.dry_run {
                return Ok(());
            }
            let subject = update.message();
            let subject = subject.lines().next().unwrap_or_default();
            Err(Error::Findings(format!(
                "conflicts left in {}: resolve them (the markers, or the files listed above), then `git add -A && git commit -m \"{subject}\"`",
                paths.join(", ")
            )))
        }
    }
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

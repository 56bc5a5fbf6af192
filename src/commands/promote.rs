//! `scaffold promote --from A --to B [COMPONENT…]`: every component both environments run
//! (chosen addons, always-on components, added dependencies, apps, custom charts) takes
//! A's chart version and values in B, as one commit whose message lists what moved. The
//! values B owns (`add-addon --env B --helm-set`) stay unless `--values`; nothing to do
//! (and no commit) when B already runs what A runs. The model is `crate::promotion`.
use crate::edit_session::{change_to, edit_report, open};
use crate::error::{Error, Problem, Result};
use crate::outcome::ExitStatus;
use crate::promotion::{
    carry_over, changed, check_owned_keys, check_pair, components, conflicts, env_catalog, outcome,
};
use crate::report::PromotedEntry;
use crate::settings::PromoteOptions;
use crate::ui::Reporter;

pub fn promote(args: PromoteOptions, out: &Reporter) -> Result<ExitStatus> {
    let (from, to) = (args.from.as_str(), args.to.as_str());
    let lock = crate::lock::acquire(&args.edit.directory, &format!("promote {from} {to}"))?;
    let repo = open(&args.edit, &lock)?;
    check_pair(&repo, from, to)?;
    let source = env_catalog(&repo, &repo.record, from)?;
    let target = env_catalog(&repo, &repo.record, to)?;
    let names = components(&repo, (from, to), &args.addons, (&source, &target))?;
    check_owned_keys(&repo.record, to, &names, &args.values)?;
    let mut record = repo.record.clone();
    carry_over(&repo, &mut record, from, to, &names, &args.values)?;
    let after = env_catalog(&repo, &record, to)?;
    let entries = outcome(&target, &after, &repo.record, to, &names, &args.values);
    let conflicts = conflicts(&repo, to, &entries)?;
    if !conflicts.is_empty() {
        return Err(Error::refused(
            Problem::new(format!(
                "promote {from} → {to} would conflict with what was edited by hand in {to}: {}",
                conflicts.join(", ")
            ))
            .fix(format!(
                "keep {to}'s value with `scaffold add-addon NAME --env {to} --helm-set KEY=VALUE`, or undo the edit; nothing was changed"
            )),
        ));
    }
    let moved = entries.iter().any(changed);
    let next = repo.render(&record)?;
    if !moved || repo.changes_to(&next)?.is_empty() {
        nothing_to_do(&args, &names, &entries, out);
        return Ok(ExitStatus::Success);
    }
    let mut report = edit_report("promote", &names.join(","), "", &args.edit, &[]);
    report.promoted = Some(entries.clone());
    let lines = summary(&entries);
    if !args.edit.json {
        for line in &lines {
            out.note(line);
        }
    }
    let message = format!(
        "scaffold: promote {from} → {to}\n\n{}",
        lines
            .iter()
            .map(|l| format!("- {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    change_to(&repo, &next, &args.edit, &message, report, out)?;
    Ok(ExitStatus::Success)
}

/// The changelog lines of a promotion: what moved, then what stayed.
fn summary(entries: &[PromotedEntry]) -> Vec<String> {
    let mut lines = Vec::new();
    for entry in entries.iter().filter(|e| changed(e)) {
        let name = &entry.component;
        if entry.version_before != entry.version_after {
            lines.push(format!(
                "{name} {} → {}",
                entry.version_before, entry.version_after
            ));
        }
        if !entry.moved.is_empty() {
            lines.push(format!("{name} values moved: {}", entry.moved.join(", ")));
        }
    }
    for entry in entries.iter().filter(|e| !e.kept.is_empty()) {
        lines.push(format!(
            "{} values kept (the target's own): {}",
            entry.component,
            entry.kept.join(", ")
        ));
    }
    lines
}

fn nothing_to_do(
    args: &PromoteOptions,
    names: &[String],
    entries: &[PromotedEntry],
    out: &Reporter,
) {
    if args.edit.json {
        let mut report = edit_report("promote", &names.join(","), "", &args.edit, &[]);
        report.promoted = Some(entries.to_vec());
        out.json(&report);
        return;
    }
    let compared = if names.is_empty() {
        "no shared component".to_string()
    } else {
        names.join(", ")
    };
    out.line(format!(
        "{} already runs {}'s versions and values; nothing to do (compared: {compared})",
        args.to, args.from
    ));
    for entry in entries.iter().filter(|e| !e.kept.is_empty()) {
        out.note(format!(
            "{} values kept (the target's own): {}",
            entry.component,
            entry.kept.join(", ")
        ));
    }
}

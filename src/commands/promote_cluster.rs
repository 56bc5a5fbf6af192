//! `scaffold promote --from A --to B --cluster`: B takes A's cluster version pins (the
//! blueprint's `cluster_pins`, per-environment answers such as kops and Kubernetes) in
//! the order the blueprint lists them, refusing a move backwards, a Kubernetes minor
//! skipped, a Kubernetes newer than B's kops would then support, or a version A has not
//! applied (the blueprint's `cluster_pins_applied` file); the commit message and the
//! output give B's upgrade steps in that order, and B's rendering (its runbook) takes the
//! new versions.
use serde_json::{Map, Value as Json};

use crate::answers::Answers;
use crate::edit_session::{change_to, edit_report, open};
use crate::error::{Error, Problem, Result};
use crate::manifest::{ClusterPin, PinKind};
use crate::outcome::ExitStatus;
use crate::record::Record;
use crate::repo::Repo;
use crate::report::PromotedEntry;
use crate::settings::PromoteOptions;
use crate::ui::Reporter;
use crate::version::tuple;

/// One pin that moves: which, and its version in the target before and after.
struct Move<'a> {
    pin: &'a ClusterPin,
    before: String,
    after: String,
}

pub fn promote_cluster(args: PromoteOptions, out: &Reporter) -> Result<ExitStatus> {
    let (from, to) = (args.from.as_str(), args.to.as_str());
    let lock = crate::lock::acquire(&args.edit.directory, &format!("promote {from} {to}"))?;
    let repo = &open(&args.edit, &lock)?;
    crate::promotion::check_pair(repo, from, to)?;
    let pins = &repo.blueprint.manifest.cluster_pins;
    if pins.is_empty() {
        return Err(Error::input(
            Problem::new(format!(
                "--cluster: blueprint {} declares no cluster_pins",
                repo.blueprint.manifest.name
            ))
            .fix("promote components instead (without --cluster)"),
        ));
    }
    let answers = repo.gather(&repo.record, Vec::new())?;
    let (source, target) = (own(&answers, from)?, own(&answers, to)?);
    let mut moves = Vec::new();
    for pin in pins {
        let (after, before) = (pin_of(source, pin, from)?, pin_of(target, pin, to)?);
        if after != before {
            moves.push(Move { pin, before, after });
        }
    }
    let pinned = |kind: PinKind| {
        pins.iter()
            .find(|p| p.kind == kind)
            .and_then(|p| target.values.get(&p.key).and_then(Json::as_str))
    };
    check_order(&moves, from, to, pinned(PinKind::Kops))?;
    check_applied(repo, &moves, from, to)?;
    let compared: Vec<&str> = pins.iter().map(|p| p.key.as_str()).collect();
    if moves.is_empty() {
        let mut report = edit_report("promote", &compared.join(","), "", &args.edit, &[]);
        report.promoted = Some(Vec::new());
        match args.edit.json {
            true => out.json(&report),
            false => out.line(format!(
                "{to} already runs {from}'s cluster versions; nothing to do (compared: {})",
                compared.join(", ")
            )),
        }
        return Ok(ExitStatus::Success);
    }
    let mut record = repo.record.clone();
    for step in &moves {
        record
            .environments
            .entry(to.to_string())
            .or_default()
            .insert(step.pin.key.clone(), Json::String(step.after.clone()));
    }
    let next_answers = repo.gather(&record, Vec::new())?;
    recorded(&mut record, &next_answers);
    let next = repo.render_with(&next_answers, &record)?;
    let steps = steps(repo, to, &moves)?;
    let message = format!(
        "scaffold: promote {from} → {to} (cluster versions)\n\n{}\n\nUpgrade {to} in this order:\n{}",
        moves
            .iter()
            .map(|m| format!("- {} {} → {}", m.pin.key, m.before, m.after))
            .collect::<Vec<_>>()
            .join("\n"),
        steps.join("\n")
    );
    if !args.edit.json {
        for line in &steps {
            out.note(line);
        }
    }
    let mut report = edit_report("promote", &compared.join(","), "", &args.edit, &[]);
    report.promoted = Some(moves.iter().map(entry).collect());
    change_to(repo, &next, &args.edit, &message, report, out)?;
    Ok(ExitStatus::Success)
}

fn own<'a>(answers: &'a Answers, env: &str) -> Result<&'a Answers> {
    answers
        .environments
        .iter()
        .find(|(name, _)| name == env)
        .map(|(_, own)| own)
        .ok_or_else(|| Error::input(format!("{env}: not an environment of this repo")))
}

fn pin_of(answers: &Answers, pin: &ClusterPin, env: &str) -> Result<String> {
    answers
        .values
        .get(&pin.key)
        .and_then(Json::as_str)
        .map(String::from)
        .ok_or_else(|| {
            Error::blueprint(format!(
                "cluster_pins: `{}` is no per-environment answer of {env}",
                pin.key
            ))
        })
}

/// Refuses a move backwards, a Kubernetes minor skipped, and a Kubernetes minor newer than
/// the kops the target runs after the move (kops moves first).
fn check_order(moves: &[Move], from: &str, to: &str, kops_now: Option<&str>) -> Result<()> {
    let refuse = |what: String, fix: String| {
        Err(Error::refused(
            Problem::new(format!("promote {from} → {to} --cluster: {what}")).fix(fix),
        ))
    };
    let mut kops = kops_now.map(String::from);
    for step in moves {
        let (before, after) = (tuple(&step.before), tuple(&step.after));
        let key = &step.pin.key;
        if after < before {
            return refuse(
                format!(
                    "{to} runs {key} {}, newer than {from}'s {}",
                    step.before, step.after
                ),
                "promotion moves versions forward only; nothing was changed".into(),
            );
        }
        match step.pin.kind {
            PinKind::Kops => kops = Some(step.after.clone()),
            PinKind::Kubernetes if after.1 > before.1 + 1 => {
                return refuse(
                    format!(
                        "Kubernetes {} → {} skips a minor (one minor at a time)",
                        step.before, step.after
                    ),
                    format!(
                        "promote to {to} from an environment on 1.{}, or set {to}.{key} to a 1.{} release with `scaffold update --set {to}.{key}=…`; nothing was changed",
                        before.1 + 1,
                        before.1 + 1
                    ),
                );
            }
            PinKind::Kubernetes => {
                if let Some(kops) = &kops
                    && tuple(kops).1 < after.1
                {
                    return refuse(
                        format!(
                            "Kubernetes {} needs kops 1.{} or newer first; {to} runs kops {kops}",
                            step.after, after.1
                        ),
                        format!(
                            "move kops first: promote a kops of 1.{} to {to} (from an environment that runs it); nothing was changed",
                            after.1
                        ),
                    );
                }
            }
            PinKind::Other => {}
        }
    }
    Ok(())
}

/// Refuses a pin the source environment has not applied yet: scaffold is offline, so
/// what a cluster runs is what the blueprint's `cluster_pins_applied` file of the source
/// records (the generated make targets write it after each step succeeds).
fn check_applied(repo: &Repo, moves: &[Move], from: &str, to: &str) -> Result<()> {
    let Some(template) = &repo.blueprint.manifest.cluster_pins_applied else {
        return Ok(());
    };
    let context = serde_json::json!({ "environment": from });
    let path = repo.render_text("cluster_pins_applied", template, &context)?;
    let applied = applied_versions(&repo.root.join(&path), &path)?;
    for step in moves {
        let key = &step.pin.key;
        let recorded = applied.get(key).and_then(Json::as_str);
        if recorded == Some(step.after.as_str()) {
            continue;
        }
        let records = match recorded {
            Some(version) => format!("{path} records {version}"),
            None => format!("{path} records no {key}"),
        };
        return Err(Error::refused(
            Problem::new(format!(
                "promote {from} → {to} --cluster: {from} has not applied {key} {} yet ({records})",
                step.after
            ))
            .fix(format!(
                "upgrade {from} first (its runbook's steps record each applied version in {path}), commit {path}, then promote; nothing was changed"
            )),
        ));
    }
    Ok(())
}

/// The pins an environment's file records (absent: none applied yet).
fn applied_versions(file: &std::path::Path, path: &str) -> Result<Map<String, Json>> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(Error::io_path("read", file, e)),
    };
    match crate::yaml::to_json(&text) {
        Ok(Json::Object(map)) => Ok(map),
        Ok(Json::Null) => Ok(Map::new()),
        _ => Err(Error::input(
            Problem::new(format!(
                "{path}: not a map of applied versions (`key: \"version\"` lines)"
            ))
            .fix(format!(
                "restore {path} from git, or delete it and re-run the make targets that record it"
            )),
        )),
    }
}

/// Keeps only each environment's asked, non-secret answers in the record, as `env add` does.
fn recorded(record: &mut Record, answers: &Answers) {
    for (env, own) in &answers.environments {
        let kept: Map<String, Json> = own
            .recorded
            .iter()
            .filter_map(|k| own.values.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        record.environments.insert(env.clone(), kept);
    }
}

/// The target's upgrade steps, numbered, in the blueprint's order.
fn steps(repo: &Repo, to: &str, moves: &[Move]) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for (at, step) in moves.iter().enumerate() {
        let context =
            serde_json::json!({ "environment": to, "from": step.before, "to": step.after });
        let text = repo
            .renderer()
            .render_str("cluster_pins step", &step.pin.step, &context)?;
        lines.push(format!("{}. {text}", at + 1));
    }
    Ok(lines)
}

fn entry(step: &Move) -> PromotedEntry {
    PromotedEntry {
        component: step.pin.key.clone(),
        version_before: step.before.clone(),
        version_after: step.after.clone(),
        moved: Vec::new(),
        kept: Vec::new(),
    }
}

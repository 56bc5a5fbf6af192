//! `scaffold promote --from A --to B [ADDON…]`: each addon both environments run takes
//! A's own chart version and values (its overlay) in B, as one commit whose message lists
//! what moved; nothing to do when they match.
use serde_json::{Map, Value as Json};

use crate::cli::PromoteArgs;
use crate::commands::addon_envs;
use crate::commands::apply::{change_to, edit_report, open};
use crate::error::{Error, Result};

pub fn promote(args: PromoteArgs) -> Result<()> {
    let (from, to) = (&args.from, &args.to);
    if from == to {
        return Err(Error::Input(format!(
            "--from and --to are both {from}: name two environments"
        )));
    }
    let lock = crate::lock::acquire(&args.edit.directory, &format!("promote {from} {to}"))?;
    let repo = open(&args.edit, &lock)?;
    let Some(_) = addon_envs::targets(&repo.blueprint, &repo.record, &[from.clone(), to.clone()])
        .map_err(|e| Error::Input(e.to_string().replace("--env", "--from/--to")))?
    else {
        return Err(Error::Input(
            "this repo has one environment (its blueprint chooses addons once); there is nothing to promote between".into(),
        ));
    };
    let addons_key = repo.blueprint.manifest.addons_answer();
    let runs_from = addon_envs::chosen_in(&repo.record, from, addons_key);
    let runs_to = addon_envs::chosen_in(&repo.record, to, addons_key);
    let names: Vec<String> = if args.addons.is_empty() {
        runs_from
            .iter()
            .filter(|n| runs_to.contains(n))
            .cloned()
            .collect()
    } else {
        for name in &args.addons {
            for (env, runs) in [(from, &runs_from), (to, &runs_to)] {
                if !runs.contains(name) {
                    return Err(Error::Input(format!(
                        "{name} is not in {env} (add it with `scaffold add-addon {name} --env {env}`)"
                    )));
                }
            }
        }
        args.addons.clone()
    };
    let own = |env: &str, name: &str| {
        repo.record
            .environment_addon_settings
            .get(env)
            .and_then(|s| s.get(name))
            .cloned()
    };
    let shared_version = |name: &str| {
        repo.rendered
            .addons
            .get(name)
            .and_then(|a| a.pointer("/chart/version"))
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut record = repo.record.clone();
    let mut lines = Vec::new();
    for name in &names {
        let (a, b) = (own(from, name), own(to, name));
        if a == b {
            continue;
        }
        let version_of = |s: &Option<Json>| {
            s.as_ref()
                .and_then(|s| s.get("version"))
                .and_then(Json::as_str)
                .map(String::from)
                .unwrap_or_else(|| shared_version(name))
        };
        let (va, vb) = (version_of(&a), version_of(&b));
        if va != vb {
            lines.push(format!("{name} {vb} → {va}"));
        }
        let values_of = |s: &Option<Json>| s.as_ref().and_then(|s| s.get("values")).cloned();
        let mut paths = Vec::new();
        changed_paths(
            "",
            &values_of(&b).unwrap_or(Json::Null),
            &values_of(&a).unwrap_or(Json::Null),
            &mut paths,
        );
        if !paths.is_empty() {
            lines.push(format!("{name} values: {}", paths.join(", ")));
        }
        let settings = record
            .environment_addon_settings
            .entry(to.clone())
            .or_default();
        match a {
            Some(a) => {
                settings.insert(name.clone(), a);
            }
            None => {
                settings.remove(name);
            }
        }
        if settings.is_empty() {
            record.environment_addon_settings.remove(to);
        }
    }
    if lines.is_empty() {
        if args.edit.json {
            let report = edit_report("promote", &names.join(","), "", &args.edit, &[]);
            println!("{}", crate::report::to_json(&report));
        } else {
            println!(
                "{to} already runs {from}'s versions and values of {}; nothing to do",
                if names.is_empty() {
                    "no shared addon".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
        return Ok(());
    }
    let next = repo.render(&record)?;
    let report = edit_report("promote", &names.join(","), "", &args.edit, &[]);
    let message = format!(
        "scaffold: promote {from} → {to}\n\n{}",
        lines
            .iter()
            .map(|l| format!("- {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    if !args.edit.json {
        for line in &lines {
            crate::ui::note(line.clone());
        }
    }
    change_to(&repo, &next, &args.edit, &message, report)
}

/// The dotted paths where `before` and `after` differ (leaves, or a whole side missing).
fn changed_paths(at: &str, before: &Json, after: &Json, out: &mut Vec<String>) {
    let join = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (before, after) {
        (Json::Object(b), Json::Object(a)) => {
            let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
            for key in keys {
                let null = Json::Null;
                changed_paths(
                    &join(key),
                    b.get(key).unwrap_or(&null),
                    a.get(key).unwrap_or(&null),
                    out,
                );
            }
        }
        (Json::Null, Json::Object(a)) => {
            changed_paths(at, &Json::Object(Map::new()), &Json::Object(a.clone()), out)
        }
        (Json::Object(b), Json::Null) => {
            changed_paths(at, &Json::Object(b.clone()), &Json::Object(Map::new()), out)
        }
        (b, a) if b != a => out.push(if at.is_empty() {
            "(all)".into()
        } else {
            at.to_string()
        }),
        _ => {}
    }
}

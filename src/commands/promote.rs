//! `scaffold promote --from A --to B [ADDON…]`: each addon both environments run takes
//! A's own chart version and values (its overlay) in B, as one commit whose message lists
//! what moved; nothing to do when they match.
use serde_json::{Map, Value as Json};

use super::ExitStatus;
use crate::addon_envs;
use crate::edit_session::{change_to, edit_report, open};
use crate::error::{Error, Problem, Result};
use crate::settings::PromoteOptions;
use crate::ui::Reporter;

pub fn promote(args: PromoteOptions, out: &Reporter) -> Result<ExitStatus> {
    let (from, to) = (&args.from, &args.to);
    if from == to {
        return Err(Error::input(format!(
            "--from and --to are both {from}: name two environments"
        )));
    }
    let lock = crate::lock::acquire(&args.edit.directory, &format!("promote {from} {to}"))?;
    let repo = open(&args.edit, &lock)?;
    let both = [from.clone(), to.clone()];
    let Some(_) = addon_envs::targets(&repo.blueprint, &repo.record, &both, "--from/--to")? else {
        return Err(Error::input(
            Problem::new("this repo has one environment (its blueprint chooses addons once)")
                .fix("there is nothing to promote between"),
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
                    return Err(Error::input(format!(
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
    let disk =
        |path: &str| -> Result<Option<String>> {
            let Ok(path) = crate::plan::RelPath::new(path) else {
                return Ok(None);
            };
            Ok(crate::write::read(&repo.root, &path)?
                .map(|b| String::from_utf8_lossy(&b).into_owned()))
        };
    fn in_plan(plan: &crate::plan::Plan) -> impl Fn(&str) -> Result<Option<String>> + '_ {
        move |path| {
            Ok(crate::plan::RelPath::new(path)
                .ok()
                .and_then(|p| plan.files.get(&p))
                .map(|b| String::from_utf8_lossy(b).into_owned()))
        }
    }
    // `to` takes `from`'s own settings, and what a hand edit or Renovate changed in
    // `from`'s overlay since scaffold wrote it (where the blueprint says the overlay is).
    let mut record = repo.record.clone();
    for name in &names {
        let mut setting = own(from, name);
        if let (Some(now), Some(written)) = (
            overlay_of(&repo, from, name, &disk)?,
            overlay_of(&repo, from, name, &in_plan(&repo.rendered.plan))?,
        ) {
            let mut map = match setting.take() {
                Some(Json::Object(map)) => map,
                _ => Map::new(),
            };
            if now.0 != written.0
                && let Some(version) = now.0
            {
                map.insert("version".into(), Json::String(version));
            }
            if now.1 != written.1 {
                let delta = merge_patch(
                    written.1.as_ref().unwrap_or(&Json::Null),
                    now.1.as_ref().unwrap_or(&Json::Null),
                );
                let values = map
                    .entry("values")
                    .or_insert_with(|| Json::Object(Map::new()));
                crate::catalog::merge_into(values, &delta);
            }
            setting = (!map.is_empty()).then_some(Json::Object(map));
        }
        let settings = record
            .environment_addon_settings
            .entry(to.clone())
            .or_default();
        match setting {
            Some(setting) => {
                settings.insert(name.clone(), setting);
            }
            None => {
                settings.remove(name);
            }
        }
        if settings.is_empty() {
            record.environment_addon_settings.remove(to);
        }
    }
    let next = repo.render(&record)?;
    // What changes in `to`: its overlay as it is against as it will be (the record's
    // settings where the blueprint declares no overlay).
    let mut lines = Vec::new();
    for name in &names {
        let (before, after) = match (
            overlay_of(&repo, to, name, &disk)?,
            overlay_of(&repo, to, name, &in_plan(&next.plan))?,
        ) {
            (Some(before), Some(after)) => (before, after),
            _ => {
                let of = |s: Option<Json>| {
                    let version = s
                        .as_ref()
                        .and_then(|s| s.get("version"))
                        .and_then(Json::as_str)
                        .map(String::from);
                    (version, s.and_then(|s| s.get("values").cloned()))
                };
                let after = record
                    .environment_addon_settings
                    .get(to.as_str())
                    .and_then(|s| s.get(name))
                    .cloned();
                (of(own(to, name)), of(after))
            }
        };
        let shared = || {
            repo.rendered
                .addons
                .get(name)
                .and_then(|a| a.pointer("/chart/version"))
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let (vb, va) = (
            before.0.unwrap_or_else(shared),
            after.0.unwrap_or_else(shared),
        );
        if vb != va {
            lines.push(format!("{name} {vb} → {va}"));
        }
        let mut paths = Vec::new();
        changed_paths(
            "",
            before.1.as_ref().unwrap_or(&Json::Null),
            after.1.as_ref().unwrap_or(&Json::Null),
            &mut paths,
        );
        if !paths.is_empty() {
            lines.push(format!("{name} values: {}", paths.join(", ")));
        }
    }
    if lines.is_empty() {
        if args.edit.json {
            out.json(&edit_report(
                "promote",
                &names.join(","),
                "",
                &args.edit,
                &[],
            ));
        } else {
            out.line(format!(
                "{to} already runs {from}'s versions and values of {}; nothing to do",
                if names.is_empty() {
                    "no shared addon".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
        return Ok(ExitStatus::Success);
    }
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
            out.note(line);
        }
    }
    change_to(&repo, &next, &args.edit, &message, report, out)?;
    Ok(ExitStatus::Success)
}

/// An environment's chart version and values of an addon as the overlay files `read`
/// gives hold them (the blueprint's `environment_overlay`); None when the blueprint
/// declares no overlay.
fn overlay_of(
    repo: &crate::repo::Repo,
    env: &str,
    name: &str,
    read: &dyn Fn(&str) -> Result<Option<String>>,
) -> Result<Option<(Option<String>, Option<Json>)>> {
    let overlay = &repo.blueprint.manifest.environment_overlay;
    let Some(addon) = repo
        .rendered
        .addons
        .get(name)
        .filter(|_| !overlay.is_empty())
    else {
        return Ok(None);
    };
    let context = serde_json::json!({ "environment": env, "addon": addon });
    let (mut version, mut values) = (None, None);
    for spec in overlay {
        let path = repo
            .renderer()
            .render_str("environment_overlay file", &spec.file, &context)?;
        let Some(text) = read(&path)? else { continue };
        let doc: Json = crate::yaml::from_str(&text).map_err(|e| {
            Error::input(
                Problem::new(format!("{path}: not YAML ({e})")).fix("fix it, then promote again"),
            )
        })?;
        let at = |keys: &str| doc.pointer(&format!("/{keys}")).cloned();
        if version.is_none() {
            version = spec
                .version
                .as_deref()
                .and_then(at)
                .and_then(|v| v.as_str().map(String::from));
        }
        if values.is_none() {
            values = spec.values.as_deref().and_then(at);
        }
    }
    Ok(Some((version, values)))
}

/// The JSON merge patch that turns `from` into `to` (a key `to` lacks is `null`).
fn merge_patch(from: &Json, to: &Json) -> Json {
    match (from, to) {
        (Json::Object(a), Json::Object(b)) => {
            let mut patch = Map::new();
            for (key, value) in b {
                match a.get(key) {
                    Some(old) if old == value => {}
                    Some(old) => {
                        patch.insert(key.clone(), merge_patch(old, value));
                    }
                    None => {
                        patch.insert(key.clone(), value.clone());
                    }
                }
            }
            for key in a.keys().filter(|k| !b.contains_key(*k)) {
                patch.insert(key.clone(), Json::Null);
            }
            Json::Object(patch)
        }
        (_, to) => to.clone(),
    }
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

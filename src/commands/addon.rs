//! `scaffold add-addon` and `remove-addon`: render the repo as recorded, render it again
//! with the addon added or removed, and apply the difference with a three-way merge that
//! keeps the user's edits; then record and commit.
use serde_json::{Map, Value as Json};

use crate::addon_envs;
use crate::edit_session::{change_to, edit_report, open};
use crate::error::{Error, Problem, Result};
use crate::generate;
use crate::helm_values::{self, Typing};
use crate::outcome::ExitStatus;
use crate::repo::{Repo, addon_version};
use crate::settings::{AddAddonOptions, RemoveAddonOptions};
use crate::ui::Reporter;

pub fn add(args: AddAddonOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let lock = crate::lock::acquire(&args.edit.directory, &format!("add-addon {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let catalog = generate::catalog_of(&repo.blueprint, &repo.record)?;
    let addons_key = repo.blueprint.manifest.addons_answer();
    let targets = addon_envs::targets(&repo.blueprint, &repo.record, &args.env, "--env")?;
    // The environments asked for that do not run it yet (none: one choice for the repo).
    let missing_in: Vec<String> = targets
        .iter()
        .flatten()
        .filter(|env| !addon_envs::runs_in(&repo.record, &catalog, env, addons_key, name))
        .cloned()
        .collect();

    // `--env` with a version or values: that environment's own settings (an overlay).
    let env_specific = targets.is_some() && !args.env.is_empty();
    let present = addon_version(&repo.rendered, name);
    if let Some(current) = present.clone().filter(|_| !env_specific) {
        return match &args.version {
            Some(wanted) if wanted.as_str() != current => Err(Error::input(
                Problem::new(format!(
                    "--version: {name} is already in this repo at {current}"
                ))
                .fix("changing versions belongs to a later update command"),
            )),
            _ if !missing_in.is_empty() => {
                add_in_environments(&args, &repo, &missing_in, &current, out)
            }
            _ => {
                if args.edit.json {
                    out.json(&edit_report("add-addon", name, &current, &args.edit, &[]));
                } else {
                    out.line(format!(
                        "{name} {current} is already in this repo; nothing to do"
                    ));
                }
                Ok(ExitStatus::Success)
            }
        };
    }
    let setting = setting_of(&args, &repo, &catalog)?;

    let Some((record, changed_in)) = record_with(
        &args,
        &repo,
        &targets,
        &missing_in,
        present.is_some(),
        setting,
    ) else {
        // Every environment asked for runs it already and nothing of its own was given.
        let current = present.unwrap_or_default();
        if args.edit.json {
            out.json(&edit_report("add-addon", name, &current, &args.edit, &[]));
        } else {
            out.line(format!(
                "{name} {current} already runs in {}; nothing to do",
                args.env.join(", ")
            ));
        }
        return Ok(ExitStatus::Success);
    };
    let next = repo.render(&record)?;
    let version = args
        .version
        .as_ref()
        .map(ToString::to_string)
        .filter(|_| env_specific)
        .or_else(|| addon_version(&next, name))
        .unwrap_or_default();
    let added: Vec<(String, String)> = next
        .added
        .iter()
        .filter(|(dep, _)| !repo.rendered.addons.contains_key(dep))
        .cloned()
        .collect();
    let report = edit_report("add-addon", name, &version, &args.edit, &added);
    change_to(
        &repo,
        &next,
        &args.edit,
        &format!(
            "scaffold: add addon {name} {version}{}",
            in_environments(&repo, &changed_in)
        ),
        report,
        out,
    )?;
    Ok(ExitStatus::Success)
}

/// The addon's repo-wide settings from the flags: a custom chart (and its layer), the
/// version, namespace and values.
fn setting_of(
    args: &AddAddonOptions,
    repo: &crate::repo::Repo,
    catalog: &crate::catalog::Catalog,
) -> Result<Map<String, Json>> {
    let name: &str = &args.name;
    let mut setting = Map::new();
    match &args.chart {
        Some(custom) => {
            if repo.blueprint.catalog.get(name).is_some() {
                return Err(Error::input(format!(
                    "{name} is a catalog addon: drop --chart/--repo to add it, or pick another name"
                )));
            }
            setting.insert("chart".into(), Json::String(custom.chart.to_string()));
            setting.insert("repo".into(), Json::String(custom.repo.to_string()));
            if let Some(layer) = &custom.layer {
                let layers = &repo.blueprint.manifest.layers;
                if !layers.contains_key(layer) {
                    let names: Vec<&str> = layers.keys().map(String::as_str).collect();
                    let suggestion = crate::suggest::did_you_mean(layer, names.iter().copied());
                    return Err(Error::input(
                        Problem::new(format!(
                            "--layer: `{layer}` is not a layer of the blueprint{suggestion}"
                        ))
                        .fix(format!("its layers: {}", names.join(", "))),
                    ));
                }
                setting.insert("layer".into(), Json::String(layer.clone()));
            }
        }
        None if catalog.get(name).is_none() => {
            return Err(Error::input(format!(
                "{}, --chart/--repo add any other chart",
                catalog.unknown(name)
            )));
        }
        None => {}
    }
    if let Some(version) = &args.version {
        setting.insert("version".into(), Json::String(version.to_string()));
    }
    if let Some(namespace) = &args.namespace {
        setting.insert("namespace".into(), Json::String(namespace.to_string()));
    }
    let values = helm_values(&[
        ("--helm-set", Typing::Helm, &args.helm_set),
        ("--helm-set-string", Typing::Strings, &args.helm_set_string),
    ])?;
    if !values.is_empty() {
        setting.insert("values".into(), Json::Object(values));
    }

    Ok(setting)
}

/// The record with the addon chosen where it is missing and its settings (an
/// environment's own under `--env`), and the environments that change; None when nothing
/// would.
fn record_with(
    args: &AddAddonOptions,
    repo: &crate::repo::Repo,
    targets: &Option<Vec<String>>,
    missing_in: &[String],
    present: bool,
    mut setting: Map<String, Json>,
) -> Option<(crate::record::Record, Vec<String>)> {
    let name: &str = &args.name;
    let addons_key = repo.blueprint.manifest.addons_answer();
    let env_specific = targets.is_some() && !args.env.is_empty();
    let mut record = repo.record.clone();
    let mut changed_in = missing_in.to_vec();
    if env_specific {
        let mut own = Map::new();
        for key in ["version", "values"] {
            if let Some(value) = setting.remove(key) {
                own.insert(key.into(), value);
            }
        }
        if present {
            setting.clear(); // the repo's settings stay as they are
        }
        if !own.is_empty() {
            for env in targets.iter().flatten() {
                addon_envs::set_own_setting(&mut record, env, name, &own);
                if !changed_in.contains(env) {
                    changed_in.push(env.clone());
                }
            }
        }
    }
    if env_specific && changed_in.is_empty() && setting.is_empty() {
        return None;
    }
    match &targets {
        Some(_) => {
            for env in missing_in {
                let mut chosen = addon_envs::chosen_in(&record, env, addons_key);
                chosen.push(name.to_string());
                addon_envs::set_chosen_in(&mut record, env, addons_key, chosen);
            }
        }
        None => {
            let mut chosen = record.chosen_addons(addons_key);
            chosen.push(name.to_string());
            record.set_chosen_addons(addons_key, chosen);
        }
    }
    if !setting.is_empty() {
        record
            .addon_settings
            .insert(name.to_string(), Json::Object(setting));
    }
    Some((record, changed_in))
}

/// ` in dev, prod` when a repo of several environments changes some of them.
fn in_environments(repo: &Repo, changed: &[String]) -> String {
    if repo.record.environments.len() > 1 {
        format!(" in {}", changed.join(", "))
    } else {
        String::new()
    }
}

/// An addon some environments already run, added to `missing_in` as it is (its settings
/// are the repo's).
fn add_in_environments(
    args: &AddAddonOptions,
    repo: &Repo,
    missing_in: &[String],
    version: &str,
    out: &Reporter,
) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let addons_key = repo.blueprint.manifest.addons_answer();
    let mut record = repo.record.clone();
    for env in missing_in {
        let mut chosen = addon_envs::chosen_in(&record, env, addons_key);
        chosen.push(name.to_string());
        addon_envs::set_chosen_in(&mut record, env, addons_key, chosen);
    }
    let next = repo.render(&record)?;
    let report = edit_report("add-addon", name, version, &args.edit, &[]);
    change_to(
        repo,
        &next,
        &args.edit,
        &format!(
            "scaffold: add addon {name} {version}{}",
            in_environments(repo, missing_in)
        ),
        report,
        out,
    )?;
    Ok(ExitStatus::Success)
}

pub fn remove(args: RemoveAddonOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let lock = crate::lock::acquire(&args.edit.directory, &format!("remove-addon {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let catalog = generate::catalog_of(&repo.blueprint, &repo.record)?;
    let addons_key = repo.blueprint.manifest.addons_answer();
    if let Some(targets) = addon_envs::targets(&repo.blueprint, &repo.record, &args.env, "--env")? {
        return remove_in_environments(&args, &repo, &catalog, &targets, out);
    }
    let mut chosen = repo.record.chosen_addons(addons_key);
    if !chosen.iter().any(|n| n == name) {
        return not_chosen(&args, &repo, &catalog, &chosen, "this repo", out);
    }
    let dependants: Vec<String> = repo
        .rendered
        .addons
        .keys()
        .filter(|other| *other != name)
        .filter(|other| {
            catalog
                .get(other)
                .is_some_and(|e| e.spec.depends_on.iter().any(|n| n == name))
        })
        .cloned()
        .collect();
    if !dependants.is_empty() {
        let pronoun = if dependants.len() == 1 { "it" } else { "them" };
        return Err(Error::input(
            Problem::new(format!("{name} is needed by {}", dependants.join(", ")))
                .fix(format!("remove {pronoun} first")),
        ));
    }
    let version = addon_version(&repo.rendered, name).unwrap_or_default();
    let mut record = repo.record.clone();
    chosen.retain(|n| n != name);
    record.set_chosen_addons(addons_key, chosen);
    record.addon_settings.remove(name);
    let next = repo.render(&record)?;
    let report = edit_report("remove-addon", name, &version, &args.edit, &[]);
    change_to(
        &repo,
        &next,
        &args.edit,
        &format!("scaffold: remove addon {name} {version}"),
        report,
        out,
    )?;
    Ok(ExitStatus::Success)
}

/// The environments whose chosen addons name `name`.
fn environments_with(repo: &Repo, name: &str) -> Vec<String> {
    let key = repo.blueprint.manifest.addons_answer();
    repo.record
        .environments
        .iter()
        .filter(|(_, own)| crate::json::strings(own.get(key)).iter().any(|n| n == name))
        .map(|(env, _)| env.clone())
        .collect()
}

/// `remove-addon NAME` where NAME is not among the addons chosen (`chosen`, in `place`):
/// nothing to do for a catalog addon that is not there; a refusal for one that is part of
/// every repo, one added as a dependency, or a name that is no addon.
fn not_chosen(
    args: &RemoveAddonOptions,
    repo: &Repo,
    catalog: &crate::catalog::Catalog,
    chosen: &[String],
    place: &str,
    out: &Reporter,
) -> Result<ExitStatus> {
    let name: &str = &args.name;
    // Another environment's addon (not one this place's addons need): not here.
    let needed_here = chosen.iter().any(|other| {
        catalog
            .get(other)
            .is_some_and(|e| e.spec.depends_on.iter().any(|n| n == name))
    });
    let elsewhere = environments_with(repo, name);
    let only_elsewhere = place != "this repo" && !needed_here && !elsewhere.is_empty();
    // Removing a catalog addon that is not there is done already, as adding one that is.
    if (!repo.rendered.addons.contains_key(name) || only_elsewhere) && catalog.get(name).is_some() {
        if args.edit.json {
            out.json(&edit_report("remove-addon", name, "", &args.edit, &[]));
        } else if only_elsewhere {
            out.line(format!(
                "{name} is not in {place} (it runs in {}); nothing to do",
                elsewhere.join(", ")
            ));
        } else {
            out.line(format!("{name} is not in {place}; nothing to do"));
        }
        return Ok(ExitStatus::Success);
    }
    Err(Error::input(
        match (repo.rendered.addons.contains_key(name), catalog.get(name)) {
            (true, Some(entry)) if entry.spec.always => {
                format!("{name} is part of every repo this blueprint makes; it cannot be removed")
            }
            (true, _) => {
                format!("{name} was added as a dependency; it goes when the addons needing it go")
            }
            (false, _) => format!(
                "{name} is not in this repo{} (addons: {})",
                crate::suggest::did_you_mean(name, chosen.iter().map(String::as_str)),
                chosen.join(", ")
            ),
        },
    ))
}

/// Removes an addon from the environments `targets` that run it; its settings go when no
/// environment runs it any more.
fn remove_in_environments(
    args: &RemoveAddonOptions,
    repo: &Repo,
    catalog: &crate::catalog::Catalog,
    targets: &[String],
    out: &Reporter,
) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let addons_key = repo.blueprint.manifest.addons_answer();
    let has_in: Vec<String> = targets
        .iter()
        .filter(|env| {
            addon_envs::chosen_in(&repo.record, env, addons_key)
                .iter()
                .any(|n| n == name)
        })
        .cloned()
        .collect();
    if has_in.is_empty() {
        let mut chosen: Vec<String> = targets
            .iter()
            .flat_map(|env| addon_envs::chosen_in(&repo.record, env, addons_key))
            .collect();
        chosen.sort();
        chosen.dedup();
        let place = if repo.record.environments.len() == 1 {
            "this repo".to_string()
        } else {
            targets.join(", ")
        };
        return not_chosen(args, repo, catalog, &chosen, &place, out);
    }
    for env in &has_in {
        let dependants: Vec<String> = addon_envs::chosen_in(&repo.record, env, addons_key)
            .into_iter()
            .filter(|other| other != name)
            .filter(|other| {
                catalog
                    .get(other)
                    .is_some_and(|e| e.spec.depends_on.iter().any(|n| n == name))
            })
            .collect();
        if !dependants.is_empty() {
            let place = if repo.record.environments.len() > 1 {
                format!(" in {env}")
            } else {
                String::new()
            };
            let pronoun = if dependants.len() == 1 { "it" } else { "them" };
            return Err(Error::input(
                Problem::new(format!(
                    "{name} is needed by {}{place}",
                    dependants.join(", ")
                ))
                .fix(format!("remove {pronoun} first")),
            ));
        }
    }
    let version = addon_version(&repo.rendered, name).unwrap_or_default();
    let mut record = repo.record.clone();
    for env in &has_in {
        let mut chosen = addon_envs::chosen_in(&record, env, addons_key);
        chosen.retain(|n| n != name);
        addon_envs::set_chosen_in(&mut record, env, addons_key, chosen);
    }
    let kept = record.environments.keys().any(|env| {
        addon_envs::chosen_in(&record, env, addons_key)
            .iter()
            .any(|n| n == name)
    });
    if !kept {
        record.addon_settings.remove(name);
    }
    let next = repo.render(&record)?;
    let report = edit_report("remove-addon", name, &version, &args.edit, &[]);
    change_to(
        repo,
        &next,
        &args.edit,
        &format!(
            "scaffold: remove addon {name} {version}{}",
            in_environments(repo, &has_in)
        ),
        report,
        out,
    )?;
    Ok(ExitStatus::Success)
}

/// The Helm values of `--set`-like flags, applied in order (later ones win, as in Helm).
fn helm_values(flags: &[(&str, Typing, &Vec<String>)]) -> Result<Map<String, Json>> {
    let mut values = Map::new();
    for (flag, typing, exprs) in flags {
        for expr in *exprs {
            helm_values::apply(&mut values, expr, *typing)
                .map_err(|why| Error::input(format!("{flag} {why}")))?;
        }
    }
    Ok(values)
}

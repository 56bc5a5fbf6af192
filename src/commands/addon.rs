//! `scaffold add-addon` and `remove-addon`: render the repo as recorded, render it again
//! with the addon added or removed, and apply the difference with a three-way merge that
//! keeps the user's edits; then record and commit.
use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::cli::{AddAddonArgs, EditArgs, RemoveAddonArgs};
use crate::commands::apply::apply;
use crate::edit::Change;
use crate::error::{Error, Result};
use crate::generate::{self, Rendered};
use crate::helm_values::{self, Typing};
use crate::repo::{Repo, addon_version};
use crate::report::{self, Action, ChangeEntry, EditReport};

pub fn add(args: AddAddonArgs) -> Result<()> {
    let name = &args.name;
    if let Some(pair) = args.misplaced_set.first() {
        return Err(Error::Input(format!(
            "--set `{pair}`: add-addon takes Helm values as --helm-set KEY=VALUE; an answer of this repo changes with `scaffold update --set KEY=VALUE`"
        )));
    }
    check(
        name,
        r"^[a-z0-9]([-a-z0-9]{0,51}[a-z0-9])?$",
        "NAME",
        "a DNS-1123 label of at most 53 characters",
    )?;
    if let Some(version) = &args.version {
        check(
            version,
            r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$",
            "--version",
            "an exact version such as 1.2.3",
        )?;
    }
    if let Some(namespace) = &args.namespace {
        check(
            namespace,
            r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
            "--namespace",
            "a DNS-1123 label (at most 63 characters: lowercase letters, digits and `-`, starting and ending with a letter or digit)",
        )?;
    }
    if let Some(repo) = &args.repo {
        check(
            repo,
            r"^(https://|oci://)[^\s/]+(/\S*)?$",
            "--repo",
            "an https:// or oci:// URL",
        )?;
    }
    if let Some(chart) = &args.chart {
        check(
            chart,
            r"^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$",
            "--chart",
            "a chart name",
        )?;
    }
    let lock = crate::lock::acquire(&args.edit.directory, &format!("add-addon {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let catalog = generate::catalog_of(&repo.blueprint, &repo.record)?;

    if let Some(current) = addon_version(&repo.rendered, name) {
        return match &args.version {
            Some(wanted) if wanted != &current => Err(Error::Input(format!(
                "--version: {name} is already in this repo at {current}; changing versions belongs to a later update command"
            ))),
            _ => {
                if args.edit.json {
                    let report = edit_report("add-addon", name, &current, &args.edit, &[]);
                    println!("{}", report::to_json(&report));
                } else {
                    println!("{name} {current} is already in this repo; nothing to do");
                }
                Ok(())
            }
        };
    }
    let mut setting = Map::new();
    match &args.chart {
        Some(chart) => {
            if repo.blueprint.catalog.get(name).is_some() {
                return Err(Error::Input(format!(
                    "{name} is a catalog addon: drop --chart/--repo to add it, or pick another name"
                )));
            }
            setting.insert("chart".into(), Json::String(chart.clone()));
            setting.insert(
                "repo".into(),
                Json::String(args.repo.clone().unwrap_or_default()),
            );
            if let Some(layer) = &args.layer {
                let layers = &repo.blueprint.manifest.layers;
                if !layers.contains_key(layer) {
                    return Err(Error::Input(format!(
                        "--layer: `{layer}` is not a layer of the blueprint{}; its layers: {}",
                        crate::scope::did_you_mean(layer, layers.keys().map(String::as_str)),
                        layers.keys().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
                setting.insert("layer".into(), Json::String(layer.clone()));
            }
        }
        None if catalog.get(name).is_none() => {
            return Err(Error::Input(format!(
                "{}, --chart/--repo add any other chart",
                catalog.unknown(name)
            )));
        }
        None => {}
    }
    if let Some(version) = &args.version {
        setting.insert("version".into(), Json::String(version.clone()));
    }
    if let Some(namespace) = &args.namespace {
        setting.insert("namespace".into(), Json::String(namespace.clone()));
    }
    let values = helm_values(&[
        ("--helm-set", Typing::Helm, &args.helm_set),
        ("--helm-set-string", Typing::Strings, &args.helm_set_string),
    ])?;
    if !values.is_empty() {
        setting.insert("values".into(), Json::Object(values));
    }

    let mut record = repo.record.clone();
    let addons_key = repo.blueprint.manifest.addons_answer();
    let mut chosen = record.chosen_addons(addons_key);
    chosen.push(name.clone());
    record.set_chosen_addons(addons_key, chosen);
    if !setting.is_empty() {
        record
            .addon_settings
            .insert(name.clone(), Json::Object(setting));
    }
    let next = repo.render(&record)?;
    let version = addon_version(&next, name).unwrap_or_default();
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
        &format!("scaffold: add addon {name} {version}"),
        report,
    )
}

pub fn remove(args: RemoveAddonArgs) -> Result<()> {
    let name = &args.name;
    let lock = crate::lock::acquire(&args.edit.directory, &format!("remove-addon {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let catalog = generate::catalog_of(&repo.blueprint, &repo.record)?;
    let addons_key = repo.blueprint.manifest.addons_answer();
    let mut chosen = repo.record.chosen_addons(addons_key);
    // Removing a catalog addon that is not there is done already, as adding one that is.
    if !chosen.contains(name)
        && !repo.rendered.addons.contains_key(name)
        && catalog.get(name).is_some()
    {
        if args.edit.json {
            let report = edit_report("remove-addon", name, "", &args.edit, &[]);
            println!("{}", report::to_json(&report));
        } else {
            println!("{name} is not in this repo; nothing to do");
        }
        return Ok(());
    }
    if !chosen.contains(name) {
        return Err(Error::Input(
            match (repo.rendered.addons.contains_key(name), catalog.get(name)) {
                (true, Some(entry)) if entry.spec.always => {
                    format!(
                        "{name} is part of every repo this blueprint makes; it cannot be removed"
                    )
                }
                (true, _) => format!(
                    "{name} was added as a dependency; it goes when the addons needing it go"
                ),
                (false, _) => format!("{name} is not in this repo (addons: {})", chosen.join(", ")),
            },
        ));
    }
    let dependants: Vec<String> = repo
        .rendered
        .addons
        .keys()
        .filter(|other| *other != name)
        .filter(|other| {
            catalog
                .get(other)
                .is_some_and(|e| e.spec.depends_on.contains(name))
        })
        .cloned()
        .collect();
    if !dependants.is_empty() {
        return Err(Error::Input(format!(
            "{name} is needed by {}; remove {} first",
            dependants.join(", "),
            if dependants.len() == 1 { "it" } else { "them" }
        )));
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
    )
}

/// Merges the repo's difference to `next` into the work tree and commits it, reporting
/// the changes as `report` says.
fn change_to(
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

fn edit_report(
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

fn check(value: &str, pattern: &str, what: &str, rule: &str) -> Result<()> {
    let ok = Regex::new(pattern)
        .map(|re| re.is_match(value))
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(Error::Input(format!("{what}: `{value}` is not {rule}")))
    }
}

/// The Helm values of `--set`-like flags, applied in order (later ones win, as in Helm).
fn helm_values(flags: &[(&str, Typing, &Vec<String>)]) -> Result<Map<String, Json>> {
    let mut values = Map::new();
    for (flag, typing, exprs) in flags {
        for expr in *exprs {
            helm_values::apply(&mut values, expr, *typing)
                .map_err(|why| Error::Input(format!("{flag} {why}")))?;
        }
    }
    Ok(values)
}

/// The repo around `--directory` (settled by `Found::open` under `lock`); secrets from
/// `--secret` or the environment.
fn open(edit: &EditArgs, lock: &crate::lock::RepoLock) -> Result<Repo> {
    let secrets = crate::commands::new::parse_pairs(&edit.secret, "--secret")?;
    Repo::open(&edit.directory, lock, edit.blueprint.as_deref(), &secrets)
}

//! `scaffold env add` and `env remove`: grow or shrink the environments of a repo whose
//! blueprint names an `environments_answer`, through the same lock, three-way merge and
//! commit as add-addon.
use serde_json::{Map, Value as Json};

use crate::edit_session::{change_to, edit_report, open};
use crate::error::{Error, Problem, Result};
use crate::outcome::ExitStatus;
use crate::record::Record;
use crate::repo::Repo;
use crate::settings::{EnvAddOptions, EnvRemoveOptions};
use crate::ui::Reporter;

/// The key of the environments answer and the environments the record lists.
fn environments(repo: &Repo) -> Result<(String, Vec<String>)> {
    let Some(key) = repo.blueprint.manifest.environments_answer.clone() else {
        return Err(Error::input(
            Problem::new(format!(
                "blueprint {} has one environment per repo (it names no environments_answer)",
                repo.blueprint.manifest.name
            ))
            .fix("a blueprint with environments is needed (docs/environments.md)"),
        ));
    };
    let names = crate::json::strings(repo.record.answers.get(&key));
    Ok((key, names))
}

fn set_environments(record: &mut Record, key: &str, names: &[String]) {
    record.answers.insert(
        key.to_string(),
        Json::Array(names.iter().cloned().map(Json::String).collect()),
    );
}

pub fn add(args: EnvAddOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let set = args.set.clone();
    let lock = crate::lock::acquire(&args.edit.directory, &format!("env add {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let (key, mut names) = environments(&repo)?;
    if names.iter().any(|n| n == name) {
        return Err(Error::input(format!(
            "{name} is an environment of this repo already ({key}: {})",
            names.join(", ")
        )));
    }
    let mut record = repo.record.clone();
    let mut taken = Vec::new();
    if let Some(from) = &args.from {
        if !names.contains(from) {
            let suggestion = crate::suggest::did_you_mean(from, names.iter().map(String::as_str));
            return Err(Error::input(
                Problem::new(format!(
                    "--from {from}: not an environment of this repo{suggestion}"
                ))
                .fix(format!("its environments: {}", names.join(", "))),
            ));
        }
        record
            .environments
            .insert(name.to_string(), copied_answers(&repo, from)?);
        // Its components' versions and values come along as `from`'s overlays hold them
        // now (as promote reads them): the new environment starts where `from` is.
        if let Some(settings) = repo.record.environment_addon_settings.get(from) {
            record
                .environment_addon_settings
                .insert(name.to_string(), settings.clone());
        }
        let components = crate::promotion::components_of(&repo, from)?;
        crate::promotion::carry_over(
            &repo,
            &mut record,
            from,
            name,
            &components,
            &crate::promotion::TakeOwned::None,
        )?;
        taken = crate::promotion::differing(&repo, &record, name, &components)?;
    }
    names.push(name.to_string());
    set_environments(&mut record, &key, &names);
    let set = set
        .into_iter()
        .map(|(k, v)| (format!("{name}.{k}"), v))
        .collect();
    let answers = repo.gather(&record, set)?;
    for (env, own) in &answers.environments {
        let recorded: Map<String, Json> = own
            .recorded
            .iter()
            .filter_map(|k| own.values.get(k).map(|v| (k.clone(), v.clone())))
            .collect();
        record.environments.insert(env.clone(), recorded);
    }
    let next = repo.render_with(&answers, &record)?;
    let report = edit_report("env add", name, "", &args.edit, &[]);
    let from = args
        .from
        .as_ref()
        .map(|f| format!(" from {f}"))
        .unwrap_or_default();
    let mut message = format!("scaffold: add environment {name}{from}");
    let source = args.from.as_deref().unwrap_or_default();
    if !taken.is_empty() {
        message.push_str(&format!(
            "\n\nTaken from {source}'s overlays as they are now:\n"
        ));
        message.push_str(&taken.iter().map(|t| format!("- {t}\n")).collect::<String>());
    }
    if !args.edit.json {
        for line in &taken {
            out.note(format!("takes {source}'s {line}"));
        }
    }
    change_to(&repo, &next, &args.edit, message.trim_end(), report, out)?;
    Ok(ExitStatus::Success)
}

/// `from`'s own answers that are not its defaults (those follow the environment, such as a
/// cluster name made from it): a copy keeps its addons, sizes and choices, not its names.
fn copied_answers(repo: &Repo, from: &str) -> Result<Map<String, Json>> {
    let recorded = repo
        .record
        .environments
        .get(from)
        .cloned()
        .unwrap_or_default();
    let mut bare = repo.record.clone();
    bare.environments.remove(from);
    let defaults = repo.gather(&bare, Vec::new())?;
    let default_of = |k: &str| {
        defaults
            .environments
            .iter()
            .find(|(env, _)| env == from)
            .and_then(|(_, own)| own.values.get(k))
    };
    Ok(recorded
        .into_iter()
        .filter(|(k, v)| k != crate::answers::ENVIRONMENT && default_of(k) != Some(v))
        .collect())
}

pub fn remove(args: EnvRemoveOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let lock = crate::lock::acquire(&args.edit.directory, &format!("env remove {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let (key, mut names) = environments(&repo)?;
    if !names.iter().any(|n| n == name) {
        let suggestion = crate::suggest::did_you_mean(name, names.iter().map(String::as_str));
        return Err(Error::input(
            Problem::new(format!(
                "{name} is not an environment of this repo{suggestion}"
            ))
            .fix(format!("its environments: {}", names.join(", "))),
        ));
    }
    if names.len() == 1 {
        return Err(Error::input(
            Problem::new(format!("{name} is the only environment of this repo"))
                .fix("a repo keeps at least one"),
        ));
    }
    if !args.force {
        return Err(Error::refused(Problem::new(format!("env remove {name} deletes the environment's files from this repo, not its cluster or cloud resources: tear those down first{}, then run `scaffold env remove {name} --force`",
            teardown(&repo, name)?)).fix("nothing was changed")));
    }
    let mut record = repo.record.clone();
    names.retain(|n| n != name);
    set_environments(&mut record, &key, &names);
    record.environments.remove(name);
    record.environment_addon_settings.remove(name);
    let answers = repo.gather(&record, Vec::new())?;
    let next = repo.render_with(&answers, &record)?;
    let report = edit_report("env remove", name, "", &args.edit, &[]);
    change_to(
        &repo,
        &next,
        &args.edit,
        &format!("scaffold: remove environment {name}"),
        report,
        out,
    )?;
    Ok(ExitStatus::Success)
}

/// The blueprint's teardown steps for `name`, rendered over its answers (`: …`), or empty.
fn teardown(repo: &Repo, name: &str) -> Result<String> {
    let Some(template) = &repo.blueprint.manifest.environment_teardown else {
        return Ok(String::new());
    };
    let answers = repo.gather(&repo.record, Vec::new())?;
    let Some((_, own)) = answers.environments.iter().find(|(env, _)| env == name) else {
        return Ok(String::new());
    };
    let mut context = own.values.clone();
    context.insert(
        crate::answers::ENVIRONMENT.into(),
        Json::String(name.to_string()),
    );
    let text = repo.render_text("environment_teardown", template, &Json::Object(context))?;
    // One line, as every refusal.
    Ok(format!(
        ": {}",
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    ))
}

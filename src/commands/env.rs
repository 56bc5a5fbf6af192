//! `scaffold env add` and `env remove`: grow or shrink the environments of a repo whose
//! blueprint names an `environments_answer`, through the same lock, three-way merge and
//! commit as add-addon.
use serde_json::{Map, Value as Json};

use crate::edit_session::{change_to, edit_report, open};
use crate::environments;
use crate::error::{Error, Problem, Result};
use crate::outcome::ExitStatus;
use crate::settings::{EnvAddOptions, EnvRemoveOptions};
use crate::ui::Reporter;

pub fn add(args: EnvAddOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let set = args.set.clone();
    let lock = crate::lock::acquire(&args.edit.directory, &format!("env add {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let (key, names) = environments::listed(&repo)?;
    if names.iter().any(|n| n == name) {
        return Err(Error::input(format!(
            "{name} is an environment of this repo already ({key}: {})",
            names.join(", ")
        )));
    }
    let (mut record, taken) = environments::added(&repo, &key, &names, name, args.from.as_deref())?;
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

pub fn remove(args: EnvRemoveOptions, out: &Reporter) -> Result<ExitStatus> {
    let name: &str = &args.name;
    let lock = crate::lock::acquire(&args.edit.directory, &format!("env remove {name}"))?;
    let repo = open(&args.edit, &lock)?;
    let (key, names) = environments::listed(&repo)?;
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
            environments::teardown(&repo, name)?)).fix("nothing was changed")));
    }
    let record = environments::without(&repo.record, &key, &names, name);
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

//! A repo's environments as a whole: which it lists, a record without one of them, what
//! a new one copies from another, and the steps that tear one down. `env add` and `env
//! remove` are scripts over these.
use serde_json::{Map, Value as Json};

use crate::error::{Error, Problem, Result};
use crate::record::Record;
use crate::repo::Repo;

/// The key of the environments answer and the environments the record lists.
pub fn listed(repo: &Repo) -> Result<(String, Vec<String>)> {
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

/// Sets the environments answer to `names`.
pub fn set_listed(record: &mut Record, key: &str, names: &[String]) {
    record.answers.insert(
        key.to_string(),
        Json::Array(names.iter().cloned().map(Json::String).collect()),
    );
}

/// The record with environment `name` added to the list; with `from`, starting from that
/// environment's own answers (not its defaults) and its components' overlays as they are
/// now, as promote reads them. Returns what it took from `from`.
pub fn added(
    repo: &Repo,
    key: &str,
    names: &[String],
    name: &str,
    from: Option<&str>,
) -> Result<(Record, Vec<String>)> {
    let mut record = repo.record.clone();
    let mut taken = Vec::new();
    if let Some(from) = from {
        if !names.iter().any(|n| n == from) {
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
            .insert(name.to_string(), copied_answers(repo, from)?);
        // Its components' versions and values come along as `from`'s overlays hold them
        // now (as promote reads them): the new environment starts where `from` is.
        if let Some(settings) = repo.record.environment_addon_settings.get(from) {
            record
                .environment_addon_settings
                .insert(name.to_string(), settings.clone());
        }
        let components = crate::promotion::components_of(repo, from)?;
        crate::promotion::carry_over(
            repo,
            &mut record,
            from,
            name,
            &components,
            &crate::promotion::TakeOwned::None,
        )?;
        taken = crate::promotion::differing(repo, &record, name, &components)?;
    }
    let mut listed = names.to_vec();
    listed.push(name.to_string());
    set_listed(&mut record, key, &listed);
    Ok((record, taken))
}

/// The record without environment `name`: off the list, its own answers and its addons'
/// settings gone.
pub fn without(record: &Record, key: &str, names: &[String], name: &str) -> Record {
    let mut record = record.clone();
    let kept: Vec<String> = names.iter().filter(|n| *n != name).cloned().collect();
    set_listed(&mut record, key, &kept);
    record.environments.remove(name);
    record.environment_addon_settings.remove(name);
    record
}

/// `from`'s own answers that are not its defaults (those follow the environment, such as a
/// cluster name made from it): a copy keeps its addons, sizes and choices, not its names.
pub fn copied_answers(repo: &Repo, from: &str) -> Result<Map<String, Json>> {
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

/// The blueprint's teardown steps for `name`, rendered over its answers (`: …`), or empty.
pub fn teardown(repo: &Repo, name: &str) -> Result<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_without_an_environment_keeps_the_others_whole() {
        let text = "blueprint:\n  name: default\n  version: 0.5.0\nscaffold_version: 0.1.0\nanswers:\n  environments:\n  - dev\n  - prod\nenvironments:\n  dev:\n    region: eu-west-1\n  prod:\n    region: us-east-1\n";
        let record = Record::parse(text).expect("the record parses");
        let names = vec!["dev".to_string(), "prod".to_string()];
        let without = without(&record, "environments", &names, "prod");
        assert_eq!(
            without.answers.get("environments"),
            Some(&Json::Array(vec![Json::String("dev".into())]))
        );
        assert!(!without.environments.contains_key("prod"));
        assert_eq!(
            without.environments.get("dev"),
            record.environments.get("dev")
        );
    }
}

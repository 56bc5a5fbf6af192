//! Which environments `add-addon`/`remove-addon --env` change: in a repo whose blueprint
//! answers its addons per environment, each environment's addons answer is its own
//! (`Record::environments`); `--env` names some, none means all.
use crate::blueprint::Blueprint;
use crate::error::{Error, Problem, Result};
use crate::record::Record;

/// The environments to change, or None for a repo whose addons are chosen once. `flag`
/// names the option that gave `env` in refusals (`--env`, `--from/--to`).
pub fn targets(
    blueprint: &Blueprint,
    record: &Record,
    env: &[String],
    flag: &str,
) -> Result<Option<Vec<String>>> {
    let addons_key = blueprint.manifest.addons_answer();
    let per_environment = blueprint.manifest.environments_answer.is_some()
        && blueprint
            .manifest
            .questions
            .iter()
            .any(|q| q.key == addons_key && q.per_environment);
    if !per_environment || record.environments.is_empty() {
        return match env.first() {
            Some(name) => Err(Error::input(
                Problem::new(format!(
                    "{flag} {name}: this repo chooses its addons once for all"
                ))
                .fix(format!("drop {flag}")),
            )),
            None => Ok(None),
        };
    }
    let known: Vec<&String> = record.environments.keys().collect();
    for name in env {
        if !record.environments.contains_key(name) {
            let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
            let suggestion = crate::suggest::did_you_mean(name, names.iter().copied());
            return Err(Error::input(
                Problem::new(format!(
                    "{flag} {name}: not an environment of this repo{suggestion}"
                ))
                .fix(format!("its environments: {}", names.join(", "))),
            ));
        }
    }
    Ok(Some(if env.is_empty() {
        known.into_iter().cloned().collect()
    } else {
        env.to_vec()
    }))
}

/// One environment's chosen addons.
pub fn chosen_in(record: &Record, env: &str, addons_key: &str) -> Vec<String> {
    record
        .environments
        .get(env)
        .and_then(|own| own.get(addons_key))
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(serde_json::Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether environment `env` runs addon `name`: chosen there, part of every repo, or needed
/// (transitively) by an addon it runs.
pub fn runs_in(
    record: &Record,
    catalog: &crate::catalog::Catalog,
    env: &str,
    addons_key: &str,
    name: &str,
) -> bool {
    let mut running: Vec<String> = chosen_in(record, env, addons_key);
    running.extend(
        catalog
            .entries()
            .filter(|e| e.spec.always)
            .map(|e| e.spec.name.clone()),
    );
    let mut i = 0;
    while i < running.len() {
        if let Some(entry) = catalog.get(&running[i]) {
            for dep in &entry.spec.depends_on {
                if !running.contains(dep) {
                    running.push(dep.clone());
                }
            }
        }
        i += 1;
    }
    running.iter().any(|n| n == name)
}

pub fn set_chosen_in(record: &mut Record, env: &str, addons_key: &str, mut names: Vec<String>) {
    // Sorted, one a line in the record: two teammates adding different addons to one
    // environment insert at different lines, which git's merge takes both of. The order
    // means nothing: the catalog selects in its own order.
    names.sort();
    names.dedup();
    record
        .environments
        .entry(env.to_string())
        .or_default()
        .insert(
            addons_key.to_string(),
            serde_json::Value::Array(names.into_iter().map(serde_json::Value::String).collect()),
        );
}

/// Lays `own` (version, values) over an environment's own settings of `addon`: a version
/// replaces, values merge.
pub fn set_own_setting(
    record: &mut Record,
    env: &str,
    addon: &str,
    own: &serde_json::Map<String, serde_json::Value>,
) {
    let settings = record
        .environment_addon_settings
        .entry(env.to_string())
        .or_default();
    let entry = settings
        .entry(addon.to_string())
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    let serde_json::Value::Object(entry) = entry else {
        return;
    };
    for (key, value) in own {
        match (entry.get_mut(key), value) {
            (Some(old @ serde_json::Value::Object(_)), serde_json::Value::Object(_)) => {
                crate::json_merge::deep_merge(old, value)
            }
            _ => {
                entry.insert(key.clone(), value.clone());
            }
        }
    }
}

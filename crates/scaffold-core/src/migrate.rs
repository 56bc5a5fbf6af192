//! Answer migrations: the renames of answers and answer values a blueprint declares
//! between its versions (`migrations:` of the manifest), applied by `update` to a repo's
//! recorded answers when it moves past the version that introduced them. Pure.
use serde_json::{Map, Value as Json};

use crate::manifest::Migration;
use crate::record::BlueprintId;
use crate::version::tuple;

/// The version of blueprint `name` in a record's chain (the blueprint, then its bases).
fn version_of<'a>(id: &'a BlueprintId, name: &str) -> Option<&'a str> {
    if id.name == name {
        return Some(&id.version);
    }
    id.base.as_deref().and_then(|b| version_of(b, name))
}

/// The migrations whose blueprint the repo was recorded at a version below, and that the
/// new chain `to` has reached, oldest first.
pub fn due<'a>(
    migrations: &'a [Migration],
    from: &BlueprintId,
    to: &BlueprintId,
) -> Vec<&'a Migration> {
    let mut ordered: Vec<&Migration> = migrations
        .iter()
        .filter(|migration| {
            let Some(name) = migration.blueprint.as_deref() else {
                return false;
            };
            let (Some(recorded), Some(now)) = (version_of(from, name), version_of(to, name)) else {
                return false;
            };
            let at = tuple(&migration.version);
            tuple(recorded) < at && at <= tuple(now)
        })
        .collect();
    ordered.sort_by_key(|m| tuple(&m.version));
    ordered
}

/// Applies to `answers` every migration [`due`]; returns one line per change made.
pub fn apply(
    answers: &mut Map<String, Json>,
    migrations: &[Migration],
    from: &BlueprintId,
    to: &BlueprintId,
) -> Vec<String> {
    let mut done = Vec::new();
    for migration in due(migrations, from, to) {
        let name = migration.blueprint.as_deref().unwrap_or_default();
        for (old, new) in &migration.rename {
            if let Some(value) = answers.remove(old) {
                answers.insert(new.clone(), value);
                done.push(format!(
                    "- {name} {}: answer `{old}` renamed `{new}`",
                    migration.version
                ));
            }
        }
        for (key, renames) in &migration.values {
            let Some(value) = answers.get_mut(key) else {
                continue;
            };
            let mut changed = false;
            let mut rename = |v: &mut Json| {
                if let Some(new) = v.as_str().and_then(|s| renames.get(s)) {
                    *v = Json::String(new.clone());
                    changed = true;
                }
            };
            match value {
                Json::Array(items) => items.iter_mut().for_each(&mut rename),
                other => rename(other),
            }
            if changed {
                done.push(format!(
                    "- {name} {}: values of `{key}` renamed ({})",
                    migration.version,
                    renames
                        .iter()
                        .map(|(a, b)| format!("{a} → {b}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str, version: &str) -> BlueprintId {
        BlueprintId {
            name: name.into(),
            version: version.into(),
            base: None,
            digest: None,
            source: None,
        }
    }

    #[test]
    fn a_migration_applies_once_between_the_recorded_and_the_new_version() {
        let migration: Migration = crate::yaml::from_str(
            "version: 1.1.0\nrename: {cost_centre: cost_center}\nvalues: {tier: {gold: premium}}\nblueprint: team\n",
        )
        .expect("migration");
        let mut answers: Map<String, Json> =
            serde_json::from_str(r#"{"cost_centre": "x", "tier": "gold"}"#).expect("json");
        let lines = apply(
            &mut answers,
            std::slice::from_ref(&migration),
            &id("team", "1.0.0"),
            &id("team", "1.1.0"),
        );
        assert_eq!(
            Json::Object(answers.clone()),
            serde_json::json!({"cost_center": "x", "tier": "premium"})
        );
        assert_eq!(lines.len(), 2, "{lines:?}");
        // Already past it, or not yet there: nothing.
        let mut again = answers.clone();
        again.insert("cost_centre".into(), Json::from("y"));
        let before = again.clone();
        assert!(
            apply(
                &mut again,
                std::slice::from_ref(&migration),
                &id("team", "1.1.0"),
                &id("team", "1.2.0")
            )
            .is_empty()
        );
        assert!(
            apply(
                &mut again,
                &[migration],
                &id("team", "0.9.0"),
                &id("team", "1.0.0")
            )
            .is_empty()
        );
        assert_eq!(again, before);
    }
}

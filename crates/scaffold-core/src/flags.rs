//! The command line's answers: `--set`/`--secret` KEY=VALUE pairs and `--values` files,
//! parsed the same way by every command that takes them.
use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;

use crate::error::{Error, Problem, Result};
use crate::yaml;

pub fn parse_pairs(pairs: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    pairs
        .iter()
        .map(|pair| {
            parse_pair(pair).ok_or_else(|| Error::input(format!("{flag} `{pair}`: use KEY=VALUE")))
        })
        .collect()
}

/// One `KEY=VALUE`: split at the first `=`, the key trimmed and not empty.
pub fn parse_pair(pair: &str) -> Option<(String, String)> {
    pair.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .filter(|(k, _)| !k.is_empty())
}

pub fn read_values(path: &Path) -> Result<BTreeMap<String, Json>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io_path("read --values file", path, e))?;
    parse_values(&text, path)
}

/// The text of a --values file: a mapping of answer keys to values.
pub fn parse_values(text: &str, path: &Path) -> Result<BTreeMap<String, Json>> {
    let not_yaml =
        |e: yaml::Error| Error::input(format!("--values `{}`: not YAML: {e}", path.display()));
    let Some(root) = yaml::parse_one(text).map_err(not_yaml)? else {
        return Ok(BTreeMap::new());
    };
    // A repo's answers record (`.scaffold/answers.yaml`): its `answers` are the values,
    // and each environment's own answers are `ENV: {KEY: …}` as a values file gives them.
    let values = match (root.get("answers"), root.get("scaffold_version")) {
        (Some(answers), Some(_)) => {
            let mut values = map_of(answers, path)?;
            let own = root
                .get("environments")
                .map(|e| map_of(e, path))
                .transpose()?;
            for (env, answers) in own.unwrap_or_default() {
                let Json::Object(mut answers) = answers else {
                    return Err(Error::input(format!(
                        "--values `{}`: environments.{env} is not a mapping of answers",
                        path.display()
                    )));
                };
                // Derived from the environment's name, not an answer of it.
                answers.remove(crate::manifest::ENVIRONMENT);
                values.insert(env, Json::Object(answers));
            }
            let settings = ["addon_settings", "environment_addon_settings"]
                .into_iter()
                .any(|key| root.get(key).is_some());
            crate::notes::note(format!(
                "note: --values `{}` is an answers record; using its `answers` and each environment's{}",
                path.display(),
                if settings {
                    " (its addon settings are not answers: give them with add-addon --version/--helm-set)"
                } else {
                    ""
                }
            ));
            return Ok(values);
        }
        _ => &root,
    };
    map_of(values, path)
}

/// A YAML mapping of answer keys to values.
fn map_of(values: &yaml::Node, path: &Path) -> Result<BTreeMap<String, Json>> {
    let not_yaml =
        |e: yaml::Error| Error::input(format!("--values `{}`: not YAML: {e}", path.display()));
    match &values.kind {
        yaml::Kind::Map(entries) => entries
            .iter()
            .map(|(k, v)| match k.as_str() {
                Some(key) => Ok((key.to_string(), v.to_json().map_err(not_yaml)?)),
                None => Err(Error::input(
                    Problem::new(format!(
                        "--values `{}`: key `{}` is not an answer key",
                        path.display(),
                        k.text().unwrap_or_default()
                    ))
                    .fix("keys are question names such as `name`"),
                )),
            })
            .collect(),
        _ if values.is_null() => Ok(BTreeMap::new()),
        _ => Err(Error::input(format!(
            "--values `{}`: must be a mapping of answer keys to values",
            path.display()
        ))),
    }
}

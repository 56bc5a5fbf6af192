//! The command line's answers: `--set`/`--secret` KEY=VALUE pairs and `--values` files,
//! parsed the same way by every command that takes them.
use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

pub fn parse_pairs(pairs: &[String], flag: &str) -> Result<Vec<(String, String)>> {
    pairs
        .iter()
        .map(|pair| {
            parse_pair(pair).ok_or_else(|| Error::Input(format!("{flag} `{pair}`: use KEY=VALUE")))
        })
        .collect()
}

/// One `KEY=VALUE`: split at the first `=`, the key trimmed and not empty.
pub fn parse_pair(pair: &str) -> Option<(String, String)> {
    pair.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
        .filter(|(k, _)| !k.is_empty())
}

pub fn read_values(path: &Path) -> Result<BTreeMap<String, serde_yaml::Value>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io_path("read --values file", path, e))?;
    parse_values(&text, path)
}

/// The text of a --values file: a mapping of answer keys to values.
pub fn parse_values(text: &str, path: &Path) -> Result<BTreeMap<String, serde_yaml::Value>> {
    let value: serde_yaml::Value = serde_yaml::from_str(text)
        .map_err(|e| Error::Input(format!("--values `{}`: not YAML: {e}", path.display())))?;
    // A repo's answers record (`.scaffold/answers.yaml`): its `answers` are the values.
    let value = match value {
        serde_yaml::Value::Mapping(mut map)
            if map.contains_key("answers") && map.contains_key("scaffold_version") =>
        {
            crate::ui::note(format!(
                "note: --values `{}` is an answers record; using its `answers`",
                path.display()
            ));
            map.remove("answers").unwrap_or_default()
        }
        other => other,
    };
    match value {
        serde_yaml::Value::Null => Ok(BTreeMap::new()),
        serde_yaml::Value::Mapping(map) => map
            .into_iter()
            .map(|(k, v)| match k {
                serde_yaml::Value::String(k) => Ok((k, v)),
                other => Err(Error::Input(format!(
                    "--values `{}`: key `{}` is not an answer key; keys are question names such as `name`",
                    path.display(),
                    serde_yaml::to_string(&other).unwrap_or_default().trim()
                ))),
            })
            .collect(),
        _ => Err(Error::Input(format!(
            "--values `{}`: must be a mapping of answer keys to values",
            path.display()
        ))),
    }
}

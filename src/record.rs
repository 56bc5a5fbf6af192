//! `.scaffold/answers.yaml`: what a repo was generated from (blueprint, answers, per-addon
//! settings), so later commands can render it again. Secrets are never recorded.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::error::{Error, Problem, Result};

pub const PATH: &str = ".scaffold/answers.yaml";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub blueprint: BlueprintId,
    pub scaffold_version: String,
    pub answers: Map<String, Json>,
    /// Set by `add-addon`: a catalog addon's version/namespace/values overrides, or a whole
    /// custom chart. Absent when empty.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub addon_settings: Map<String, Json>,
    /// Each environment's own answers (the blueprint's `per_environment` questions), by
    /// environment name; absent for a blueprint without environments.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub environments: std::collections::BTreeMap<String, Map<String, Json>>,
    /// Addon settings of one environment (`add-addon --env ENV --version/--helm-set`,
    /// `promote`) laid over `addon_settings`, by environment and addon.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub environment_addon_settings: std::collections::BTreeMap<String, Map<String, Json>>,
    /// A digest of every file the record renders to (itself excluded), taken when it was
    /// committed: a record edited by hand no longer renders to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendering: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlueprintId {
    pub name: String,
    pub version: String,
    /// The blueprint a layered blueprint extends (its nearest base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Box<BlueprintId>>,
    /// The content digest of this layer's own files (`blueprint::layer_digest`): tells a
    /// blueprint changed in place under the same version from one that did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Where it was loaded from: `embedded:NAME` or its directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Record {
    pub fn to_yaml(&self) -> Result<String> {
        let yaml = crate::yaml::to_string(self).map_err(|e| Error::blueprint(e.to_string()))?;
        Ok(format!(
            "# Written by scaffold: the answers this repo was generated from (secrets are never recorded).\n\
             # scaffold add-addon and remove-addon read and update it.\n{yaml}"
        ))
    }

    pub fn parse(text: &str) -> Result<Self> {
        crate::yaml::from_str(text).map_err(|e| {
            Error::input(Problem::new(format!("{PATH}: {e}")).fix("restore it from git history"))
        })
    }

    /// Refuses a record that no longer renders what it rendered when committed (edited by
    /// hand, or a different blueprint build), since changing the repo from it would undo
    /// or redo changes nobody asked for.
    /// `also` names a further cause (a secret answer that differs), or is empty.
    pub fn check_drift(&self, rendering: &str, also: &str) -> Result<()> {
        match &self.rendering {
            Some(recorded) if recorded != rendering => Err(Error::refused(Problem::new(format!("{PATH} no longer renders the files it recorded when committed: it was edited by hand (`scaffold update` applies your edits; or restore scaffold's version: `git log -p -- {PATH}` shows it, `git checkout <commit> -- {PATH}` restores it), or the blueprint changed (run `scaffold update`){also}")).fix("nothing was changed"))),
            _ => Ok(()),
        }
    }

    /// The answer `key` (the blueprint's `addons_answer`): the addons chosen by name
    /// (dependencies are not listed).
    pub fn chosen_addons(&self, key: &str) -> Vec<String> {
        crate::json::strings(self.answers.get(key))
    }

    pub fn set_chosen_addons(&mut self, key: &str, names: Vec<String>) {
        self.answers.insert(
            key.into(),
            Json::Array(names.into_iter().map(Json::String).collect()),
        );
    }
}

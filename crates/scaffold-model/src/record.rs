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
    /// Read from records written before the digest moved to [`DIGESTS_PATH`] (a line every
    /// two teammates' scaffold commits changed, so every merge conflicted); never written.
    #[serde(default, skip_serializing)]
    pub rendering: Option<String>,
}

/// The digest of every file each record renders to, keyed by the record's git blob id:
/// what a clone without any stored base checks a re-rendering against. A file of its own,
/// merged as a union (`ATTRIBUTES_PATH`), so teammates' merges never conflict on it; a
/// merged record matches none of its lines until the next scaffold command records it.
pub const DIGESTS_PATH: &str = ".scaffold/rendering";

/// Makes git merge `DIGESTS_PATH` as a union of both sides' lines.
pub const ATTRIBUTES_PATH: &str = ".scaffold/.gitattributes";

pub const ATTRIBUTES: &str = "# Written by scaffold: teammates' digests merge without a conflict (docs/update.md).\nrendering merge=union\n";

/// Scaffold's own files: always replaced by the new rendering, never merged line by line.
pub fn is_internal(path: &str) -> bool {
    path == PATH || path == DIGESTS_PATH || path == ATTRIBUTES_PATH
}

/// git's blob id of `record_bytes` (its stored form): the key of its digest line.
pub fn key(record_bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", record_bytes.len()).as_bytes());
    hasher.update(record_bytes);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The text of `DIGESTS_PATH` for one record and its rendering's digest.
pub fn digests_text(record_bytes: &[u8], digest: &str) -> String {
    format!(
        "# Written by scaffold: the digest of the files .scaffold/answers.yaml renders to, by the record's blob id.\n{} {digest}\n",
        key(record_bytes)
    )
}

/// What `DIGESTS_PATH` (its text `digests`) says `record_bytes` renders to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// The digest of this record's rendering.
    Digest(String),
    /// Digests of other records only: this one was edited by hand or merged since.
    Other,
    /// No digest at all (an older repo without one).
    Unknown,
}

pub fn recorded_digest(digests: &str, record_bytes: &[u8]) -> Recorded {
    let wanted = key(record_bytes);
    let mut any = false;
    for line in digests.lines().filter(|l| !l.starts_with('#')) {
        let Some((key, digest)) = line.trim().split_once(' ') else {
            continue;
        };
        if key == wanted {
            return Recorded::Digest(digest.trim().to_string());
        }
        any = true;
    }
    if any {
        Recorded::Other
    } else {
        Recorded::Unknown
    }
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
    pub fn check_drift(recorded: &Recorded, rendering: &str, also: &str) -> Result<()> {
        let differs = match recorded {
            Recorded::Digest(digest) => digest != rendering,
            Recorded::Other => true,
            Recorded::Unknown => false,
        };
        if !differs {
            return Ok(());
        }
        Err(Error::refused(Problem::new(format!("{PATH} no longer renders the files it recorded when committed: it was edited by hand or merged since (`scaffold update` applies your edits and a merge's answers; or restore scaffold's version: `git log -p -- {PATH}` shows it, `git checkout <commit> -- {PATH}` restores it), or the blueprint changed (run `scaffold update`){also}")).fix("nothing was changed")))
    }

    /// The answer `key` (the blueprint's `addons_answer`): the addons chosen by name
    /// (dependencies are not listed).
    pub fn chosen_addons(&self, key: &str) -> Vec<String> {
        crate::json::strings(self.answers.get(key))
    }

    /// Sorted (see `addon_envs::set_chosen_in`).
    pub fn set_chosen_addons(&mut self, key: &str, mut names: Vec<String>) {
        names.sort();
        names.dedup();
        self.answers.insert(
            key.into(),
            Json::Array(names.into_iter().map(Json::String).collect()),
        );
    }
}

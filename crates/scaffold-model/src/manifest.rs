//! The blueprint manifest (`blueprint.yaml`): its serde types, and how a child manifest
//! is laid over its base when one blueprint `extends` another. Pure.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_scaffold_version: Option<String>,
    /// The blueprint this one changes: an embedded name, a name on the search path, or a
    /// directory (relative to this blueprint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// The versions of the base this blueprint is written for, e.g. `>=0.3, <1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends_version: Option<String>,
    #[serde(default)]
    pub questions: Vec<Question>,
    /// New defaults for inherited questions (templates over earlier answers).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defaults: BTreeMap<String, serde_json::Value>,
    /// Inherited files to drop: paths, directories or globs (`files/...`, `addon-files/...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_files: Vec<String>,
    /// Inherited files this layer replaces → digest of the base file it was copied from
    /// (`scaffold blueprint show` prints it), so a change of the base is noticed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub replaces: BTreeMap<String, String>,
    /// Globs of blueprint files written executable (beside files executable on disk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executable: Vec<String>,
    /// Inherited catalog addons to drop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_addons: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Check>,
    /// Printed after `scaffold new` (a template over the answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_steps: Option<String>,
    /// Catalog layer → directory of its addons (a template over the answers).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub layers: BTreeMap<String, String>,
    /// The fields a catalog entry (`addons/*.yaml`) may have, with what each means:
    /// templates read them as `addon.FIELD`, and lint checks both against this list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub catalog_fields: BTreeMap<String, String>,
    /// The fields a chart added with `add-addon --chart` starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_addon: Option<serde_json::Value>,
    /// Template delimiters of the whole blueprint (default `[[ ]]`, `[% %]`, `[# #]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiters: Option<Delimiters>,
    /// Other delimiters for the templates matching a glob (first match wins).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delimiters_by_glob: Vec<GlobDelimiters>,
    /// Renames of answers and answer values between versions, applied by `update`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub migrations: Vec<Migration>,
    /// The directories of templates it renders and how often each is rendered; when no
    /// layer declares any, `DEFAULT_TREES` (`files/` once per repo, `addon-files/` once
    /// per addon).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trees: Vec<TreeSpec>,
    /// The answer that lists the addons chosen by name (default `addons`); add-addon and
    /// remove-addon own it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addons_answer: Option<String>,
    /// The list answer naming the repo's environments; absent, a repo is one environment.
    /// Questions marked `per_environment` are then answered once per environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environments_answer: Option<String>,
    /// What to tear down before `scaffold env remove` drops an environment's files (a
    /// template over that environment's answers), shown when it refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_teardown: Option<String>,
    /// The files that hold an environment's own chart version and values of an addon, and
    /// where in each: `promote` reads them there (a hand edit or Renovate may have moved
    /// them since scaffold wrote them), not from the record alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment_overlay: Vec<OverlayFile>,
    /// The per-environment answers that pin what each cluster runs, in the order an
    /// upgrade applies them: `promote --cluster` moves them and prints each one's step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_pins: Vec<ClusterPin>,
    /// Where an environment records the cluster pins it has applied (a template over
    /// `environment`; a YAML map of pin key to version that the generated make targets
    /// write): `promote --cluster` moves only a version its source has applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_pins_applied: Option<String>,
    /// Names the blueprint derives from the answers for a cloud whose names are global or
    /// per account (buckets, roles, queues): computed once per environment, given to
    /// templates as `aws_names.KEY`, and refused over their limit or shared by two
    /// environments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aws_names: Vec<AwsName>,
}

/// One version an environment's cluster runs (a `per_environment` answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterPin {
    /// The per-environment answer that holds it.
    pub key: String,
    /// What it is the version of, for the order rules promote enforces.
    #[serde(default)]
    pub kind: PinKind,
    /// The target's upgrade step, a template over `environment`, `from` and `to`.
    pub step: String,
}

/// The rules a pin's move follows besides "never backwards".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinKind {
    /// One minor at a time (Kubernetes' version skew policy), never past kops' minor.
    Kubernetes,
    /// The tool that installs Kubernetes: its minor bounds the Kubernetes it supports.
    Kops,
    /// No rule but the order the blueprint lists.
    #[default]
    Other,
}

/// One name derived from an environment's answers (`aws_names`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwsName {
    /// What templates read: `aws_names.KEY`.
    pub key: String,
    /// What the name names, for messages (e.g. `S3 bucket prefix`).
    pub resource: String,
    /// A template over one environment's answers (the `aws_name(max=N)` filter shortens
    /// with a stable hash).
    pub value: String,
    /// The longest name the resource takes.
    pub max_length: usize,
}

/// One file of an environment's overlay of an addon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlayFile {
    /// Its path, a template over `environment` and `addon` (`dir`, `layer`, `name`, …).
    pub file: String,
    /// Where its chart version is (`/`-separated keys), if it holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where its Helm values are, if it holds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<String>,
}

/// One directory of templates and the scope it renders in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeSpec {
    /// Blueprint-relative directory, e.g. `files` (a trailing `/` is allowed).
    pub dir: String,
    pub scope: TreeScope,
}

impl TreeSpec {
    /// The prefix of its blueprint-relative paths: `dir` with one trailing `/`.
    pub fn prefix(&self) -> String {
        format!("{}/", self.dir.trim_end_matches('/'))
    }
}

/// How often a tree renders: `repo` and `addon` once for every environment (with the
/// shared answers), `environment` and `addon-environment` once per environment (with its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeScope {
    /// Once per repo.
    Repo,
    /// Once per environment.
    Environment,
    /// Once per selected addon; templates read `addon`.
    Addon,
    /// Once per selected addon in each environment that selects it; templates read `addon`.
    AddonEnvironment,
}

impl TreeScope {
    /// Whether its templates render once per addon (and may read `addon`).
    pub fn per_addon(self) -> bool {
        matches!(self, TreeScope::Addon | TreeScope::AddonEnvironment)
    }
}

/// The trees of a blueprint that declares none.
pub const DEFAULT_TREES: [(&str, TreeScope); 2] = [
    ("files", TreeScope::Repo),
    ("addon-files", TreeScope::Addon),
];

/// The built-in (and, when the blueprint asks it, the answer) naming the environment
/// being rendered.
pub const ENVIRONMENT: &str = "environment";

/// The answer that selects addons when a blueprint names none.
pub const DEFAULT_ADDONS_ANSWER: &str = "addons";

/// Blueprint directories that are never rendered as a tree.
pub const RESERVED_DIRS: [&str; 3] = ["addons", "partials", "tests"];

impl Manifest {
    /// Its trees, or the default ones when it declares none.
    pub fn tree_specs(&self) -> Vec<TreeSpec> {
        if self.trees.is_empty() {
            DEFAULT_TREES
                .iter()
                .map(|(dir, scope)| TreeSpec {
                    dir: (*dir).to_string(),
                    scope: *scope,
                })
                .collect()
        } else {
            self.trees.clone()
        }
    }

    /// The answer that lists the chosen addons.
    pub fn addons_answer(&self) -> &str {
        self.addons_answer
            .as_deref()
            .unwrap_or(DEFAULT_ADDONS_ANSWER)
    }
}

/// What `update` does to a repo's recorded answers when it moves past `version` of the
/// blueprint that declares it (a repo recorded at an older version of that blueprint).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    /// The version that introduced the change.
    pub version: String,
    /// Answer keys: old → new.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
    /// Answer values, by (new) key: old value → new value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, BTreeMap<String, String>>,
    /// Files, and directories (a path ending in `/`), the version moved: old path → new,
    /// the new a template over the repo's answers before the migration. `update` moves the
    /// repo's files with them (its own and yours below a moved directory), so hand edits
    /// follow the files.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub moves: BTreeMap<String, String>,
    /// The blueprint that declares it (set when `extends` is resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blueprint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delimiters {
    pub variable: [String; 2],
    pub block: [String; 2],
    pub comment: [String; 2],
}

impl Default for Delimiters {
    fn default() -> Self {
        let pair = |a: &str, b: &str| [a.to_string(), b.to_string()];
        Delimiters {
            variable: pair("[[", "]]"),
            block: pair("[%", "%]"),
            comment: pair("[#", "#]"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobDelimiters {
    /// Matched against the blueprint-relative path, e.g. `files/docs/**`.
    pub glob: String,
    #[serde(flatten)]
    pub delimiters: Delimiters,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuestionType {
    String,
    Bool,
    Int,
    Choice,
    MultiChoice,
    List,
    Map,
    Cidr,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub key: String,
    /// Where a layer puts a new question: after this (earlier or inherited) one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    #[serde(rename = "type")]
    pub kind: QuestionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    /// Tera expression; the question is asked only when it is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// Never recorded in `.scaffold/answers.yaml`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub secret: bool,
    /// Said as a warning when `update` changes a recorded answer (a Tera template over
    /// `key`, `before` and `after`): what the change does to what already runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_change: Option<String>,
    /// Answered once per environment (`--set ENV.KEY=…`) when the blueprint names an
    /// `environments_answer`; otherwise once.
    #[serde(default, skip_serializing_if = "is_false")]
    pub per_environment: bool,
    /// With `per_environment`: no two environments may give the same non-empty answer
    /// (a cluster name, a DNS zone).
    #[serde(default, skip_serializing_if = "is_false")]
    pub distinct: bool,
    /// With `per_environment`, for DNS names: no environment's answer may lie inside
    /// another's (`dev.example.org` under `example.org`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_nested: bool,
    /// With `distinct`: why two environments may not share the answer, said when they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_reason: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_empty: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<serde_json::Value>>,
    /// `catalog`: the choices are the blueprint's optional addons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_type: Option<QuestionType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_regex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<usize>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub unique: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_prefix: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_prefix: Option<u8>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_overlapping: Vec<String>,
    /// For maps: the keys must be exactly the items of this earlier list answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_regex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_error: Option<String>,
    /// A well-known syntax checked by its owner's rules (for strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
}

/// Syntaxes whose rules belong to another tool and are checked with that tool's own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// A git branch name, by git's ref-name rules (`git check-ref-format --branch`).
    GitBranch,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A rule over several answers, checked as soon as `key` is answered (so it may only use
/// `key` and the questions before it); an interactive user is asked `key` again.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub key: String,
    pub expr: String,
    pub error: String,
    /// `warning`: a failed check is reported and the answer kept (the default, `error`,
    /// refuses the answer).
    #[serde(default, skip_serializing_if = "CheckSeverity::is_error")]
    pub severity: CheckSeverity,
}

/// What a failed blueprint check does to the answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckSeverity {
    #[default]
    Error,
    Warning,
}

impl CheckSeverity {
    pub fn is_error(&self) -> bool {
        *self == CheckSeverity::Error
    }
}

/// Why a child manifest does not fit its base: the section and key to point at.
#[derive(Debug)]
pub struct MergeError {
    pub section: &'static str,
    pub key: String,
    pub message: String,
}

/// The child's questions replace same-key questions in place and are appended otherwise
/// (or placed `after` a named one); everything else the child sets wins.
pub fn merge_manifests(base: Manifest, mut child: Manifest) -> Result<Manifest, MergeError> {
    let trees = merge_trees(&base, &child.trees);
    let environments_answer = child
        .environments_answer
        .clone()
        .or(base.environments_answer.clone());
    let mut questions = merge_questions(
        base.questions,
        std::mem::take(&mut child.questions),
        environments_answer.as_deref(),
    )?;
    apply_defaults(&mut questions, &child.defaults)?;
    let mut layers = base.layers;
    layers.extend(child.layers);
    let mut catalog_fields = base.catalog_fields;
    catalog_fields.extend(child.catalog_fields);
    let mut checks = base.checks;
    checks.extend(child.checks);
    let mut migrations = base.migrations;
    migrations.extend(child.migrations.into_iter().map(|mut m| {
        m.blueprint.get_or_insert_with(|| child.name.clone());
        m
    }));
    let mut by_glob = child.delimiters_by_glob;
    by_glob.extend(base.delimiters_by_glob);
    Ok(Manifest {
        name: child.name,
        version: child.version,
        description: if child.description.is_empty() {
            base.description
        } else {
            child.description
        },
        min_scaffold_version: child.min_scaffold_version.or(base.min_scaffold_version),
        extends: child.extends,
        extends_version: child.extends_version,
        questions,
        defaults: BTreeMap::new(),
        remove_files: Vec::new(),
        replaces: BTreeMap::new(),
        executable: Vec::new(),
        remove_addons: Vec::new(),
        checks,
        next_steps: child.next_steps.or(base.next_steps),
        layers,
        catalog_fields,
        custom_addon: child.custom_addon.or(base.custom_addon),
        delimiters: child.delimiters.or(base.delimiters),
        delimiters_by_glob: by_glob,
        migrations,
        trees,
        addons_answer: child.addons_answer.or(base.addons_answer),
        environments_answer: child.environments_answer.or(base.environments_answer),
        environment_teardown: child.environment_teardown.or(base.environment_teardown),
        environment_overlay: if child.environment_overlay.is_empty() {
            base.environment_overlay
        } else {
            child.environment_overlay
        },
        cluster_pins: if child.cluster_pins.is_empty() {
            base.cluster_pins
        } else {
            child.cluster_pins
        },
        cluster_pins_applied: child.cluster_pins_applied.or(base.cluster_pins_applied),
        aws_names: merge_aws_names(base.aws_names, child.aws_names),
    })
}

/// The child's questions laid into the base's: in place of a same-key one, after their
/// `after` anchor, else at the end.
fn merge_questions(
    mut questions: Vec<Question>,
    child: Vec<Question>,
    environments_answer: Option<&str>,
) -> Result<Vec<Question>, MergeError> {
    let own_keys: Vec<String> = child.iter().map(|q| q.key.clone()).collect();
    for mut question in child {
        let after = question.after.take();
        let existing = questions.iter().position(|q| q.key == question.key);
        // Each environment answers `environment` with its own name; a layer's question
        // would give question defaults another value than the environment's trees see.
        if let Some(list) = environments_answer
            && existing.is_some()
            && question.key == ENVIRONMENT
        {
            return Err(MergeError {
                section: "questions",
                key: question.key.clone(),
                message: format!(
                    "question `{}` replaces the inherited one, which each environment answers with its own name: remove it, and restrict the environment names with `item_regex` on `{list}` instead",
                    question.key
                ),
            });
        }
        let slot = match (&after, existing) {
            (None, Some(i)) => {
                questions[i] = question;
                continue;
            }
            (None, None) => questions.len(),
            (Some(anchor), _) => {
                if let Some(i) = existing {
                    questions.remove(i);
                }
                slot_after(&questions, &question.key, anchor, &own_keys)?
            }
        };
        questions.insert(slot, question);
    }
    Ok(questions)
}

/// Where a question asked `after: anchor` goes: right after the anchor, which must be an
/// inherited question or one of this layer listed before it.
fn slot_after(
    questions: &[Question],
    key: &str,
    anchor: &str,
    own_keys: &[String],
) -> Result<usize, MergeError> {
    let refused = |message: String| MergeError {
        section: "questions",
        key: key.to_string(),
        message,
    };
    if anchor == key {
        return Err(refused(format!(
            "question `{key}`: after: names the question itself; name the question it is asked after (one before it, or an inherited one)"
        )));
    }
    let later_own =
        own_keys.iter().any(|k| k == anchor) && !questions.iter().any(|q| q.key == anchor);
    if later_own {
        return Err(refused(format!(
            "question `{key}`: after: `{anchor}` is a question of this layer listed below `{key}`; list `{key}` after `{anchor}` instead"
        )));
    }
    questions
        .iter()
        .position(|q| q.key == anchor)
        .map(|i| i + 1)
        .ok_or_else(|| {
            let hint = crate::suggest::did_you_mean(anchor, questions.iter().map(|q| q.key.as_str()));
            refused(format!(
                "question `{key}`: after: `{anchor}` is not a question of this blueprint or its base{hint}"
            ))
        })
}

/// A layer's `defaults`: new defaults of questions the chain asks.
fn apply_defaults(
    questions: &mut [Question],
    defaults: &BTreeMap<String, serde_json::Value>,
) -> Result<(), MergeError> {
    for (key, default) in defaults {
        let keys: Vec<String> = questions.iter().map(|q| q.key.clone()).collect();
        let question = questions
            .iter_mut()
            .find(|q| &q.key == key)
            .ok_or_else(|| MergeError {
                section: "defaults",
                key: key.clone(),
                message: format!(
                    "defaults: `{key}` is not a question of this blueprint or its base{}",
                    crate::suggest::did_you_mean(key, keys.iter().map(String::as_str))
                ),
            })?;
        question.default = Some(default.clone());
    }
    Ok(())
}

/// The child's names replace the base's of the same key and are appended otherwise.
fn merge_aws_names(mut base: Vec<AwsName>, child: Vec<AwsName>) -> Vec<AwsName> {
    for name in child {
        match base.iter_mut().find(|n| n.key == name.key) {
            Some(existing) => *existing = name,
            None => base.push(name),
        }
    }
    base
}

/// A child's trees laid over its base's: a child entry for a directory the base renders
/// changes its scope, others are added after the base's. Both empty stays empty (the
/// default), so a manifest shown after `extends` reads as written.
pub fn merge_trees(base: &Manifest, child: &[TreeSpec]) -> Vec<TreeSpec> {
    if base.trees.is_empty() && child.is_empty() {
        return Vec::new();
    }
    let mut trees = base.tree_specs();
    for spec in child {
        match trees.iter_mut().find(|t| t.prefix() == spec.prefix()) {
            Some(existing) => existing.scope = spec.scope,
            None => trees.push(spec.clone()),
        }
    }
    trees
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        crate::yaml::from_str(text).expect("manifest")
    }

    #[test]
    fn a_child_question_goes_after_the_one_it_names_and_defaults_apply() {
        let base = manifest(
            "name: b\nversion: 1.0.0\nquestions:\n  - {key: a, prompt: A, type: string}\n  - {key: b, prompt: B, type: string}\n",
        );
        let child = manifest(
            "name: c\nversion: 1.0.0\nquestions:\n  - {key: x, prompt: X, type: string, after: a}\n  - {key: y, prompt: Y, type: string}\ndefaults:\n  b: two\n",
        );
        let merged = merge_manifests(base.clone(), child).expect("merges");
        let keys: Vec<&str> = merged.questions.iter().map(|q| q.key.as_str()).collect();
        assert_eq!(keys, ["a", "x", "b", "y"]);
        assert_eq!(
            merged.questions[2].default,
            Some(serde_json::Value::from("two"))
        );
        let child = manifest(
            "name: c\nversion: 1.0.0\nquestions:\n  - {key: x, prompt: X, type: string, after: aa}\n",
        );
        let err = merge_manifests(base, child).expect_err("no such question");
        assert_eq!((err.section, err.key.as_str()), ("questions", "x"));
        assert!(
            err.message.ends_with("(did you mean `a`?)"),
            "{}",
            err.message
        );
    }
}

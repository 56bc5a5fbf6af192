//! `scaffold diff`: what each cluster applies at two revisions of a platform repo, compared
//! object by object. Each side is `check`'s model of the repo; each environment's objects
//! are its view as `check` judges it (the shared files its cluster applies and its own,
//! kustomize overlay patches applied), so a chart bumped in one environment's overlay is a
//! change there and nowhere else. Terraform roots and the kops spec are compared as inputs:
//! the files under `envs/<env>/` that differ.
//!
//! Pure: the two sides come in as file maps ([`compare`]); reading a revision or the work
//! tree is the command's (`revision`), printing is `format`'s.
pub mod format;
pub mod highlight;
pub mod revision;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::check::model::{Object, Repo};
use crate::check::{environments, kustomize, yaml};

/// How an object or a file differs between the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Added,
    Removed,
    Changed,
}

/// One Kubernetes object that an environment's cluster applies differently.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectChange {
    pub change: Change,
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    /// The file that writes it (the head's; the base's for a removed object), and the
    /// overlay patch that changes it in this environment, if any.
    pub file: String,
    pub overlay: Option<String>,
    /// What people scan for: chart versions, image tags, replicas, CRDs, deletions, prune.
    pub highlights: Vec<String>,
    /// A unified diff of the object's YAML (empty for none).
    pub diff: String,
}

impl ObjectChange {
    /// `Kind namespace/name`, as `kubectl get` names it.
    pub fn title(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// One input of an environment's Terraform roots or kops spec (a file under `envs/<env>/`).
#[derive(Debug, Clone, Serialize)]
pub struct InputChange {
    pub change: Change,
    pub path: String,
    pub diff: String,
}

/// One environment's changes (an environment present on one side only has every object
/// added or removed).
#[derive(Debug, Clone, Serialize)]
pub struct EnvironmentDiff {
    pub name: String,
    pub objects: Vec<ObjectChange>,
    pub inputs: Vec<InputChange>,
}

impl EnvironmentDiff {
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.inputs.is_empty()
    }
    pub fn count(&self, change: Change) -> usize {
        self.objects.iter().filter(|o| o.change == change).count()
    }
}

/// The whole comparison: every environment of either side, sorted by name.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub base: String,
    pub head: String,
    pub environments: Vec<EnvironmentDiff>,
}

impl Diff {
    pub fn has_changes(&self) -> bool {
        self.environments.iter().any(|e| !e.is_empty())
    }
}

/// An object's identity in a cluster: API group, kind, namespace and name.
type Key = (String, String, String, String);

fn key_of(object: &Object) -> Key {
    (
        object.group().to_string(),
        object.kind.clone(),
        object.namespace.clone().unwrap_or_default(),
        object.name.clone(),
    )
}

/// Compares what each environment's cluster applies in `base` and in `head`, labelled
/// `base_label` and `head_label` (a revision, or "work tree").
pub fn compare(base: &Repo, head: &Repo, base_label: &str, head_label: &str) -> Diff {
    let before = applied_by_environment(base);
    let after = applied_by_environment(head);
    let mut names: Vec<String> = before.keys().chain(after.keys()).cloned().collect();
    names.sort();
    names.dedup();
    let empty = Applied::default();
    let environments = names
        .iter()
        .map(|name| {
            let (old, new) = (
                before.get(name).unwrap_or(&empty),
                after.get(name).unwrap_or(&empty),
            );
            EnvironmentDiff {
                name: name.clone(),
                objects: object_changes(old, new),
                inputs: input_changes(base, head, name, &names),
            }
        })
        .collect();
    Diff {
        base: base_label.to_string(),
        head: head_label.to_string(),
        environments,
    }
}

/// What one environment's cluster applies: its objects by identity, and the paths of the
/// Flux Kustomizations that prune (objects removed below them are deleted).
#[derive(Default)]
struct Applied {
    objects: BTreeMap<Key, Object>,
    pruned_paths: Vec<String>,
}

/// Each environment's view (one per `flux-system` entry; a repo with none is one view
/// named after nothing, `-`).
fn applied_by_environment(repo: &Repo) -> BTreeMap<String, Applied> {
    environments::applied_views(repo)
        .into_iter()
        .map(|(name, view)| {
            let pruned_paths = view
                .objects
                .iter()
                .filter(|o| o.is("kustomize.toolkit.fluxcd.io", "Kustomization"))
                .filter(|o| o.spec("prune").and_then(Json::as_bool) == Some(true))
                .filter_map(|o| yaml::str_at(o.value(), "spec/path"))
                .map(|p| p.trim_start_matches("./").trim_matches('/').to_string())
                .collect();
            let objects = view.objects.into_iter().map(|o| (key_of(&o), o)).collect();
            (
                name.unwrap_or_else(|| "-".into()),
                Applied {
                    objects,
                    pruned_paths,
                },
            )
        })
        .collect()
}

fn object_changes(old: &Applied, new: &Applied) -> Vec<ObjectChange> {
    let mut keys: Vec<&Key> = old.objects.keys().chain(new.objects.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let (before, after) = (old.objects.get(key), new.objects.get(key));
            let (change, shown) = match (before, after) {
                (None, Some(a)) => (Change::Added, a),
                (Some(b), None) => (Change::Removed, b),
                (Some(b), Some(a)) if b.value() != a.value() => (Change::Changed, a),
                _ => return None,
            };
            let mut highlights =
                highlight::of(before.map(Object::value), after.map(Object::value), shown);
            if change == Change::Removed {
                highlights.push(removal_note(shown, &old.pruned_paths));
            }
            Some(ObjectChange {
                change,
                api_version: shown.api_version.clone(),
                kind: shown.kind.clone(),
                namespace: shown.namespace.clone(),
                name: shown.name.clone(),
                file: shown.file.clone(),
                overlay: shown.overlay.as_ref().map(|(file, _)| file.clone()),
                highlights,
                diff: unified(
                    &before.map_or_else(String::new, |o| as_yaml(o.value())),
                    &after.map_or_else(String::new, |o| as_yaml(o.value())),
                ),
            })
        })
        .collect()
}

/// Whether Flux deletes a removed object: it does when a Kustomization with `prune: true`
/// built it (its file lies under that Kustomization's path).
fn removal_note(object: &Object, pruned_paths: &[String]) -> String {
    let pruned = pruned_paths
        .iter()
        .find(|path| path.is_empty() || object.built_from.starts_with(&format!("{path}/")));
    match pruned {
        Some(path) => format!("deleted: Flux prunes it (Kustomization path ./{path})"),
        None => "removed from git: no pruning Kustomization applies it, so it stays in the cluster"
            .into(),
    }
}

/// The environment's own files that hold no Kubernetes object (nor kustomize's own
/// configuration) and differ: the inputs of
/// its Terraform roots and kops spec (and its runbook). Which files are an environment's
/// is `check`'s rule (`environments::owner`); objects are compared as applied instead.
fn input_changes(base: &Repo, head: &Repo, env: &str, all: &[String]) -> Vec<InputChange> {
    let objects: BTreeSet<&str> = [base, head]
        .iter()
        .flat_map(|repo| repo.objects.iter().map(|o| o.file.as_str()))
        .collect();
    let mut paths: Vec<&String> = base
        .files
        .keys()
        .chain(head.files.keys())
        .filter(|p| environments::owner(p, all) == Some(env))
        .filter(|p| !objects.contains(p.as_str()) && !kustomize::is_kustomization_file(p))
        .collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let (old, new) = (base.files.get(path), head.files.get(path));
            let change = match (old, new) {
                (None, Some(_)) => Change::Added,
                (Some(_), None) => Change::Removed,
                (Some(a), Some(b)) if a != b => Change::Changed,
                _ => return None,
            };
            let text = |side: Option<&Option<std::sync::Arc<str>>>| match side {
                Some(Some(text)) => text.to_string(),
                Some(None) => "(binary)\n".into(),
                None => String::new(),
            };
            Some(InputChange {
                change,
                path: path.clone(),
                diff: unified(&text(old), &text(new)),
            })
        })
        .collect()
}

fn as_yaml(value: &Json) -> String {
    crate::yaml::to_string(value).unwrap_or_else(|e| format!("# not YAML: {e}\n"))
}

/// A unified diff with three lines of context, without file headers.
fn unified(before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .to_string()
}

#[cfg(test)]
mod tests;

//! What a directory builds to, with kustomize's semantics as far as platform repos use them:
//! `resources` (files and directories), `components`, patch and generator files that must
//! exist, and `namespace`; a directory without a kustomization.yaml builds every YAML file
//! below it, as kustomize-controller's generated kustomization does.
use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::model::{self, Repo};
use super::yaml;

/// The result of building one directory.
#[derive(Debug, Default)]
pub struct Built {
    /// Indices into `repo.objects`, with the namespace kustomize gives them (if it sets one).
    pub objects: Vec<(usize, Option<String>)>,
    /// What stops the build: file, line, message.
    pub errors: Vec<(String, usize, String)>,
}

use super::model::KUSTOMIZATION_NAMES as NAMES;
pub use super::model::is_kustomization_file;

/// The kustomization file of `dir`, if any.
pub fn kustomization_file(repo: &Repo, dir: &str) -> Option<String> {
    NAMES
        .iter()
        .map(|n| model::join(dir, n).unwrap_or_default())
        .find(|p| repo.exists(p))
}

pub fn build(repo: &Repo, dir: &str) -> Built {
    let mut built = Built::default();
    let mut seen = BTreeSet::new();
    build_into(repo, dir, None, &mut built, &mut seen);
    built
}

fn build_into(
    repo: &Repo,
    dir: &str,
    namespace: Option<&str>,
    built: &mut Built,
    seen: &mut BTreeSet<String>,
) {
    if !seen.insert(dir.to_string()) {
        return;
    }
    let Some(file) = kustomization_file(repo, dir) else {
        // kustomize-controller generates a kustomization of every manifest below `dir`.
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let files: Vec<&String> = repo
            .yaml
            .keys()
            .filter(|p| p.starts_with(&prefix))
            .collect();
        for path in files {
            add_file(repo, path, namespace, built);
        }
        return;
    };
    let Some(doc) = repo.yaml.get(&file).and_then(|d| d.first()) else {
        return; // a parse error is yaml.parse's finding
    };
    let k = &doc.value;
    // An overlay's namespace replaces its bases' (kustomize applies the outer transformer last).
    let namespace = namespace.or(yaml::str_at(k, "namespace"));
    let entries = |key: &str| -> Vec<String> {
        match k.get(key) {
            Some(Json::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        }
    };
    for key in ["resources", "components", "bases", "crds"] {
        for entry in entries(key) {
            if entry.contains("://") || entry.starts_with("github.com/") {
                continue; // remote: cannot be read offline
            }
            let Some(path) = model::join(dir, &entry) else {
                built.errors.push((
                    file.clone(),
                    doc.line_of_scalar(&entry),
                    format!("{key} entry `{entry}` leaves the repo"),
                ));
                continue;
            };
            if repo.exists(&path) {
                add_file(repo, &path, namespace, built);
            } else if repo.is_dir(&path) {
                build_into(repo, &path, namespace, built, seen);
            } else {
                built.errors.push((
                    file.clone(),
                    doc.line_of_scalar(&entry),
                    format!("{key} entry `{entry}` does not exist"),
                ));
            }
        }
    }
    // Files a patch or generator reads must exist.
    let mut needed: Vec<String> = entries("patchesStrategicMerge");
    for key in ["patches", "patchesJson6902"] {
        if let Some(Json::Array(items)) = k.get(key) {
            needed.extend(
                items
                    .iter()
                    .filter_map(|p| yaml::str_at(p, "path").map(str::to_string)),
            );
        }
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        if let Some(Json::Array(items)) = k.get(key) {
            for generator in items {
                for list in ["files", "envs"] {
                    if let Some(Json::Array(files)) = generator.get(list) {
                        needed.extend(
                            files
                                .iter()
                                .filter_map(Json::as_str)
                                .map(|f| f.split_once('=').map_or(f, |(_, path)| path).to_string()),
                        );
                    }
                }
                if let Some(env) = yaml::str_at(generator, "env") {
                    needed.push(env.to_string());
                }
            }
        }
    }
    for (patch, line, what) in repo.unmatched_patches.get(&file).into_iter().flatten() {
        built.errors.push((
            patch.clone(),
            *line,
            format!("the patch in {patch} targets {what}, which its resources do not build"),
        ));
    }
    for entry in needed {
        if entry.contains('\n') {
            continue; // an inline patch
        }
        if !model::join(dir, &entry).is_some_and(|p| repo.exists(&p)) {
            built.errors.push((
                file.clone(),
                doc.line_of_scalar(&entry),
                format!("file `{entry}` does not exist"),
            ));
        }
    }
}

/// Each kustomization with strategic-merge patch files: its directory, its file and the
/// patch paths it names (as written), in path order.
fn patch_paths(repo: &Repo) -> Vec<(String, String, Vec<String>)> {
    let files = repo
        .yaml
        .keys()
        .filter(|p| model::is_kustomization_file(p))
        .map(|p| (model::parent(p).to_string(), p.clone()));
    let mut out = Vec::new();
    for (dir, file) in files {
        let Some(k) = repo
            .yaml
            .get(&file)
            .and_then(|d| d.first())
            .map(|d| d.value.as_ref())
        else {
            continue;
        };
        let mut paths: Vec<String> = match k.get("patchesStrategicMerge") {
            Some(Json::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        };
        if let Some(Json::Array(items)) = k.get("patches") {
            paths.extend(
                items
                    .iter()
                    .filter_map(|p| yaml::str_at(p, "path").map(String::from)),
            );
        }
        if !paths.is_empty() {
            out.push((dir, file, paths));
        }
    }
    out
}

/// Whether `apply_patches` would change anything: some kustomization names patch files.
pub fn has_patches(repo: &Repo) -> bool {
    !patch_paths(repo).is_empty()
}

/// Applies each kustomization's strategic-merge patch files (`patches: [{path}]`,
/// `patchesStrategicMerge`) to the objects its resources build to, as kustomize does for
/// custom resources (maps merge, anything else is replaced, `null` deletes). The patched
/// object keeps its file and text, and remembers the patch (`overlay`), so findings about
/// what the patch sets (an environment's values and versions) point at the patch; the
/// patch file holds no object of its own. JSON 6902
/// patches and targets that select by label are left alone.
pub fn apply_patches(repo: &mut Repo) {
    let mut patch_files = BTreeSet::new();
    // The objects' indices by file, then index (patching replaces values, never adds or
    // removes an object, nor changes its file): a patch file's objects are one run of it.
    let mut by_file: Vec<usize> = (0..repo.objects.len()).collect();
    by_file.sort_by(|a, b| repo.objects[*a].file.cmp(&repo.objects[*b].file));
    for (dir, file, paths) in patch_paths(repo) {
        let built = build(repo, &dir);
        for path in paths {
            let Some(path) = model::join(&dir, &path) else {
                continue;
            };
            let from = by_file.partition_point(|i| repo.objects[*i].file < path);
            let to = from + by_file[from..].partition_point(|i| repo.objects[*i].file == path);
            for p in by_file[from..to].iter().copied() {
                let patch = &repo.objects[p];
                let target = built.objects.iter().map(|(i, _)| *i).find(|t| {
                    let o = &repo.objects[*t];
                    // Without `target`, kustomize matches apiVersion, kind, name and (when
                    // the patch has one) namespace.
                    *t != p
                        && o.api_version == patch.api_version
                        && o.kind == patch.kind
                        && o.name == patch.name
                        && (patch.namespace.is_none() || o.namespace == patch.namespace)
                });
                let Some(t) = target else {
                    let what = format!("{} {} {}", patch.api_version, patch.kind, patch.name);
                    let line = patch.doc.line;
                    repo.unmatched_patches
                        .entry(file.clone())
                        .or_default()
                        .push((path.clone(), line, what));
                    continue;
                };
                let mut value = Json::clone(&repo.objects[t].doc.value);
                // A strategic merge patch on an object kustomize has no schema for: a
                // JSON merge patch (RFC 7386).
                crate::json_merge::merge_patch(&mut value, &patch.doc.value);
                let overlay = (patch.file.clone(), patch.doc.clone());
                let object = &mut repo.objects[t];
                object.doc.value = std::sync::Arc::new(value);
                object.overlay = Some(overlay);
                patch_files.insert(p);
            }
        }
    }
    let mut index = 0;
    repo.objects.retain(|_| {
        index += 1;
        !patch_files.contains(&(index - 1))
    });
}

fn add_file(repo: &Repo, path: &str, namespace: Option<&str>, built: &mut Built) {
    for (index, object) in repo.objects.iter().enumerate() {
        if object.built_from == path && object.group() != "kustomize.config.k8s.io" {
            built.objects.push((index, namespace.map(str::to_string)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> Repo {
        Repo::from_files(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), Some(t.to_string())))
                .collect(),
        )
    }

    #[test]
    fn an_overlay_namespace_beats_its_base() {
        let repo = repo(&[
            (
                "base/kustomization.yaml",
                "namespace: base-ns\nresources:\n  - cm.yaml\n",
            ),
            (
                "base/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: own\n",
            ),
            (
                "overlay/kustomization.yaml",
                "namespace: overlay-ns\nresources:\n  - ../base\n",
            ),
            ("plain/kustomization.yaml", "resources:\n  - ../base\n"),
        ]);
        let built = build(&repo, "overlay");
        assert_eq!(built.objects.len(), 1);
        assert_eq!(built.objects[0].1.as_deref(), Some("overlay-ns"));
        let built = build(&repo, "plain");
        assert_eq!(built.objects[0].1.as_deref(), Some("base-ns"));
    }
}

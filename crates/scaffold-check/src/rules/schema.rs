//! yaml.parse, k8s.schema, k8s.unknown-kind, flux.api-removed.
use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::context::Context;
use crate::schema::{self, Lookup};
use crate::{Findings, yaml};

/// Flux API versions the controllers no longer serve, with their replacement.
const REMOVED_FLUX: &[(&str, &str, &str)] = &[
    (
        "source.toolkit.fluxcd.io/v1beta1",
        "source.toolkit.fluxcd.io/v1",
        "Flux 2.7",
    ),
    (
        "source.toolkit.fluxcd.io/v1beta2",
        "source.toolkit.fluxcd.io/v1",
        "Flux 2.8",
    ),
    (
        "kustomize.toolkit.fluxcd.io/v1beta1",
        "kustomize.toolkit.fluxcd.io/v1",
        "Flux 2.7",
    ),
    (
        "kustomize.toolkit.fluxcd.io/v1beta2",
        "kustomize.toolkit.fluxcd.io/v1",
        "Flux 2.8",
    ),
    (
        "helm.toolkit.fluxcd.io/v2beta1",
        "helm.toolkit.fluxcd.io/v2",
        "Flux 2.7",
    ),
    (
        "helm.toolkit.fluxcd.io/v2beta2",
        "helm.toolkit.fluxcd.io/v2",
        "Flux 2.8",
    ),
    (
        "notification.toolkit.fluxcd.io/v1beta1",
        "notification.toolkit.fluxcd.io/v1 (Receiver) or v1beta3",
        "Flux 2.7",
    ),
    (
        "image.toolkit.fluxcd.io/v1beta1",
        "image.toolkit.fluxcd.io/v1",
        "Flux 2.7",
    ),
];

pub fn run(context: &Context, findings: &mut Findings) {
    let repo = context.repo;
    for (file, error) in &repo.yaml_errors {
        findings.at(
            "yaml.parse",
            file,
            error.line,
            error.column,
            format!("does not parse: {}", error.message),
        );
    }
    for (file, error) in &repo.json_errors {
        findings.at(
            "json.parse",
            file,
            error.line,
            error.column,
            format!("does not parse: {}", error.message),
        );
    }
    for (file, docs) in &repo.yaml {
        for doc in docs {
            let has = |k: &str| doc.value.get(k).is_some_and(|v| v.is_string());
            if has("apiVersion") != has("kind") {
                findings.add(
                    "k8s.schema",
                    file,
                    doc.line,
                    "an object needs both apiVersion and kind",
                );
            }
        }
    }
    let patches = patch_files(context);
    let crd_groups: BTreeSet<String> = repo
        .kind("CustomResourceDefinition")
        .filter_map(|o| o.spec("group").and_then(Json::as_str).map(str::to_string))
        .collect();
    for object in &repo.objects {
        if object.group() == "kustomize.config.k8s.io" || patches.contains(&object.file) {
            continue;
        }
        if let Some((_, replacement, release)) = REMOVED_FLUX
            .iter()
            .find(|(v, _, _)| *v == object.api_version)
        {
            findings.add(
                "flux.api-removed",
                &object.file,
                object.doc.line,
                format!(
                    "{} {} uses {}, which {release} removed: use {replacement}",
                    object.kind, object.name, object.api_version
                ),
            );
            continue;
        }
        match schema::lookup(&object.api_version, &object.kind) {
            Lookup::Schema(schema) => {
                for v in schema::validate(object.value(), schema) {
                    let line = object.doc.line_at(&v.path);
                    findings.add(
                        "k8s.schema",
                        &object.file,
                        line,
                        format!(
                            "{} {}: {} {}",
                            object.kind,
                            object.name,
                            dotted(&v.path),
                            v.message
                        ),
                    );
                }
            }
            Lookup::Unknown(why) => findings.add("k8s.schema", &object.file, object.doc.line, why),
            Lookup::NoSchema if crd_groups.contains(object.group()) => {}
            Lookup::NoSchema => findings.add(
                "k8s.unknown-kind",
                &object.file,
                object.doc.line,
                format!(
                    "no schema for {} {}: not validated",
                    object.api_version, object.kind
                ),
            ),
        }
    }
}

fn dotted(path: &[String]) -> String {
    if path.is_empty() {
        return "(object)".into();
    }
    path.iter()
        .map(|p| {
            if p.parse::<usize>().is_ok() {
                format!("[{p}]")
            } else {
                format!(".{p}")
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// Files a kustomization uses as patches: partial objects, not validated.
fn patch_files(context: &Context) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (path, docs) in &context.repo.yaml {
        let name = path.rsplit('/').next().unwrap_or_default();
        if !matches!(
            name,
            "kustomization.yaml" | "kustomization.yml" | "Kustomization"
        ) {
            continue;
        }
        let dir = crate::model::parent(path);
        let Some(k) = docs.first().map(|d| &d.value) else {
            continue;
        };
        let mut entries: Vec<&str> = Vec::new();
        if let Some(Json::Array(items)) = k.get("patchesStrategicMerge") {
            entries.extend(items.iter().filter_map(Json::as_str));
        }
        for key in ["patches", "patchesJson6902"] {
            if let Some(Json::Array(items)) = k.get(key) {
                entries.extend(items.iter().filter_map(|p| yaml::str_at(p, "path")));
            }
        }
        out.extend(
            entries
                .into_iter()
                .filter_map(|e| crate::model::join(dir, e)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_in_context};
    use super::run;

    const WIDGET: &str = "apiVersion: example.team.io/v1\nkind: Widget\nmetadata:\n  name: w\n";

    #[test]
    fn bad_yaml_removed_apis_invalid_fields_and_unknown_kinds_are_found() {
        let findings = run_in_context(
            &[
                ("apps/broken.yaml", "a: [1\nb: 2\n"),
                (
                    "apps/old.yaml",
                    "---\napiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\nmetadata:\n  name: old\n",
                ),
                (
                    "apps/cm.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  - not-a-map\n",
                ),
                ("apps/widget.yaml", WIDGET),
            ],
            run,
        );
        assert_eq!(found(&findings, "yaml.parse").len(), 1, "{:?}", findings.0);
        assert_eq!(found(&findings, "yaml.parse")[0].0, "apps/broken.yaml");
        assert_eq!(
            found(&findings, "flux.api-removed"),
            [("apps/old.yaml".to_string(), 2)]
        );
        assert_eq!(
            found(&findings, "k8s.schema"),
            [("apps/cm.yaml".to_string(), 5)]
        );
        assert_eq!(
            found(&findings, "k8s.unknown-kind"),
            [("apps/widget.yaml".to_string(), 1)]
        );
    }

    #[test]
    fn valid_objects_crd_kinds_of_the_repo_and_patches_pass() {
        let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.team.io\nspec:\n  group: example.team.io\n  names:\n    kind: Widget\n    plural: widgets\n  scope: Namespaced\n  versions: []\n";
        let findings = run_in_context(
            &[
                (
                    "apps/cm.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n",
                ),
                ("apps/widget.yaml", WIDGET),
                ("crds/widget.yaml", crd),
                (
                    "apps/kustomization.yaml",
                    "resources:\n  - cm.yaml\npatches:\n  - path: patch.yaml\n",
                ),
                (
                    "apps/patch.yaml",
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  - partial\n",
                ),
            ],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

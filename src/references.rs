//! References between the files of a rendered repo that break when a file is missing
//! (typically removed by a layer's `remove_files`): a kustomization's `resources`,
//! `components` and `patches[].path`, and the `spec.path` of a Flux Kustomization that
//! reads the repo itself (source `flux-system`). Pure: a plan in, findings out.
use serde_json::Value as Json;

use crate::plan::{Plan, RelPath};

/// A reference to nothing: the rendered file, the text it names, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    pub file: RelPath,
    pub reference: String,
    pub message: String,
}

pub fn check(plan: &Plan) -> Vec<Broken> {
    let mut broken = Vec::new();
    for (path, bytes) in &plan.files {
        let name = path.as_str();
        if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        if text.contains("{{") {
            continue; // a Go template, YAML only once its own tool renders it
        }
        let dir = name.rsplit_once('/').map_or("", |(d, _)| d);
        for document in crate::yaml::parse_until_error(text).0 {
            let Ok(doc) = document.root.to_json() else {
                break; // `blueprint test` reports YAML that does not parse
            };
            let kind = doc.get("kind").and_then(Json::as_str).unwrap_or_default();
            let api = doc
                .get("apiVersion")
                .and_then(Json::as_str)
                .unwrap_or_default();
            let file_name = name.rsplit('/').next().unwrap_or_default();
            let kustomize = file_name == "kustomization.yaml"
                || (kind == "Kustomization" && api.starts_with("kustomize.config.k8s.io"));
            if kustomize {
                let listed = ["resources", "components"]
                    .iter()
                    .flat_map(|k| doc.get(k).and_then(Json::as_array).into_iter().flatten())
                    .chain(
                        doc.get("patches")
                            .and_then(Json::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.get("path")),
                    )
                    .filter_map(Json::as_str);
                for reference in listed {
                    if reference.contains("://") || reference.starts_with("github.com/") {
                        continue;
                    }
                    if !exists(plan, &join(dir, reference)) {
                        broken.push(Broken {
                            file: path.clone(),
                            reference: reference.to_string(),
                            message: format!(
                                "kustomization lists `{reference}`, which the blueprint does not write (removed by `remove_files`?)"
                            ),
                        });
                    }
                }
            }
            if kind == "Kustomization" && api.starts_with("kustomize.toolkit.fluxcd.io") {
                let from_repo = doc.pointer("/spec/sourceRef/kind").and_then(Json::as_str)
                    == Some("GitRepository")
                    && doc.pointer("/spec/sourceRef/name").and_then(Json::as_str)
                        == Some("flux-system");
                if let Some(target) = doc.pointer("/spec/path").and_then(Json::as_str)
                    && from_repo
                    && !exists(plan, &join("", target))
                {
                    broken.push(Broken {
                        file: path.clone(),
                        reference: target.to_string(),
                        message: format!(
                            "Flux Kustomization reads `{target}`, which the blueprint does not write (removed by `remove_files`?)"
                        ),
                    });
                }
            }
        }
    }
    broken
}

/// `dir/reference`, normalised (`./`, `..`, trailing `/`).
fn join(dir: &str, reference: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for segment in reference.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// A file, or a directory with at least one file, of the plan.
fn exists(plan: &Plan, path: &str) -> bool {
    if path.is_empty() {
        return true;
    }
    let dir = format!("{path}/");
    plan.files
        .keys()
        .any(|p| p.as_str() == path || p.as_str().starts_with(&dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(files: &[(&str, &str)]) -> Plan {
        let mut plan = Plan::default();
        for (path, text) in files {
            plan.add(RelPath::new(path).expect("path"), text.as_bytes().to_vec())
                .expect("distinct");
        }
        plan
    }

    #[test]
    fn a_removed_resource_or_flux_path_is_reported() {
        let flux = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec:\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  path: ./infrastructure/gone\n";
        let found = check(&plan(&[
            (
                "infra/kustomization.yaml",
                "resources:\n  - a/\n  - b.yaml\n  - https://x/y.yaml\n",
            ),
            ("infra/a/x.yaml", "kind: ConfigMap\n"),
            ("clusters/dev/10.yaml", flux),
        ]));
        let refs: Vec<&str> = found.iter().map(|b| b.reference.as_str()).collect();
        assert_eq!(refs, ["./infrastructure/gone", "b.yaml"]);
    }
}

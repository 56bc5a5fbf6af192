//! bridge.substitution and bridge.values-from: what Flux reads from ConfigMaps and Secrets
//! exists, in the namespace it is read from, with the keys read.
use std::collections::BTreeSet;

use hcl::Expression;
use serde_json::Value as Json;

use super::context::Context;
use crate::model::Repo;
use crate::{Findings, yaml};

/// A ConfigMap or Secret the repo makes; `None` name/namespace/keys mean "not known statically".
#[derive(Debug)]
struct Provided {
    kind: &'static str,
    name: Option<String>,
    namespace: Option<String>,
    keys: Option<BTreeSet<String>>,
}

impl Provided {
    fn matches(&self, kind: &str, name: &str, namespace: &str) -> bool {
        self.kind == kind
            && self.name.as_deref().is_none_or(|n| n == name)
            && self.namespace.as_deref().is_none_or(|n| n == namespace)
    }
}

fn literal(expr: &Expression) -> Option<String> {
    match expr {
        Expression::String(s) => Some(s.clone()),
        _ => None,
    }
}

fn provided(context: &Context) -> Vec<Provided> {
    let mut out = Vec::new();
    for (kind, k) in [("ConfigMap", "ConfigMap"), ("Secret", "Secret")] {
        for (object, ns) in context.objects(k) {
            let keys = ["data", "stringData", "binaryData"]
                .iter()
                .filter_map(|f| object.value().get(*f).and_then(Json::as_object))
                .flat_map(|m| m.keys().cloned())
                .collect();
            out.push(Provided {
                kind,
                name: Some(object.name.clone()),
                namespace: Some(ns.to_string()),
                keys: Some(keys),
            });
        }
    }
    for (object, ns) in context.objects("ExternalSecret") {
        let name = object
            .spec("target/name")
            .and_then(Json::as_str)
            .unwrap_or(&object.name);
        out.push(Provided {
            kind: "Secret",
            name: Some(name.to_string()),
            namespace: Some(ns.to_string()),
            keys: None,
        });
    }
    terraform_provided(context.repo, &mut out);
    out
}

fn terraform_provided(repo: &Repo, out: &mut Vec<Provided>) {
    for module in &repo.terraform {
        for (resource, kind) in [
            ("kubernetes_config_map", "ConfigMap"),
            ("kubernetes_config_map_v1", "ConfigMap"),
            ("kubernetes_config_map_v1_data", "ConfigMap"),
            ("kubernetes_secret", "Secret"),
            ("kubernetes_secret_v1", "Secret"),
        ] {
            for (_, _, body) in module.resources(resource) {
                let metadata = body.blocks().find(|b| b.identifier() == "metadata");
                let attr = |name: &str| {
                    metadata
                        .and_then(|m| m.body().attributes().find(|a| a.key() == name))
                        .map(|a| literal(a.expr()))
                };
                // No `data` argument: no keys (the object may only carry metadata); data from
                // an expression: keys unknown.
                let keys = match body
                    .attributes()
                    .find(|a| a.key() == "data")
                    .map(|a| a.expr())
                {
                    None => Some(BTreeSet::new()),
                    Some(Expression::Object(o)) => Some(
                        o.keys()
                            .map(|k| k.to_string().trim_matches('"').to_string())
                            .collect(),
                    ),
                    Some(_) => None,
                };
                out.push(Provided {
                    kind,
                    name: attr("name").flatten(),
                    // A namespace left out is "default".
                    namespace: attr("namespace").map_or(Some("default".into()), |n| n),
                    keys,
                });
            }
        }
    }
}

/// A `{kind, name, optional}` reference read in namespace `ns`, and what provides it.
fn referenced<'a>(
    provided: &'a [Provided],
    reference: &'a Json,
    ns: &str,
) -> (&'a str, &'a str, bool, Vec<&'a Provided>) {
    let kind = yaml::str_at(reference, "kind").unwrap_or("");
    let name = yaml::str_at(reference, "name").unwrap_or("");
    let optional = reference.get("optional") == Some(&Json::Bool(true));
    let matching = provided
        .iter()
        .filter(|p| p.matches(kind, name, ns))
        .collect();
    (kind, name, optional, matching)
}

/// Keys the matching providers list, or None if any provider's keys are unknown.
fn keys_of(providers: &[&Provided]) -> Option<BTreeSet<String>> {
    let mut keys = BTreeSet::new();
    for p in providers {
        keys.extend(p.keys.clone()?);
    }
    Some(keys)
}

pub fn run(context: &Context, findings: &mut Findings) {
    let provided = provided(context);
    // valuesFrom of HelmReleases.
    for (object, ns) in context.objects("HelmRelease") {
        for reference in object
            .spec("valuesFrom")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let (kind, name, optional, matching) = referenced(&provided, reference, ns);
            let key = yaml::str_at(reference, "valuesKey").unwrap_or("values.yaml");
            let line = object.doc.line_of_entry("name", name);
            if matching.is_empty() && !optional {
                findings.add("bridge.values-from", &object.file, line, format!("HelmRelease {ns}/{} reads {kind} {ns}/{name}, which neither the repo nor its Terraform creates", object.name));
            } else if !optional && keys_of(&matching).is_some_and(|k| !k.contains(key)) {
                findings.add("bridge.values-from", &object.file, line, format!("HelmRelease {ns}/{} reads key {key} of {kind} {ns}/{name}, which does not list it", object.name));
            }
        }
    }
    // substituteFrom and ${VAR}s of Kustomizations.
    for layer in &context.layers {
        let object = layer.object;
        let Some(post_build) = object.spec("postBuild") else {
            continue;
        };
        let ns = &layer.namespace;
        let mut vars: Option<BTreeSet<String>> = Some(
            post_build
                .get("substitute")
                .and_then(Json::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
        );
        for reference in post_build
            .get("substituteFrom")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let (kind, name, optional, matching) = referenced(&provided, reference, ns);
            if matching.is_empty() && !optional {
                findings.add("bridge.values-from", &object.file, object.doc.line_of_entry("name", name), format!("Kustomization {} substitutes from {kind} {ns}/{name}, which neither the repo nor its Terraform creates", object.name));
            }
            match (keys_of(&matching), vars.as_mut()) {
                (Some(keys), Some(vars)) => vars.extend(keys),
                _ => vars = None,
            }
        }
        let Some(vars) = vars else { continue };
        for (index, _) in &layer.built.objects {
            let target = &context.repo.objects[*index];
            if target
                .value()
                .pointer("/metadata/annotations/kustomize.toolkit.fluxcd.io~1substitute")
                .and_then(Json::as_str)
                == Some("disabled")
            {
                continue;
            }
            // Flux substitutes in the built YAML (no comments): in keys and values, the
            // object's own and those an environment's overlay patch sets (at its lines).
            let overlay = target.overlay.as_ref().map(|(file, doc)| (file, doc));
            for (file, doc) in std::iter::once((&target.file, &target.doc)).chain(overlay) {
                for (at, var) in substituted(doc) {
                    if !vars.contains(&var) {
                        findings.add(
                            "bridge.substitution",
                            file,
                            at,
                            format!("${{{var}}} is not provided to Kustomization {} (substitute, substituteFrom keys, or a default): Flux would substitute an empty string", object.name),
                        );
                    }
                }
            }
        }
    }
}

/// Every plain `${NAME}` in a document's scalars, with its line.
fn substituted(doc: &crate::yaml::Doc) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for node in doc.node.scalars() {
        let text = node.text().unwrap_or_default();
        for (offset, line) in text.lines().enumerate() {
            let at = node.pos.line + offset;
            out.extend(plain_vars(line).into_iter().map(|var| (at, var)));
        }
    }
    out
}

/// `${NAME}` references without a default or operator (`$${NAME}` is an escape).
fn plain_vars(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(pos) = line[i..].find("${") {
        let start = i + pos;
        i = start + 2;
        if start > 0 && bytes[start - 1] == b'$' {
            continue;
        }
        let rest = &line[start + 2..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty()
            && rest[name.len()..].starts_with('}')
            && !name.starts_with(|c: char| c.is_ascii_digit())
        {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, layer, run_in_context};
    use super::run;

    fn release(valuesfrom: &str) -> String {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  chart:\n    spec:\n      chart: web\n  valuesFrom:\n{valuesfrom}"
        )
    }

    const VALUES: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-values\n  namespace: apps\ndata:\n  values.yaml: |\n    replicas: 2\n";

    #[test]
    fn values_from_a_configmap_nothing_creates_or_without_the_key_is_found() {
        let missing = release("    - kind: ConfigMap\n      name: web-values\n");
        let findings = run_in_context(&[("apps/web.yaml", &missing)], run);
        assert_eq!(
            found(&findings, "bridge.values-from"),
            [("apps/web.yaml".to_string(), 12)]
        );
        let other_key =
            release("    - kind: ConfigMap\n      name: web-values\n      valuesKey: other.yaml\n");
        let findings = run_in_context(
            &[("apps/web.yaml", &other_key), ("apps/values.yaml", VALUES)],
            run,
        );
        assert!(
            findings.0[0].message.contains("other.yaml"),
            "{:?}",
            findings.0
        );
        assert_eq!(found(&findings, "bridge.values-from").len(), 1);
    }

    #[test]
    fn values_from_a_configmap_with_the_key_or_optional_passes() {
        let present = release("    - kind: ConfigMap\n      name: web-values\n");
        let optional = release("    - kind: Secret\n      name: extra\n      optional: true\n");
        let findings = run_in_context(
            &[
                ("apps/web.yaml", &present),
                (
                    "apps/other.yaml",
                    &optional.replace("name: web\n", "name: other\n"),
                ),
                ("apps/values.yaml", VALUES),
            ],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn a_variable_the_kustomization_does_not_provide_is_found_where_it_is_used() {
        let apps = format!(
            "{}  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n",
            layer("apps", &[])
        );
        let vars = "resource \"kubernetes_config_map_v1\" \"vars\" {\n  metadata {\n    name      = \"cluster-vars\"\n    namespace = \"flux-system\"\n  }\n  data = {\n    CLUSTER_NAME = \"dev\"\n  }\n}\n";
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: apps\ndata:\n  cluster: ${CLUSTER_NAME}\n  region: ${AWS_REGION}\n";
        let findings = run_in_context(
            &[
                ("clusters/apps.yaml", &apps),
                ("apps/kustomization.yaml", "resources:\n  - cm.yaml\n"),
                ("apps/cm.yaml", cm),
                ("infra/vars.tf", vars),
            ],
            run,
        );
        assert_eq!(
            found(&findings, "bridge.substitution"),
            [("apps/cm.yaml".to_string(), 8)]
        );
        assert!(findings.0[0].message.contains("AWS_REGION"));
    }
}

//! The Flux graph: flux.depends-on, flux.cycle, flux.source-ref, flux.path, flux.wait,
//! flux.chart-version.
use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use serde_json::Value as Json;

use super::context::{Context, depends_on};
use crate::model::Object;
use crate::{Findings, yaml};

const SOURCE_KINDS: [&str; 5] = [
    "GitRepository",
    "OCIRepository",
    "HelmRepository",
    "Bucket",
    "HelmChart",
];

pub fn run(context: &Context, findings: &mut Findings) {
    graph(context, "Kustomization", findings);
    graph(context, "HelmRelease", findings);
    sources(context, findings);
    paths(context, findings);
    wait(context, findings);
    chart_versions(context, findings);
}

fn flux_objects<'a>(context: &'a Context, kind: &'a str) -> Vec<(&'a Object, String)> {
    context
        .objects(kind)
        .filter(|(o, _)| o.group().ends_with("toolkit.fluxcd.io"))
        .map(|(o, ns)| (o, ns.to_string()))
        .collect()
}

fn graph(context: &Context, kind: &str, findings: &mut Findings) {
    let objects = flux_objects(context, kind);
    let keys: BTreeSet<(String, String)> = objects
        .iter()
        .map(|(o, ns)| (ns.clone(), o.name.clone()))
        .collect();
    let mut edges: BTreeMap<(String, String), Vec<(String, String)>> = BTreeMap::new();
    for (object, ns) in &objects {
        for dep in depends_on(object, ns) {
            if !keys.contains(&dep) {
                findings.add(
                    "flux.depends-on",
                    &object.file,
                    object
                        .doc
                        .node
                        .get("spec")
                        .and_then(|spec| spec.get("dependsOn"))
                        .and_then(|deps| deps.find_scalar(&dep.1))
                        .map_or_else(|| object.doc.line_of_scalar(&dep.1), |at| at.line),
                    format!(
                        "{kind} {ns}/{} depends on {kind} {}/{}, which the repo does not define",
                        object.name, dep.0, dep.1
                    ),
                );
            }
            edges
                .entry((ns.clone(), object.name.clone()))
                .or_default()
                .push(dep);
        }
    }
    // Depth-first search; a back edge closes a cycle, reported once at its smallest member.
    let mut reported = BTreeSet::new();
    for start in &keys {
        let mut stack = vec![start.clone()];
        find_cycle(
            &edges,
            &mut stack,
            &mut BTreeSet::new(),
            &mut |cycle: Vec<(String, String)>| {
                let mut members: Vec<_> = cycle.clone();
                members.sort();
                if reported.insert(members) {
                    let text: Vec<String> = cycle.iter().map(|(_, n)| n.clone()).collect();
                    if let Some((object, _)) = objects
                        .iter()
                        .find(|(o, ns)| (ns.clone(), o.name.clone()) == cycle[0])
                    {
                        findings.add(
                            "flux.cycle",
                            &object.file,
                            object.doc.line_of_key("dependsOn"),
                            format!(
                                "{kind} dependsOn cycle: {} -> {}",
                                text.join(" -> "),
                                text[0]
                            ),
                        );
                    }
                }
            },
        );
    }
}

fn find_cycle(
    edges: &BTreeMap<(String, String), Vec<(String, String)>>,
    stack: &mut Vec<(String, String)>,
    done: &mut BTreeSet<(String, String)>,
    report: &mut dyn FnMut(Vec<(String, String)>),
) {
    let Some(top) = stack.last().cloned() else {
        return;
    };
    for next in edges.get(&top).into_iter().flatten() {
        if let Some(pos) = stack.iter().position(|s| s == next) {
            report(stack[pos..].to_vec());
        } else if !done.contains(next) {
            stack.push(next.clone());
            find_cycle(edges, stack, done, report);
            stack.pop();
        }
    }
    done.insert(top);
}

/// Whether a source (kind, namespace, name) exists; `flux bootstrap` makes flux-system/flux-system.
fn source_exists(context: &Context, kind: &str, ns: &str, name: &str) -> bool {
    (kind == "GitRepository" && ns == "flux-system" && name == "flux-system")
        || context
            .objects(kind)
            .any(|(o, ons)| o.name == name && ons == ns)
}

fn check_ref(
    context: &Context,
    object: &Object,
    ns: &str,
    reference: &Json,
    field: &str,
    findings: &mut Findings,
) {
    let kind = yaml::str_at(reference, "kind").unwrap_or_default();
    let name = yaml::str_at(reference, "name").unwrap_or_default();
    let ref_ns = yaml::str_at(reference, "namespace").unwrap_or(ns);
    if !SOURCE_KINDS.contains(&kind) {
        findings.add(
            "flux.source-ref",
            &object.file,
            object.doc.line_of_key(field),
            format!(
                "{} {}: {field} kind `{kind}` is not a Flux source",
                object.kind, object.name
            ),
        );
    } else if !source_exists(context, kind, ref_ns, name) {
        findings.add(
            "flux.source-ref",
            &object.file,
            object.doc.line_of_key(field),
            format!(
                "{} {ns}/{}: {field} {kind} {ref_ns}/{name} is not defined in the repo",
                object.kind, object.name
            ),
        );
    }
}

fn sources(context: &Context, findings: &mut Findings) {
    for (object, ns) in flux_objects(context, "Kustomization") {
        match object.spec("sourceRef") {
            Some(r) => check_ref(context, object, &ns, r, "sourceRef", findings),
            None => findings.add(
                "flux.source-ref",
                &object.file,
                object.doc.line,
                format!("Kustomization {} has no sourceRef", object.name),
            ),
        }
    }
    for (object, ns) in flux_objects(context, "HelmRelease") {
        let chart = object.spec("chart/spec/sourceRef");
        let chart_ref = object.spec("chartRef");
        match (chart, chart_ref) {
            (Some(r), None) => check_ref(context, object, &ns, r, "sourceRef", findings),
            (None, Some(r)) => check_ref(context, object, &ns, r, "chartRef", findings),
            _ => findings.add(
                "flux.source-ref",
                &object.file,
                object.doc.line,
                format!(
                    "HelmRelease {}: exactly one of spec.chart and spec.chartRef is required",
                    object.name
                ),
            ),
        }
    }
}

pub fn paths(context: &Context, findings: &mut Findings) {
    for layer in &context.layers {
        let object = layer.object;
        if !is_this_repo(context, object) {
            continue;
        }
        let written = object.spec("path").and_then(Json::as_str).unwrap_or("./");
        if layer.path.is_none() {
            findings.add(
                "flux.path",
                &object.file,
                object.doc.line_of_key("path"),
                format!(
                    "Kustomization {}: path `{written}` does not exist in the repo",
                    object.name
                ),
            );
        }
        for (file, line, message) in &layer.built.errors {
            findings.add(
                "flux.path",
                file,
                *line,
                format!("Kustomization {} does not build: {message}", object.name),
            );
        }
    }
}

/// Whether a Kustomization's source is this repository (bootstrap's flux-system, or any
/// GitRepository with the same URL); other sources cannot be read offline.
fn is_this_repo(context: &Context, object: &Object) -> bool {
    let kind = object.spec("sourceRef/kind").and_then(Json::as_str);
    let name = object.spec("sourceRef/name").and_then(Json::as_str);
    kind == Some("GitRepository")
        && (name == Some("flux-system")
            || !context
                .repo
                .kind("GitRepository")
                .any(|o| o.name == "flux-system"))
}

fn wait(context: &Context, findings: &mut Findings) {
    let depended: BTreeSet<(String, String)> = context
        .layers
        .iter()
        .flat_map(|l| l.depends_on.iter().cloned())
        .collect();
    for layer in &context.layers {
        let object = layer.object;
        let waits = object.spec("wait") == Some(&Json::Bool(true));
        let checks = object
            .spec("healthChecks")
            .and_then(Json::as_array)
            .is_some_and(|a| !a.is_empty());
        if depended.contains(&layer.key()) && !waits && !checks {
            findings.add(
                "flux.wait",
                &object.file,
                object.doc.line,
                format!("Kustomization {} is depended on but neither waits nor has healthChecks: dependents start before it is ready", object.name),
            );
        }
    }
}

fn exact() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
            .expect("static regex")
    })
}

fn chart_versions(context: &Context, findings: &mut Findings) {
    for (object, _) in flux_objects(context, "HelmRelease") {
        if object.spec("chart").is_some() {
            let version = object
                .spec("chart/spec/version")
                .and_then(Json::as_str)
                .unwrap_or("");
            if !exact().is_match(version) {
                let (file, doc) = object.source_of("spec/chart/spec/version");
                findings.add(
                    "flux.chart-version",
                    file,
                    doc.line_of_key("version"),
                    format!(
                        "HelmRelease {}: chart version `{version}` is not exact",
                        object.name
                    ),
                );
            }
        }
    }
    for (object, _) in flux_objects(context, "OCIRepository") {
        let reference = object.spec("ref");
        let tag = reference.and_then(|r| yaml::str_at(r, "tag"));
        let pinned = reference.is_some_and(|r| r.get("digest").is_some())
            || reference
                .and_then(|r| yaml::str_at(r, "semver"))
                .is_some_and(|s| exact().is_match(s))
            || tag.is_some_and(|t| t != "latest" && !t.is_empty());
        if !pinned {
            let (file, doc) = object.source_of("spec/ref");
            findings.add(
                "flux.chart-version",
                file,
                doc.line_at(&["spec", "ref"]),
                format!(
                    "OCIRepository {}: ref is not an exact tag, semver or digest",
                    object.name
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, layer, run_in_context};
    use super::run;

    fn release(version: &str) -> String {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  chart:\n    spec:\n      chart: web\n      version: \"{version}\"\n      sourceRef:\n        kind: HelmRepository\n        name: charts\n"
        )
    }

    const REPOSITORY: &str = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata:\n  name: charts\n  namespace: apps\nspec:\n  url: https://charts.example.com\n";

    #[test]
    fn a_missing_dependency_path_source_and_loose_version_are_found_at_their_lines() {
        let apps = layer("apps", &["nowhere"]);
        let web = release("1.x");
        let findings = run_in_context(
            &[("clusters/apps.yaml", &apps), ("charts/web.yaml", &web)],
            run,
        );
        let at = |line| vec![(String::from("clusters/apps.yaml"), line)];
        assert_eq!(found(&findings, "flux.depends-on"), at(14));
        assert_eq!(found(&findings, "flux.path"), at(8));
        assert_eq!(
            found(&findings, "flux.source-ref"),
            [("charts/web.yaml".to_string(), 11)]
        );
        assert_eq!(
            found(&findings, "flux.chart-version"),
            [("charts/web.yaml".to_string(), 10)]
        );
    }

    #[test]
    fn a_cycle_and_a_dependency_that_does_not_wait_are_found() {
        let (a, b) = (layer("a", &["b"]), layer("b", &["a"]));
        let findings = run_in_context(
            &[
                ("clusters/a.yaml", &a),
                ("clusters/b.yaml", &b),
                ("a/kustomization.yaml", "resources: []\n"),
                ("b/kustomization.yaml", "resources: []\n"),
            ],
            run,
        );
        let cycle = found(&findings, "flux.cycle");
        assert!(!cycle.is_empty(), "{:?}", findings.0);
        assert!(cycle.iter().all(|(_, line)| *line == 13), "{cycle:?}");
        assert_eq!(
            found(&findings, "flux.wait"),
            [
                ("clusters/a.yaml".to_string(), 1),
                ("clusters/b.yaml".to_string(), 1)
            ]
        );
    }

    #[test]
    fn an_ordered_pinned_graph_passes() {
        let crds = format!("{}  wait: true\n", layer("crds", &[]));
        let apps = layer("apps", &["crds"]);
        let web = release("1.2.3");
        let findings = run_in_context(
            &[
                ("clusters/crds.yaml", &crds),
                ("clusters/apps.yaml", &apps),
                ("crds/kustomization.yaml", "resources: []\n"),
                (
                    "apps/kustomization.yaml",
                    "resources:\n  - web.yaml\n  - repo.yaml\n",
                ),
                ("apps/web.yaml", &web),
                ("apps/repo.yaml", REPOSITORY),
            ],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

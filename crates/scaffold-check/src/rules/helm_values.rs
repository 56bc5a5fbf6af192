//! helm.values: every value a HelmRelease sets (inline `values`, and the keys of the values
//! ConfigMaps it reads that the repo writes: YAML objects or Terraform
//! `kubernetes_config_map[_v1]` with a `yamlencode({...})` key) exists in its chart at the
//! pinned version. What a chart accepts comes from schemas/charts (made by
//! scripts/vendor-chart-values.py from the chart's values.yaml, templates and
//! values.schema.json), or from a chart directory kept in the repo. Helm ignores an
//! unknown value silently: the typo only shows as a feature that never turns on.
use std::collections::BTreeMap;

use hcl::{Expression, ObjectKey};
use serde_json::Value as Json;

use super::context::Context;
use crate::model::{self, Object, Repo};
use crate::schema::vendored;
use crate::suggest::did_you_mean;
use crate::{Findings, yaml};

/// What a chart accepts below a key: a tree of keys; `Free` accepts anything (empty maps
/// and lists, subcharts, `global`); `Leaf` is a scalar or list default (not descended).
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    Free,
    Leaf,
    Keys(BTreeMap<String, Tree>),
}

impl Tree {
    fn from_vendored(value: &Json) -> Tree {
        match value {
            Json::Object(map) => Tree::Keys(
                map.iter()
                    .map(|(k, v)| (k.clone(), Tree::from_vendored(v)))
                    .collect(),
            ),
            Json::Number(n) if n.as_u64() == Some(1) => Tree::Free,
            _ => Tree::Leaf,
        }
    }

    /// The tree of a chart's values.yaml (as scripts/vendor-chart-values.py builds it).
    pub fn from_defaults(value: &Json) -> Tree {
        match value {
            Json::Object(map) if map.is_empty() => Tree::Free,
            Json::Object(map) => Tree::Keys(
                map.iter()
                    .map(|(k, v)| (k.clone(), Tree::from_defaults(v)))
                    .collect(),
            ),
            Json::Null => Tree::Free,
            Json::Array(items) if items.is_empty() => Tree::Free,
            Json::String(s) if s.is_empty() => Tree::Free,
            _ => Tree::Leaf,
        }
    }

    fn add_free(&mut self, key: &str) {
        if let Tree::Keys(map) = self {
            map.insert(key.to_string(), Tree::Free);
        }
    }
}

/// A shape the user wrote: a map of keys with the line each is on, or a value.
pub enum Written {
    Map(Vec<(String, usize, Written)>),
    Value,
}

/// A value path the chart does not have: the keys down to it and the line.
#[derive(Debug, PartialEq)]
pub struct Unknown {
    pub path: Vec<String>,
    pub line: usize,
    pub hint: String,
}

pub fn unknown_paths(tree: &Tree, written: &Written) -> Vec<Unknown> {
    let mut out = Vec::new();
    walk(tree, written, &mut Vec::new(), &mut out);
    out
}

fn walk(tree: &Tree, written: &Written, path: &mut Vec<String>, out: &mut Vec<Unknown>) {
    let (Tree::Keys(known), Written::Map(entries)) = (tree, written) else {
        return;
    };
    for (key, line, value) in entries {
        path.push(key.clone());
        match known.get(key) {
            Some(next) => walk(next, value, path, out),
            None => out.push(Unknown {
                path: path.clone(),
                line: *line,
                hint: did_you_mean(key, known.keys().map(String::as_str)),
            }),
        }
        path.pop();
    }
}

/// The vendored tree of `chart` at `version`, parsed on first use of that chart.
fn vendored_tree(chart: &str, version: &str) -> Option<(Tree, String)> {
    let wanted = [
        format!("charts/{chart}-{version}.json"),
        format!("charts/{chart}-v{version}.json"),
        format!("charts/{chart}-{}.json", version.trim_start_matches('v')),
    ];
    let (_, text) = vendored("charts").find(|(p, _)| wanted.iter().any(|w| w == p))?;
    let data: Json = serde_json::from_str(text).ok()?;
    let origin = data.get("origin")?.as_str()?.to_string();
    Some((Tree::from_vendored(data.get("values")?), origin))
}

/// Versions of `chart` with vendored data.
fn vendored_versions(chart: &str) -> Vec<String> {
    let prefix = format!("charts/{chart}-");
    vendored("charts")
        .filter_map(|(p, _)| {
            p.strip_prefix(&prefix)?
                .strip_suffix(".json")
                .map(str::to_string)
        })
        .filter(|v| {
            !v.ends_with(".values.schema")
                && v.starts_with(|c: char| c.is_ascii_digit() || c == 'v')
        })
        .collect()
}

/// The tree of a chart kept in the repo (values.yaml, with the dependencies free-form).
fn local_tree(repo: &Repo, dir: &str) -> Option<Tree> {
    let values = repo.text(&format!("{dir}/values.yaml"))?;
    let mut tree = yaml::parse_one(values)
        .map(|v| Tree::from_defaults(&v))
        .ok()?;
    if tree == Tree::Free {
        tree = Tree::Keys(BTreeMap::new());
    }
    if let Some(chart) = repo
        .text(&format!("{dir}/Chart.yaml"))
        .and_then(|t| yaml::parse_one(t).ok())
    {
        for dep in chart
            .get("dependencies")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = yaml::str_at(dep, "alias").or(yaml::str_at(dep, "name")) {
                tree.add_free(name);
            }
        }
    }
    tree.add_free("global");
    Some(tree)
}

fn written_json(value: &Json, doc: &yaml::Doc, path: &mut Vec<String>) -> Written {
    match value {
        Json::Object(map) => Written::Map(
            map.iter()
                .map(|(k, v)| {
                    path.push(k.clone());
                    let line = doc.line_at(path);
                    let inner = written_json(v, doc, path);
                    path.pop();
                    (k.clone(), line, inner)
                })
                .collect(),
        ),
        _ => Written::Value,
    }
}

/// The shape of an HCL object expression, lines found in `text` from `from` on.
fn written_hcl(expr: &Expression, text: &str, from: &mut usize) -> Written {
    let Expression::Object(object) = expr else {
        return Written::Value;
    };
    let mut entries = Vec::new();
    for (key, value) in object.iter() {
        let key = match key {
            ObjectKey::Identifier(i) => i.to_string(),
            ObjectKey::Expression(Expression::String(s)) => s.clone(),
            ObjectKey::Expression(_) => continue,
            _ => continue,
        };
        let line = text
            .lines()
            .enumerate()
            .skip(*from)
            .find(|(_, l)| {
                let t = l.trim_start();
                t.starts_with(&format!("{key} "))
                    || t.starts_with(&format!("{key}="))
                    || t.starts_with(&format!("\"{key}\""))
            })
            .map_or(*from, |(i, _)| i + 1);
        *from = line.max(*from);
        let inner = written_hcl(value, text, from);
        entries.push((key, line, inner));
    }
    Written::Map(entries)
}

/// The chart and version a HelmRelease installs, and a chart directory in the repo if the
/// chart comes from the repo's own GitRepository.
struct ChartRef {
    name: String,
    version: Option<String>,
    local_dir: Option<String>,
}

fn chart_of(context: &Context, release: &Object, namespace: &str) -> Option<ChartRef> {
    if let Some(chart) = release.spec("chart/spec/chart").and_then(Json::as_str) {
        let local = chart.starts_with("./") || chart.contains('/') && !chart.starts_with("oci:");
        let dir = chart
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_string();
        return Some(ChartRef {
            name: chart.rsplit('/').next().unwrap_or(chart).to_string(),
            version: release
                .spec("chart/spec/version")
                .and_then(Json::as_str)
                .map(str::to_string),
            local_dir: local.then_some(dir),
        });
    }
    let name = release.spec("chartRef/name").and_then(Json::as_str)?;
    let ns = release
        .spec("chartRef/namespace")
        .and_then(Json::as_str)
        .unwrap_or(namespace);
    let (source, _) = context
        .objects("OCIRepository")
        .find(|(o, ons)| o.name == name && *ons == ns)?;
    let url = source.spec("url").and_then(Json::as_str)?;
    Some(ChartRef {
        name: url
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(url)
            .to_string(),
        version: source
            .spec("ref/tag")
            .and_then(Json::as_str)
            .map(str::to_string),
        local_dir: None,
    })
}

/// An exact chart version (`1.2.3`, `v1.2.3`, `1.2.3-rc.1`), as opposed to a semver range
/// or a tag such as `latest`.
fn is_exact(version: &str) -> bool {
    let core = version.strip_prefix('v').unwrap_or(version);
    let core = core.split(['-', '+']).next().unwrap_or(core);
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

pub fn run(context: &Context, findings: &mut Findings) {
    for (release, namespace) in context
        .repo
        .objects
        .iter()
        .zip(&context.namespaces)
        .filter(|(o, _)| o.is("helm.toolkit.fluxcd.io", "HelmRelease"))
    {
        let Some(chart) = chart_of(context, release, namespace) else {
            continue;
        };
        let Some((tree, origin)) = chart_tree(context.repo, release, &chart, findings) else {
            continue;
        };
        let judge = Judge {
            release,
            tree,
            origin,
        };
        judge.inline_values(findings);
        for (name, key) in values_configmaps(release) {
            let via = format!(" (ConfigMap {name} key {key})");
            judge.configmap_values(context, name, key, namespace, &via, findings);
            judge.terraform_values(context.repo, name, key, namespace, &via, findings);
        }
    }
}

/// What the chart of `release` accepts and where that is known from: the chart kept in the
/// repo, or the vendored values of its exact version. `None` when it cannot be known: a
/// range or moving tag (`flux.chart-version` reports it), or a version not vendored (a
/// `helm.values-unchecked` note).
fn chart_tree(
    repo: &Repo,
    release: &Object,
    chart: &ChartRef,
    findings: &mut Findings,
) -> Option<(Tree, String)> {
    if let Some(dir) = &chart.local_dir {
        return local_tree(repo, dir).map(|t| (t, format!("the chart in {dir}")));
    }
    let version = chart.version.as_deref().filter(|v| is_exact(v))?;
    if let Some((tree, origin)) = vendored_tree(&chart.name, version) {
        return Some((tree, format!("chart {} {version} ({origin})", chart.name)));
    }
    let others = vendored_versions(&chart.name);
    let why = if others.is_empty() {
        "its values are not known offline".to_string()
    } else {
        format!(
            "scaffold vendors its values for {} only: run scripts/vendor-chart-values.py on this version",
            others.join(", ")
        )
    };
    let (file, doc) = release.source_of("spec/chart/spec/version");
    findings.add(
        "helm.values-unchecked",
        file,
        doc.line,
        format!("HelmRelease {} values not checked: chart {} {version} is neither vendored nor kept in the repo ({why})", release.name, chart.name),
    );
    None
}

/// The ConfigMaps whose whole values document `release` reads (`valuesFrom` without a
/// `targetPath`): their name and key.
fn values_configmaps(release: &Object) -> Vec<(&str, &str)> {
    release
        .spec("valuesFrom")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter(|from| {
            yaml::str_at(from, "kind") == Some("ConfigMap")
                && yaml::str_at(from, "targetPath").is_none()
        })
        .filter_map(|from| {
            let name = yaml::str_at(from, "name")?;
            Some((
                name,
                yaml::str_at(from, "valuesKey").unwrap_or("values.yaml"),
            ))
        })
        .collect()
}

/// A HelmRelease's values judged against what its chart accepts.
struct Judge<'a> {
    release: &'a Object,
    tree: Tree,
    /// Where the chart's values are known from, for messages.
    origin: String,
}

impl Judge<'_> {
    fn report(&self, findings: &mut Findings, file: &str, unknown: Unknown, via: &str) {
        findings.add(
            "helm.values",
            file,
            unknown.line,
            format!(
                "HelmRelease {} sets {}{}, which {} does not have{}: Helm ignores it",
                self.release.name,
                unknown.path.join("."),
                via,
                self.origin,
                unknown.hint
            ),
        );
    }

    /// The release's inline `spec.values`.
    fn inline_values(&self, findings: &mut Findings) {
        let Some(values) = self.release.spec("values") else {
            return;
        };
        let mut path = vec!["spec".to_string(), "values".to_string()];
        let (file, doc) = self.release.source_of("spec/values");
        let written = written_json(values, doc, &mut path);
        for unknown in unknown_paths(&self.tree, &written) {
            self.report(findings, file, unknown, "");
        }
    }

    /// The values document under `key` of the repo's ConfigMap `namespace/name`.
    fn configmap_values(
        &self,
        context: &Context,
        name: &str,
        key: &str,
        namespace: &str,
        via: &str,
        findings: &mut Findings,
    ) {
        for (object, ns) in context.objects("ConfigMap") {
            if object.name != name || ns != namespace {
                continue;
            }
            let Some(text) = object
                .value()
                .get("data")
                .and_then(|d| d.get(key))
                .and_then(Json::as_str)
            else {
                continue;
            };
            let Ok(docs) = yaml::parse(text) else {
                continue;
            };
            let Some(doc) = docs.first() else { continue };
            let base = object.doc.line_of_key(key);
            let written = written_json(&doc.value, doc, &mut Vec::new());
            for mut unknown in unknown_paths(&self.tree, &written) {
                unknown.line += base;
                self.report(findings, &object.file, unknown, via);
            }
        }
    }

    /// The `yamlencode({...})` under `key` of the repo's Terraform ConfigMap
    /// `namespace/name`.
    fn terraform_values(
        &self,
        repo: &Repo,
        name: &str,
        key: &str,
        namespace: &str,
        via: &str,
        findings: &mut Findings,
    ) {
        for module in &repo.terraform {
            for kind in ["kubernetes_config_map", "kubernetes_config_map_v1"] {
                for (file, label, body) in module.resources(kind) {
                    if !names_configmap(body, name, namespace) {
                        continue;
                    }
                    let Some(values) = yamlencoded(body, key) else {
                        continue;
                    };
                    let mut from_line =
                        model::line_in(&file.text, &format!("\"{kind}\" \"{label}\""));
                    let written = written_hcl(values, &file.text, &mut from_line);
                    for unknown in unknown_paths(&self.tree, &written) {
                        self.report(findings, &file.path, unknown, via);
                    }
                }
            }
        }
    }
}

/// Whether a Terraform ConfigMap's `metadata` names `name` in `namespace` (a namespace
/// left out matches any).
fn names_configmap(body: &hcl::Body, name: &str, namespace: &str) -> bool {
    let Some(metadata) = body.blocks().find(|b| b.identifier() == "metadata") else {
        return false;
    };
    let attr = |k: &str| {
        metadata
            .body()
            .attributes()
            .find(|a| a.key() == k)
            .and_then(|a| match a.expr() {
                Expression::String(s) => Some(s.clone()),
                _ => None,
            })
    };
    attr("name").as_deref() == Some(name)
        && attr("namespace").as_deref().is_none_or(|n| n == namespace)
}

/// The argument of the `yamlencode(...)` a Terraform ConfigMap's `data` holds under `key`.
fn yamlencoded<'a>(body: &'a hcl::Body, key: &str) -> Option<&'a Expression> {
    let Some(Expression::Object(data)) = body
        .attributes()
        .find(|a| a.key() == "data")
        .map(|a| a.expr())
    else {
        return None;
    };
    data.iter().find_map(|(k, v)| {
        let k = match k {
            ObjectKey::Expression(Expression::String(s)) => s.clone(),
            ObjectKey::Identifier(i) => i.to_string(),
            _ => return None,
        };
        match v {
            Expression::FuncCall(call) if k == key && call.name.name.as_str() == "yamlencode" => {
                call.args.first()
            }
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(json: &str) -> Tree {
        Tree::from_vendored(&serde_json::from_str(json).expect("json"))
    }

    #[test]
    fn unknown_keys_are_found_below_known_ones_and_free_subtrees_accept_anything() {
        let chart =
            tree(r#"{"serviceAccount":{"create":0,"annotations":1},"extraEnv":1,"image":0}"#);
        let written = Written::Map(vec![
            ("serviceAcount".into(), 3, Written::Value),
            (
                "serviceAccount".into(),
                4,
                Written::Map(vec![
                    (
                        "annotations".into(),
                        5,
                        Written::Map(vec![("a/b".into(), 6, Written::Value)]),
                    ),
                    ("nmae".into(), 7, Written::Value),
                ]),
            ),
            (
                "extraEnv".into(),
                8,
                Written::Map(vec![("x".into(), 9, Written::Value)]),
            ),
            (
                "image".into(),
                10,
                Written::Map(vec![("tag".into(), 11, Written::Value)]),
            ),
        ]);
        let found = unknown_paths(&chart, &written);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].path, ["serviceAcount"]);
        assert_eq!(found[0].line, 3);
        assert_eq!(found[0].hint, " (did you mean `serviceAccount`?)");
        assert_eq!(found[1].path, ["serviceAccount", "nmae"]);
        assert_eq!(found[1].line, 7);
    }

    #[test]
    fn defaults_make_empty_maps_lists_and_nulls_free() {
        let defaults: Json =
            serde_json::from_str(r#"{"a":{},"b":[],"c":null,"d":{"e":1},"f":[1]}"#).expect("json");
        let Tree::Keys(keys) = Tree::from_defaults(&defaults) else {
            panic!("keys")
        };
        assert_eq!(keys["a"], Tree::Free);
        assert_eq!(keys["b"], Tree::Free);
        assert_eq!(keys["c"], Tree::Free);
        assert_eq!(keys["f"], Tree::Leaf);
        assert!(matches!(keys["d"], Tree::Keys(_)));
    }
}

#[cfg(test)]
mod catalog {
    use super::*;

    /// Every chart the default catalog pins has vendored values data at that version
    /// (scripts/vendor-catalog-charts.sh refreshes it).
    #[test]
    fn every_catalog_chart_pin_has_vendored_values() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../blueprints/default/addons");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).expect("catalog") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("addon");
            let addon = yaml::parse_one(&text).expect("addon yaml");
            let kind = yaml::str_at(&addon, "chart/source/kind").unwrap_or("");
            if kind == "GitRepository" {
                continue;
            }
            let name = yaml::str_at(&addon, "chart/name").expect("chart name");
            let version = yaml::str_at(&addon, "chart/version").expect("chart version");
            assert!(
                vendored_tree(name, version).is_some(),
                "{}: chart {name} {version} has no schemas/charts data: run scripts/vendor-catalog-charts.sh",
                path.display()
            );
            checked += 1;
        }
        assert!(checked >= 10, "catalog charts checked: {checked}");
        // The default app's chart (a blueprint file, not a catalog entry).
        let app = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../blueprints/default/env-files/apps/[[ environment ]]/podinfo/source.yaml");
        let text = std::fs::read_to_string(&app).expect("podinfo source");
        let source = yaml::parse_one(&text).expect("podinfo source yaml");
        let tag = yaml::str_at(&source, "spec/ref/tag").expect("podinfo tag");
        assert!(
            vendored_tree("podinfo", tag).is_some(),
            "podinfo {tag} has no schemas/charts data: run scripts/vendor-catalog-charts.sh"
        );
    }
}

#[cfg(test)]
mod run_tests {
    use super::super::testing::{found, run_in_context};
    use super::run;

    const CHART_VALUES: &str = "replicas: 1\nservice:\n  port: 80\nextra: {}\n";

    fn release(chart: &str, version: &str, values: &str) -> String {
        format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  chart:\n    spec:\n      chart: {chart}\n      version: \"{version}\"\n{values}"
        )
    }

    #[test]
    fn an_inline_value_a_local_chart_lacks_is_found_at_its_line() {
        let web = release(
            "./charts/web",
            "1.0.0",
            "  values:\n    replicas: 2\n    service:\n      prot: 81\n    extra:\n      anything: 1\n",
        );
        let findings = run_in_context(
            &[
                ("apps/web.yaml", &web),
                ("charts/web/values.yaml", CHART_VALUES),
            ],
            run,
        );
        assert_eq!(
            found(&findings, "helm.values"),
            [("apps/web.yaml".to_string(), 14)]
        );
        assert!(
            findings.0[0].message.contains("service.prot"),
            "{:?}",
            findings.0
        );
    }

    #[test]
    fn values_from_a_configmap_and_from_terraform_are_checked_where_written() {
        let web = release(
            "./charts/web",
            "1.0.0",
            "  valuesFrom:\n    - kind: ConfigMap\n      name: web-values\n    - kind: ConfigMap\n      name: web-tf\n",
        );
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-values\n  namespace: apps\ndata:\n  values.yaml: |\n    replicas: 2\n    replica: 3\n";
        let tf = "resource \"kubernetes_config_map_v1\" \"web\" {\n  metadata {\n    name      = \"web-tf\"\n    namespace = \"apps\"\n  }\n  data = {\n    \"values.yaml\" = yamlencode({\n      service = {\n        port = 80\n        tls  = true\n      }\n    })\n  }\n}\n";
        let findings = run_in_context(
            &[
                ("apps/web.yaml", &web),
                ("apps/values.yaml", cm),
                ("infra/web.tf", tf),
                ("charts/web/values.yaml", CHART_VALUES),
            ],
            run,
        );
        assert_eq!(
            found(&findings, "helm.values"),
            [
                ("apps/values.yaml".to_string(), 9),
                ("infra/web.tf".to_string(), 10),
            ]
        );
        assert!(
            findings.0[0]
                .message
                .contains("ConfigMap web-values key values.yaml")
        );
    }

    #[test]
    fn vendored_charts_are_judged_at_their_pinned_version_and_others_are_noted() {
        let known = release(
            "aws-load-balancer-controller",
            "3.5.0",
            "  values:\n    clusterName: dev\n    clusterNmae: dev\n",
        );
        let findings = run_in_context(&[("addons/alb.yaml", &known)], run);
        assert_eq!(
            found(&findings, "helm.values"),
            [("addons/alb.yaml".to_string(), 13)]
        );
        let unvendored = release(
            "aws-load-balancer-controller",
            "0.0.1",
            "  values:\n    x: 1\n",
        );
        let findings = run_in_context(&[("addons/alb.yaml", &unvendored)], run);
        assert_eq!(
            found(&findings, "helm.values-unchecked"),
            [("addons/alb.yaml".to_string(), 1)]
        );
        assert!(findings.0[0].message.contains("3.5.0"), "{:?}", findings.0);
    }

    #[test]
    fn values_the_chart_has_and_ranges_pass() {
        let known = release(
            "aws-load-balancer-controller",
            "3.5.0",
            "  values:\n    clusterName: dev\n",
        );
        let range = release(
            "aws-load-balancer-controller",
            "3.x",
            "  values:\n    nope: 1\n",
        );
        let findings = run_in_context(
            &[("addons/alb.yaml", &known), ("addons/range.yaml", &range)],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

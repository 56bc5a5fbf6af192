//! order.crd, order.crd-provider, order.layers, order.owner.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::context::{Context, Layer};
use crate::components::{self, crds_of};
use crate::schema::is_builtin_group;
use crate::{Findings, model};

const RANKS: [&str; 5] = ["crds", "karpenter", "alb", "addons", "apps"];

pub fn run(context: &Context, findings: &mut Findings) {
    crd_order(context, findings);
    layers(context, findings);
    owners(context, findings);
}

/// The CRD groups a layer installs: raw CRDs (true) or through a HelmRelease (false).
pub(super) fn installs(context: &Context, layer: &Layer) -> BTreeMap<String, bool> {
    let mut groups = BTreeMap::new();
    for (index, _) in &layer.built.objects {
        let object = &context.repo.objects[*index];
        if object.kind == "CustomResourceDefinition"
            && let Some(group) = object.spec("group").and_then(Json::as_str)
        {
            groups.insert(group.to_string(), true);
        }
        if object.kind == "HelmRelease"
            && let Some(chart) = context.chart_name(object, &context.namespaces[*index])
        {
            for group in crds_of(&chart, object) {
                groups.entry(group).or_insert(false);
            }
            // A chart the catalog says installs CRDs (`crds.provides`), unless told not to.
            if object.spec("install/crds").and_then(Json::as_str) != Some("Skip") {
                for group in context.repo.catalog.provides(&chart) {
                    groups.entry(group.clone()).or_insert(false);
                }
            }
        }
    }
    // Upstream CRD manifests applied from a git/OCI source of a known project.
    if let Some(name) = layer.object.spec("sourceRef/name").and_then(Json::as_str) {
        let kind = layer
            .object
            .spec("sourceRef/kind")
            .and_then(Json::as_str)
            .unwrap_or("");
        for (source, _) in context.objects(kind).filter(|(o, _)| o.name == name) {
            let url = source.spec("url").and_then(Json::as_str).unwrap_or("");
            let path = layer
                .object
                .spec("path")
                .and_then(Json::as_str)
                .unwrap_or("");
            for (project, crds) in &components::table().git_crds {
                if url.contains(project.as_str()) && path.contains("crd") {
                    for group in crds {
                        groups.insert(group.clone(), true);
                    }
                }
            }
        }
    }
    groups
}

fn crd_order(context: &Context, findings: &mut Findings) {
    let installed: Vec<BTreeMap<String, bool>> = context
        .layers
        .iter()
        .map(|l| installs(context, l))
        .collect();
    let from_kops = context.kops_crds();
    for (i, layer) in context.layers.iter().enumerate() {
        let closure = context.closure(layer);
        let mut reported = BTreeSet::new();
        for (index, _) in &layer.built.objects {
            let object = &context.repo.objects[*index];
            let group = object.group();
            if group.is_empty()
                || !group.contains('.')
                || is_builtin_group(group)
                || group.ends_with("toolkit.fluxcd.io")
                || object.kind == "CustomResourceDefinition"
            {
                continue;
            }
            if from_kops.contains(group)
                || installed[i].get(group) == Some(&true)
                || !reported.insert(group.to_string())
            {
                continue;
            }
            let providers: Vec<&Layer> = context
                .layers
                .iter()
                .zip(&installed)
                .filter(|(_, g)| g.contains_key(group))
                .map(|(l, _)| l)
                .collect();
            let before = providers.iter().any(|p| closure.contains(&p.key()));
            if before {
                continue;
            }
            let line = object.doc.line_of_key("apiVersion");
            if providers.is_empty() {
                findings.add("order.crd-provider", &object.file, line, format!("{} {} uses CRD group {group}, which no layer of the repo (nor kops) installs: applying it fails with \"no matches for kind\"", object.kind, object.name));
            } else {
                let names: Vec<&str> = providers.iter().map(|p| p.object.name.as_str()).collect();
                let same = providers.iter().any(|p| p.key() == layer.key());
                let why = if same {
                    "a HelmRelease in the same Kustomization installs it, and may not have yet when this is applied".to_string()
                } else {
                    format!("installed by {names:?}, which it does not depend on")
                };
                findings.add(
                    "order.crd",
                    &object.file,
                    line,
                    format!(
                        "{} {} (Kustomization {}) uses CRD group {group}: {why}",
                        object.kind, object.name, layer.object.name
                    ),
                );
            }
        }
    }
}

/// The platform rank of a layer: the highest of its contents (CRDs, Karpenter, ALB
/// controller, other HelmReleases = addons), or apps by name/path.
fn rank(context: &Context, layer: &Layer) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut raise = |r: usize| best = Some(best.map_or(r, |b| b.max(r)));
    for (index, _) in &layer.built.objects {
        let object = &context.repo.objects[*index];
        if object.kind == "CustomResourceDefinition" {
            raise(0);
        }
        if object.kind == "HelmRelease" {
            let chart = context
                .chart_name(object, &context.namespaces[*index])
                .unwrap_or_default();
            let named = components::table()
                .charts
                .get(&chart)
                .and_then(|c| c.layer.clone());
            raise(
                named
                    .and_then(|n| RANKS.iter().position(|r| *r == n))
                    .unwrap_or(3),
            );
        }
    }
    let path = layer.path.as_deref().unwrap_or("");
    let app = |s: &str| s.split(['/', '-', '_']).any(|w| w == "apps" || w == "app");
    if app(&layer.object.name) || app(path) {
        return Some(4);
    }
    best
}

fn layers(context: &Context, findings: &mut Findings) {
    let ranks: Vec<Option<usize>> = context.layers.iter().map(|l| rank(context, l)).collect();
    for (later, later_rank) in context.layers.iter().zip(&ranks) {
        let Some(later_rank) = later_rank else {
            continue;
        };
        let closure = context.closure(later);
        for (earlier, earlier_rank) in context.layers.iter().zip(&ranks) {
            if earlier_rank.is_some_and(|r| r < *later_rank) && !closure.contains(&earlier.key()) {
                findings.add(
                    "order.layers",
                    &later.object.file,
                    later.object.doc.line,
                    format!(
                        "Kustomization {} ({}) must run after {} ({}): add it to dependsOn (directly or through a layer in between)",
                        later.object.name,
                        RANKS[*later_rank],
                        earlier.object.name,
                        RANKS[earlier_rank.unwrap_or(0)]
                    ),
                );
            }
        }
    }
}

fn owners(context: &Context, findings: &mut Findings) {
    let mut releases: BTreeMap<String, Vec<(&model::Object, String)>> = BTreeMap::new();
    for (index, object) in context.repo.objects.iter().enumerate() {
        if object.kind == "HelmRelease"
            && let Some(chart) = context.chart_name(object, &context.namespaces[index])
            && components::table().charts.contains_key(&chart)
        {
            releases
                .entry(chart)
                .or_default()
                .push((object, context.namespaces[index].clone()));
        }
    }
    for (chart, list) in &releases {
        for (object, ns) in list.iter().skip(1) {
            findings.add(
                "order.owner",
                &object.file,
                object.doc.line,
                format!(
                    "chart {chart} is installed twice: HelmRelease {ns}/{} and {}/{}",
                    object.name, list[0].1, list[0].0.name
                ),
            );
        }
    }
    for (template, field, chart) in context.kops_components() {
        if let Some((object, ns)) = releases.get(&chart).and_then(|l| l.first()) {
            let line = context
                .repo
                .text(&template)
                .map_or(0, |t| model::line_in(t, &format!("{field}:")));
            findings.add("order.owner", &template, line, format!("kops installs {chart} (spec.{field}.enabled, managed) and Flux installs it too (HelmRelease {ns}/{})", object.name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::context::Context;
    use super::super::testing::{found, layer, repo};
    use super::run;
    use crate::Findings;
    use crate::facts::{CatalogFacts, ChartFacts};

    const WIDGET: &str =
        "apiVersion: example.team.io/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: apps\n";

    const TEAM_CRDS: &str = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: team-crds\n  namespace: kube-system\nspec:\n  chart:\n    spec:\n      chart: team-crds\n      version: 1.0.0\n";

    /// The catalog's word that the team's chart installs the Widget API.
    fn facts() -> CatalogFacts {
        let mut facts = CatalogFacts::default();
        facts.insert(
            "team-crds",
            ChartFacts {
                entry: "team-crds".into(),
                provides: vec!["example.team.io".into()],
                features: Vec::new(),
            },
        );
        facts
    }

    fn findings_of(apps_after: &[&str], facts: CatalogFacts) -> Findings {
        let apps = layer("apps", apps_after);
        let addons = layer("addons", &[]);
        let repo = repo(&[
            ("clusters/apps.yaml", &apps),
            ("clusters/addons.yaml", &addons),
            ("apps/kustomization.yaml", "resources:\n  - widget.yaml\n"),
            ("apps/widget.yaml", WIDGET),
            ("addons/kustomization.yaml", "resources:\n  - crds.yaml\n"),
            ("addons/crds.yaml", TEAM_CRDS),
        ])
        .with_catalog(facts);
        let mut findings = Findings::default();
        run(&Context::new(&repo), &mut findings);
        findings
    }

    #[test]
    fn a_group_no_layer_installs_by_the_given_facts_is_a_crd_provider_finding() {
        let findings = findings_of(&["addons"], CatalogFacts::default());
        assert_eq!(
            found(&findings, "order.crd-provider"),
            [("apps/widget.yaml".to_string(), 1)]
        );
        assert!(found(&findings, "order.crd").is_empty());
    }

    #[test]
    fn a_group_the_facts_say_an_earlier_layer_installs_passes() {
        let findings = findings_of(&["addons"], facts());
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn a_group_installed_by_a_layer_not_depended_on_is_found_with_the_layers_out_of_order() {
        let findings = findings_of(&[], facts());
        assert_eq!(
            found(&findings, "order.crd"),
            [("apps/widget.yaml".to_string(), 1)]
        );
        assert_eq!(
            found(&findings, "order.layers"),
            [("clusters/apps.yaml".to_string(), 1)]
        );
    }

    #[test]
    fn a_known_chart_installed_twice_is_an_owner_finding() {
        let release = |name: &str| {
            format!(
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: {name}\n  namespace: kube-system\nspec:\n  chart:\n    spec:\n      chart: velero\n      version: 1.0.0\n"
            )
        };
        let (first, second) = (release("velero"), release("velero-again"));
        let repo = repo(&[("addons/a.yaml", &first), ("addons/b.yaml", &second)]);
        let mut findings = Findings::default();
        run(&Context::new(&repo), &mut findings);
        assert_eq!(
            found(&findings, "order.owner"),
            [("addons/b.yaml".to_string(), 1)]
        );
    }
}

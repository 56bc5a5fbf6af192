//! order.watched-api: a controller configured to watch an API (a feature of its chart, as
//! the blueprint's catalog declares it) runs only after a layer that installs that API.
//! Which values turn on which feature, and what it needs, is catalog data
//! (`addons/*.yaml` `features:`); which layer installs which CRDs comes from the repo (CRD
//! objects, known charts, CRD manifests from git, and charts whose catalog entry lists
//! them in `crds.provides`).
use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::context::{Context, Layer};
use super::order;
use crate::Findings;
use crate::facts::CatalogFacts;

/// The API groups a layer installs: what `order.crd` derives, plus the `crds.provides` of
/// every HelmRelease whose chart the catalog knows.
fn installs(context: &Context, catalog: &CatalogFacts, layer: &Layer) -> BTreeSet<String> {
    let mut groups: BTreeSet<String> = order::installs(context, layer).into_keys().collect();
    for (index, _) in &layer.built.objects {
        let object = &context.repo.objects[*index];
        if object.kind == "HelmRelease"
            && object.spec("install/crds").and_then(Json::as_str) != Some("Skip")
            && let Some(chart) = context.chart_name(object, &context.namespaces[*index])
        {
            groups.extend(catalog.provides(&chart).cloned());
        }
    }
    groups
}

pub fn run(context: &Context, findings: &mut Findings) {
    let catalog = &*context.repo.catalog;
    let from_kops = context.kops_crds();
    let installed: Vec<BTreeSet<String>> = context
        .layers
        .iter()
        .map(|l| installs(context, catalog, l))
        .collect();
    for (index, (release, namespace)) in context
        .repo
        .objects
        .iter()
        .zip(&context.namespaces)
        .enumerate()
    {
        if release.kind != "HelmRelease" {
            continue;
        }
        let Some(chart) = context.chart_name(release, namespace) else {
            continue;
        };
        let values = release.spec("values").cloned().unwrap_or(Json::Null);
        let own: BTreeSet<String> = catalog.provides(&chart).cloned().collect();
        for entry in catalog.of(&chart) {
            for feature in &entry.features {
                let Some((trigger, value)) = feature
                    .enabled_by
                    .iter()
                    .find_map(|t| t.matched(&values).map(|v| (t, v)))
                else {
                    continue;
                };
                for layer in context.layers_of(index) {
                    let closure = context.closure(layer);
                    let before: BTreeSet<&String> = context
                        .layers
                        .iter()
                        .zip(&installed)
                        .filter(|(l, _)| closure.contains(&l.key()))
                        .flat_map(|(_, groups)| groups)
                        .collect();
                    for group in &feature.needs.api_groups {
                        if from_kops.contains(group)
                            || own.contains(group)
                            || before.contains(group)
                        {
                            continue;
                        }
                        let fix = if feature.needs.addons.is_empty() {
                            "install its CRDs in a layer this one depends on".to_string()
                        } else {
                            format!(
                                "`scaffold add-addon {}` installs it in an earlier layer",
                                feature.needs.addons.join(" ")
                            )
                        };
                        findings.add(
                            "order.watched-api",
                            release.source_of("spec/values").0,
                            setting_line(release, &trigger.path, value),
                            format!(
                                "HelmRelease {} (Kustomization {}) sets {}: {} (feature `{}` of {}), which watches API group {group}, but no layer before it installs that API and the controller fails to start: {fix}, or remove the value",
                                release.name,
                                layer.object.name,
                                trigger.path,
                                show(value),
                                feature.name,
                                entry.entry
                            ),
                        );
                    }
                }
            }
        }
    }
}

fn show(value: &Json) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_string)
}

/// The line of the value (or list item) at `spec.values.<path>`.
fn setting_line(release: &crate::model::Object, path: &str, value: &Json) -> usize {
    let keys: Vec<&str> = ["spec", "values"]
        .into_iter()
        .chain(path.split('.'))
        .collect();
    let doc = release.source_of("spec/values").1;
    let needle = show(value);
    let written = keys.iter().try_fold(&*doc.node, |node, key| node.get(key));
    match written {
        // A list: the item holding the value.
        Some(
            list @ scaffold_support::yaml::Node {
                kind: scaffold_support::yaml::Kind::Seq(items),
                ..
            },
        ) => items
            .iter()
            .find(|item| item.text() == Some(needle.as_str()))
            .map_or(list.pos.line, |item| item.pos.line),
        Some(node) => node.pos.line,
        None => doc.line_at(&keys),
    }
}

#[cfg(test)]
mod tests {
    use super::super::context::Context;
    use super::super::testing::{found, layer, repo};
    use super::run;
    use crate::Findings;
    use crate::facts::{CatalogFacts, ChartFacts, Feature, Needs, Trigger, Unavailable};

    const GATEWAY: &str = "gateway.networking.k8s.io";

    const DNS: &str = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: external-dns\n  namespace: kube-system\nspec:\n  chart:\n    spec:\n      chart: external-dns\n      version: 1.0.0\n  values:\n    sources:\n      - service\n      - gateway-httproute\n";

    const GATEWAY_CRDS: &str = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: gateway-crds\n  namespace: kube-system\nspec:\n  chart:\n    spec:\n      chart: gateway-crds\n      version: 1.0.0\n";

    /// external-dns's `gateway-httproute` source watches the Gateway API (as the catalog
    /// says), which the `gateway-crds` chart installs.
    fn facts() -> CatalogFacts {
        let mut facts = CatalogFacts::default();
        facts.insert(
            "external-dns",
            ChartFacts {
                entry: "external-dns".into(),
                provides: Vec::new(),
                features: vec![Feature {
                    name: "gateway".into(),
                    needs: Needs {
                        api_groups: vec![GATEWAY.into()],
                        addons: vec!["gateway-api".into()],
                        answers: Vec::new(),
                    },
                    enabled_by: vec![Trigger {
                        path: "sources".into(),
                        any_of: vec!["gateway-httproute".into()],
                    }],
                }],
            },
        );
        facts.insert(
            "gateway-crds",
            ChartFacts {
                entry: "gateway-api".into(),
                provides: vec![GATEWAY.into()],
                features: Vec::new(),
            },
        );
        facts
    }

    fn findings_of(addons_after: &[&str], facts: CatalogFacts) -> Findings {
        let addons = layer("addons", addons_after);
        let crds = layer("crds", &[]);
        let repo = repo(&[
            ("clusters/addons.yaml", &addons),
            ("clusters/crds.yaml", &crds),
            ("addons/kustomization.yaml", "resources:\n  - dns.yaml\n"),
            ("addons/dns.yaml", DNS),
            ("crds/kustomization.yaml", "resources:\n  - gateway.yaml\n"),
            ("crds/gateway.yaml", GATEWAY_CRDS),
        ])
        .with_catalog(facts);
        let mut findings = Findings::default();
        run(&Context::new(&repo), &mut findings);
        findings
    }

    #[test]
    fn a_feature_whose_api_no_earlier_layer_installs_is_found_at_its_value() {
        let findings = findings_of(&[], facts());
        assert_eq!(
            found(&findings, "order.watched-api"),
            [("addons/dns.yaml".to_string(), 14)]
        );
        assert!(
            findings.0[0].message.contains("add-addon gateway-api"),
            "{:?}",
            findings.0
        );
    }

    #[test]
    fn a_feature_after_the_layer_the_facts_say_installs_its_api_passes() {
        let findings = findings_of(&["crds"], facts());
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn without_catalog_facts_no_feature_is_judged() {
        let findings = findings_of(&[], CatalogFacts::default());
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn an_unavailable_catalog_is_a_check_catalog_note_on_the_record() {
        let mut facts = CatalogFacts::default();
        facts.unavailable = Some(Unavailable {
            file: ".scaffold/answers.yaml".into(),
            reason: "blueprint `team` 2.0.0 is not installed".into(),
        });
        let repo = repo(&[("README.md", "platform\n")]).with_catalog(facts);
        let findings = crate::run(&repo, &crate::Filter::default());
        let notes: Vec<_> = findings
            .iter()
            .filter(|d| d.rule == "check.catalog")
            .map(|d| (d.file.as_str(), d.line, d.message.as_str()))
            .collect();
        assert_eq!(
            notes,
            [(
                ".scaffold/answers.yaml",
                1,
                "blueprint `team` 2.0.0 is not installed"
            )]
        );
    }
}

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

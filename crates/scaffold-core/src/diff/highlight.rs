//! The one-line summaries a reviewer scans a diff for: a chart version that moves, an image
//! tag, a replica count, a CRD added or removed, a source's ref, pruning switched.
use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::check::model::Object;
use crate::check::yaml::str_at;

/// The highlights of one object's change (`before`/`after` absent when it was added or
/// removed); `object` is the side shown.
pub fn of(before: Option<&Json>, after: Option<&Json>, object: &Object) -> Vec<String> {
    let mut found = Vec::new();
    if object.kind == "CustomResourceDefinition" {
        match (before, after) {
            (None, Some(_)) => found.push(format!("CRD added: {}", object.name)),
            (Some(_), None) => found.push(format!(
                "CRD removed: {} (the cluster deletes every resource of it)",
                object.name
            )),
            _ => {}
        }
    }
    if object.is("helm.toolkit.fluxcd.io", "HelmRelease") {
        let chart = [before, after]
            .into_iter()
            .flatten()
            .find_map(|v| str_at(v, "spec/chart/spec/chart"))
            .unwrap_or(&object.name);
        moved(
            &mut found,
            &format!("chart {chart}"),
            before,
            after,
            "spec/chart/spec/version",
        );
    }
    for path in ["spec/ref/tag", "spec/ref/semver", "spec/ref/branch"] {
        if object.group() == "source.toolkit.fluxcd.io" {
            let what = format!("{} {} ref", object.kind, object.name);
            moved(&mut found, &what, before, after, path);
        }
    }
    if object.is("kustomize.toolkit.fluxcd.io", "Kustomization") {
        moved(&mut found, "prune", before, after, "spec/prune");
    }
    if let (Some(before), Some(after)) = (before, after) {
        let (old, new) = (scanned(before), scanned(after));
        for (path, value) in &new {
            match old.get(path) {
                Some(was) if was != value => found.push(format!("{path}: {was} → {value}")),
                None => found.push(format!("{path}: {value} (new)")),
                _ => {}
            }
        }
        for (path, was) in &old {
            if !new.contains_key(path) {
                found.push(format!("{path}: {was} (removed)"));
            }
        }
    }
    found
}

/// Adds "`what` A → B" when the string or boolean at `path` differs between the sides.
fn moved(
    found: &mut Vec<String>,
    what: &str,
    before: Option<&Json>,
    after: Option<&Json>,
    path: &str,
) {
    let at = |side: Option<&Json>| {
        side.and_then(|v| crate::check::yaml::at(v, path))
            .map(scalar)
    };
    match (at(before), at(after)) {
        (Some(a), Some(b)) if a != b => found.push(format!("{what} {a} → {b}")),
        (None, Some(b)) if before.is_some() => found.push(format!("{what} {b} (new)")),
        (None, Some(b)) => found.push(format!("{what} {b}")),
        (Some(a), None) if after.is_some() => found.push(format!("{what} {a} (removed)")),
        _ => {}
    }
}

fn scalar(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The image references and replica counts anywhere in an object (a Deployment's
/// containers, a HelmRelease's values), by dotted path.
fn scanned(value: &Json) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn walk<'a>(value: &'a Json, path: &mut Vec<&'a str>, out: &mut BTreeMap<String, String>) {
    match value {
        Json::Object(map) => {
            for (key, child) in map {
                path.push(key);
                walk(child, path, out);
                path.pop();
            }
        }
        Json::Array(items) => {
            for item in items {
                // A container list: the container's name stands for its index.
                let name = item.get("name").and_then(Json::as_str).unwrap_or("*");
                path.push(name);
                walk(item, path, out);
                path.pop();
            }
        }
        leaf => {
            let last = path.last().copied().unwrap_or_default();
            let parent = path.len().checked_sub(2).and_then(|i| path.get(i)).copied();
            let watched = matches!(last, "image" | "replicas" | "replicaCount")
                || (parent == Some("image") && matches!(last, "tag" | "repository" | "digest"));
            if watched && !leaf.is_null() {
                out.insert(path.join("."), scalar(leaf));
            }
        }
    }
}

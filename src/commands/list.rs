//! `scaffold list addons`.
use serde_json::{Value as Json, json};

use std::path::Path;

use crate::blueprint::Blueprint;
use crate::catalog::Entry;
use crate::error::Result;

pub fn addons(selector: Option<&str>, as_json: bool) -> Result<()> {
    let blueprint = match selector {
        Some(selector) => Blueprint::load(selector)?,
        // Inside a repo: the catalog of the blueprint that made it.
        None if crate::write::find_repo(Path::new(".")).is_ok() => {
            let lock = crate::lock::acquire_to_read(Path::new("."), "list addons")?;
            let found = crate::repo::Found::open(Path::new("."), &lock)?;
            crate::repo::load_blueprint(&found.record, None)?
        }
        None => Blueprint::load("default")?,
    };
    if as_json {
        let rows: Vec<Json> = blueprint
            .catalog
            .entries()
            .map(|e| {
                let s = &e.spec;
                json!({
                    "name": s.name, "chart": s.chart.name, "version": s.chart.version,
                    "namespace": s.namespace, "layer": s.layer, "always": s.always, "default": s.default,
                    "aws_permissions": s.iam_policy.is_some(), "requires": s.requires, "depends_on": s.depends_on,
                    "description": s.description, "operator_needs": needs_in_words(&blueprint, e),
                })
            })
            .collect();
        println!("{}", Json::Array(rows));
        return Ok(());
    }
    println!(
        "{:<28} {:<28} {:<11} {:<16} {:<14} DEPENDS ON",
        "NAME", "CHART", "VERSION", "NAMESPACE", "LAYER"
    );
    for e in blueprint.catalog.entries() {
        let s = &e.spec;
        let mut depends: Vec<String> = s.depends_on.clone();
        if s.iam_policy.is_some() {
            depends.push("AWS (IRSA)".into());
        }
        let name = if s.always {
            format!("{} (always)", s.name)
        } else {
            s.name.clone()
        };
        let depends = if depends.is_empty() {
            "-".to_string()
        } else {
            depends.join(", ")
        };
        println!(
            "{name:<28} {:<28} {:<11} {:<16} {:<14} {depends}",
            s.chart.name, s.chart.version, s.namespace, s.layer
        );
        println!("    needs: {}", needs_in_words(&blueprint, e));
    }
    Ok(())
}

/// What the operator must give an addon: the questions it requires (by their prompt) and
/// the catalog's own words.
fn needs_in_words(blueprint: &Blueprint, entry: &Entry) -> String {
    let mut needs: Vec<String> = entry
        .spec
        .requires
        .iter()
        .map(|key| {
            let prompt = blueprint
                .manifest
                .questions
                .iter()
                .find(|q| &q.key == key)
                .map(|q| q.prompt.split(" (").next().unwrap_or_default().to_string())
                .unwrap_or_else(|| key.clone());
            format!("{prompt} (answer `{key}`)")
        })
        .collect();
    needs.extend(
        entry
            .spec
            .operator_needs
            .iter()
            .map(|n| n.trim().to_string()),
    );
    if needs.is_empty() {
        "nothing".into()
    } else {
        needs.join("; ")
    }
}

//! `scaffold list addons`.

use std::path::Path;

use crate::blueprint::Blueprint;
use crate::catalog::Entry;
use crate::error::Result;
use crate::outcome::ExitStatus;
use crate::report::AddonRow;
use crate::settings::ListAddonsOptions;
use crate::ui::Reporter;

pub fn addons(options: ListAddonsOptions, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = match options.blueprint.as_deref() {
        Some(selector) => Blueprint::load(selector)?,
        // Inside a repo: the catalog of the blueprint that made it.
        None if crate::write::find_repo(Path::new(".")).is_ok() => {
            let lock = crate::lock::acquire_to_read(Path::new("."), "list addons")?;
            let found = crate::repo::Found::open(Path::new("."), &lock)?;
            crate::repo::load_blueprint(&found.record, None)?
        }
        None => Blueprint::load("default")?,
    };
    // One row type for the JSON and the table, so neither drifts from the other.
    let rows: Vec<AddonRow> = blueprint
        .catalog
        .entries()
        .map(|e| {
            let s = &e.spec;
            AddonRow {
                name: s.name.clone(),
                chart: s.chart.name.clone(),
                version: s.chart.version.clone(),
                namespace: s.namespace.clone(),
                layer: s.layer.clone(),
                always: s.always,
                default: s.default,
                aws_permissions: s.iam_policy.is_some(),
                requires: s.requires.clone(),
                depends_on: s.depends_on.clone(),
                description: s.description.clone(),
                operator_needs: needs_in_words(&blueprint, e),
            }
        })
        .collect();
    if options.json {
        out.json(&rows);
        return Ok(ExitStatus::Success);
    }
    out.line(format!(
        "{:<28} {:<28} {:<11} {:<16} {:<14} DEPENDS ON",
        "NAME", "CHART", "VERSION", "NAMESPACE", "LAYER"
    ));
    for row in &rows {
        let mut depends: Vec<String> = row.depends_on.clone();
        if row.aws_permissions {
            depends.push("AWS (IRSA)".into());
        }
        let name = if row.always {
            format!("{} (always)", row.name)
        } else {
            row.name.clone()
        };
        let depends = if depends.is_empty() {
            "-".to_string()
        } else {
            depends.join(", ")
        };
        out.line(format!(
            "{name:<28} {:<28} {:<11} {:<16} {:<14} {depends}",
            row.chart, row.version, row.namespace, row.layer
        ));
        out.line(format!("    needs: {}", row.operator_needs));
    }
    Ok(ExitStatus::Success)
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

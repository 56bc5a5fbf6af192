//! `scaffold list addons`.
use serde_json::{Value as Json, json};

use crate::blueprint::Blueprint;
use crate::error::Result;

pub fn addons(blueprint: &str, as_json: bool) -> Result<()> {
    let blueprint = Blueprint::load(blueprint)?;
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
                    "description": s.description,
                })
            })
            .collect();
        println!("{}", Json::Array(rows));
        return Ok(());
    }
    println!(
        "{:<28} {:<28} {:<11} {:<16} {:<14} NEEDS",
        "NAME", "CHART", "VERSION", "NAMESPACE", "LAYER"
    );
    for e in blueprint.catalog.entries() {
        let s = &e.spec;
        let mut needs: Vec<String> = s.depends_on.clone();
        needs.extend(s.requires.iter().map(|r| format!("answer {r}")));
        if s.iam_policy.is_some() {
            needs.push("AWS (IRSA)".into());
        }
        let name = if s.always {
            format!("{} (always)", s.name)
        } else {
            s.name.clone()
        };
        let needs = if needs.is_empty() {
            "-".to_string()
        } else {
            needs.join(", ")
        };
        println!(
            "{name:<28} {:<28} {:<11} {:<16} {:<14} {needs}",
            s.chart.name, s.chart.version, s.namespace, s.layer
        );
    }
    Ok(())
}

//! Rendering findings: human text grouped by file (coloured only when asked), and the
//! stable JSON documented in docs/check.md. Pure: returns strings.
use serde_json::json;

use super::RULES;
use crate::diagnostic::{Diagnostic, Severity};

/// Counts of errors and warnings.
pub fn counts(findings: &[Diagnostic]) -> (usize, usize) {
    let errors = findings
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    (errors, findings.len() - errors)
}

pub fn summary(findings: &[Diagnostic]) -> String {
    let (errors, warnings) = counts(findings);
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}

pub fn human(findings: &[Diagnostic], colour: bool) -> String {
    let paint = |code: &str, text: &str| {
        if colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    let mut current: Option<&str> = None;
    for d in findings {
        if current != Some(d.file.as_str()) {
            if current.is_some() {
                out.push('\n');
            }
            out.push_str(&paint("1", &d.file));
            out.push('\n');
            current = Some(&d.file);
        }
        let severity = match d.severity {
            Severity::Error => paint("31", "error"),
            Severity::Warning => paint("33", "warning"),
        };
        let environment = d
            .environment
            .as_deref()
            .map(|e| format!("({e}) "))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}: {severity} [{}] {environment}{}\n",
            d.location(),
            d.rule,
            d.message
        ));
        if !d.hint.is_empty() {
            out.push_str(&format!("    {} {}\n", paint("2", "fix:"), d.hint));
        }
    }
    out
}

/// The findings that concern `environment`: its own, and the shared ones found in its view.
fn of_environment(findings: &[Diagnostic], environment: &str) -> Vec<Diagnostic> {
    findings
        .iter()
        .filter(|d| {
            d.environment
                .as_deref()
                .is_none_or(|e| e.split(", ").any(|n| n == environment))
        })
        .cloned()
        .collect()
}

/// `dev: 1 error, 0 warnings; prod: …`, for a repo of several environments (else empty).
pub fn environment_summary(findings: &[Diagnostic], environments: &[String]) -> String {
    if environments.len() < 2 {
        return String::new();
    }
    environments
        .iter()
        .map(|e| format!("{e}: {}", summary(&of_environment(findings, e))))
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn json(root: &str, findings: &[Diagnostic], environments: &[String]) -> String {
    serde_json::to_string(&json_value(root, findings, environments)).unwrap_or_default()
}

/// One repo's JSON document (also an entry of a fleet's `repos`).
pub fn json_value(
    root: &str,
    findings: &[Diagnostic],
    environments: &[String],
) -> serde_json::Value {
    let (errors, warnings) = counts(findings);
    let mut value = json!({
        "version": 1,
        "root": root,
        "errors": errors,
        "warnings": warnings,
        "findings": findings,
    });
    if environments.len() > 1 {
        let per: serde_json::Map<String, serde_json::Value> = environments
            .iter()
            .map(|e| {
                let (errors, warnings) = counts(&of_environment(findings, e));
                (e.clone(), json!({"errors": errors, "warnings": warnings}))
            })
            .collect();
        value["environments"] = serde_json::Value::Object(per);
    }
    value
}

pub fn rules_text() -> String {
    let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
    RULES
        .iter()
        .map(|r| {
            format!(
                "{:width$}  {:7}  {}\n",
                r.id,
                r.severity.as_str(),
                r.summary
            )
        })
        .collect()
}

pub fn rules_json() -> String {
    let rules: Vec<_> = RULES
        .iter()
        .map(|r| json!({"id": r.id, "severity": r.severity, "summary": r.summary, "hint": r.hint}))
        .collect();
    serde_json::to_string(&rules).unwrap_or_default()
}

/// SARIF 2.1.0 (one run, the catalogue as the tool's rules), for GitHub code scanning and
/// other SARIF consumers. Paths are relative to the checked directory (`%SRCROOT%`).
pub fn sarif(findings: &[Diagnostic]) -> String {
    let level = |s: Severity| match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let rules: Vec<_> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": {"text": r.summary},
                "help": {"text": r.hint},
                "defaultConfiguration": {"level": level(r.severity)},
            })
        })
        .collect();
    let results: Vec<_> = findings
        .iter()
        .map(|d| {
            let mut region = serde_json::Map::new();
            if d.line > 0 {
                region.insert("startLine".into(), json!(d.line));
                if d.column > 0 {
                    region.insert("startColumn".into(), json!(d.column));
                }
            }
            let mut location = json!({
                "artifactLocation": {"uri": d.file, "uriBaseId": "%SRCROOT%"},
            });
            if !region.is_empty() {
                location["region"] = serde_json::Value::Object(region);
            }
            json!({
                "ruleId": d.rule,
                "ruleIndex": RULES.iter().position(|r| r.id == d.rule).unwrap_or(0),
                "level": level(d.severity),
                "message": {"text": format!("{} (fix: {})", d.message, d.hint)},
                "locations": [{"physicalLocation": location}],
            })
        })
        .collect();
    let value = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "scaffold check",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string(&value).unwrap_or_default()
}

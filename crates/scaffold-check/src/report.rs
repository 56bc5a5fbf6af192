//! Rendering findings: human text grouped by file (coloured only when asked), and the
//! stable JSON documented in docs/check.md. Pure: returns strings.
use serde::Serialize;
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

/// One repo's JSON document (docs/json.md), also an entry of a fleet's `repos` (without
/// `version`, with `files`).
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    pub root: &'a str,
    pub errors: usize,
    pub warnings: usize,
    pub findings: &'a [Diagnostic],
    /// Per environment, in the repo's order, when it has several.
    #[serde(skip_serializing_if = "PerEnvironment::is_empty")]
    pub environments: PerEnvironment,
    /// How many files were read (a fleet's entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
}

/// Errors and warnings of one environment.
#[derive(Debug, Serialize)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
}

/// (environment, its counts), written as a JSON object in this order.
#[derive(Debug, Default)]
pub struct PerEnvironment(pub Vec<(String, Counts)>);

impl PerEnvironment {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for PerEnvironment {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (environment, counts) in &self.0 {
            map.serialize_entry(environment, counts)?;
        }
        map.end()
    }
}

impl<'a> Document<'a> {
    /// The document `check --json` prints for one repo.
    pub fn of(root: &'a str, findings: &'a [Diagnostic], environments: &[String]) -> Self {
        let (errors, warnings) = counts(findings);
        let per = if environments.len() > 1 {
            environments
                .iter()
                .map(|e| {
                    let (errors, warnings) = counts(&of_environment(findings, e));
                    (e.clone(), Counts { errors, warnings })
                })
                .collect()
        } else {
            Vec::new()
        };
        Document {
            version: Some(1),
            root,
            errors,
            warnings,
            findings,
            environments: PerEnvironment(per),
            files: None,
        }
    }

    /// As an entry of a fleet's `repos`: no `version`, the files read.
    pub fn in_fleet(mut self, files: usize) -> Self {
        self.version = None;
        self.files = Some(files);
        self
    }
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

/// A rule as `check --list-rules --json` lists it.
#[derive(Debug, Serialize)]
pub struct RuleRow {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    pub hint: &'static str,
}

pub fn rules_json() -> String {
    let rules: Vec<RuleRow> = RULES
        .iter()
        .map(|r| RuleRow {
            id: r.id,
            severity: r.severity,
            summary: r.summary,
            hint: r.hint,
        })
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

//! What commands report: one serde type per `--json` shape (documented in docs/json.md;
//! change one only together with that page) and the human summaries built from the same
//! data, so the two cannot drift apart. Pure: strings out, printing is the caller's.
use std::collections::BTreeMap;

use serde::Serialize;

use crate::plan::Plan;

/// One file of a plan or a change: its repo-relative path and size after the change.
#[derive(Debug, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub bytes: usize,
}

/// An addon added because another one needs it.
#[derive(Debug, Serialize)]
pub struct Dependency {
    pub addon: String,
    pub needed_by: String,
}

#[derive(Debug, Serialize)]
pub struct BlueprintId {
    pub name: String,
    pub version: String,
}

/// `scaffold new --json`, with or without `--dry-run`.
#[derive(Debug, Serialize)]
pub struct NewReport {
    pub command: &'static str,
    pub dir: String,
    pub blueprint: BlueprintId,
    pub dry_run: bool,
    /// The commit made; null in a dry run.
    pub commit: Option<String>,
    pub files: Vec<FileEntry>,
    pub added_dependencies: Vec<Dependency>,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Modify,
    Delete,
}

#[derive(Debug, Serialize)]
pub struct ChangeEntry {
    pub path: String,
    pub action: Action,
    /// Size after the change (0 for a deletion).
    pub bytes: usize,
}

/// `scaffold add-addon --json` and `scaffold remove-addon --json`.
#[derive(Debug, Serialize)]
pub struct EditReport {
    pub command: &'static str,
    pub addon: String,
    /// The chart version added or removed.
    pub version: String,
    pub dry_run: bool,
    /// The commit made; null in a dry run or when nothing changed.
    pub commit: Option<String>,
    pub changes: Vec<ChangeEntry>,
    pub added_dependencies: Vec<Dependency>,
    /// `promote` only: each component compared, with what moved and what stayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted: Option<Vec<PromotedEntry>>,
}

/// One component `promote` compared (the core's type, a `--json` shape as it is).
pub use crate::promotion::PromotedEntry;

/// `scaffold update --json`, with or without `--dry-run`.
#[derive(Debug, Serialize)]
pub struct UpdateReport {
    pub command: &'static str,
    pub from: BlueprintId,
    pub to: BlueprintId,
    pub dry_run: bool,
    /// The commit made; null in a dry run, when nothing changed, and when conflicts were
    /// left as markers for the user to commit.
    pub commit: Option<String>,
    /// True when the new rendering is the base: nothing to do.
    pub up_to_date: bool,
    /// Every answer that changes, with its value before and after (null: none).
    pub answers: Vec<AnswerEntry>,
    /// What the blueprint says of the changed answers (their questions' `on_change`), one
    /// line each: `KEY: text`.
    pub warnings: Vec<String>,
    pub changes: Vec<ChangeEntry>,
    /// Paths with conflicts (refused, or left with markers).
    pub conflicts: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct AnswerEntry {
    pub key: String,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
}

/// One row of `scaffold list addons --json` (the output is an array of these).
#[derive(Debug, Serialize)]
pub struct AddonRow {
    pub name: String,
    pub chart: String,
    pub version: String,
    pub namespace: String,
    pub layer: String,
    pub always: bool,
    pub default: bool,
    pub aws_permissions: bool,
    pub requires: Vec<String>,
    pub depends_on: Vec<String>,
    pub description: String,
    /// What the operator must give it, in words (the table's `needs:` line).
    pub operator_needs: String,
}

/// `scaffold blueprint lint DIR --json`.
#[derive(Debug, Serialize)]
pub struct LintReport<'a> {
    pub version: u32,
    pub blueprint: String,
    pub errors: usize,
    pub warnings: usize,
    pub findings: &'a [crate::diagnostic::Diagnostic],
}

/// One row of `scaffold blueprint lint --list-rules --json`.
#[derive(Debug, Serialize)]
pub struct LintRule {
    pub id: &'static str,
    pub finds: &'static str,
}

/// `scaffold blueprint test --json`.
#[derive(Debug, Serialize)]
pub struct TestReport {
    pub blueprint: String,
    pub passed: usize,
    pub failed: usize,
    pub cases: Vec<CaseEntry>,
}

#[derive(Debug, Serialize)]
pub struct CaseEntry {
    pub name: String,
    pub passed: bool,
    pub files: usize,
    /// Findings as `check --json` gives them (docs/json.md, `Finding`).
    pub problems: Vec<crate::diagnostic::Diagnostic>,
}

pub fn files_of(plan: &Plan) -> Vec<FileEntry> {
    plan.files
        .iter()
        .map(|(path, bytes)| FileEntry {
            path: path.as_str().to_string(),
            bytes: bytes.len(),
        })
        .collect()
}

pub fn dependencies(added: &[(String, String)]) -> Vec<Dependency> {
    added
        .iter()
        .map(|(addon, needed_by)| Dependency {
            addon: addon.clone(),
            needed_by: needed_by.clone(),
        })
        .collect()
}

/// JSON for stdout: one document, one line.
pub fn to_json(report: &impl Serialize) -> String {
    serde_json::to_string(report).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// What `new` wrote, on one screen: the headline, files per top-level directory, the
/// dependencies added on the user's behalf.
pub fn new_summary(report: &NewReport) -> String {
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for file in &report.files {
        let group = match file.path.split_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => file.path.clone(),
        };
        *groups.entry(group).or_default() += 1;
    }
    let commit = report.commit.as_deref().unwrap_or("");
    let mut out = format!(
        "Created {} from blueprint {} {}: {} files, commit {} on main.\n",
        report.dir,
        report.blueprint.name,
        report.blueprint.version,
        report.files.len(),
        &commit[..commit.len().min(12)]
    );
    let width = groups.keys().map(|g| g.len()).max().unwrap_or(0);
    for (group, count) in &groups {
        let noun = if *count == 1 { "file" } else { "files" };
        out.push_str(&format!("  {group:<width$}  {count:>3} {noun}\n"));
    }
    for dep in &report.added_dependencies {
        out.push_str(&format!(
            "added addon {} (needed by {})\n",
            dep.addon, dep.needed_by
        ));
    }
    out
}

/// A repo of a fleet that could not be handled: its error line, that error's exit code
/// and, when the error knows it, what fixes it (docs/json.md).
#[derive(Debug, Serialize)]
pub struct FleetError {
    pub root: String,
    pub error: String,
    pub exit: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub fn fleet_error(root: &str, error: &crate::error::Error) -> FleetError {
    FleetError {
        root: root.to_string(),
        error: error.to_string(),
        exit: error.exit_code(),
        fix: error.fix().map(str::to_string),
    }
}

/// A repo of a fleet: what the command made of it, or why it could not.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum FleetEntry<T> {
    Done(T),
    Failed(FleetError),
}

/// `--json` of a command over a fleet of repos (`check REPO…`, `update --dry-run REPO…`).
#[derive(Debug, Serialize)]
pub struct FleetDocument<T, S> {
    pub version: u32,
    pub repos: Vec<FleetEntry<T>>,
    pub summary: S,
}

/// `check REPO… --json`'s summary.
#[derive(Debug, Serialize)]
pub struct CheckFleetSummary {
    pub repos: usize,
    pub with_errors: usize,
    pub with_warnings: usize,
    pub clean: usize,
    pub not_checked: usize,
}

/// `update --dry-run REPO… --json`'s summary.
#[derive(Debug, Serialize)]
pub struct UpdateFleetSummary {
    pub repos: usize,
    pub up_to_date: usize,
    pub would_change: usize,
    pub with_conflicts: usize,
    pub not_prepared: usize,
}

/// `update --dry-run REPO… --json`: one repo's update.
#[derive(Debug, Serialize)]
pub struct UpdateFleetEntry<'a> {
    pub root: String,
    pub update: &'a UpdateReport,
}

/// A file of `blueprint files --json`: how the blueprint has it, and from where.
#[derive(Debug, Serialize)]
pub struct FileRow {
    pub path: String,
    pub how: String,
    pub origin: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_error_gives_the_fix_apart_when_it_knows_it() {
        use crate::error::{Error, Problem};
        let known = Error::repo_state(Problem::new("a lock is held").fix("wait for it"));
        let entry = serde_json::to_value(fleet_error("r", &known)).expect("json");
        assert_eq!(entry["error"], "a lock is held; wait for it");
        assert_eq!(
            (entry["exit"].as_u64(), entry["fix"].as_str()),
            (Some(3), Some("wait for it"))
        );
        let unknown =
            serde_json::to_value(fleet_error("r", &Error::input("`r` is not a directory")))
                .expect("json");
        assert!(unknown.get("fix").is_none(), "{unknown}");
    }

    fn report(paths: &[&str]) -> NewReport {
        NewReport {
            command: "new",
            dir: "demo".into(),
            blueprint: BlueprintId {
                name: "default".into(),
                version: "0.1.0".into(),
            },
            dry_run: false,
            commit: Some("0123456789abcdef".into()),
            files: paths
                .iter()
                .map(|p| FileEntry {
                    path: p.to_string(),
                    bytes: 1,
                })
                .collect(),
            added_dependencies: vec![Dependency {
                addon: "istio-base".into(),
                needed_by: "istiod".into(),
            }],
        }
    }

    #[test]
    fn summary_counts_files_per_top_level_directory() {
        let summary = new_summary(&report(&["a/x", "a/y", "README.md", "bb/c/d"]));
        assert_eq!(
            summary,
            "Created demo from blueprint default 0.1.0: 4 files, commit 0123456789ab on main.\n  README.md    1 file\n  a/           2 files\n  bb/          1 file\nadded addon istio-base (needed by istiod)\n"
        );
    }

    #[test]
    fn json_names_every_documented_field() {
        let json: serde_json::Value =
            serde_json::from_str(&to_json(&report(&["a"]))).expect("json");
        assert_eq!(json["files"][0]["path"], "a");
        assert_eq!(json["files"][0]["bytes"], 1);
        assert_eq!(json["added_dependencies"][0]["needed_by"], "istiod");
        assert_eq!(json["commit"], "0123456789abcdef");
    }
}

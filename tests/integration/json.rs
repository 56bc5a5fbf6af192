//! Every `--json` output parses into the shape docs/json.md documents, with unknown
//! fields refused: a field added, renamed or retyped fails here first.
use serde::Deserialize;

use crate::support::{Env, Output, run};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileEntry {
    path: String,
    bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Dependency {
    addon: String,
    needed_by: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlueprintId {
    name: String,
    version: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewReport {
    command: String,
    dir: String,
    blueprint: BlueprintId,
    dry_run: bool,
    commit: Option<String>,
    files: Vec<FileEntry>,
    added_dependencies: Vec<Dependency>,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Action {
    Create,
    Modify,
    Delete,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeEntry {
    path: String,
    action: Action,
    bytes: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EditReport {
    command: String,
    addon: String,
    version: String,
    dry_run: bool,
    commit: Option<String>,
    changes: Vec<ChangeEntry>,
    added_dependencies: Vec<Dependency>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // every field is part of the documented shape
struct AddonRow {
    name: String,
    chart: String,
    version: String,
    namespace: String,
    layer: String,
    always: bool,
    default: bool,
    aws_permissions: bool,
    requires: Vec<String>,
    depends_on: Vec<String>,
    description: String,
    operator_needs: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestReport {
    blueprint: String,
    passed: usize,
    failed: usize,
    cases: Vec<CaseEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    passed: bool,
    files: usize,
    problems: Vec<Finding>,
}

/// docs/json.md `Finding`: what check, blueprint lint and blueprint test report.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // every field is part of the documented shape
struct Finding {
    rule: String,
    severity: String,
    file: String,
    line: usize,
    column: usize,
    message: String,
    hint: String,
    environment: Option<String>,
}

/// One JSON document on one line, nothing else on stdout.
fn parse<T: serde::de::DeserializeOwned>(out: &Output) -> T {
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: not the documented shape:\n{}", out.stdout))
}

#[test]
fn new_reports_files_as_a_list_in_dry_and_real_runs() {
    let env = Env::new();
    let dry: NewReport = parse(&run(env.scaffold().args([
        "new",
        "j",
        "--defaults",
        "--dry-run",
        "--json",
    ])));
    assert!(env.listing().is_empty());
    let real: NewReport = parse(&run(env.scaffold().args([
        "new",
        "j",
        "--defaults",
        "--json",
        "--set",
        "addons=istio",
    ])));
    assert_eq!(
        (dry.command.as_str(), dry.dry_run, &dry.commit),
        ("new", true, &None)
    );
    assert_eq!((real.dir.as_str(), real.dry_run), ("j", false));
    assert_eq!(
        (
            real.blueprint.name.as_str(),
            real.blueprint.version.as_str()
        ),
        ("default", "0.5.0")
    );
    let head = env.git(&env.path("j"), &["rev-parse", "HEAD"]);
    assert_eq!(real.commit.as_deref(), Some(head.trim()));
    let answers = real
        .files
        .iter()
        .find(|f| f.path == ".scaffold/answers.yaml")
        .expect("answers listed");
    let on_disk = std::fs::metadata(env.path("j/.scaffold/answers.yaml")).expect("written");
    assert_eq!(answers.bytes, on_disk.len());
    assert!(dry.files.len() > 50 && dry.files.iter().all(|f| f.bytes > 0));
    assert!(
        real.added_dependencies
            .iter()
            .any(|d| (d.addon.as_str(), d.needed_by.as_str()) == ("istio-base", "istio"))
    );
}

#[test]
fn add_and_remove_addon_report_their_changes() {
    let env = Env::new();
    let made = run(env.scaffold().args(["new", "p", "--defaults", "-q"]));
    assert_eq!(made.code, 0, "{}", made.stderr);
    let dir = env.path("p");
    let edit = |args: &[&str]| -> EditReport {
        parse(&run(env
            .scaffold()
            .args(args)
            .arg("--json")
            .arg("-C")
            .arg(&dir)))
    };

    let dry = edit(&["add-addon", "velero", "--dry-run"]);
    assert_eq!(
        (dry.command.as_str(), dry.addon.as_str()),
        ("add-addon", "velero")
    );
    assert!(dry.dry_run && dry.commit.is_none());
    assert!(!dir.join("infrastructure/addons/velero").exists());

    let added = edit(&["add-addon", "velero"]);
    assert_eq!(added.version, dry.version);
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    assert_eq!(added.commit.as_deref(), Some(head.trim()));
    let release = added
        .changes
        .iter()
        .find(|c| c.path == "infrastructure/addons/velero/release.yaml")
        .expect("release listed");
    assert_eq!(release.action, Action::Create);
    let answers = added
        .changes
        .iter()
        .find(|c| c.path == ".scaffold/answers.yaml")
        .expect("answers listed");
    assert_eq!(answers.action, Action::Modify);
    assert_eq!(
        answers.bytes,
        std::fs::metadata(dir.join(".scaffold/answers.yaml"))
            .expect("on disk")
            .len()
    );
    assert_eq!(
        added.changes.iter().map(|c| &c.path).collect::<Vec<_>>(),
        dry.changes.iter().map(|c| &c.path).collect::<Vec<_>>()
    );

    let again = edit(&["add-addon", "velero"]);
    assert!(again.changes.is_empty() && again.commit.is_none());

    let removed = edit(&["remove-addon", "velero"]);
    assert_eq!(removed.command, "remove-addon");
    assert!(removed.added_dependencies.is_empty());
    assert!(
        removed
            .changes
            .iter()
            .any(|c| c.path == "infrastructure/addons/velero/release.yaml"
                && c.action == Action::Delete
                && c.bytes == 0)
    );
}

#[test]
fn list_addons_rows_have_the_documented_fields() {
    let env = Env::new();
    let rows: Vec<AddonRow> = parse(&run(env.scaffold().args(["list", "addons", "--json"])));
    assert!(rows.iter().any(|r| r.name == "velero" && r.aws_permissions));
    assert!(
        rows.iter()
            .any(|r| r.name == "istio" && r.depends_on.iter().any(|d| d == "istio-base"))
    );
}

#[test]
fn blueprint_test_reports_each_case() {
    let env = Env::new();
    let report: TestReport = parse(&run(env.scaffold().args([
        "blueprint",
        "test",
        "default",
        "--json",
    ])));
    assert_eq!(report.blueprint, "embedded:default");
    assert_eq!(report.failed, 0);
    assert_eq!(report.passed, report.cases.len());
    assert!(
        report.cases.iter().any(|c| c.name == "defaults.yaml"
            && c.passed
            && c.files > 50
            && c.problems.is_empty())
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LintReport {
    version: u32,
    blueprint: String,
    errors: usize,
    warnings: usize,
    findings: Vec<Finding>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LintRule {
    id: String,
    finds: String,
}

#[test]
fn blueprint_lint_reports_findings_with_rule_ids() {
    let env = Env::new();
    let dir = env.path("bp");
    for (path, text) in [
        (
            "blueprint.yaml",
            "name: bp\nversion: 1.0.0\nquestions:\n  - key: team\n    prompt: Team\n    type: string\n    regex: \"[\"\n",
        ),
        ("files/x.txt.tera", "[[ team ]]\n"),
    ] {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("dirs");
        std::fs::write(full, text).expect("file");
    }
    let out = run(env
        .scaffold()
        .args(["blueprint", "lint", "--json"])
        .arg(&dir));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let report: LintReport = serde_json::from_str(&out.stdout).expect("the documented shape");
    assert_eq!((report.version, report.errors, report.warnings), (1, 1, 0));
    assert_eq!(report.blueprint, dir.display().to_string());
    let [finding] = report.findings.as_slice() else {
        panic!("one finding: {:?}", report.findings);
    };
    assert_eq!(
        (
            finding.rule.as_str(),
            finding.file.as_str(),
            finding.line,
            finding.column
        ),
        ("blueprint.regex", "blueprint.yaml", 7, 13)
    );
    assert!(
        finding.message.contains("regex does not compile"),
        "{}",
        finding.message
    );

    let rules: Vec<LintRule> = parse(&run(env.scaffold().args([
        "blueprint",
        "lint",
        "--list-rules",
        "--json",
    ])));
    assert!(
        rules
            .iter()
            .any(|r| r.id == "blueprint.regex" && !r.finds.is_empty())
    );
    assert!(rules.iter().all(|r| r.id.starts_with("blueprint.")));
}

#[test]
fn blueprint_test_reports_a_failed_case_as_findings() {
    let env = Env::new();
    let dir = env.path("bp");
    for (path, text) in [
        (
            "blueprint.yaml",
            "name: bp\nversion: 1.0.0\nextends: default\n",
        ),
        ("tests/defaults.yaml", "{}\n"),
        (
            "tests/refused.yaml",
            "answers: {}\nexpect_error: no such error\n",
        ),
    ] {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("dirs");
        std::fs::write(full, text).expect("file");
    }
    let out = run(env
        .scaffold()
        .args(["blueprint", "test", "--json"])
        .arg(&dir));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let report: TestReport = serde_json::from_str(&out.stdout).expect("the documented shape");
    assert_eq!((report.passed, report.failed), (1, 1));
    let case = report
        .cases
        .iter()
        .find(|c| c.name == "refused.yaml")
        .expect("the case");
    assert!(!case.passed);
    let [problem] = case.problems.as_slice() else {
        panic!("one problem: {:?}", case.problems);
    };
    assert_eq!(
        (
            problem.rule.as_str(),
            problem.severity.as_str(),
            problem.file.as_str()
        ),
        ("blueprint.test-expect-error", "error", "tests/refused.yaml")
    );
    assert!(
        problem.message.contains("`no such error` was expected"),
        "{}",
        problem.message
    );
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AnswerEntry {
    key: String,
    before: Option<serde_json::Value>,
    after: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct UpdateReport {
    command: String,
    from: BlueprintId,
    to: BlueprintId,
    dry_run: bool,
    commit: Option<String>,
    up_to_date: bool,
    answers: Vec<AnswerEntry>,
    warnings: Vec<String>,
    changes: Vec<ChangeEntry>,
    conflicts: Vec<String>,
}

#[test]
fn update_json_has_the_documented_shape() {
    let env = Env::new();
    let made = run(env.scaffold().args(["new", "u", "--defaults", "-q"]));
    assert_eq!(made.code, 0, "{}", made.stderr);
    let update = |args: &[&str]| {
        let out = run(env
            .scaffold()
            .args(["update", "--json", "-C"])
            .arg(env.path("u"))
            .args(args));
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
        serde_json::from_str::<UpdateReport>(&out.stdout).expect("update shape")
    };
    let report = update(&[]);
    assert_eq!(report.command, "update");
    assert!(report.up_to_date && report.commit.is_none() && report.changes.is_empty());
    let report = update(&["--dry-run", "--set", "node_max=12"]);
    assert!(report.dry_run && report.commit.is_none() && !report.up_to_date);
    assert_eq!(report.answers.len(), 1);
    assert_eq!(report.answers[0].key, "node_max");
    assert!(!report.changes.is_empty());
    let report = update(&["--set", "node_max=12"]);
    assert_eq!(
        report.commit.as_deref().map(str::len),
        Some(40),
        "a full commit id"
    );
    assert!(report.conflicts.is_empty());
}

/// docs/json.md `scaffold diff --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // every field is part of the documented shape
struct DiffReport {
    base: String,
    head: String,
    environments: Vec<DiffEnvironment>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DiffEnvironment {
    name: String,
    objects: Vec<DiffObject>,
    inputs: Vec<DiffInput>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DiffObject {
    change: String,
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
    file: String,
    overlay: Option<String>,
    highlights: Vec<String>,
    diff: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DiffInput {
    change: String,
    path: String,
    diff: String,
}

#[test]
fn diff_json_has_the_documented_shape() {
    let env = Env::new();
    let out =
        run(env
            .scaffold()
            .args(["new", "d", "--defaults", "--set", "environments=dev,prod"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("d");
    let tfvars = std::fs::read_dir(dir.join("envs/prod/1-prerequisites"))
        .expect("prod's prerequisites")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "tfvars"))
        .expect("a tfvars file");
    let mut text = std::fs::read_to_string(&tfvars).expect("read");
    text.push_str("# reviewed\n");
    std::fs::write(&tfvars, text).expect("write");
    let report: DiffReport = parse(&run(env
        .scaffold()
        .args(["diff", "--json", "--repo"])
        .arg(&dir)));
    let prod = report
        .environments
        .iter()
        .find(|e| e.name == "prod")
        .expect("prod");
    assert_eq!(prod.inputs.len(), 1, "{prod:?}");
    assert_eq!(prod.inputs[0].change, "changed");
    assert!(
        report
            .environments
            .iter()
            .find(|e| e.name == "dev")
            .expect("dev")
            .inputs
            .is_empty()
    );
}

/// docs/json.md `scaffold update [REPO…] --branch NAME --json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct BranchDocument {
    version: u8,
    branch: String,
    repos: Vec<BranchEntry>,
    summary: BranchSummary,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct BranchEntry {
    root: String,
    outcome: String,
    branch: Option<String>,
    commit: Option<String>,
    files: Option<serde_json::Value>,
    blueprint: Option<String>,
    error: Option<String>,
    exit: Option<u8>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct BranchSummary {
    repos: usize,
    changed: usize,
    up_to_date: usize,
    with_conflicts: usize,
    refused: usize,
}

#[test]
fn update_branch_json_has_the_documented_shape() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "r", "--defaults", "-q"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document: BranchDocument = parse(&run(env.scaffold().args([
        "update",
        "r",
        "--branch",
        "more-nodes",
        "--set",
        "node_max=12",
        "--json",
    ])));
    assert_eq!(document.summary.changed, 1);
    assert_eq!(document.repos[0].outcome, "changed");
    assert_eq!(document.repos[0].branch.as_deref(), Some("more-nodes"));
}

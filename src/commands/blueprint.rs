//! `scaffold blueprint list | show | init | lint | test`.
use std::path::Path;

use super::ExitStatus;
use crate::blueprint::{self, Blueprint};
use crate::blueprint_test;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Problem, Result};
use crate::generate;
use crate::lint;
use crate::overrides::OverrideKind;
use crate::plan::Plan;
use crate::report::{self, CaseEntry, TestReport};
use crate::ui::Reporter;
use crate::write;

pub fn list(out: &Reporter) -> Result<ExitStatus> {
    for (name, place) in blueprint::available() {
        out.line(format!("{name:<24} {place}"));
    }
    Ok(ExitStatus::Success)
}

pub fn show(selector: &str, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    let manifest =
        crate::yaml::to_string(&blueprint.manifest).map_err(|e| Error::blueprint(e.to_string()))?;
    out.line(format!(
        "# {} {} from {}, `extends` resolved",
        blueprint.manifest.name, blueprint.manifest.version, blueprint.origin
    ));
    out.line(manifest.trim_end());
    out.line("\n# Files and addons: how this blueprint has each, and the blueprint it comes from");
    print_files(&blueprint, out);
    for (path, change) in &blueprint.overrides {
        if change.kind == OverrideKind::Replaced && change.recorded.is_none() {
            let own = blueprint.file(path).unwrap_or_default();
            let verbatim = crate::overrides::digest(&own) == change.base_digest;
            // Only a copy of *this* base may record its digest: recording it for a file
            // copied from an older base would silence the very warning it is for.
            let when = if verbatim {
                "it is still a verbatim copy of it".to_string()
            } else {
                format!(
                    "only if you copied it from this base ({}); a copy of an older base records that base's digest (`git hash-object FILE` of that copy, first 12 digits)",
                    change.base
                )
            };
            out.note(format!(
                "note: {path} replaces a file of {}; record `replaces: {{\"{}\": {}}}` to be warned when it changes: {when}",
                change.base, change.base_path, change.base_digest
            ));
        } else if change.kind == OverrideKind::Patched && change.recorded.is_none() {
            out.note(format!(
                "note: {path} of {} is patched by {}; record `replaces: {{\"{}\": {}}}` to be warned when the base changes it",
                change.base, change.by, change.base_path, change.base_digest
            ));
        } else if change.base_changed() {
            let what = match change.kind {
                OverrideKind::Replaced => "replaces a file of {} that changed since it was copied",
                OverrideKind::Patched => {
                    "is patched, and its file in {} changed since the patch was written"
                }
            };
            out.note(format!(
                "warning: {path} {} (recorded {}, now {})",
                what.replace("{}", &change.base),
                change.recorded.as_deref().unwrap_or_default(),
                change.base_digest
            ));
        }
    }
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint files NAME`: path, how it is had, origin.
pub fn files(selector: &str, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    if !as_json {
        print_files(&blueprint, out);
        return Ok(ExitStatus::Success);
    }
    let mut rows: Vec<serde_json::Value> = file_rows(&blueprint)
        .into_iter()
        .map(|(path, how, origin)| serde_json::json!({"path": path, "how": how, "origin": origin}))
        .collect();
    for (path, by) in &blueprint.removed {
        rows.push(serde_json::json!({"path": path, "how": "removed", "origin": by}));
    }
    for entry in blueprint.catalog.entries() {
        let raw = entry.template_object("", &[]);
        for patch in raw
            .get("patches")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(file) = patch.get("file").and_then(serde_json::Value::as_str) {
                rows.push(serde_json::json!({
                    "path": file,
                    "how": "catalog-patch",
                    "origin": format!("addons/{}.yaml", entry.spec.name),
                }));
            }
        }
    }
    out.json(&rows);
    Ok(ExitStatus::Success)
}

/// (path, how the blueprint has it, origin) of every file and catalog entry.
fn file_rows(blueprint: &Blueprint) -> Vec<(&str, &'static str, &str)> {
    let own = format!("({})", blueprint.origin);
    blueprint
        .origins
        .iter()
        .map(|(path, origin)| {
            let how = match blueprint.overrides.get(path).map(|o| &o.kind) {
                Some(OverrideKind::Replaced) => "replaced",
                Some(OverrideKind::Patched) => "patched",
                None if path.ends_with(crate::overrides::PATCH_SUFFIX) => "patch",
                None if origin.ends_with(&own) => "own",
                None => "inherited",
            };
            (path.as_str(), how, origin.as_str())
        })
        .collect()
}

fn print_files(blueprint: &Blueprint, out: &Reporter) {
    let width = blueprint.origins.keys().map(|k| k.len()).max().unwrap_or(0);
    for (path, how, origin) in file_rows(blueprint) {
        out.line(format!("{path:<width$}  {how:<9}  {origin}"));
    }
}

/// `scaffold blueprint cat NAME PATH`: the stored bytes of one file.
pub fn cat(selector: &str, path: &str, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    if let Some(own) = blueprint
        .overrides
        .iter()
        .find(|(own, o)| o.kind == OverrideKind::Replaced && o.base_path == path && *own != path)
        .map(|(own, _)| own)
    {
        let base = blueprint.base.as_ref().map_or("BASE", |b| b.name.as_str());
        return Err(Error::input(Problem::new(format!("{path}: blueprint {} replaces it with `{own}` (`scaffold blueprint cat {selector} {own}`)",
            blueprint.manifest.name)).fix(format!("the base's copy: `scaffold blueprint cat {base} {path}`"))));
    }
    let bytes = blueprint.file(path).ok_or_else(|| {
        Error::input(
            Problem::new(format!(
                "{path}: not a file of blueprint {}{}",
                blueprint.manifest.name,
                crate::suggest::did_you_mean(path, blueprint.origins.keys().map(String::as_str))
            ))
            .fix(format!("`scaffold blueprint files {selector}` lists them")),
        )
    })?;
    out.bytes(&bytes)?;
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint export NAME DIR`: the blueprint's own layer, file for file.
pub fn export(selector: &str, dir: &Path, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    let (tree, executable) = Blueprint::layer_files(selector)?;
    write::check_target(dir)?;
    let mut plan = Plan::default();
    for (path, bytes) in tree {
        let rel = crate::plan::RelPath::new(&path).map_err(Error::blueprint)?;
        if executable.contains(&path) {
            plan.executable.insert(rel.clone());
        }
        plan.add(rel, bytes)?;
    }
    let count = plan.files.len();
    write::stage(&plan, dir)?.finish()?;
    out.line(format!(
        "Exported blueprint {} {} ({}) to {}: {count} files.",
        blueprint.manifest.name,
        blueprint.manifest.version,
        blueprint.origin,
        dir.display()
    ));
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint rebase DIR --from OLD`: each file the layer replaced, merged from
/// the old base's copy to the current base's (the fork's own changes kept).
pub fn rebase(dir: &Path, from: &str, out: &Reporter) -> Result<ExitStatus> {
    let layer = Blueprint::load(&dir.display().to_string())?;
    let old_base = Blueprint::load(from)?;
    let Some(extends) = &layer.manifest.extends else {
        return Err(Error::input(format!(
            "{}: extends nothing, so there is no base to rebase on",
            dir.display()
        )));
    };
    let new_base = if extends.contains('/') || extends.starts_with('.') {
        Blueprint::load(&Path::new(&layer.origin).join(extends).display().to_string())?
    } else {
        Blueprint::load(extends)?
    };
    let root = Path::new(&layer.origin);
    let manifest_path = root.join("blueprint.yaml");
    let mut manifest = std::fs::read_to_string(&manifest_path)
        .map_err(|e| Error::io_path("read", &manifest_path, e))?;
    let (mut merged, mut conflicted) = (0, 0);
    for (own, change) in &layer.overrides {
        let fork_path = root.join(own);
        if change.kind != OverrideKind::Replaced || !fork_path.is_file() {
            continue; // a base layer's fork, or a patch
        }
        let text = |bytes: Option<Vec<u8>>| bytes.map(|b| String::from_utf8_lossy(&b).into_owned());
        let (Some(old), Some(new)) = (
            text(old_base.file(&change.base_path)),
            text(new_base.file(&change.base_path)),
        ) else {
            out.line(format!(
                "{own}: skipped ({} is not in both bases)",
                change.base_path
            ));
            continue;
        };
        let fork = std::fs::read_to_string(&fork_path)
            .map_err(|e| Error::io_path("read", &fork_path, e))?;
        let result = match crate::merge::merge3(&old, &fork, &new) {
            Some(clean) => {
                merged += 1;
                // The fork now follows the current base: record its digest.
                if let Some(recorded) = &change.recorded {
                    let at = crate::yaml::Places::of(&manifest)
                        .section_key("replaces", &change.base_path);
                    if let Some(line) = manifest.split_inclusive('\n').nth(at.0 - 1) {
                        let start = manifest
                            .split_inclusive('\n')
                            .take(at.0 - 1)
                            .map(str::len)
                            .sum::<usize>();
                        let fixed = line.replacen(recorded.as_str(), &change.base_digest, 1);
                        manifest.replace_range(start..start + line.len(), &fixed);
                    }
                }
                out.line(format!(
                    "{own}: merged the base's changes ({})",
                    new_base.manifest.version
                ));
                clean
            }
            None => {
                let marked = crate::merge::conflicts(&old, &fork, &new, &new_base.manifest.name);
                conflicted += 1;
                out.line(format!(
                    "{own}: {} conflict(s) marked; resolve them, then update `replaces` to {}",
                    marked.hunks.len(),
                    change.base_digest
                ));
                marked.marked
            }
        };
        if result != fork {
            write_beside(&fork_path, result.as_bytes())?;
        }
    }
    write_beside(&manifest_path, manifest.as_bytes())?;
    out.line(format!("{merged} merged, {conflicted} with conflicts"));
    if conflicted > 0 {
        out.findings(format!(
            "blueprint rebase: {conflicted} file(s) with conflicts"
        ));
        return Ok(ExitStatus::Findings);
    }
    Ok(ExitStatus::Success)
}

/// Replaces a file by rename, so it is never left half written.
fn write_beside(path: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = path.with_extension("scaffold-tmp");
    std::fs::write(&temporary, bytes).map_err(|e| Error::io_path("write", &temporary, e))?;
    std::fs::rename(&temporary, path).map_err(|e| Error::io_path("replace", path, e))
}

pub fn init(dir: &Path, extends: Option<&str>, out: &Reporter) -> Result<ExitStatus> {
    write::check_target(dir)?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "my-blueprint".into());
    let mut plan = Plan::default();
    let add = |plan: &mut Plan, path: &str, text: String| {
        plan.add(
            crate::plan::RelPath::new(path).map_err(Error::blueprint)?,
            text.into_bytes(),
        )
    };
    match extends {
        Some(base) => {
            let loaded = Blueprint::load(base)?;
            let (major, minor, _) = crate::version::tuple(&loaded.manifest.version);
            let base_range = if major == 0 {
                format!(">={}, <0.{}", loaded.manifest.version, minor + 1)
            } else {
                format!(">={}, <{}", loaded.manifest.version, major + 1)
            };
            add(
                &mut plan,
                "blueprint.yaml",
                format!(
                    include_str!("init/extends.yaml"),
                    name = name,
                    base = base,
                    base_range = base_range
                ),
            )?;
            add(
                &mut plan,
                "files/docs/OWNERS.md.tera",
                include_str!("init/OWNERS.md.tera").to_string(),
            )?;
        }
        None => {
            add(
                &mut plan,
                "blueprint.yaml",
                format!(include_str!("init/standalone.yaml"), name = name),
            )?;
            add(
                &mut plan,
                "files/README.md.tera",
                include_str!("init/README.md.tera").to_string(),
            )?;
        }
    }
    add(
        &mut plan,
        "tests/defaults.yaml",
        "# An answer set for `scaffold blueprint test`: empty means every default.\n{}\n".into(),
    )?;
    let staged = write::stage(&plan, dir)?;
    staged.finish()?;
    out.line(format!(
        "Created blueprint {name} in {}: {} files.",
        dir.display(),
        plan.files.len()
    ));
    out.line(format!(
        "Check it with: scaffold blueprint lint {0} && scaffold blueprint test {0}",
        dir.display()
    ));
    Ok(ExitStatus::Success)
}

pub fn lint(
    dir: Option<&Path>,
    as_json: bool,
    list_rules: bool,
    out: &Reporter,
) -> Result<ExitStatus> {
    let rules = || {
        lint::RULES
            .iter()
            .map(|(id, finds)| report::LintRule { id, finds })
    };
    match dir {
        _ if list_rules && as_json => out.json(&rules().collect::<Vec<_>>()),
        _ if list_rules => rules().for_each(|r| out.line(format!("{:<28} {}", r.id, r.finds))),
        None => {}
        Some(dir) => return lint_dir(dir, as_json, out),
    }
    Ok(ExitStatus::Success)
}

fn lint_dir(dir: &Path, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let findings = lint::lint(dir)?;
    let errors = findings.iter().filter(|f| f.is_error()).count();
    let warnings = findings.len() - errors;
    if as_json {
        out.json(&report::LintReport {
            version: 1,
            blueprint: dir.display().to_string(),
            errors,
            warnings,
            findings: &findings,
        });
    } else {
        findings.iter().for_each(|finding| out.line(finding));
    }
    if errors > 0 {
        out.findings(format!(
            "blueprint lint: {errors} error(s), {warnings} warning(s)"
        ));
        return Ok(ExitStatus::Findings);
    }
    out.note(format!("blueprint lint: 0 errors, {warnings} warning(s)"));
    Ok(ExitStatus::Success)
}

pub fn test(selector: &str, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = match Blueprint::load(selector) {
        Ok(blueprint) => blueprint,
        // A directory that does not load: reported as lint reports it, FILE:LINE:COL.
        Err(e) if Path::new(selector).join("blueprint.yaml").is_file() => {
            let findings = lint::lint(Path::new(selector))?;
            if !findings.iter().any(Diagnostic::is_error) {
                return Err(e);
            }
            return Ok(report_lint(&findings, as_json, out));
        }
        Err(e) => return Err(e),
    };
    // Lint first: a case can pass on a blueprint that lint knows is broken.
    if !blueprint
        .origin
        .starts_with(crate::blueprint::EMBEDDED_ORIGIN)
    {
        let findings = lint::lint(Path::new(&blueprint.origin))?;
        if report_lint(&findings, as_json, out) == ExitStatus::Findings {
            return Ok(ExitStatus::Findings);
        }
    }
    let renderer = generate::renderer_for(&blueprint)?;
    if blueprint.tests.is_empty() {
        return Err(Error::input(format!(
            "blueprint {}: no answer sets in tests/ (add tests/<case>.yaml)",
            blueprint.origin
        )));
    }
    let scratch =
        tempfile::TempDir::new().map_err(|e| Error::io("create a temporary directory", e))?;
    let mut report = TestReport {
        blueprint: blueprint.origin.clone(),
        passed: 0,
        failed: 0,
        cases: Vec::new(),
    };
    for (name, text) in &blueprint.tests {
        let (mut verdict, plan) = blueprint_test::run_case(&blueprint, &renderer, name, text);
        if let Some(plan) = plan {
            // Rendered into a directory of its own, as `new` would write it.
            let target = scratch.path().join(name.trim_end_matches(".yaml"));
            if let Err(e) = write::stage(&plan, &target).and_then(|s| s.finish()) {
                verdict.add(blueprint_test::rule::WRITE, name, e.to_string());
            }
        }
        let passed = verdict.problems.is_empty();
        if passed {
            report.passed += 1;
        } else {
            report.failed += 1;
        }
        if !as_json {
            if passed {
                out.line(format!("PASS {name} ({} files)", verdict.files));
            } else {
                let problems: Vec<String> =
                    verdict.problems.iter().map(Diagnostic::with_rule).collect();
                out.line(format!("FAIL {name}: {}", problems.join("; ")));
            }
        }
        report.cases.push(CaseEntry {
            name: name.clone(),
            passed,
            files: verdict.files,
            problems: verdict.problems,
        });
    }
    if as_json {
        out.json(&report);
    } else {
        out.line(format!(
            "{} passed, {} failed",
            report.passed, report.failed
        ));
    }
    if report.failed > 0 {
        out.findings(format!("blueprint test: {} case(s) failed", report.failed));
        return Ok(ExitStatus::Findings);
    }
    Ok(ExitStatus::Success)
}

/// Prints lint's findings for `blueprint test` (on stderr under --json: stdout carries only
/// the report); any error stops the test (Findings).
fn report_lint(findings: &[Diagnostic], as_json: bool, out: &Reporter) -> ExitStatus {
    for finding in findings {
        if as_json {
            out.problem(finding);
        } else {
            out.line(finding);
        }
    }
    match findings.iter().filter(|f| f.is_error()).count() {
        0 => ExitStatus::Success,
        errors => {
            out.findings(format!(
                "blueprint test: lint found {errors} error(s); fix them first"
            ));
            ExitStatus::Findings
        }
    }
}

//! `scaffold blueprint list | show | init | lint | test`.
use std::path::Path;

use crate::blueprint::{self, Blueprint};
use crate::blueprint_test;
use crate::error::{Error, Result};
use crate::generate;
use crate::lint;
use crate::plan::Plan;
use crate::report::{self, CaseEntry, TestReport};
use crate::write;

pub fn list() -> Result<()> {
    for (name, place) in blueprint::available() {
        println!("{name:<24} {place}");
    }
    Ok(())
}

pub fn show(selector: &str) -> Result<()> {
    let blueprint = Blueprint::load(selector)?;
    let manifest =
        serde_yaml::to_string(&blueprint.manifest).map_err(|e| Error::Blueprint(e.to_string()))?;
    println!(
        "# {} {} from {}, `extends` resolved",
        blueprint.manifest.name, blueprint.manifest.version, blueprint.origin
    );
    println!("{}", manifest.trim_end());
    println!("\n# Files and addons, and the blueprint each comes from");
    let width = blueprint.origins.keys().map(|k| k.len()).max().unwrap_or(0);
    for (path, origin) in &blueprint.origins {
        println!("{path:<width$}  {origin}");
    }
    Ok(())
}

pub fn init(dir: &Path, extends: Option<&str>) -> Result<()> {
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
            crate::plan::RelPath::new(path).map_err(Error::Blueprint)?,
            text.into_bytes(),
        )
    };
    match extends {
        Some(base) => {
            Blueprint::load(base)?;
            add(
                &mut plan,
                "blueprint.yaml",
                format!(include_str!("init/extends.yaml"), name = name, base = base),
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
    println!(
        "Created blueprint {name} in {}: {} files.",
        dir.display(),
        plan.files.len()
    );
    println!(
        "Check it with: scaffold blueprint lint {0} && scaffold blueprint test {0}",
        dir.display()
    );
    Ok(())
}

pub fn lint(dir: &Path) -> Result<()> {
    let findings = lint::lint(dir)?;
    for finding in &findings {
        println!("{finding}");
    }
    let errors = findings.iter().filter(|f| !f.warning).count();
    let warnings = findings.len() - errors;
    if errors > 0 {
        return Err(Error::Findings(format!(
            "blueprint lint: {errors} error(s), {warnings} warning(s)"
        )));
    }
    eprintln!("blueprint lint: 0 errors, {warnings} warning(s)");
    Ok(())
}

pub fn test(selector: &str, as_json: bool) -> Result<()> {
    let blueprint = Blueprint::load(selector)?;
    let renderer = generate::renderer_for(&blueprint)?;
    if blueprint.tests.is_empty() {
        return Err(Error::Input(format!(
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
                verdict.problems.push(e.to_string());
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
                println!("PASS {name} ({} files)", verdict.files);
            } else {
                println!("FAIL {name}: {}", verdict.problems.join("; "));
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
        println!("{}", report::to_json(&report));
    } else {
        println!("{} passed, {} failed", report.passed, report.failed);
    }
    if report.failed > 0 {
        return Err(Error::Findings(format!(
            "blueprint test: {} case(s) failed",
            report.failed
        )));
    }
    Ok(())
}

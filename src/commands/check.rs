//! `scaffold check [DIR…]`: read each repo, run the rules, print the findings; several
//! repos (a fleet) are checked side by side with one summary and the worst exit status.
use std::path::{Path, PathBuf};

use crate::check::{self, Filter, Repo, report};
use crate::diagnostic::{Diagnostic, Severity};
use crate::error::{Error, Problem, Result};
use crate::outcome::ExitStatus;
use crate::report::{CheckFleetSummary, FleetDocument, FleetEntry};
use crate::settings::{CheckFormat, CheckOptions};
use crate::ui::Reporter;

/// One repo checked: how many files it has and what the rules found.
struct Checked {
    files: usize,
    findings: Vec<Diagnostic>,
    /// The repo's environments (one Flux entry each), when it has any.
    environments: Vec<String>,
}

pub fn run(options: CheckOptions, out: &Reporter) -> Result<ExitStatus> {
    if options.list_rules {
        let text = if options.format == CheckFormat::Json {
            report::rules_json() + "\n"
        } else {
            report::rules_text()
        };
        out.text(&text);
        return Ok(ExitStatus::Success);
    }
    let unknown = check::unknown_rules(&options.filter);
    if !unknown.is_empty() {
        return Err(Error::input(format!(
            "unknown rule {}: see `scaffold check --list-rules`",
            unknown.join(", ")
        )));
    }
    match options.dirs.as_slice() {
        [dir] => single(dir, &options, out),
        dirs if options.format == CheckFormat::Sarif => Err(Error::input(
            Problem::new("--format sarif: one SARIF document per repo")
                .fix(format!("check the {} repos one by one", dirs.len())),
        )),
        dirs => fleet(dirs, &options, out),
    }
}

fn check_one(dir: &Path, filter: &Filter) -> Result<Checked> {
    if !dir.is_dir() {
        return Err(Error::input(format!(
            "`{}` is not a directory: give the platform repo to check",
            dir.display()
        )));
    }
    let _lock = crate::lock::acquire_to_read(dir, "check")?;
    let repo = Repo::read(dir)?;
    let facts = crate::blueprint::facts::for_record(repo.text(crate::record::PATH));
    let repo = repo.with_catalog(facts);
    if !repo.is_platform() {
        return Err(Error::input(Problem::new(format!("`{}` is not a scaffold platform repo: it holds no Flux Kustomization, Terraform module or kops template ({} files)",
            dir.display(),
            repo.files.len())).fix("give the platform repo's root")));
    }
    Ok(Checked {
        files: repo.files.len(),
        findings: check::run(&repo, filter),
        environments: check::environments::names(&repo),
    })
}

fn has_errors(findings: &[Diagnostic]) -> bool {
    findings.iter().any(|d| d.severity == Severity::Error)
}

fn single(dir: &Path, options: &CheckOptions, out: &Reporter) -> Result<ExitStatus> {
    let Checked {
        files,
        findings,
        environments,
    } = check_one(dir, &options.filter)?;
    let per_environment = report::environment_summary(&findings, &environments);
    let human = options.format == CheckFormat::Human;
    match options.format {
        CheckFormat::Sarif => out.line(report::sarif(&findings)),
        CheckFormat::Json => out.json(&report::Document::of(
            &dir.display().to_string(),
            &findings,
            &environments,
        )),
        CheckFormat::Human => out.text(&report::human(&findings, out.colour())),
    }
    if human && findings.is_empty() {
        let environments = if environments.len() > 1 {
            format!(", environments {}", environments.join(", "))
        } else {
            String::new()
        };
        out.line(format!(
            "{}: no findings ({files} files{environments})",
            dir.display()
        ));
    }
    let summary = if per_environment.is_empty() {
        report::summary(&findings)
    } else {
        format!("{} ({per_environment})", report::summary(&findings))
    };
    if has_errors(&findings) {
        out.findings(format!("check: {summary}"));
        return Ok(ExitStatus::Findings);
    }
    if !findings.is_empty() && human {
        out.note(format!("check: {summary}"));
    }
    Ok(ExitStatus::Success)
}

/// Every repo of `dirs`, checked on every core; reported in the order given. A repo named
/// twice (by any path) is checked once: two checks would contend for its lock.
fn fleet(given: &[PathBuf], options: &CheckOptions, out: &Reporter) -> Result<ExitStatus> {
    let mut seen = std::collections::HashSet::new();
    let dirs: Vec<PathBuf> = given
        .iter()
        .filter(|dir| {
            let first = seen.insert(dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()));
            if !first {
                out.note(format!(
                    "note: `{}` is given twice; checked once",
                    dir.display()
                ));
            }
            first
        })
        .cloned()
        .collect();
    if let [dir] = dirs.as_slice() {
        return single(dir, options, out);
    }
    let dirs = dirs.as_slice();
    let results: Vec<(usize, Result<Checked>)> =
        crate::parallel::map(dirs, |dir| check_one(dir, &options.filter))
            .into_iter()
            .enumerate()
            .collect();
    let (mut errors, mut warnings, mut clean, mut failed) = (0, 0, 0, 0);
    for (_, result) in &results {
        match result {
            Ok(c) if has_errors(&c.findings) => errors += 1,
            Ok(c) if !c.findings.is_empty() => warnings += 1,
            Ok(_) => clean += 1,
            Err(_) => failed += 1,
        }
    }
    let summary = format!(
        "{} repos: {errors} with errors, {warnings} with warnings only, {clean} clean, {failed} not checked",
        dirs.len()
    );
    if options.format == CheckFormat::Json {
        let roots: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        let repos = results
            .iter()
            .map(|(i, result)| match result {
                Ok(c) => FleetEntry::Done(
                    report::Document::of(&roots[*i], &c.findings, &c.environments)
                        .in_fleet(c.files),
                ),
                Err(e) => FleetEntry::Failed(crate::report::fleet_error(&roots[*i], e)),
            })
            .collect();
        out.json(&FleetDocument {
            version: 1,
            repos,
            summary: CheckFleetSummary {
                repos: dirs.len(),
                with_errors: errors,
                with_warnings: warnings,
                clean,
                not_checked: failed,
            },
        });
    } else {
        for (i, result) in &results {
            let dir = dirs[*i].display();
            out.line(format!("== {dir}"));
            match result {
                Ok(c) => {
                    out.text(&report::human(&c.findings, out.colour()));
                    if c.findings.is_empty() {
                        out.line(format!("{dir}: no findings ({} files)", c.files));
                    } else {
                        let per = report::environment_summary(&c.findings, &c.environments);
                        let per = if per.is_empty() {
                            per
                        } else {
                            format!(" ({per})")
                        };
                        out.line(format!("{dir}: {}{per}", report::summary(&c.findings)));
                    }
                }
                Err(e) => out.line(format!("{dir}: not checked: {e}")),
            }
        }
        out.line(format!("check: {summary}"));
    }
    let results = results.into_iter().map(|(_, r)| r);
    ExitStatus::of_fleet(results, errors > 0, &format!("check: {summary}"), out)
}

//! `scaffold check [DIR]`: read the repo, run the rules, print the findings.
use std::io::IsTerminal;
use std::path::Path;

use crate::check::{self, Filter, Repo, report};
use crate::diagnostic::Severity;
use crate::error::{Error, Result};

pub struct CheckOptions<'a> {
    pub dir: &'a Path,
    pub filter: Filter,
    pub json: bool,
    /// SARIF 2.1.0 on stdout (code scanning).
    pub sarif: bool,
    pub list_rules: bool,
}

pub fn run(options: CheckOptions) -> Result<()> {
    if options.list_rules {
        let text = if options.json {
            report::rules_json() + "\n"
        } else {
            report::rules_text()
        };
        print!("{text}");
        return Ok(());
    }
    let unknown = check::unknown_rules(&options.filter);
    if !unknown.is_empty() {
        return Err(Error::Input(format!(
            "unknown rule {}: see `scaffold check --list-rules`",
            unknown.join(", ")
        )));
    }
    if !options.dir.is_dir() {
        return Err(Error::Input(format!(
            "`{}` is not a directory: give the platform repo to check",
            options.dir.display()
        )));
    }
    let _lock = crate::lock::acquire_to_read(options.dir, "check")?;
    let repo = Repo::read(options.dir)?;
    if !repo.is_platform() {
        return Err(Error::Input(format!(
            "`{}` is not a scaffold platform repo: it holds no Flux Kustomization, Terraform module or kops template ({} files); give the platform repo's root",
            options.dir.display(),
            repo.files.len()
        )));
    }
    let findings = check::run(&repo, &options.filter);
    if options.sarif {
        println!("{}", report::sarif(&findings));
    } else if options.json {
        println!(
            "{}",
            report::json(&options.dir.display().to_string(), &findings)
        );
    } else {
        let colour = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        print!("{}", report::human(&findings, colour));
        if findings.is_empty() {
            println!(
                "{}: no findings ({} files)",
                options.dir.display(),
                repo.files.len()
            );
        }
    }
    if findings.iter().any(|d| d.severity == Severity::Error) {
        return Err(Error::Findings(format!(
            "check: {}",
            report::summary(&findings)
        )));
    }
    if !findings.is_empty() && !options.json && !options.sarif {
        eprintln!("check: {}", report::summary(&findings));
    }
    Ok(())
}

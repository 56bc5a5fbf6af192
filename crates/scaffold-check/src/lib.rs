//! `scaffold check`: judge a platform repo offline. [`model`] reads the repo once; each
//! module of `rules` adds [`Diagnostic`]s for the rules it owns; [`RULES`] is the catalogue
//! (`--list-rules`, docs/check.md); suppression comments and `--rule`/`--skip` apply last.
//! A leaf crate: what the blueprint's catalog says comes as data ([`facts`]); it knows no
//! blueprint, no git writing and no terminal.
pub mod catalogue;
pub mod components;
pub mod environments;
pub mod facts;
pub mod gotemplate;
pub mod kops;
pub mod kustomize;
pub mod model;
pub mod report;
pub mod rules;
pub mod schema;
pub mod yaml;

// The layer below, by the names this crate's code uses for it.
use scaffold_support::{diagnostic, error, json_merge, parallel, suggest, tree};

use std::collections::BTreeSet;

use crate::diagnostic::{Diagnostic, Severity};
pub use catalogue::{RULES, Rule, rule_of};
pub use model::Repo;

/// Where findings are collected; severity and hint come from the catalogue.
#[derive(Debug, Default)]
pub struct Findings(pub Vec<Diagnostic>);

impl Findings {
    pub fn add(&mut self, rule: &'static str, file: &str, line: usize, message: impl Into<String>) {
        self.at(rule, file, line, 0, message);
    }

    pub fn at(
        &mut self,
        rule: &'static str,
        file: &str,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) {
        let entry = rule_of(rule);
        // Every id a rule reports is in the catalogue (its severity and hint); a typo fails
        // the rule's tests rather than reporting an error with no hint.
        debug_assert!(entry.is_some(), "rule `{rule}` is not in check's catalogue");
        let severity = entry.map_or(Severity::Error, |r| r.severity);
        self.0.push(
            Diagnostic::new(rule, severity, file, (line, column), message)
                .with_hint(entry.map_or("", |r| r.hint)),
        );
    }
}

/// Which rules to run.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub only: Vec<String>,
    pub skip: Vec<String>,
}

impl Filter {
    fn keeps(&self, id: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|o| o == id))
            && !self.skip.iter().any(|s| s == id)
    }
}

/// Runs every rule on the repo, one environment at a time when it has several
/// ([`environments`]); findings sorted by file and line, suppressions applied.
pub fn run(repo: &Repo, filter: &Filter) -> Vec<Diagnostic> {
    let mut out = environments::run(repo, |view| run_view(view, filter));
    if let Some(missing) = &repo.catalog.unavailable
        && filter.keeps("check.catalog")
    {
        let mut note = Findings::default();
        note.add("check.catalog", &missing.file, 1, missing.reason.clone());
        out.extend(note.0);
    }
    // What environments share is judged over the whole repo: no view holds two.
    let all = environments::names(repo);
    if all.len() > 1 {
        let mut across = Findings::default();
        rules::aws_names::run(repo, &all, &mut across);
        let across = without_guesses(repo, across);
        out.extend(
            across
                .0
                .into_iter()
                .filter(|d| filter.keeps(d.rule) && !suppressed(repo, d))
                .map(|mut d| {
                    d.environment = environments::owner(&d.file, &all).map(str::to_string);
                    d
                }),
        );
        out.sort_by(|a, b| {
            (&a.file, a.line, a.rule, &a.message).cmp(&(&b.file, b.line, b.rule, &b.message))
        });
    }
    out
}

/// Every rule on one view of the repo (the whole of it, or one environment's).
fn run_view(repo: &Repo, filter: &Filter) -> Vec<Diagnostic> {
    let mut findings = Findings::default();
    rules::run_for(repo, &filter.only, &mut findings);
    let findings = without_guesses(repo, findings);
    let mut out: Vec<Diagnostic> = findings
        .0
        .into_iter()
        .filter(|d| filter.keeps(d.rule) && !suppressed(repo, d))
        .collect();
    out.sort_by(|a, b| {
        (&a.file, a.line, a.rule, &a.message).cmp(&(&b.file, b.line, b.rule, &b.message))
    });
    out.dedup();
    out
}

/// Rules whose findings, with a file that does not parse, may come from the objects or
/// declarations that file would have given (a missing brace makes every `var.X` of the
/// module undeclared). Terraform ones are local to their module.
const CROSS_FILE: &[&str] = &[
    "flux.depends-on",
    "flux.source-ref",
    "flux.path",
    "flux.wait",
    "order.crd",
    "order.crd-provider",
    "order.watched-api",
    "order.layers",
    "order.owner",
    "bridge.substitution",
    "bridge.values-from",
    "kops.render",
    "kops.schema",
    "kops.irsa",
    "kops.api-access",
    "kops.karpenter-kubelet",
    "external-secret.remote-key",
    "kms.key-access",
    "ref.node-class",
    "ref.gateway",
    "ref.certificate",
    "ref.secret-store",
    "ref.service-monitor",
    "helm.values",
    "helm.values-unchecked",
];
const MODULE_LOCAL: &[&str] = &["tf.refs", "tf.providers", "tf.vars", "tf.aws-name-shared"];

/// Drops the findings a broken file may have caused, with one `check.partial` note saying
/// how many and which files.
fn without_guesses(repo: &Repo, findings: Findings) -> Findings {
    let broken = repo.broken_files();
    let Some(first) = broken.first() else {
        return findings;
    };
    let broken_dirs: BTreeSet<&str> = broken
        .iter()
        .filter(|f| f.ends_with(".tf") || f.ends_with(".tfvars"))
        .map(|f| model::parent(f))
        .collect();
    let (kept, dropped): (Vec<Diagnostic>, Vec<Diagnostic>) =
        findings.0.into_iter().partition(|d| {
            let cross = CROSS_FILE.contains(&d.rule);
            let local =
                MODULE_LOCAL.contains(&d.rule) && broken_dirs.contains(model::parent(&d.file));
            !(cross || local)
        });
    let mut out = Findings(kept);
    if !dropped.is_empty() {
        let rules: BTreeSet<&str> = dropped.iter().map(|d| d.rule).collect();
        out.add(
            "check.partial",
            first,
            0,
            format!(
                "{} finding(s) of {} not reported: they may follow from {} not parsing",
                dropped.len(),
                rules.into_iter().collect::<Vec<_>>().join(", "),
                broken.join(", ")
            ),
        );
    }
    out
}

/// `# scaffold:ignore RULE reason` on the finding's line or the line above silences it;
/// a comment without a reason does not.
fn suppressed(repo: &Repo, d: &Diagnostic) -> bool {
    let Some(text) = repo.text(&d.file) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    let candidates: BTreeSet<usize> = [d.line, d.line.saturating_sub(1)]
        .into_iter()
        .filter(|l| *l > 0)
        .collect();
    candidates.into_iter().any(|l| {
        lines.get(l - 1).is_some_and(|line| {
            line.split("scaffold:ignore ").nth(1).is_some_and(|rest| {
                let mut words = rest.split_whitespace();
                words.next() == Some(d.rule) && words.next().is_some()
            })
        })
    })
}

/// Unknown rule ids in `--rule`/`--skip`, for a usage error.
pub fn unknown_rules(filter: &Filter) -> Vec<String> {
    filter
        .only
        .iter()
        .chain(&filter.skip)
        .filter(|id| rule_of(id).is_none())
        .cloned()
        .collect()
}

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

/// `flux.path`'s findings on a rendering in memory (`new`'s lint of a blueprint from disk),
/// as [`run`] finds them on [`Repo::from_plan`], from a model that keeps only what that
/// rule reads (`model::Keep::FluxPaths`): a rendering's objects are most of a whole
/// model's memory, and this rule reads their identity alone.
pub fn flux_path_findings(plan: &tree::Plan) -> Vec<Diagnostic> {
    let repo = Repo::of_texts(model::texts_of(plan), model::Keep::FluxPaths);
    let filter = Filter {
        only: vec![FLUX_PATH.to_string()],
        skip: Vec::new(),
    };
    run_judging(&repo, &filter, environments::Judging::OneAtATime)
}

/// The rule [`flux_path_findings`] reports.
pub const FLUX_PATH: &str = "flux.path";

/// Runs every rule on the repo, one environment at a time when it has several
/// ([`environments`]); findings sorted by file and line, suppressions applied.
pub fn run(repo: &Repo, filter: &Filter) -> Vec<Diagnostic> {
    run_judging(repo, filter, environments::Judging::Parallel)
}

/// [`run`], judging the environments' views as `judging` says.
fn run_judging(repo: &Repo, filter: &Filter, judging: environments::Judging) -> Vec<Diagnostic> {
    let mut out = environments::run(repo, judging, |view| run_view(view, filter));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(files: &[(&str, &str)]) -> tree::Plan {
        let mut plan = tree::Plan::default();
        for (path, text) in files {
            let path = tree::RelPath::new(path).expect("a relative path");
            plan.files.insert(path, text.as_bytes().to_vec());
        }
        plan
    }

    /// `flux.path`'s findings as `check --rule flux.path` finds them: on the whole model.
    fn on_the_whole_model(plan: &tree::Plan) -> Vec<Diagnostic> {
        let filter = Filter {
            only: vec![FLUX_PATH.to_string()],
            skip: Vec::new(),
        };
        run(&Repo::from_plan(plan), &filter)
    }

    fn flux(name: &str, path: &str) -> String {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  path: {path}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        )
    }

    fn deployment(name: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n"
        )
    }

    /// Two clusters with overlays: a missing base entry, an unmatched patch, a path that
    /// does not exist, a shared Flux Kustomization patched per environment, a suppressed
    /// finding, and files of every kind the model reads.
    fn two_clusters() -> Vec<(String, String)> {
        let git = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  url: ssh://git@example.org/x\n---\n";
        let mut files: Vec<(String, String)> = Vec::new();
        for env in ["dev", "prod"] {
            let sync = format!("{git}{}", flux("flux-system", &format!("./clusters/{env}")));
            files.push((format!("clusters/{env}/flux-system/sync.yaml"), sync));
            files.push((
                format!("clusters/{env}/apps.yaml"),
                flux("apps", &format!("./apps/{env}")),
            ));
            files.push((
                format!("clusters/{env}/infra.yaml"),
                flux("infra", &format!("./infra/{env}")),
            ));
            files.push((format!("apps/{env}/patch.yaml"), deployment("web")));
            files.push((
                format!("infra/{env}/kustomization.yaml"),
                "resources:\n  - ../base\npatches:\n  - path: layer.yaml\n".into(),
            ));
        }
        files.extend([
            // A label reading like an entry: the entry's finding is at the label, as written.
            ("apps/base/kustomization.yaml", "labels:\n  - pairs:\n      source: gone.yaml\nresources:\n  - web.yaml\n  - gone.yaml\n".to_string()),
            ("apps/base/web.yaml", deployment("web")),
            ("apps/dev/kustomization.yaml", "resources:\n  - ../base\npatches:\n  - path: patch.yaml\n".into()),
            ("apps/prod/kustomization.yaml", "resources:\n  - ../base\npatchesStrategicMerge:\n  - patch.yaml\n  - stray.yaml\nconfigMapGenerator:\n  - name: c\n    files:\n      - settings=missing.env\n".into()),
            ("apps/prod/stray.yaml", deployment("other")),
            ("clusters/prod/gone.yaml", flux("gone", "./nowhere")),
            // A key `path` before `spec.path`: the finding is at the first one, as written.
            ("clusters/dev/annotated.yaml", flux("annotated", "./annotated").replace("  namespace: flux-system\n", "  namespace: flux-system\n  annotations:\n    path: somewhere\n")),
            ("clusters/prod/quiet.yaml", flux("quiet", "./quiet").replace("  path:", "  # scaffold:ignore flux.path added later\n  path:")),
            ("infra/base/kustomization.yaml", "resources:\n  - layer.yaml\n".into()),
            ("infra/base/layer.yaml", flux("layer", "./infra/layer")),
            ("infra/dev/layer.yaml", flux("layer", "./infra/layer")),
            ("infra/prod/layer.yaml", flux("layer", "./infra/prod-layer")),
            ("infra/layer/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".into()),
            ("shared/flux.yaml", flux("shared", "./shared/nowhere")),
            ("envs/prod/main.tf", "terraform {\n  required_version = \">= 1.5\"\n}\n".into()),
            ("envs/prod/terraform.tfvars", "region = \"eu-west-1\"\n".into()),
            ("charts/web/templates/cm.yaml", "a: {{ .Values.a }\n".into()),
            ("docs/notes.md", "# notes\n".into()),
        ].map(|(p, t)| (p.to_string(), t)));
        files
    }

    fn as_plan(files: &[(String, String)]) -> tree::Plan {
        let pairs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        plan(&pairs)
    }

    #[test]
    fn flux_path_findings_are_those_of_the_whole_model() {
        let files = two_clusters();
        let whole = on_the_whole_model(&as_plan(&files));
        let lean = flux_path_findings(&as_plan(&files));
        assert_eq!(lean, whole);
        // Every kind of finding the rule makes, in one environment, the other, or both.
        let places: Vec<(&str, usize, Option<&str>)> = whole
            .iter()
            .map(|d| (d.file.as_str(), d.line, d.environment.as_deref()))
            .collect();
        assert_eq!(
            places,
            [
                ("apps/base/kustomization.yaml", 3, None),
                ("apps/prod/kustomization.yaml", 1, Some("prod")),
                ("apps/prod/stray.yaml", 1, Some("prod")),
                ("clusters/dev/annotated.yaml", 7, Some("dev")),
                ("clusters/prod/gone.yaml", 7, Some("prod")),
                ("infra/base/layer.yaml", 7, Some("prod")),
                ("shared/flux.yaml", 7, None),
            ]
        );
    }

    #[test]
    fn a_broken_file_leaves_flux_path_findings_out_of_both_models() {
        let broken = [
            ("docs/broken.yaml", "a: [\n"),
            ("modules/bucket/broken.tf", "resource \"x\" {\n"),
            ("docs/broken.json", "{\"a\":\n"),
            (
                "docs/conflict.txt",
                "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
            ),
            (
                "modules/bucket/conflict.tf",
                "<<<<<<< ours\na = 1\n=======\na = 2\n>>>>>>> theirs\n",
            ),
        ];
        for (path, text) in broken {
            let mut files = two_clusters();
            files.push((path.to_string(), text.to_string()));
            let whole = on_the_whole_model(&as_plan(&files));
            assert_eq!(flux_path_findings(&as_plan(&files)), whole, "{path}");
            assert!(whole.is_empty(), "{path}: {whole:?}");
        }
        // A file broken in one environment's tree: that environment's findings only.
        let mut files = two_clusters();
        files.push(("envs/prod/broken.tf".into(), "resource \"x\" {\n".into()));
        let whole = on_the_whole_model(&as_plan(&files));
        assert_eq!(flux_path_findings(&as_plan(&files)), whole);
        assert!(
            !whole.is_empty()
                && whole
                    .iter()
                    .all(|d| d.environment.as_deref() == Some("dev")),
            "{whole:?}"
        );
        // A single cluster: one view, the whole repo.
        let one = [
            ("clusters/apps.yaml", flux("apps", "./apps")),
            (
                "apps/kustomization.yaml",
                "resources:\n  - missing.yaml\n".to_string(),
            ),
        ];
        let one: Vec<(String, String)> = one
            .iter()
            .map(|(p, t)| (p.to_string(), t.clone()))
            .collect();
        let whole = on_the_whole_model(&as_plan(&one));
        assert_eq!(whole.len(), 1, "{whole:?}");
        assert_eq!(flux_path_findings(&as_plan(&one)), whole);
    }
}

//! The rules, one module per part of the platform, over a [`Context`] computed once
//! (`context`): the Flux Kustomizations ("layers"), what each builds to, and every
//! object's namespace.
pub mod aws_names;
mod behaviour;
mod bridge;
pub mod context;
mod environment;
mod flux;
mod helm_values;
mod hygiene;
mod kops;
mod make;
mod order;
mod prerequisites;
mod refs;
mod schema;
mod terraform;
mod tf_inputs;
mod tf_schema;

use self::context::Context;
use crate::Findings;
use crate::model::Repo;

/// The ids the Flux graph (`flux::run`) reports; no other group reports them.
const FLUX_GRAPH: &[&str] = &[
    "flux.depends-on",
    "flux.cycle",
    "flux.source-ref",
    "flux.path",
    "flux.wait",
    "flux.chart-version",
];

/// Every group whose findings `only` may keep (every group when it is empty): a run asking
/// only for Flux graph rules runs that group alone, not every schema and Terraform rule of
/// 2,000 files, and a run asking only for `flux.path` (`new`'s lint of the rendered paths,
/// whose model keeps nothing else: `crate::flux_path_findings`) that rule alone.
pub fn run_for(repo: &Repo, only: &[String], findings: &mut Findings) {
    if only.len() == 1 && only[0] == crate::FLUX_PATH {
        flux::paths(&Context::flux_graph(repo), findings);
    } else if !only.is_empty() && only.iter().all(|id| FLUX_GRAPH.contains(&id.as_str())) {
        flux::run(&Context::flux_graph(repo), findings);
    } else {
        run_all(repo, findings);
    }
}

fn run_all(repo: &Repo, findings: &mut Findings) {
    let context = Context::new(repo);
    schema::run(&context, findings);
    flux::run(&context, findings);
    order::run(&context, findings);
    prerequisites::run(&context, findings);
    bridge::run(&context, findings);
    kops::run(&context, findings);
    make::run(repo, findings);
    terraform::run(repo, findings);
    tf_inputs::run(repo, findings);
    tf_schema::run(repo, findings);
    behaviour::run(&context, findings);
    environment::run(&context, findings);
    hygiene::run(repo, findings);
    refs::run(&context, findings);
    helm_values::run(&context, findings);
}

/// What the rules' unit tests share: a repo of file texts, and the findings of one rule.
#[cfg(test)]
pub(crate) mod testing {
    use crate::Findings;
    use crate::model::Repo;

    /// The repo of these files (path, text).
    pub fn repo(files: &[(&str, &str)]) -> Repo {
        Repo::from_files(
            files
                .iter()
                .map(|(path, text)| (path.to_string(), Some(text.to_string())))
                .collect(),
        )
    }

    /// Where `rule` found something: (file, line), in the order found.
    pub fn found(findings: &Findings, rule: &str) -> Vec<(String, usize)> {
        findings
            .0
            .iter()
            .filter(|d| d.rule == rule)
            .map(|d| (d.file.clone(), d.line))
            .collect()
    }

    /// Findings `run` makes of the repo of these files.
    pub fn run_on(files: &[(&str, &str)], run: impl Fn(&Repo, &mut Findings)) -> Findings {
        let mut findings = Findings::default();
        run(&repo(files), &mut findings);
        findings
    }

    /// A Flux Kustomization `name` applying `./<name>` after the layers `after`.
    pub fn layer(name: &str, after: &[&str]) -> String {
        let depends: String = after.iter().map(|a| format!("    - name: {a}\n")).collect();
        let depends = if depends.is_empty() {
            String::new()
        } else {
            format!("  dependsOn:\n{depends}")
        };
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: ./{name}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n{depends}"
        )
    }

    /// Findings `run` makes of the repo's rule context.
    pub fn run_in_context(
        files: &[(&str, &str)],
        run: impl Fn(&super::Context, &mut Findings),
    ) -> Findings {
        let repo = repo(files);
        let mut findings = Findings::default();
        run(&super::Context::new(&repo), &mut findings);
        findings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_target_namespace_beats_the_kustomization_namespace() {
        let files = [
            (
                "clusters/apps.yaml",
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps\n  targetNamespace: target\n",
            ),
            (
                "apps/kustomization.yaml",
                "namespace: kust\nresources:\n  - cm.yaml\n",
            ),
            (
                "apps/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
            ),
        ];
        let repo = Repo::from_files(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), Some(t.to_string())))
                .collect(),
        );
        let context = Context::new(&repo);
        let (_, namespace) = context.objects("ConfigMap").next().expect("configmap");
        assert_eq!(namespace, "target");
    }

    #[test]
    fn a_flux_graph_run_finds_what_every_rule_finds_of_those_rules() {
        let files = [
            (
                "clusters/apps.yaml",
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./missing\n  dependsOn:\n    - name: nowhere\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
            ),
            (
                "main.tf",
                "resource \"aws_s3_bucket\" \"b\" {\n  bucket = var.undeclared\n}\n",
            ),
        ];
        let repo = Repo::from_files(
            files
                .iter()
                .map(|(p, t)| (p.to_string(), Some(t.to_string())))
                .collect(),
        );
        let ids = |f: &Findings| -> Vec<(String, &str)> {
            f.0.iter().map(|d| (d.file.clone(), d.rule)).collect()
        };
        let mut every = Findings::default();
        run_all(&repo, &mut every);
        let mut flux = Findings::default();
        run_for(&repo, &["flux.path".into(), "flux.wait".into()], &mut flux);
        let graph: Vec<_> = ids(&every)
            .into_iter()
            .filter(|(_, rule)| FLUX_GRAPH.contains(rule))
            .collect();
        assert!(
            graph.iter().any(|(_, rule)| *rule == "flux.path"),
            "{graph:?}"
        );
        assert!(
            ids(&every)
                .iter()
                .any(|(_, rule)| !rule.starts_with("flux."))
        );
        assert_eq!(ids(&flux), graph);
        // Asking for `flux.path` alone runs that rule alone.
        let mut paths = Findings::default();
        run_for(&repo, &["flux.path".into()], &mut paths);
        let only_paths: Vec<_> = graph
            .iter()
            .filter(|(_, rule)| *rule == "flux.path")
            .cloned()
            .collect();
        assert_eq!(ids(&paths), only_paths);
        // Asking for any other rule runs every group.
        let mut all = Findings::default();
        run_for(&repo, &["flux.path".into(), "tf.vars".into()], &mut all);
        assert_eq!(ids(&all), ids(&every));
    }
}

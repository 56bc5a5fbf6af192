//! The rules, one module per part of the platform, over a [`Context`] computed once: the
//! Flux Kustomizations ("layers"), what each builds to, and every object's namespace.
pub mod aws_names;
mod behaviour;
mod bridge;
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

use std::collections::{BTreeMap, BTreeSet};

use super::kustomize::{self, Built};
use super::model::{Object, Repo};
use super::{Findings, yaml};

/// A Flux Kustomization and what its path builds to.
pub struct Layer<'a> {
    pub object: &'a Object,
    /// Its namespace (`flux-system` unless written).
    pub namespace: String,
    /// `spec.path` relative to the repo root, when it exists.
    pub path: Option<String>,
    pub built: Built,
    /// `dependsOn` as (namespace, name).
    pub depends_on: Vec<(String, String)>,
}

impl Layer<'_> {
    pub fn key(&self) -> (String, String) {
        (self.namespace.clone(), self.object.name.clone())
    }
}

pub struct Context<'a> {
    pub repo: &'a Repo,
    pub layers: Vec<Layer<'a>>,
    /// Effective namespace of each object of `repo.objects` (same index).
    pub namespaces: Vec<String>,
    /// The kops templates, rendered.
    pub kops: Vec<crate::check::kops::Rendered>,
}

impl<'a> Context<'a> {
    pub fn new(repo: &'a Repo) -> Self {
        let mut layers = Vec::new();
        for object in repo
            .objects
            .iter()
            .filter(|o| o.is("kustomize.toolkit.fluxcd.io", "Kustomization"))
        {
            let namespace = object
                .namespace
                .clone()
                .unwrap_or_else(|| "flux-system".into());
            let path = object
                .spec("path")
                .and_then(|p| p.as_str())
                .map(|p| p.trim_start_matches("./").trim_matches('/').to_string())
                .filter(|p| repo.is_dir(p));
            let built = path
                .as_deref()
                .map(|p| kustomize::build(repo, p))
                .unwrap_or_default();
            let depends_on = depends_on(object, &namespace);
            layers.push(Layer {
                object,
                namespace,
                path,
                built,
                depends_on,
            });
        }
        let mut namespaces: Vec<Option<String>> = vec![None; repo.objects.len()];
        for layer in &layers {
            let target = layer
                .object
                .spec("targetNamespace")
                .and_then(|t| t.as_str());
            for (index, ns) in &layer.built.objects {
                if namespaces[*index].is_none() {
                    // Flux's targetNamespace overrides the kustomization's namespace.
                    namespaces[*index] = target.map(str::to_string).or(ns.clone());
                }
            }
        }
        let namespaces = namespaces
            .into_iter()
            .zip(&repo.objects)
            .map(|(ns, o)| {
                ns.or(o.namespace.clone())
                    .unwrap_or_else(|| "default".into())
            })
            .collect();
        Context {
            repo,
            layers,
            namespaces,
            kops: crate::check::kops::render_all(repo),
        }
    }

    /// The objects of a kind with their effective namespace.
    pub fn objects<'b>(
        &'b self,
        kind: &'b str,
    ) -> impl Iterator<Item = (&'a Object, &'b str)> + 'b {
        self.repo
            .objects
            .iter()
            .zip(&self.namespaces)
            .filter(move |(o, _)| o.kind == kind)
            .map(|(o, ns)| (o, ns.as_str()))
    }

    /// Layers reachable through dependsOn from `layer` (not itself).
    pub fn closure(&self, layer: &Layer) -> BTreeSet<(String, String)> {
        let by_key: BTreeMap<_, _> = self.layers.iter().map(|l| (l.key(), l)).collect();
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, String)> = layer.depends_on.clone();
        while let Some(key) = stack.pop() {
            if seen.insert(key.clone())
                && let Some(next) = by_key.get(&key)
            {
                stack.extend(next.depends_on.iter().cloned());
            }
        }
        seen
    }

    /// The layer whose build includes object `index`.
    pub fn layers_of(&self, index: usize) -> impl Iterator<Item = &Layer<'a>> {
        self.layers
            .iter()
            .filter(move |l| l.built.objects.iter().any(|(i, _)| *i == index))
    }
}

impl Context<'_> {
    /// The rendered kops Cluster specs.
    pub fn kops_clusters(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.kops.iter().flat_map(|r| {
            r.result.iter().flatten().filter_map(move |d| {
                (yaml::str_at(&d.value, "kind") == Some("Cluster"))
                    .then_some((r.template.as_str(), d.value.as_ref()))
            })
        })
    }

    /// The chart a HelmRelease installs: `chart.spec.chart`, or the last segment of the
    /// URL of the OCIRepository its chartRef names.
    pub fn chart_name(&self, release: &Object, namespace: &str) -> Option<String> {
        if let Some(chart) = release
            .spec("chart/spec/chart")
            .and_then(serde_json::Value::as_str)
        {
            return Some(chart.rsplit('/').next().unwrap_or(chart).to_string());
        }
        let name = release
            .spec("chartRef/name")
            .and_then(serde_json::Value::as_str)?;
        let ns = release
            .spec("chartRef/namespace")
            .and_then(serde_json::Value::as_str)
            .unwrap_or(namespace);
        self.objects("OCIRepository")
            .find(|(o, ons)| o.name == name && *ons == ns)
            .and_then(|(o, _)| o.spec("url").and_then(serde_json::Value::as_str))
            .map(|url| {
                url.trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or(url)
                    .to_string()
            })
    }

    /// Charts kops installs and manages (its spec enables the component, managed not false).
    pub fn kops_components(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (template, cluster) in self.kops_clusters() {
            for (chart, entry) in &crate::check::components::table().charts {
                let Some(field) = &entry.kops else { continue };
                let spec = yaml::at(cluster, &format!("spec/{field}"));
                let enabled =
                    spec.and_then(|s| s.get("enabled")) == Some(&serde_json::Value::Bool(true));
                let unmanaged =
                    spec.and_then(|s| s.get("managed")) == Some(&serde_json::Value::Bool(false));
                if enabled && !unmanaged {
                    out.push((template.to_string(), field.clone(), chart.clone()));
                }
            }
        }
        out
    }

    /// The CRD groups of the charts kops installs and manages.
    pub fn kops_crds(&self) -> BTreeSet<String> {
        self.kops_components()
            .into_iter()
            .flat_map(|(_, _, chart)| {
                crate::check::components::table()
                    .charts
                    .get(&chart)
                    .map(|c| c.crds.clone())
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// `spec.dependsOn` entries as (namespace, name), namespace defaulting to the object's own.
pub fn depends_on(object: &Object, namespace: &str) -> Vec<(String, String)> {
    object
        .spec("dependsOn")
        .and_then(|d| d.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|d| {
                    let name = yaml::str_at(d, "name")?;
                    let ns = yaml::str_at(d, "namespace").unwrap_or(namespace);
                    Some((ns.to_string(), name.to_string()))
                })
                .collect()
        })
        .unwrap_or_default()
}

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
/// only for Flux graph rules (`new`'s lint of the rendered paths) runs that group alone,
/// not every schema and Terraform rule of 2,000 files.
pub fn run_for(repo: &Repo, only: &[String], findings: &mut Findings) {
    if !only.is_empty() && only.iter().all(|id| FLUX_GRAPH.contains(&id.as_str())) {
        flux::run(&Context::new(repo), findings);
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
        run_for(&repo, &["flux.path".to_string()], &mut flux);
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
        // Asking for any other rule runs every group.
        let mut all = Findings::default();
        run_for(&repo, &["flux.path".into(), "tf.vars".into()], &mut all);
        assert_eq!(ids(&all), ids(&every));
    }
}

//! What every rule reads, computed once per view of a repo: the Flux Kustomizations
//! ("layers"), what each builds to, every object's effective namespace and the kops
//! templates rendered.
use std::collections::{BTreeMap, BTreeSet};

use crate::kustomize::{self, Built};
use crate::model::{Object, Repo};
use crate::yaml;

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
    pub kops: Vec<crate::kops::Rendered>,
}

impl<'a> Context<'a> {
    pub fn new(repo: &'a Repo) -> Self {
        Context {
            kops: crate::kops::render_all(repo),
            ..Context::flux_graph(repo)
        }
    }

    /// The context without the kops templates rendered: what the Flux graph rules read.
    pub fn flux_graph(repo: &'a Repo) -> Self {
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
            kops: Vec::new(),
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
            for (chart, entry) in &crate::components::table().charts {
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
                crate::components::table()
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

//! What `check` knows of a blueprint's catalog, given to it as data by its caller
//! ([`crate::Repo::with_catalog`]): the CRD groups each chart installs
//! (`crds.provides`) and the features that make its controller watch an API. Check loads no
//! blueprint; the catalog's entries deserialize their `features` into these types.
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

/// A feature of an addon's chart: a controller that watches an API only some clusters have.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    pub name: String,
    #[serde(default)]
    pub needs: Needs,
    /// Values that turn it on; any one is enough.
    pub enabled_by: Vec<Trigger>,
}

/// What a feature needs from the cluster.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    /// API groups whose CRDs must be installed before the controller starts.
    #[serde(default)]
    pub api_groups: Vec<String>,
    /// Catalog addons that bring them (the `values_when` key the enabling values go under).
    #[serde(default)]
    pub addons: Vec<String>,
    /// Answers the feature needs (e.g. `dns_zone`); the entry must `require` them.
    #[serde(default)]
    pub answers: Vec<String>,
}

/// A chart value that turns a feature on: the value at `path` (dotted) equals one of
/// `any_of`, or is a list holding one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    pub path: String,
    pub any_of: Vec<Json>,
}

impl Trigger {
    /// The value (or list item) in `values` that turns the feature on.
    pub fn matched<'a>(&self, values: &'a Json) -> Option<&'a Json> {
        let mut at = values;
        for key in self.path.split('.') {
            at = at.get(key)?;
        }
        match at {
            Json::Array(items) => items.iter().find(|i| self.any_of.contains(i)),
            other => self.any_of.contains(other).then_some(other),
        }
    }
}

/// One catalog entry's facts about its chart.
#[derive(Debug, Clone, Default)]
pub struct ChartFacts {
    /// The catalog entry (addon) name.
    pub entry: String,
    /// API groups whose CRDs the chart installs (`crds.provides`).
    pub provides: Vec<String>,
    pub features: Vec<Feature>,
}

/// The catalog's facts by chart name and by entry name; `unavailable` says why there are
/// none (the repo's blueprint did not load), which check reports instead of judging
/// silently without them.
#[derive(Debug, Clone, Default)]
pub struct CatalogFacts {
    by_name: BTreeMap<String, Vec<ChartFacts>>,
    pub unavailable: Option<Unavailable>,
}

/// Why the repo's own catalog is not known: the file naming the blueprint, and the reason.
#[derive(Debug, Clone)]
pub struct Unavailable {
    pub file: String,
    pub reason: String,
}

impl CatalogFacts {
    /// Adds an entry's facts under its chart's name and its own.
    pub fn insert(&mut self, chart: &str, facts: ChartFacts) {
        if facts.entry != chart {
            self.by_name
                .entry(facts.entry.clone())
                .or_default()
                .push(facts.clone());
        }
        self.by_name
            .entry(chart.to_string())
            .or_default()
            .push(facts);
    }

    /// The entries whose chart (or entry name) is `chart`.
    pub fn of(&self, chart: &str) -> &[ChartFacts] {
        self.by_name.get(chart).map_or(&[], Vec::as_slice)
    }

    /// The CRD groups `chart` installs by the catalog's word.
    pub fn provides<'a>(&'a self, chart: &str) -> impl Iterator<Item = &'a String> + 'a {
        self.of(chart).iter().flat_map(|f| &f.provides)
    }
}

//! The addon catalog of a blueprint (`addons/<name>.yaml`): parsing, selection with
//! dependencies, and the object each entry becomes in the template context.
use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::{Map, Value as Json};

use crate::error::{Error, Result};
use crate::tree::FileTree;
use crate::yaml;

/// The fields scaffold itself reads; templates see the whole entry.
#[derive(Debug, Clone, Deserialize)]
pub struct EntrySpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub layer: String,
    pub namespace: String,
    #[serde(default)]
    pub always: bool,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub requires: Vec<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub service_account: Option<String>,
    #[serde(default)]
    pub iam_policy: Option<Json>,
    #[serde(default)]
    pub bridge_values: Option<Json>,
    /// What the operator must provide or do, in words (`scaffold list addons`).
    #[serde(default)]
    pub operator_needs: Option<String>,
    pub chart: ChartSpec,
    /// What each feature of the chart needs from the cluster, and the values that turn it
    /// on (`scaffold check` rule `order.watched-api`; blueprint loading refuses a feature
    /// turned on without what it needs).
    #[serde(default)]
    pub features: Vec<Feature>,
}

pub use crate::check::facts::{CatalogFacts, ChartFacts, Feature};

#[derive(Debug, Clone, Deserialize)]
pub struct ChartSpec {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub spec: EntrySpec,
    raw: Json,
    /// The YAML it was read from (for blueprints that extend this one).
    source: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
    /// Addons a blueprint of the chain removed (`remove_addons`): entries may still name
    /// them in `values_when` and feature needs, which then never apply.
    removed: BTreeSet<String>,
}

/// The addons a repo gets: the chosen ones, the always-present ones and their dependencies.
#[derive(Debug)]
pub struct Selection<'a> {
    pub entries: Vec<&'a Entry>,
    /// (added dependency, the addon that needs it)
    pub added: Vec<(String, String)>,
}

impl Selection<'_> {
    /// The first requirement (`requires:`) no answer meets, where `present` says whether
    /// an answer is given: (the chosen addon it comes from, the addon that needs it, the
    /// answer's key). The chosen addon is the one the user named, not a dependency.
    pub fn unmet(&self, present: impl Fn(&str) -> bool) -> Option<Unmet> {
        // The chosen addons' own requirements first: they are the plainest to name.
        let is_added = |name: &String| self.added.iter().any(|(dep, _)| dep == name);
        let (chosen, added): (Vec<&&Entry>, Vec<&&Entry>) =
            self.entries.iter().partition(|e| !is_added(&e.spec.name));
        for entry in chosen.into_iter().chain(added) {
            for key in &entry.spec.requires {
                if present(key) {
                    continue;
                }
                let mut chosen = entry.spec.name.clone();
                for _ in 0..self.added.len() {
                    match self.added.iter().find(|(dep, _)| dep == &chosen) {
                        Some((_, by)) => chosen = by.clone(),
                        None => break,
                    }
                }
                return Some(Unmet {
                    chosen,
                    needing: entry.spec.name.clone(),
                    key: key.clone(),
                });
            }
        }
        None
    }
}

/// An addon requirement no answer meets.
pub struct Unmet {
    /// The addon the user chose.
    pub chosen: String,
    /// The addon (the chosen one, or a dependency of it) whose `requires:` names `key`.
    pub needing: String,
    pub key: String,
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.chosen == self.needing {
            write!(f, "{} needs `{}`", self.chosen, self.key)
        } else {
            write!(
                f,
                "{} needs {}, which needs `{}`",
                self.chosen, self.needing, self.key
            )
        }
    }
}

impl Catalog {
    pub fn from_tree(origin: &str, tree: &FileTree, removed: BTreeSet<String>) -> Result<Self> {
        let mut entries = BTreeMap::new();
        for (path, bytes) in tree {
            let Some(stem) = path.strip_suffix(".yaml") else {
                continue;
            };
            let file = format!("{origin}/addons/{path}");
            let fail = |at: (usize, usize), msg: String| {
                Error::Located(crate::error::Located::new(file.clone(), at, msg))
            };
            let (raw, spec) = raw_and_spec(bytes).map_err(|e| fail(e.pair(), e.message))?;
            // Places (and the text they need) are found again only for an error: parsing
            // is most of loading the default blueprint (a third of `new --dry-run`,
            // BENCHMARKS.md).
            let places = || yaml::Places::of(&String::from_utf8_lossy(bytes));
            if let Some(Json::Object(when)) = raw.get("values_when")
                && let Some(other) = when
                    .keys()
                    .find(|k| !tree.contains_key(&format!("{k}.yaml")) && !removed.contains(*k))
            {
                return Err(fail(
                    places().at(&["values_when", other.as_str()]),
                    format!("values_when names unknown addon `{other}`"),
                ));
            }
            if spec.name != stem {
                return Err(fail(
                    places().at(&["name"]),
                    format!("name `{}` differs from the file name", spec.name),
                ));
            }
            entries.insert(
                spec.name.clone(),
                Entry {
                    spec,
                    raw,
                    source: bytes.clone(),
                },
            );
        }
        let catalog = Catalog { entries, removed };
        for entry in catalog.entries.values() {
            catalog.check_features(origin, entry)?;
            for dep in &entry.spec.depends_on {
                if !catalog.entries.contains_key(dep) {
                    let text = String::from_utf8_lossy(&entry.source);
                    return Err(Error::Located(crate::error::Located::new(
                        format!("{origin}/addons/{}.yaml", entry.spec.name),
                        yaml::Places::of(&text).section_key("depends_on", dep),
                        format!(
                            "depends_on names unknown addon `{dep}`{}",
                            crate::suggest::did_you_mean(
                                dep,
                                catalog.entries.keys().map(String::as_str)
                            )
                        ),
                    )));
                }
            }
        }
        Ok(catalog)
    }

    /// The addons `name` brings into a repo: itself, its dependencies (transitively) and the
    /// always-present ones.
    fn brought_by(&self, name: &str) -> BTreeSet<String> {
        let mut seen: BTreeSet<String> = self
            .entries
            .values()
            .filter(|e| e.spec.always)
            .map(|e| e.spec.name.clone())
            .collect();
        let mut stack = vec![name.to_string()];
        while let Some(next) = stack.pop() {
            if seen.insert(next.clone())
                && let Some(entry) = self.entries.get(&next)
            {
                stack.extend(entry.spec.depends_on.iter().cloned());
            }
        }
        if !self.entries.get(name).is_some_and(|e| e.spec.always) {
            seen.insert(name.to_string());
        }
        seen
    }

    /// A feature turned on in `values` needs only addons the entry brings; one turned on
    /// under `values_when: X` only addons X (or the entry) brings. Otherwise a repo
    /// without them gets a controller watching an API nobody installs (review N-B1).
    fn check_features(&self, origin: &str, entry: &Entry) -> Result<()> {
        // Parsed again only for an error's place.
        let places = || yaml::Places::of(&String::from_utf8_lossy(&entry.source));
        let fail = |at: (usize, usize), msg: String| {
            Error::Located(crate::error::Located::new(
                format!("{origin}/addons/{}.yaml", entry.spec.name),
                at,
                msg,
            ))
        };
        let own = self.brought_by(&entry.spec.name);
        let mut sources: Vec<(Vec<String>, &Json, BTreeSet<String>)> = Vec::new();
        if let Some(values) = entry.raw.get("values") {
            sources.push((vec!["values".into()], values, own.clone()));
        }
        if let Some(Json::Object(when)) = entry.raw.get("values_when") {
            for (other, values) in when {
                let mut brought = own.clone();
                brought.extend(self.brought_by(other));
                sources.push((vec!["values_when".into(), other.clone()], values, brought));
            }
        }
        for feature in &entry.spec.features {
            let needs = || {
                let places = places();
                places
                    .item_field("features", "name", &feature.name, "needs")
                    .unwrap_or_else(|| places.at(&["features"]))
            };
            for addon in &feature.needs.addons {
                if !self.entries.contains_key(addon) && !self.removed.contains(addon) {
                    return Err(fail(
                        needs(),
                        format!("feature `{}` needs unknown addon `{addon}`", feature.name),
                    ));
                }
            }
            if let Some(answer) = feature
                .needs
                .answers
                .iter()
                .find(|a| !entry.spec.requires.contains(a))
            {
                return Err(fail(
                    needs(),
                    format!(
                        "feature `{}` needs answer `{answer}`: add it to `requires`",
                        feature.name
                    ),
                ));
            }
            for (place, values, brought) in &sources {
                let on = feature
                    .enabled_by
                    .iter()
                    .find_map(|t| t.matched(values).map(|v| (t, v)));
                let missing = feature.needs.addons.iter().find(|a| !brought.contains(*a));
                if let (Some((trigger, value)), Some(missing)) = (on, missing) {
                    let mut path = place.clone();
                    path.extend(trigger.path.split('.').map(String::from));
                    let place = place.join(".");
                    return Err(fail(
                        places().at(&path),
                        format!(
                            "`{place}` turns on feature `{}` ({}: {value}), which needs addon `{missing}` that a repo with {} may lack: set it under `values_when: {missing}:` instead",
                            feature.name, trigger.path, entry.spec.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Applies `add-addon` settings: for a catalog addon `version`, `namespace` and
    /// `values` (merged into its values); otherwise a custom chart (`chart`, `repo`,
    /// `version`, `namespace`, `layer`) built on the blueprint's `custom_addon` fields.
    pub fn with_settings(
        &self,
        settings: &Map<String, Json>,
        custom_base: Option<&Json>,
    ) -> Result<Catalog> {
        let mut catalog = self.clone();
        for (name, setting) in settings {
            let fail = |m: String| {
                Error::input(format!(
                    ".scaffold/answers.yaml: addon_settings.{name}: {m}"
                ))
            };
            let Json::Object(setting) = setting else {
                return Err(fail("must be a mapping".into()));
            };
            let text = |key: &str| setting.get(key).and_then(Json::as_str).map(String::from);
            let mut raw = match catalog.entries.get(name) {
                Some(entry) => entry.raw.clone(),
                None => {
                    let (Some(chart), Some(repo), Some(version)) =
                        (text("chart"), text("repo"), text("version"))
                    else {
                        return Err(fail(
                            "not a catalog addon, and no chart/repo/version for a custom one"
                                .into(),
                        ));
                    };
                    let mut raw = custom_base
                        .cloned()
                        .unwrap_or_else(|| Json::Object(Map::new()));
                    let (kind, url) = if repo.starts_with("oci://") {
                        (
                            "OCIRepository",
                            format!("{}/{chart}", repo.trim_end_matches('/')),
                        )
                    } else {
                        ("HelmRepository", repo.clone())
                    };
                    if let Json::Object(map) = &mut raw {
                        map.insert("name".into(), Json::String(name.clone()));
                        map.insert("namespace".into(), Json::String(name.clone()));
                        map.insert("custom".into(), Json::Bool(true));
                        map.insert(
                            "chart".into(),
                            serde_json::json!({"name": chart, "version": version, "source": {"kind": kind, "name": chart, "url": url}}),
                        );
                    }
                    raw
                }
            };
            if let Json::Object(map) = &mut raw {
                if let Some(version) = text("version")
                    && let Some(Json::Object(chart)) = map.get_mut("chart")
                {
                    chart.insert("version".into(), Json::String(version));
                }
                for key in ["namespace", "layer"] {
                    if let Some(value) = text(key) {
                        map.insert(key.into(), Json::String(value));
                    }
                }
                // What `promote` moved from another environment, under what this one owns.
                if let Some(promoted) = setting.get("promoted") {
                    let delta: crate::json_merge::Delta = serde_json::from_value(promoted.clone())
                        .map_err(|e| fail(format!("promoted: {e}")))?;
                    let target = map
                        .entry("values")
                        .or_insert_with(|| Json::Object(Map::new()));
                    delta.apply(target);
                }
                if let Some(Json::Object(values)) = setting.get("values") {
                    let target = map
                        .entry("values")
                        .or_insert_with(|| Json::Object(Map::new()));
                    crate::json_merge::deep_merge(target, &Json::Object(values.clone()));
                }
            }
            let spec: EntrySpec =
                serde_json::from_value(raw.clone()).map_err(|e| fail(e.to_string()))?;
            let source = yaml::to_string(&raw).unwrap_or_default().into_bytes();
            catalog
                .entries
                .insert(name.clone(), Entry { spec, raw, source });
        }
        Ok(catalog)
    }

    pub fn removed(&self) -> &BTreeSet<String> {
        &self.removed
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Addons a user may choose (the always-present ones are not a choice).
    pub fn optional_names(&self) -> Vec<String> {
        self.entries
            .values()
            .filter(|e| !e.spec.always)
            .map(|e| e.spec.name.clone())
            .collect()
    }

    /// "unknown addon `x` (did you mean …?); …", for error messages.
    pub fn unknown(&self, name: &str) -> String {
        let hint = self.suggest(name);
        let hint = if hint.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", hint.join(", "))
        };
        format!("unknown addon `{name}`{hint}; `scaffold list addons` shows the catalog")
    }

    /// Closest known names, for "unknown addon" messages.
    fn suggest(&self, name: &str) -> Vec<String> {
        crate::suggest::closest(name, self.entries.keys().map(String::as_str), 3)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// What `check` knows of each entry's chart (`crds.provides`, `features`), by chart
    /// name and by entry name: the facts its CRD and prerequisite rules take from a
    /// blueprint.
    pub fn facts(&self) -> CatalogFacts {
        let mut facts = CatalogFacts::default();
        for entry in self.entries.values() {
            facts.insert(
                &entry.spec.chart.name,
                ChartFacts {
                    entry: entry.spec.name.clone(),
                    provides: entry.provides(),
                    features: entry.spec.features.clone(),
                },
            );
        }
        facts
    }

    pub fn select(&self, chosen: &[String]) -> Result<Selection<'_>> {
        let mut picked: BTreeSet<String> = BTreeSet::new();
        let mut added = Vec::new();
        let mut queue: Vec<(String, Option<String>)> = self
            .entries
            .values()
            .filter(|e| e.spec.always)
            .map(|e| (e.spec.name.clone(), None))
            .collect();
        for name in chosen {
            if !self.entries.contains_key(name) {
                return Err(Error::input(format!("addons: {}", self.unknown(name))));
            }
            queue.push((name.clone(), None));
        }
        while let Some((name, needed_by)) = queue.pop() {
            if !picked.insert(name.clone()) {
                continue;
            }
            let entry = &self.entries[&name];
            if let Some(by) = needed_by
                && !chosen.contains(&name)
                && !entry.spec.always
            {
                added.push((name.clone(), by));
            }
            for dep in &entry.spec.depends_on {
                queue.push((dep.clone(), Some(name.clone())));
            }
        }
        added.sort();
        Ok(Selection {
            entries: picked.iter().map(|n| &self.entries[n]).collect(),
            added,
        })
    }
}

impl Entry {
    pub fn source(&self) -> &[u8] {
        &self.source
    }

    /// Its chart version and values, settings applied (`values_when` not).
    pub fn version_and_values(&self) -> (String, Json) {
        let values = self.raw.get("values").cloned();
        (
            self.spec.chart.version.clone(),
            values.unwrap_or(Json::Object(Map::new())),
        )
    }

    /// Where its chart comes from (`chart.source.url`): charts released together share it.
    pub fn chart_url(&self) -> Option<&str> {
        self.raw.pointer("/chart/source/url").and_then(Json::as_str)
    }

    /// The API groups whose CRDs the chart installs (`crds.provides`).
    pub fn provides(&self) -> Vec<String> {
        crate::json::strings(self.raw.get("crds").and_then(|c| c.get("provides")))
    }

    /// The entry as templates see it: the catalog data plus `dir`, where its layer's
    /// addons live, with its `values_when` (addon name → values) merged into `values` for
    /// each named addon the repo has (`present`).
    pub fn template_object(&self, dir: &str, present: &[&str]) -> Json {
        let mut object = match &self.raw {
            Json::Object(map) => map.clone(),
            _ => Map::new(),
        };
        if let Some(Json::Object(when)) = object.get("values_when").cloned() {
            for (other, extra) in &when {
                if present.contains(&other.as_str()) {
                    let values = object
                        .entry("values")
                        .or_insert_with(|| Json::Object(Map::new()));
                    crate::json_merge::deep_merge(values, extra);
                }
            }
        }
        object.insert("dir".into(), Json::String(dir.to_string()));
        Json::Object(object)
    }
}

/// An entry file as JSON and as its typed spec, from one parse: what `yaml::from_slice`
/// gives for each (the spec read from the YAML itself, so a missing or wrong field has a
/// place: a missing `chart.version` points at `chart:`'s mapping).
fn raw_and_spec(bytes: &[u8]) -> std::result::Result<(Json, EntrySpec), yaml::Error> {
    match crate::prebuilt::json_and_typed(bytes) {
        Some(read) => Ok(read),
        None => parsed(bytes),
    }
}

fn parsed(bytes: &[u8]) -> std::result::Result<(Json, EntrySpec), yaml::Error> {
    let node = std::str::from_utf8(bytes)
        .ok()
        .map(yaml::parse_one)
        .transpose()?
        .flatten();
    match node {
        Some(node) => Ok((yaml::from_node(&node)?, yaml::from_node(&node)?)),
        // Not UTF-8, or empty: the errors and defaults are `from_slice`'s own.
        None => Ok((yaml::from_slice(bytes)?, yaml::from_slice(bytes)?)),
    }
}

//! Promotion between environments (`scaffold promote`, `env add --from`): every component
//! both environments run is compared; the target takes the source's chart version and its
//! values as the source's overlay holds them now, recorded as `promoted: {set, unset}`
//! (json_merge::Delta) under the values the target owns, so a removed key is removed and
//! the target's own values stay (docs/environments.md, Promotion).
use std::collections::BTreeSet;

use serde_json::{Map, Value as Json};

use crate::addon_envs;
use crate::catalog::Catalog;
use crate::error::{Error, Problem, Result};
use crate::json_merge;
use crate::record::Record;
use crate::repo::Repo;

/// One component `promote` compared: its chart version before and after in the target,
/// the value paths that moved, and the ones the target owns that stayed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PromotedEntry {
    pub component: String,
    pub version_before: String,
    pub version_after: String,
    pub moved: Vec<String>,
    pub kept: Vec<String>,
}

/// The settings keys promote rewrites; the rest (a custom chart's source, namespace,
/// layer) stay the target's.
const PROMOTED: &str = "promoted";
const OWNED_VALUES: &str = "values";
const VERSION: &str = "version";

/// Which values the target owns (`add-addon --env TO --helm-set`) a promotion replaces
/// with the source's; the others stay.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TakeOwned {
    /// None: all stay (the default).
    #[default]
    None,
    /// All of them (`--values`).
    All,
    /// These keys (`--values COMPONENT:KEY`, repeated), each with what lies below it.
    Keys(Vec<OwnedKey>),
}

/// One value the target owns, by component and dotted key path (`karpenter:replicas`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedKey {
    pub component: String,
    pub path: Vec<String>,
}

impl OwnedKey {
    /// `COMPONENT:KEY` with a dotted KEY, as `--values` takes it.
    pub fn parse(text: &str) -> std::result::Result<OwnedKey, String> {
        let malformed = || {
            format!(
                "`{text}` is no COMPONENT:KEY (such as karpenter:replicas or istiod:pilot.resources)"
            )
        };
        let (component, key) = text.split_once(':').ok_or_else(malformed)?;
        let path: Vec<String> = key.split('.').map(String::from).collect();
        if component.is_empty() || path.iter().any(String::is_empty) {
            return Err(malformed());
        }
        Ok(OwnedKey {
            component: component.to_string(),
            path,
        })
    }

    fn dotted(&self) -> String {
        format!("{}:{}", self.component, self.path.join("."))
    }
}

impl TakeOwned {
    /// `owned` (the target's own values of `component`) without what this takes.
    fn left_of(&self, component: &str, owned: &Json) -> Json {
        match self {
            TakeOwned::None => owned.clone(),
            TakeOwned::All => Json::Null,
            TakeOwned::Keys(keys) => {
                let mut left = owned.clone();
                for key in keys.iter().filter(|k| k.component == component) {
                    json_merge::remove_path(&mut left, &key.path);
                }
                prune_empty(&mut left);
                match left.as_object().is_some_and(Map::is_empty) {
                    true => Json::Null,
                    false => left,
                }
            }
        }
    }
}

/// Drops the mappings left empty once their keys were taken.
fn prune_empty(value: &mut Json) {
    if let Json::Object(map) = value {
        for inner in map.values_mut() {
            prune_empty(inner);
        }
        map.retain(|_, v| !v.as_object().is_some_and(Map::is_empty));
    }
}

/// Refuses a `--values COMPONENT:KEY` that names a component not promoted, or a key `to`
/// does not own: a typo would otherwise move nothing and say nothing.
pub fn check_owned_keys(
    record: &Record,
    to: &str,
    names: &[String],
    take: &TakeOwned,
) -> Result<()> {
    let TakeOwned::Keys(keys) = take else {
        return Ok(());
    };
    for key in keys {
        let owned = record
            .environment_addon_settings
            .get(to)
            .and_then(|s| s.get(&key.component))
            .and_then(|s| s.get(OWNED_VALUES))
            .cloned()
            .unwrap_or(Json::Null);
        let paths = owned_paths(&owned);
        let dotted = key.path.join(".");
        let below = format!("{dotted}.");
        if names.contains(&key.component)
            && paths.iter().any(|p| *p == dotted || p.starts_with(&below))
        {
            continue;
        }
        let owns = match paths.is_empty() {
            true => "none".to_string(),
            false => paths.join(", "),
        };
        return Err(Error::input(
            Problem::new(format!(
                "--values {}: {to} owns no value {dotted} of {} in this promotion (its own: {owns})",
                key.dotted(),
                key.component
            ))
            .fix(format!(
                "name a value {to} owns (set with `scaffold add-addon {} --env {to} --helm-set KEY=VALUE`), or drop it",
                key.component
            )),
        ));
    }
    Ok(())
}

/// Refuses a promotion that names one environment twice, or one the repo lacks, or a repo
/// of one environment.
pub fn check_pair(repo: &Repo, from: &str, to: &str) -> Result<()> {
    if from == to {
        return Err(Error::input(format!(
            "--from and --to are both {from}: name two environments"
        )));
    }
    let both = [from.to_string(), to.to_string()];
    if addon_envs::targets(&repo.blueprint, &repo.record, &both, "--from/--to")?.is_none() {
        return Err(Error::input(
            Problem::new("this repo has one environment (its blueprint chooses addons once)")
                .fix("there is nothing to promote between"),
        ));
    }
    Ok(())
}

/// Lays `from`'s chart versions and values of `names` as they are now (hand edits and
/// Renovate's included) over `to`'s settings in `record`; `to`'s own values stay unless
/// `take_owned`. `env add --from` starts a new environment with it.
pub fn carry_over(
    repo: &Repo,
    record: &mut Record,
    from: &str,
    to: &str,
    names: &[String],
    take_owned: &TakeOwned,
) -> Result<()> {
    let source = env_catalog(repo, &repo.record, from)?;
    for name in names {
        let desired = source_now(repo, &source, from, name)?;
        promote_one(repo, record, to, name, desired, take_owned)?;
    }
    Ok(())
}

/// Every component `env` runs in the repo as it is.
pub fn components_of(repo: &Repo, env: &str) -> Result<Vec<String>> {
    let catalog = env_catalog(repo, &repo.record, env)?;
    Ok(runs(repo, &catalog, env)?.into_iter().collect())
}

/// The components of `names` whose version or values in `env` (as `record` renders it)
/// differ from the repo's shared ones, one line each: `name version (values: paths)`.
pub fn differing(repo: &Repo, record: &Record, env: &str, names: &[String]) -> Result<Vec<String>> {
    let shared = crate::generate::catalog_of(&repo.blueprint, record)?;
    let own = env_catalog(repo, record, env)?;
    let mut lines = Vec::new();
    for name in names {
        let (Some(base), Some(mine)) = (shared.get(name), own.get(name)) else {
            continue;
        };
        let ((base_version, base_values), (version, values)) =
            (base.version_and_values(), mine.version_and_values());
        let paths = json_merge::diff(&base_values, &values).paths();
        if base_version == version && paths.is_empty() {
            continue;
        }
        let values = match paths.is_empty() {
            true => String::new(),
            false => format!(" (values: {})", paths.join(", ")),
        };
        lines.push(format!("{name} {version}{values}"));
    }
    Ok(lines)
}

/// The catalog `env` renders with: the repo's, with `env`'s own settings applied.
pub fn env_catalog(repo: &Repo, record: &Record, env: &str) -> Result<Catalog> {
    let shared = crate::generate::catalog_of(&repo.blueprint, record)?;
    match record.environment_addon_settings.get(env) {
        Some(settings) if !settings.is_empty() => {
            shared.with_settings(settings, repo.blueprint.manifest.custom_addon.as_ref())
        }
        _ => Ok(shared),
    }
}

/// Every component `env` runs: what it chose, the always-on ones and their dependencies.
fn runs(repo: &Repo, catalog: &Catalog, env: &str) -> Result<BTreeSet<String>> {
    let addons_key = repo.blueprint.manifest.addons_answer();
    let chosen = addon_envs::chosen_in(&repo.record, env, addons_key);
    let selection = catalog.select(&chosen)?;
    Ok(selection
        .entries
        .iter()
        .map(|e| e.spec.name.clone())
        .collect())
}

/// The components to compare: the named ones with what they carry, or every one both run.
pub fn components(
    repo: &Repo,
    (from, to): (&str, &str),
    named: &[String],
    (source, target): (&Catalog, &Catalog),
) -> Result<Vec<String>> {
    let runs_from = runs(repo, source, from)?;
    let runs_to = runs(repo, target, to)?;
    let shared: BTreeSet<String> = runs_from.intersection(&runs_to).cloned().collect();
    if named.is_empty() {
        return Ok(shared.into_iter().collect());
    }
    for name in named {
        for (env, runs) in [(from, &runs_from), (to, &runs_to)] {
            if !runs.contains(name) {
                return Err(Error::input(format!(
                    "{name} is not in {env} (add it with `scaffold add-addon {name} --env {env}`)"
                )));
            }
        }
    }
    Ok(carried(source, named, &shared))
}

/// `named` and what a promotion of them carries, among `shared`: each component's
/// `depends_on` (transitively), and the components that depend on one of them at the same
/// chart version (charts released together, such as karpenter and karpenter-crd).
fn carried(catalog: &Catalog, named: &[String], shared: &BTreeSet<String>) -> Vec<String> {
    let mut picked: BTreeSet<String> = BTreeSet::new();
    let mut queue: Vec<String> = named.to_vec();
    while let Some(name) = queue.pop() {
        if !shared.contains(&name) || !picked.insert(name.clone()) {
            continue;
        }
        let Some(entry) = catalog.get(&name) else {
            continue;
        };
        queue.extend(entry.spec.depends_on.iter().cloned());
        let together = shared.iter().filter(|other| {
            catalog.get(other).is_some_and(|o| {
                o.spec.depends_on.contains(&name)
                    && o.spec.chart.version == entry.spec.chart.version
            })
        });
        queue.extend(together.cloned());
    }
    picked.into_iter().collect()
}

/// `env`'s chart version and values of `name` as they are now: the record's, with what a
/// hand edit or Renovate changed in its overlay since scaffold wrote it.
fn source_now(repo: &Repo, catalog: &Catalog, env: &str, name: &str) -> Result<(String, Json)> {
    let Some(entry) = catalog.get(name) else {
        return Err(Error::input(format!("{name} is not in {env}")));
    };
    let (mut version, mut values) = entry.version_and_values();
    if let (Some(now), Some(written)) = (
        overlay_of(repo, env, name, &|p| on_disk(repo, p))?,
        overlay_of(repo, env, name, &|p| rendered(repo, p))?,
    ) {
        if now.0 != written.0
            && let Some(moved) = now.0
        {
            version = moved;
        }
        let null = Json::Null;
        json_merge::diff(
            written.1.as_ref().unwrap_or(&null),
            now.1.as_ref().unwrap_or(&null),
        )
        .apply(&mut values);
    }
    Ok((version, values))
}

/// Sets `to`'s settings of `name` so it renders `desired` (version, values) under the
/// values it owns (dropped with `take_owned`): the difference from the blueprint's is
/// recorded as `promoted`, a removed key as removed (never as `null`).
fn promote_one(
    repo: &Repo,
    record: &mut Record,
    to: &str,
    name: &str,
    desired: (String, Json),
    take_owned: &TakeOwned,
) -> Result<()> {
    let mut setting = record
        .environment_addon_settings
        .get(to)
        .and_then(|s| s.get(name))
        .and_then(Json::as_object)
        .cloned()
        .unwrap_or_default();
    let custom = setting.contains_key("chart");
    let mut bare = setting.clone();
    for key in [PROMOTED, OWNED_VALUES] {
        bare.remove(key);
    }
    if !custom {
        bare.remove(VERSION);
    }
    let shared = crate::generate::catalog_of(&repo.blueprint, record)?;
    let base = if bare.is_empty() {
        shared
    } else {
        let one = Map::from_iter([(name.to_string(), Json::Object(bare))]);
        shared.with_settings(&one, repo.blueprint.manifest.custom_addon.as_ref())?
    };
    let Some((base_version, base_values)) = base.get(name).map(|e| e.version_and_values()) else {
        return Ok(());
    };
    let (version, values) = desired;
    if version != base_version || custom {
        setting.insert(VERSION.into(), Json::String(version));
    } else {
        setting.remove(VERSION);
    }
    let delta = json_merge::diff(&base_values, &values);
    if delta.is_empty() {
        setting.remove(PROMOTED);
    } else {
        let delta = serde_json::to_value(&delta).map_err(|e| Error::blueprint(e.to_string()))?;
        setting.insert(PROMOTED.into(), delta);
    }
    if let Some(owned) = setting.get(OWNED_VALUES) {
        match take_owned.left_of(name, owned) {
            Json::Null => setting.remove(OWNED_VALUES),
            left => setting.insert(OWNED_VALUES.into(), left),
        };
    }
    let settings = record
        .environment_addon_settings
        .entry(to.to_string())
        .or_default();
    if setting.is_empty() {
        settings.remove(name);
    } else {
        settings.insert(name.to_string(), Json::Object(setting));
    }
    if settings.is_empty() {
        record.environment_addon_settings.remove(to);
    }
    Ok(())
}

/// What the promotion changes in `to`, component by component: version, value paths that
/// move, and the paths `to` owns (`values` in its settings) that stay.
pub fn outcome(
    before: &Catalog,
    after: &Catalog,
    record: &Record,
    to: &str,
    names: &[String],
    take_owned: &TakeOwned,
) -> Vec<PromotedEntry> {
    let mut entries = Vec::new();
    for name in names {
        let (Some(old), Some(new)) = (before.get(name), after.get(name)) else {
            continue;
        };
        let (version_before, values_before) = old.version_and_values();
        let (version_after, values_after) = new.version_and_values();
        let owned = record
            .environment_addon_settings
            .get(to)
            .and_then(|s| s.get(name))
            .and_then(|s| s.get(OWNED_VALUES))
            .cloned()
            .unwrap_or(Json::Null);
        let kept = owned_paths(&take_owned.left_of(name, &owned));
        entries.push(PromotedEntry {
            component: name.clone(),
            version_before,
            version_after,
            moved: json_merge::diff(&values_before, &values_after).paths(),
            kept,
        });
    }
    entries
}

/// The dotted leaf paths of values an environment owns.
fn owned_paths(owned: &Json) -> Vec<String> {
    json_merge::diff(&Json::Object(Map::new()), owned).paths()
}

pub fn changed(entry: &PromotedEntry) -> bool {
    entry.version_before != entry.version_after || !entry.moved.is_empty()
}

/// The value paths that move and that were edited by hand in `to`'s overlay since scaffold
/// wrote it: promote would overwrite the edit (the three-way merge refuses it too).
pub fn conflicts(repo: &Repo, to: &str, entries: &[PromotedEntry]) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for entry in entries.iter().filter(|e| changed(e)) {
        let name = &entry.component;
        let (Some(now), Some(written)) = (
            overlay_of(repo, to, name, &|p| on_disk(repo, p))?,
            overlay_of(repo, to, name, &|p| rendered(repo, p))?,
        ) else {
            continue;
        };
        if now.0 != written.0 && entry.version_before != entry.version_after {
            found.push(format!("{name} version"));
        }
        let null = Json::Null;
        let edited = json_merge::diff(
            written.1.as_ref().unwrap_or(&null),
            now.1.as_ref().unwrap_or(&null),
        )
        .paths();
        for path in edited {
            let overlaps = |m: &String| {
                *m == path
                    || m.starts_with(&format!("{path}."))
                    || path.starts_with(&format!("{m}."))
            };
            if entry.moved.iter().any(overlaps) {
                found.push(format!("{name} {path}"));
            }
        }
    }
    Ok(found)
}

fn on_disk(repo: &Repo, path: &str) -> Result<Option<String>> {
    let Ok(path) = crate::plan::RelPath::new(path) else {
        return Ok(None);
    };
    Ok(crate::write::read(&repo.root, &path)?.map(|b| String::from_utf8_lossy(&b).into_owned()))
}

fn rendered(repo: &Repo, path: &str) -> Result<Option<String>> {
    Ok(crate::plan::RelPath::new(path)
        .ok()
        .and_then(|p| repo.rendered.plan.files.get(&p))
        .map(|b| String::from_utf8_lossy(b).into_owned()))
}

/// An environment's chart version and values of an addon as the overlay files `read`
/// gives hold them (the blueprint's `environment_overlay`); None when the blueprint
/// declares no overlay.
fn overlay_of(
    repo: &Repo,
    env: &str,
    name: &str,
    read: &dyn Fn(&str) -> Result<Option<String>>,
) -> Result<Option<(Option<String>, Option<Json>)>> {
    let overlay = &repo.blueprint.manifest.environment_overlay;
    let Some(addon) = repo
        .rendered
        .addons
        .get(name)
        .filter(|_| !overlay.is_empty())
    else {
        return Ok(None);
    };
    let context = serde_json::json!({ "environment": env, "addon": addon });
    let (mut version, mut values) = (None, None);
    for spec in overlay {
        let path = repo
            .renderer()
            .render_str("environment_overlay file", &spec.file, &context)?;
        let Some(text) = read(&path)? else { continue };
        let doc: Json = crate::yaml::from_str(&text).map_err(|e| {
            Error::input(
                Problem::new(format!("{path}: not YAML ({e})")).fix("fix it, then promote again"),
            )
        })?;
        let at = |keys: &str| doc.pointer(&format!("/{keys}")).cloned();
        if version.is_none() {
            version = spec
                .version
                .as_deref()
                .and_then(at)
                .and_then(|v| v.as_str().map(String::from));
        }
        if values.is_none() {
            values = spec.values.as_deref().and_then(at);
        }
    }
    Ok(Some((version, values)))
}

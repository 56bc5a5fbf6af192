//! The passes of `Blueprint::resolve`: a layer laid over the blueprint it extends. Each
//! pass adds what it finds wrong to `found`, so one run reports every independent mistake
//! of a layer's manifest, each at its line.
use std::collections::{BTreeMap, BTreeSet};

use super::source::Layer;
use crate::error::{Error, Located, Result};
use crate::manifest::{Manifest, TreeSpec};
use crate::overrides::{self, Override, Patches};
use crate::tree::FileTree;
use crate::yaml::Places;

/// A layer's manifest: where its findings are placed.
pub(super) struct ManifestPlaces {
    pub(super) file: String,
    pub(super) text: String,
}

impl ManifestPlaces {
    pub(super) fn of(layer: &Layer) -> Self {
        ManifestPlaces {
            file: layer.manifest_file(),
            text: layer.text().to_string(),
        }
    }

    /// At a top-level key.
    pub(super) fn at_key(&self, key: &str, message: String) -> Located {
        Located::new(
            self.file.clone(),
            Places::of(&self.text).at(&[key]),
            message,
        )
    }

    /// At an entry of a section (a question by its key, a list item or a map key).
    pub(super) fn at(&self, section: &str, key: &str, message: String) -> Located {
        let places = Places::of(&self.text);
        let place = match section {
            "questions" => places.item_field(section, "key", key, "after"),
            _ => None,
        };
        Located::new(
            self.file.clone(),
            place.unwrap_or_else(|| places.section_key(section, key)),
            message,
        )
    }
}

/// `version` and `min_scaffold_version`: exact, and not newer than this scaffold.
pub(super) fn check_versions(
    manifest: &Manifest,
    places: &ManifestPlaces,
    found: &mut Vec<Located>,
) {
    for (key, value) in [
        ("version", Some(&manifest.version)),
        (
            "min_scaffold_version",
            manifest.min_scaffold_version.as_ref(),
        ),
    ] {
        if let Some(value) = value
            && !crate::version::is_exact(value)
        {
            found.push(places.at_key(
                key,
                format!(
                    "{key}: `{value}` is not a version MAJOR.MINOR.PATCH (e.g. `{}`)",
                    crate::version::completed(value)
                ),
            ));
        }
    }
    if let Some(min) = &manifest.min_scaffold_version
        && crate::version::tuple(min) > crate::version::tuple(env!("CARGO_PKG_VERSION"))
    {
        found.push(places.at_key(
            "min_scaffold_version",
            format!(
                "min_scaffold_version: the blueprint needs scaffold {min} or newer (this is {}); update scaffold",
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
}

/// The chain so far, as the layer is laid over it: every file by path (templates under
/// their tree's prefix, catalog entries under `addons/`) and what is known of each.
#[derive(Default)]
pub(super) struct Merged {
    pub(super) tree: FileTree,
    pub(super) origins: BTreeMap<String, String>,
    pub(super) executable: BTreeSet<String>,
    pub(super) patches: Patches,
    pub(super) overrides: BTreeMap<String, Override>,
    /// Files a layer removed, by the layer that removed them.
    pub(super) removed: BTreeMap<String, String>,
}

/// What every pass of one layer reads.
pub(super) struct Laying<'a> {
    pub(super) manifest: &'a Manifest,
    /// The layer as findings and overrides name it: name, version, origin.
    pub(super) label: &'a str,
    pub(super) origin: &'a str,
    pub(super) places: &'a ManifestPlaces,
    /// The trees after this layer, so its patches may target the files of any of them.
    pub(super) tree_prefixes: Vec<String>,
}

/// The tree prefixes once this layer's `trees` are merged into its base's.
pub(super) fn tree_prefixes(base: Option<&Manifest>, manifest: &Manifest) -> Vec<String> {
    let tree_specs = match base {
        Some(base) => crate::manifest::merge_trees(base, &manifest.trees),
        None => manifest.trees.clone(),
    };
    if tree_specs.is_empty() {
        manifest.tree_specs()
    } else {
        tree_specs
    }
    .iter()
    .map(TreeSpec::prefix)
    .collect()
}

impl Merged {
    /// `remove_files`: each pattern (and each alternative of a brace glob) must match an
    /// inherited file.
    pub(super) fn remove_files(&mut self, laying: &Laying<'_>, found: &mut Vec<Located>) {
        let at =
            |pattern: &str, message: String| laying.places.at("remove_files", pattern, message);
        for pattern in &laying.manifest.remove_files {
            let removed = match overrides::matching(&self.tree, pattern) {
                Ok(removed) => removed,
                Err(m) => {
                    found.push(at(pattern, format!("remove_files: {m}")));
                    continue;
                }
            };
            if removed.is_empty() {
                found.push(at(
                    pattern,
                    format!(
                        "remove_files: `{pattern}` matches no file of the base blueprint{}",
                        crate::suggest::did_you_mean(pattern, self.tree.keys().map(String::as_str))
                    ),
                ));
                continue;
            }
            found.extend(
                self.unmatched_alternatives(pattern)
                    .into_iter()
                    .map(|message| at(pattern, message)),
            );
            for path in removed {
                self.removed.insert(path.clone(), laying.label.to_string());
                self.tree.remove(&path);
                self.origins.remove(&path);
                self.patches.remove(overrides::output_of(&path));
            }
        }
    }

    /// Each alternative of a brace glob must match on its own: one matching nothing (an
    /// `[[ environment ]]` segment, a character class) would go unnoticed.
    fn unmatched_alternatives(&self, pattern: &str) -> Vec<String> {
        let alternatives = overrides::alternatives(pattern);
        if alternatives.len() < 2 {
            return Vec::new();
        }
        alternatives
            .iter()
            .filter(|alternative| {
                overrides::glob_matching(&self.tree, alternative).is_ok_and(|m| m.is_empty())
            })
            .map(|alternative| {
                let hint = match alternative.contains('[') {
                    true => {
                        " (`[` starts a character class: write `*` for an `[[ environment ]]` segment)"
                    }
                    false => "",
                };
                format!("remove_files: `{pattern}`: its alternative `{alternative}` matches no file of the base blueprint{hint}")
            })
            .collect()
    }

    /// `remove_addons`: each must be an inherited addon that no staying addon depends on.
    pub(super) fn remove_addons(&mut self, laying: &Laying<'_>, found: &mut Vec<Located>) {
        let at = |name: &str, message: String| laying.places.at("remove_addons", name, message);
        for name in &laying.manifest.remove_addons {
            let path = format!("addons/{name}.yaml");
            if self.tree.remove(&path).is_none() {
                found.push(at(
                    name,
                    format!("remove_addons: `{name}` is not an addon of the base blueprint"),
                ));
                continue;
            }
            self.origins.remove(&path);
        }
        // An addon that stays but depends on one this layer removed: the layer's line is
        // the one to change, not the inherited entry's `depends_on`.
        for name in &laying.manifest.remove_addons {
            let dependant = self.tree.iter().find_map(|(path, bytes)| {
                let entry = path.strip_prefix("addons/")?.strip_suffix(".yaml")?;
                let parsed: serde_json::Value = crate::yaml::from_slice(bytes).ok()?;
                let needs = crate::json::strings(parsed.get("depends_on"));
                needs.contains(name).then(|| entry.to_string())
            });
            if let Some(dependant) = dependant {
                found.push(at(
                    name,
                    format!(
                        "remove_addons: `{name}` is a dependency of `{dependant}` (its depends_on), which stays: remove `{dependant}` too, or keep `{name}`"
                    ),
                ));
            }
        }
    }

    /// The layer's own files laid over the chain: a patch joins its target's patches, any
    /// other file replaces the inherited one writing the same output. Returns the layer's
    /// answer sets (`tests/`).
    pub(super) fn lay_over(
        &mut self,
        tree: FileTree,
        executable_on_disk: &BTreeSet<String>,
        laying: &Laying<'_>,
        found: &mut Vec<Located>,
    ) -> FileTree {
        let mut tests = FileTree::new();
        for (path, bytes) in tree {
            if path == "blueprint.yaml" {
                continue;
            }
            if let Some(test) = path.strip_prefix("tests/") {
                tests.insert(test.to_string(), bytes);
                continue;
            }
            let problem = match misnamed_patch(&path, &laying.tree_prefixes) {
                Some(problem) => Err(problem),
                None => match overrides::patch_target(&path, &laying.tree_prefixes) {
                    Some(target) => self.add_patch(&path, target, bytes, laying),
                    None => {
                        self.replace(path.clone(), bytes, executable_on_disk, laying);
                        Ok(())
                    }
                },
            };
            if let Err(message) = problem {
                found.push(Located::new(
                    format!("{}/{path}", laying.origin),
                    (1, 1),
                    message,
                ));
            }
        }
        tests
    }

    /// A patch of the inherited file that writes `target`.
    fn add_patch(
        &mut self,
        path: &str,
        target: &str,
        bytes: Vec<u8>,
        laying: &Laying<'_>,
    ) -> std::result::Result<(), String> {
        let Some(base_path) = overrides::source_of(&self.tree, target) else {
            return Err(format!(
                "patches `{target}`, which no inherited file writes{}",
                crate::suggest::did_you_mean(
                    target,
                    self.tree.keys().map(|k| overrides::output_of(k))
                )
            ));
        };
        let base_label = self.origins.get(&base_path).cloned().unwrap_or_default();
        let base_bytes = self.tree.get(&base_path).cloned().unwrap_or_default();
        self.overrides.insert(
            base_path.clone(),
            Override::patched(
                laying.label,
                &base_label,
                &base_path,
                &base_bytes,
                overrides::recorded_digest(&laying.manifest.replaces, &base_path, path),
            ),
        );
        self.patches
            .entry(target.to_string())
            .or_default()
            .push((path.to_string(), bytes));
        self.origins
            .insert(path.to_string(), laying.label.to_string());
        Ok(())
    }

    /// A child file replaces the inherited one that writes the same output, whether or
    /// not either is a template.
    fn replace(
        &mut self,
        path: String,
        bytes: Vec<u8>,
        executable_on_disk: &BTreeSet<String>,
        laying: &Laying<'_>,
    ) {
        let output = overrides::output_of(&path).to_string();
        for inherited in [output.clone(), format!("{output}.tera")] {
            if let Some(old) = self.tree.remove(&inherited) {
                let base_label = self.origins.remove(&inherited).unwrap_or_default();
                self.overrides.insert(
                    path.clone(),
                    Override::replaced(
                        laying.label,
                        &base_label,
                        &inherited,
                        &old,
                        overrides::recorded_digest(&laying.manifest.replaces, &inherited, &path),
                    ),
                );
                self.executable.remove(&inherited);
            }
        }
        if executable_on_disk.contains(&path) {
            self.executable.insert(path.clone());
        }
        self.origins.insert(path.clone(), laying.label.to_string());
        self.tree.insert(path, bytes);
    }

    /// `executable`: each glob marks the files (or the scripts templates write) it matches
    /// and must match one.
    pub(super) fn mark_executable(&mut self, laying: &Laying<'_>, found: &mut Vec<Located>) {
        for glob in &laying.manifest.executable {
            let globs = std::slice::from_ref(glob);
            let mut matched = false;
            for path in self.tree.keys() {
                // `*.sh` means the scripts written, `x.sh.tera` included.
                if overrides::matches_any(globs, path)
                    || overrides::matches_any(globs, overrides::output_of(path))
                {
                    self.executable.insert(path.clone());
                    matched = true;
                }
            }
            if !matched {
                found.push(laying.places.at(
                    "executable",
                    glob,
                    format!(
                        "executable: `{glob}` matches no file of the blueprint{}",
                        crate::suggest::did_you_mean(
                            glob,
                            self.tree.keys().map(|k| overrides::output_of(k))
                        )
                    ),
                ));
            }
        }
    }
}

/// A file named like a patch that would not be one: `.patch.yml`, or a patch named after
/// a template rather than the file it writes.
fn misnamed_patch(path: &str, tree_prefixes: &[String]) -> Option<String> {
    if let Some(stem) = path.strip_suffix(".patch.yml") {
        return Some(format!(
            "a patch ends in `{}`, this one would be copied as a file: rename it to `{stem}{}`",
            overrides::PATCH_SUFFIX,
            overrides::PATCH_SUFFIX
        ));
    }
    let output = overrides::patch_target(path, tree_prefixes)?.strip_suffix(".tera")?;
    Some(format!(
        "a patch is named after the file's output, not its template: rename it to `{output}{}`",
        overrides::PATCH_SUFFIX
    ))
}

/// The layer's own `migrations` (a base's were checked when it loaded): each names this
/// blueprint, an exact version, and questions the merged manifest asks.
pub(super) fn check_migrations(manifest: &mut Manifest, places: &ManifestPlaces) -> Result<()> {
    let name = manifest.name.clone();
    let keys: Vec<String> = manifest.questions.iter().map(|q| q.key.clone()).collect();
    for migration in &mut manifest.migrations {
        migration.blueprint.get_or_insert_with(|| name.clone());
        if migration.blueprint.as_deref() != Some(name.as_str()) {
            continue; // a base's, checked when the base loaded
        }
        if !crate::version::is_exact(&migration.version) {
            return Err(Error::Located(places.at_key(
                "migrations",
                format!(
                    "migrations: version `{}` is not MAJOR.MINOR.PATCH",
                    migration.version
                ),
            )));
        }
        let unknown = migration
            .rename
            .values()
            .chain(migration.values.keys())
            .find(|k| !keys.contains(k));
        if let Some(target) = unknown {
            let texts = Places::of(&places.text);
            let place = texts
                .item("migrations", "version", &migration.version)
                .and_then(|item| item.find_scalar(target))
                .map_or_else(|| texts.at(&["migrations"]), |at| at.pair());
            return Err(Error::Located(Located::new(
                places.file.clone(),
                place,
                format!(
                    "migrations {}: `{target}` is not a question of the blueprint{}",
                    migration.version,
                    crate::suggest::did_you_mean(target, keys.iter().map(String::as_str))
                ),
            )));
        }
    }
    Ok(())
}

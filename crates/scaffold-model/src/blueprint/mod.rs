//! A blueprint: its manifest (questions, checks, layers), the file trees it renders and its
//! addon catalog — embedded, found on the search path, or in a directory — with `extends`
//! resolved into one merged blueprint that remembers where each file came from.
//! Read-only; no rendering.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::catalog::Catalog;
use crate::error::{Error, Located, Result};
use crate::manifest::merge_manifests;
pub use crate::manifest::{
    Check, Delimiters, GlobDelimiters, Manifest, Migration, Question, QuestionType, TreeScope,
    TreeSpec,
};
use crate::overrides::{self, Override, Patches};
use crate::record::BlueprintId;
use crate::yaml::Places;

mod digest;
pub mod facts;
mod read_tree;
mod resolve;
mod source;
pub use source::{EMBEDDED_ORIGIN, available, embedded_names, search_path};
use source::{Layer, read_layer};

pub use crate::tree::FileTree;
pub use digest::{VERSION_PIN, layer_digest};

/// One rendered tree of a blueprint: where its files sit and how often they render.
#[derive(Debug)]
pub struct Tree {
    /// The prefix of its blueprint-relative paths (`files/`).
    pub prefix: String,
    pub scope: TreeScope,
    pub files: FileTree,
}

#[derive(Debug)]
pub struct Blueprint {
    pub manifest: Manifest,
    /// The trees it renders, in the manifest's order (`trees:`, by default `files/` once
    /// per repo and `addon-files/` once per addon).
    pub trees: Vec<Tree>,
    /// Templates other templates include (`[% include "partials/x.tera" %]`); never written.
    pub partials: FileTree,
    pub catalog: Catalog,
    /// Blueprint-relative path (`files/...`, `addon-files/...`, `addons/...`) → the blueprint
    /// it comes from, after `extends` is resolved.
    pub origins: BTreeMap<String, String>,
    /// Where this blueprint was loaded from (a directory, or `embedded:NAME`).
    pub origin: String,
    /// Its answer sets for `scaffold blueprint test` (`tests/*.yaml`), by file name.
    pub tests: FileTree,
    /// Blueprint-relative paths written with the executable bit (`executable` globs of the
    /// manifests, and files executable on disk).
    pub executable: BTreeSet<String>,
    /// Patches laid over inherited files, by the blueprint-relative path they change.
    pub patches: Patches,
    /// Inherited files a layer replaced or patched, by blueprint-relative path.
    pub overrides: BTreeMap<String, Override>,
    /// The blueprint this one extends (the nearest base), for the record.
    pub base: Option<BlueprintId>,
    /// Its own `blueprint.yaml` as written (before `extends` is resolved).
    pub manifest_source: Vec<u8>,
    /// The content digest of its own layer (`layer_digest`).
    pub digest: String,
    /// Inherited files a layer dropped with `remove_files`, and the layer that did.
    pub removed: BTreeMap<String, String>,
    /// The full content digest of every layer of the chain (`content_digest`): what
    /// `new`'s lint verdict is cached by.
    pub content_digest: String,
}

/// The content digest of a layer over its base's: a directory layer's is its files' own
/// (`Layer::content`), an embedded one's its origin and layer digest (its content is
/// scaffold's own, so a build of changed blueprints under the same version differs too).
fn content_digest(
    own: Option<&str>,
    origin: &str,
    layer_digest: &str,
    base: Option<&Blueprint>,
) -> String {
    let mut listing = match own {
        Some(own) => own.as_bytes().to_vec(),
        None => format!("{origin}\0{layer_digest}").into_bytes(),
    };
    if let Some(base) = base {
        listing.push(b'\n');
        listing.extend_from_slice(base.content_digest.as_bytes());
    }
    crate::tree::blob_id(&listing)
}

/// The layer digest of the embedded blueprint `name` from its files, for the test that
/// holds build.rs's value to it.
#[cfg(test)]
pub fn embedded_layer_digest_at_run_time(name: &str) -> String {
    layer_digest(&source::embedded_files(name).unwrap_or_default())
}

impl Blueprint {
    /// A directory (a path, or a name found on the search path), or an embedded name.
    pub fn load(selector: &str) -> Result<Self> {
        Self::load_chain(selector, None, &mut Vec::new())
    }

    fn load_chain(
        selector: &str,
        relative_to: Option<&Path>,
        seen: &mut Vec<String>,
    ) -> Result<Self> {
        let layer = read_layer(selector, relative_to)?;
        if seen.contains(&layer.origin) {
            return Err(Error::blueprint(format!(
                "{}: `extends` makes a cycle ({} → {})",
                layer.origin,
                seen.join(" → "),
                layer.origin
            )));
        }
        seen.push(layer.origin.clone());
        let base = match &layer.manifest.extends {
            Some(parent) => Some(Self::load_chain(parent, layer.dir.as_deref(), seen)?),
            None => None,
        };
        let extends_version_at = || Places::of(layer.text()).at(&["extends_version"]);
        let mut found = Vec::new();
        if let (Some(range), Some(base)) = (&layer.manifest.extends_version, &base) {
            match crate::version::matches(range, &base.manifest.version) {
                Ok(true) => {}
                Ok(false) => found.push(Located::new(
                    layer.manifest_file(),
                    extends_version_at(),
                    format!(
                        "extends_version `{range}`: the base is {} {}; use a scaffold that ships a matching {}, or widen the range",
                        base.manifest.name, base.manifest.version, base.manifest.name
                    ),
                )),
                Err(e) => found.push(Located::new(
                    layer.manifest_file(),
                    extends_version_at(),
                    e.to_string(),
                )),
            }
        }
        Self::resolve(layer, base, found)
    }

    /// `found`: what is already known wrong with the layer; the manifest's independent
    /// entries are each checked, and every one wrong is reported together. A pipeline of
    /// named passes (`resolve.rs`): the layer's versions, the base it extends, its
    /// removals, its files laid over the base's, its executables and `replaces`, then the
    /// merged manifest and what only the whole chain can check.
    fn resolve(layer: Layer, base: Option<Blueprint>, mut found: Vec<Located>) -> Result<Self> {
        let places = resolve::ManifestPlaces::of(&layer);
        let manifest_source = places.text.clone().into_bytes();
        let Layer {
            manifest,
            tree,
            executable: executable_on_disk,
            origin,
            digest: known_digest,
            content,
            ..
        } = layer;
        resolve::check_versions(&manifest, &places, &mut found);
        let label = format!("{} {} ({origin})", manifest.name, manifest.version);
        let base_id = base.as_ref().map(Blueprint::id);
        let digest = known_digest.map_or_else(|| layer_digest(&tree), String::from);
        let content_digest = content_digest(content.as_deref(), &origin, &digest, base.as_ref());
        // Addons this chain removed: other entries may still name them (`values_when`,
        // feature needs), which then never apply.
        let mut removed_addons: BTreeSet<String> = base
            .as_ref()
            .map(|b| b.catalog.removed().clone())
            .unwrap_or_default();
        removed_addons.extend(manifest.remove_addons.iter().cloned());
        let (mut merged, base_manifest) = merged_base(base);
        let laying = resolve::Laying {
            manifest: &manifest,
            label: &label,
            origin: &origin,
            places: &places,
            tree_prefixes: resolve::tree_prefixes(base_manifest.as_ref(), &manifest),
        };
        merged.remove_files(&laying, &mut found);
        merged.remove_addons(&laying, &mut found);
        let tests = merged.lay_over(tree, &executable_on_disk, &laying, &mut found);
        merged.mark_executable(&laying, &mut found);
        if let Err((key, message)) =
            overrides::check_replaces(&manifest.replaces, &merged.overrides, &label, &merged.tree)
        {
            found.push(places.at("replaces", &key, message));
        }
        if !found.is_empty() {
            return Err(Error::located_all(found));
        }
        let mut manifest = match base_manifest {
            Some(base) => merge_manifests(base, manifest)
                .map_err(|e| Error::Located(places.at(e.section, &e.key, e.message)))?,
            None => manifest,
        };
        resolve::check_migrations(&mut manifest, &places)?;
        // An embedded layer cannot change after the build: its templates' scopes are
        // checked by a test (`embedded_manifests_read_only_their_scope`), not on every run.
        if !origin.starts_with(source::EMBEDDED_ORIGIN) {
            let findings = crate::scope::manifest_findings(&manifest, &places.text, &places.file);
            if !findings.is_empty() {
                return Err(Error::located_all(findings));
            }
        }
        let trees = render_trees(&manifest, &mut merged.tree)
            .map_err(|(dir, message)| Error::Located(places.at("trees", &dir, message)))?;
        check_environments(&manifest)
            .map_err(|message| Error::Located(places.at_key("environments_answer", message)))?;
        let partials = take_subtree(&mut merged.tree, "partials/");
        let catalog = Catalog::from_tree(
            &origin,
            &take_subtree(&mut merged.tree, "addons/"),
            removed_addons,
        )?;
        Ok(Blueprint {
            manifest,
            trees,
            partials,
            catalog,
            origins: merged.origins,
            origin,
            tests,
            executable: merged.executable,
            patches: merged.patches,
            overrides: merged.overrides,
            base: base_id,
            manifest_source,
            digest,
            removed: merged.removed,
            content_digest,
        })
    }

    /// How the record names it: name, version, content digest, source and its bases.
    pub fn id(&self) -> BlueprintId {
        BlueprintId {
            name: self.manifest.name.clone(),
            version: self.manifest.version.clone(),
            base: self.base.clone().map(Box::new),
            digest: Some(self.digest.clone()),
            source: Some(self.origin.clone()),
        }
    }

    /// The files of one blueprint's own layer as stored (`extends` not resolved), and
    /// those executable on disk.
    pub fn layer_files(selector: &str) -> Result<(FileTree, BTreeSet<String>)> {
        let layer = read_layer(selector, None)?;
        Ok((layer.tree, layer.executable))
    }

    /// The trees that hold templates (the rendered ones, then `partials/`), with the prefix
    /// of their blueprint-relative paths.
    pub fn template_trees(&self) -> Vec<(&str, &FileTree)> {
        self.trees
            .iter()
            .map(|t| (t.prefix.as_str(), &t.files))
            .chain(std::iter::once(("partials/", &self.partials)))
            .collect()
    }

    /// Whether the template at a blueprint-relative path renders once per addon (or is a
    /// partial, which such templates include), so it may read `addon`.
    pub fn reads_addon(&self, path: &str) -> bool {
        path.starts_with("partials/")
            || self
                .trees
                .iter()
                .any(|t| t.scope.per_addon() && path.starts_with(&t.prefix))
    }

    /// Whether a blueprint-relative path lies in one of its rendered trees.
    pub fn is_rendered_path(&self, path: &str) -> bool {
        self.trees.iter().any(|t| path.starts_with(&t.prefix))
    }

    /// One file as stored, by blueprint-relative path (`files/...`, `addons/x.yaml`, a patch).
    pub fn file(&self, path: &str) -> Option<Vec<u8>> {
        if path == "blueprint.yaml" {
            return Some(self.manifest_source.clone());
        }
        if let Some(test) = path.strip_prefix("tests/") {
            return self.tests.get(test).cloned();
        }
        if let Some(name) = path
            .strip_prefix("addons/")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            return self
                .catalog
                .entries()
                .find(|e| e.spec.name == name)
                .map(|e| e.source().to_vec());
        }
        if let Some((_, bytes)) = self.patches.values().flatten().find(|(p, _)| p == path) {
            return Some(bytes.clone());
        }
        self.template_trees()
            .iter()
            .find_map(|(prefix, tree)| path.strip_prefix(prefix).and_then(|p| tree.get(p)))
            .cloned()
    }

    /// The keys of its questions, in order.
    pub fn question_keys(&self) -> Vec<&str> {
        self.manifest
            .questions
            .iter()
            .map(|q| q.key.as_str())
            .collect()
    }

    /// The answers templates may read: its questions' keys, and `environment` (each
    /// environment's name) in a blueprint with environments.
    pub fn answer_names(&self) -> Vec<&str> {
        let mut keys = self.question_keys();
        if self.manifest.environments_answer.is_some()
            && !keys.contains(&crate::manifest::ENVIRONMENT)
        {
            keys.push(crate::manifest::ENVIRONMENT);
        }
        keys
    }

    /// The delimiters of one template (blueprint-relative path).
    pub fn delimiters_for(&self, path: &str) -> Delimiters {
        for rule in &self.manifest.delimiters_by_glob {
            if globset::Glob::new(&rule.glob).is_ok_and(|g| g.compile_matcher().is_match(path)) {
                return rule.delimiters.clone();
            }
        }
        self.manifest.delimiters.clone().unwrap_or_default()
    }
}

/// `environments_answer` names a list question answered once (not per environment), and
/// `per_environment` questions need it.
fn check_environments(manifest: &Manifest) -> std::result::Result<(), String> {
    let Some(key) = &manifest.environments_answer else {
        return match manifest.questions.iter().find(|q| q.per_environment) {
            Some(q) => Err(format!(
                "question `{}` is per_environment, but the blueprint names no environments_answer (the list question of its environments)",
                q.key
            )),
            None => Ok(()),
        };
    };
    match manifest.questions.iter().find(|q| &q.key == key) {
        Some(q) if q.kind == QuestionType::List && !q.per_environment => Ok(()),
        Some(_) => Err(format!(
            "environments_answer: `{key}` must be a list question answered once (type: list, not per_environment)"
        )),
        None => Err(format!(
            "environments_answer: `{key}` is not a question of the blueprint{}",
            crate::suggest::did_you_mean(key, manifest.questions.iter().map(|q| q.key.as_str()))
        )),
    }
}

/// The rendered trees `manifest` declares, cut out of the merged files (moved, not
/// copied); a tree may not be a reserved directory nor nest in another (`(dir, message)`
/// on error, with nothing moved).
fn render_trees(
    manifest: &Manifest,
    merged: &mut FileTree,
) -> std::result::Result<Vec<Tree>, (String, String)> {
    let specs = manifest.tree_specs();
    for (n, spec) in specs.iter().enumerate() {
        let prefix = spec.prefix();
        if prefix == "/" || prefix.starts_with('/') || prefix.split('/').any(|c| c == "..") {
            return Err((
                spec.dir.clone(),
                format!("trees: `{}` is not a directory of the blueprint", spec.dir),
            ));
        }
        if crate::manifest::RESERVED_DIRS
            .iter()
            .any(|r| prefix == format!("{r}/"))
        {
            return Err((
                spec.dir.clone(),
                format!(
                    "trees: `{}` holds the blueprint's {}, it cannot be rendered as a tree",
                    spec.dir,
                    prefix.trim_end_matches('/')
                ),
            ));
        }
        if let Some(other) = specs[..n].iter().find(|o| {
            let other = o.prefix();
            other.starts_with(&prefix) || prefix.starts_with(&other)
        }) {
            return Err((
                spec.dir.clone(),
                format!(
                    "trees: `{}` overlaps `{}`: trees may not repeat or nest",
                    spec.dir, other.dir
                ),
            ));
        }
    }
    Ok(specs
        .into_iter()
        .map(|spec| {
            let prefix = spec.prefix();
            Tree {
                files: take_subtree(merged, &prefix),
                prefix,
                scope: spec.scope,
            }
        })
        .collect())
}

/// The files under `prefix`, moved out of `tree`, keyed relative to it. They sort
/// together, from `prefix` on.
fn take_subtree(tree: &mut FileTree, prefix: &str) -> FileTree {
    let mut after = tree.split_off(prefix);
    let mut taken = FileTree::new();
    while let Some(entry) = after.first_entry() {
        if !entry.key().starts_with(prefix) {
            break;
        }
        let (path, bytes) = entry.remove_entry();
        taken.insert(path[prefix.len()..].to_string(), bytes);
    }
    tree.append(&mut after);
    taken
}

/// The base's files and records (nothing for a blueprint that extends none), and its
/// manifest to merge this layer's into.
fn merged_base(base: Option<Blueprint>) -> (resolve::Merged, Option<Manifest>) {
    let Some(base) = base else {
        return (resolve::Merged::default(), None);
    };
    let mut tree = FileTree::new();
    for (prefix, t) in base.template_trees() {
        for (path, bytes) in t {
            tree.insert(format!("{prefix}{path}"), bytes.clone());
        }
    }
    for entry in base.catalog.entries() {
        tree.insert(
            format!("addons/{}.yaml", entry.spec.name),
            entry.source().to_vec(),
        );
    }
    let merged = resolve::Merged {
        tree,
        origins: base.origins,
        executable: base.executable,
        patches: base.patches,
        overrides: base.overrides,
        removed: base.removed,
    };
    (merged, Some(base.manifest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loading an embedded blueprint skips the scope check of its manifest's templates
    /// (`resolve`): each must have nothing to find.
    #[test]
    fn embedded_manifests_read_only_their_scope() {
        let names = embedded_names();
        assert!(!names.is_empty());
        for name in names {
            let blueprint = Blueprint::load(&name).expect("an embedded blueprint loads");
            let text = source::embedded_files(&name)
                .and_then(|tree| tree.get("blueprint.yaml").cloned())
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .expect("its manifest");
            let found = crate::scope::manifest_findings(&blueprint.manifest, &text, &name);
            assert!(found.is_empty(), "{name}: {found:?}");
        }
    }

    /// The embedded default's `version` names its content: `extends_version` and the record
    /// trust it. Changing a file of blueprints/default without bumping the version fails
    /// here, with the steps to follow.
    #[test]
    fn default_blueprint_version_follows_its_content() {
        let pin_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../blueprints/default/VERSION-DIGEST"
        );
        let default = Blueprint::load("default").expect("default loads");
        let (version, digest) = (&default.manifest.version, &default.digest);
        let repin = "SCAFFOLD_REPIN_DEFAULT=1 cargo test --lib default_blueprint_version_follows_its_content";
        let pinned = std::fs::read_to_string(pin_path).unwrap_or_default();
        let mut words = pinned.split_whitespace();
        let (pinned_version, pinned_digest) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        if pinned_digest == digest && pinned_version == version {
            return;
        }
        if pinned_version != version
            && crate::process_env::snapshot()
                .var_os("SCAFFOLD_REPIN_DEFAULT")
                .is_some()
        {
            std::fs::write(pin_path, format!("{version} {digest}\n")).expect("write the pin");
            return;
        }
        if pinned_version == version {
            panic!(
                "blueprints/default changed (content digest {digest}, pinned {pinned_digest}) but its version is still {version}: \
                 1. bump `version:` in blueprints/default/blueprint.yaml (a patch or minor version, e.g. {} → {}.{}.{}), \
                 2. add a CHANGELOG line, 3. run `{repin}` to re-pin blueprints/default/VERSION-DIGEST, 4. update the tests that name the old version (`grep -rn '{version}' tests src/report.rs`), 5. commit",
                version,
                crate::version::tuple(version).0,
                crate::version::tuple(version).1 + 1,
                0
            );
        }
        panic!(
            "blueprints/default is version {version} (content digest {digest}) but blueprints/default/VERSION-DIGEST pins {pinned_version} {pinned_digest}: run `{repin}` and commit blueprints/default/VERSION-DIGEST"
        );
    }
}

#[cfg(test)]
mod tree_tests {
    use super::*;

    /// A blueprint on disk with `manifest_tail` appended to its manifest and `files`.
    fn blueprint_dir(manifest_tail: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let manifest = format!(
            "name: shaped\nversion: 0.1.0\nquestions:\n  - key: name\n    prompt: name\n    type: string\n    default: acme\n{manifest_tail}"
        );
        let all: Vec<(&str, &str)> = [("blueprint.yaml", manifest.as_str())]
            .into_iter()
            .chain(files.iter().copied())
            .collect();
        crate::tree::temp_dir_with(&all)
    }

    fn load(dir: &tempfile::TempDir) -> Result<Blueprint> {
        Blueprint::load(&dir.path().display().to_string())
    }

    /// The content digest that keys `new`'s cached lint verdict: the same files give the
    /// same digest; any byte, an answer set, an executable bit or the base changes it.
    #[test]
    fn the_content_digest_covers_every_file_mode_and_base() {
        let files = [("files/a.txt.tera", "a"), ("tests/defaults.yaml", "{}\n")];
        let digest_of = |dir: &tempfile::TempDir| load(dir).expect("loads").content_digest;
        let first = blueprint_dir("", &files);
        let same = blueprint_dir("", &files);
        assert_eq!(digest_of(&first), digest_of(&same));
        let byte = blueprint_dir("", &[("files/a.txt.tera", "b"), files[1]]);
        assert_ne!(digest_of(&first), digest_of(&byte));
        let answer_set = blueprint_dir("", &[files[0], ("tests/defaults.yaml", "{ }\n")]);
        assert_ne!(digest_of(&first), digest_of(&answer_set));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = same.path().join("files/a.txt.tera");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
            assert_ne!(digest_of(&first), digest_of(&same));
        }
        let layered = |base: &tempfile::TempDir| {
            let manifest = format!(
                "name: layer\nversion: 0.1.0\nextends: {}\n",
                base.path().display()
            );
            crate::tree::temp_dir_with(&[("blueprint.yaml", manifest.as_str())])
        };
        let (on_first, on_same, on_byte) = (layered(&first), layered(&first), layered(&byte));
        assert_eq!(digest_of(&on_first), digest_of(&on_same));
        assert_ne!(digest_of(&on_first), digest_of(&on_byte));
    }

    /// The digest taken while a directory is read is the one of the files read, in path
    /// order (`a.b` before `a/b`, where the walk goes the other way), answer sets and the
    /// version pin left out.
    #[test]
    fn a_directory_layer_is_hashed_as_it_is_read() {
        let dir = blueprint_dir(
            "",
            &[
                ("files/a.b", "ab"),
                ("files/a/b", "nested"),
                ("tests/defaults.yaml", "{}"),
                (VERSION_PIN, "x"),
            ],
        );
        let layer = read_layer(&dir.path().display().to_string(), None).expect("reads");
        let expected = layer_digest(&layer.tree);
        assert_eq!(layer.digest.as_deref(), Some(expected.as_str()));
        let mut without_pin = layer.tree.clone();
        without_pin.remove(VERSION_PIN);
        without_pin.remove("tests/defaults.yaml");
        assert_eq!(layer_digest(&without_pin), expected);
    }

    #[test]
    fn without_trees_files_render_per_repo_and_addon_files_per_addon() {
        let dir = blueprint_dir("", &[("files/a", "a"), ("addon-files/b", "b")]);
        let blueprint = load(&dir).expect("loads");
        let shape: Vec<(&str, TreeScope, usize)> = blueprint
            .trees
            .iter()
            .map(|t| (t.prefix.as_str(), t.scope, t.files.len()))
            .collect();
        assert_eq!(
            shape,
            [
                ("files/", TreeScope::Repo, 1),
                ("addon-files/", TreeScope::Addon, 1)
            ]
        );
        assert!(blueprint.reads_addon("addon-files/b"));
        assert!(!blueprint.reads_addon("files/a"));
    }

    #[test]
    fn declared_trees_render_and_undeclared_directories_do_not() {
        let dir = blueprint_dir(
            "trees:\n  - {dir: platform, scope: repo}\n  - {dir: envs/, scope: environment}\n",
            &[
                ("platform/p.txt.tera", "p [[ name ]]\n"),
                ("envs/e.txt", "e\n"),
                ("files/ignored.txt", "never\n"),
            ],
        );
        let blueprint = load(&dir).expect("loads");
        let renderer = crate::generate::renderer_for(&blueprint).expect("compiles");
        let plan = crate::plan::build(
            &blueprint,
            &renderer,
            &crate::render::Scope::new(&serde_json::json!({"name": "acme"})),
            &[],
        )
        .expect("renders");
        let written: Vec<(String, String)> = plan
            .files
            .iter()
            .map(|(p, b)| (p.as_str().to_string(), String::from_utf8_lossy(b).into()))
            .collect();
        assert_eq!(
            written,
            [
                ("e.txt".to_string(), "e\n".to_string()),
                ("p.txt".to_string(), "p acme\n".to_string())
            ]
        );
        assert_eq!(blueprint.file("envs/e.txt"), Some(b"e\n".to_vec()));
    }

    #[test]
    fn a_tree_may_not_be_reserved_nor_nest_in_another() {
        for (trees, says) in [
            (
                "[{dir: partials, scope: repo}]",
                "holds the blueprint's partials",
            ),
            (
                "[{dir: files, scope: repo}, {dir: files/sub, scope: addon}]",
                "overlaps `files`",
            ),
            (
                "[{dir: ../up, scope: repo}]",
                "not a directory of the blueprint",
            ),
        ] {
            let dir = blueprint_dir(&format!("trees: {trees}\n"), &[("files/a", "a")]);
            let err = load(&dir).expect_err(trees).to_string();
            assert!(err.contains(says), "{trees}: {err}");
            assert!(err.contains("blueprint.yaml"), "located: {err}");
        }
    }

    #[test]
    fn a_child_adds_a_tree_and_rescopes_an_inherited_one() {
        let base = blueprint_dir("", &[("files/a", "a"), ("addon-files/b", "b")]);
        let child = blueprint_dir(
            &format!(
                "extends: {}\ntrees:\n  - {{dir: files, scope: environment}}\n  - {{dir: extra, scope: addon-environment}}\n",
                base.path().display()
            ),
            &[("extra/c", "c")],
        );
        let blueprint = load(&child).expect("loads");
        let shape: Vec<(&str, TreeScope)> = blueprint
            .trees
            .iter()
            .map(|t| (t.prefix.as_str(), t.scope))
            .collect();
        assert_eq!(
            shape,
            [
                ("files/", TreeScope::Environment),
                ("addon-files/", TreeScope::Addon),
                ("extra/", TreeScope::AddonEnvironment)
            ]
        );
        assert!(blueprint.reads_addon("extra/c"));
    }

    #[test]
    fn environments_answer_names_a_shared_list_question() {
        // Question items first: they continue the `questions:` list of blueprint_dir.
        let list = "  - key: envs\n    prompt: e\n    type: list\n    default: prod\n";
        let region =
            "  - key: region\n    prompt: r\n    type: string\n    per_environment: true\n";
        for (tail, says) in [
            (
                format!("{list}environments_answer: envz\n"),
                "`envz` is not a question of the blueprint",
            ),
            (
                "environments_answer: name\n".to_string(),
                "`name` must be a list question",
            ),
            (
                region.to_string(),
                "question `region` is per_environment, but the blueprint names no environments_answer",
            ),
        ] {
            let dir = blueprint_dir(&tail, &[("files/a", "a")]);
            let err = load(&dir).expect_err(&tail).to_string();
            assert!(err.contains(says), "{tail}: {err}");
        }
        let ok = blueprint_dir(&format!("{list}{region}environments_answer: envs\n"), &[]);
        load(&ok).expect("a list answer names the environments");
    }
}

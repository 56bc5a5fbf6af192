//! Where blueprints come from: the embedded ones, the search path, directories; each read
//! into a `Layer` (its own manifest and files, `extends` not yet resolved). IO.
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use include_dir::{Dir, include_dir};

use super::digest::{in_layer_digest, layer_digest_of};
use super::read_tree::ReadFile;
use crate::error::{Error, Located, Problem, Result};
use crate::manifest::Manifest;
use crate::tree::FileTree;

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../blueprints");

/// A blueprint's own files before `extends` is resolved.
pub(super) struct Layer {
    pub(super) manifest: Manifest,
    pub(super) tree: FileTree,
    /// Files executable on disk.
    pub(super) executable: BTreeSet<String>,
    pub(super) origin: String,
    pub(super) dir: Option<PathBuf>,
    /// The layer digest when it is known without hashing the files again: an embedded
    /// layer's (made at build time), a directory's (each file hashed as it was read).
    pub(super) digest: Option<Cow<'static, str>>,
    /// A directory layer's full content digest: every file (answer sets and the version
    /// pin included) by path, whole blob id and executable bit. None for an embedded
    /// layer, whose content is scaffold's own version.
    pub(super) content: Option<String>,
}

/// How an embedded blueprint's origin starts (`embedded:NAME`).
pub const EMBEDDED_ORIGIN: &str = "embedded:";

/// Directories searched for blueprints by name: `$SCAFFOLD_BLUEPRINT_PATH` (`:`-separated),
/// then `$XDG_CONFIG_HOME/scaffold/blueprints` (or `~/.config/scaffold/blueprints`).
pub fn search_path() -> Vec<PathBuf> {
    let env = crate::process_env::snapshot();
    let mut dirs = env.blueprint_path();
    if let Some(config) = env.xdg_dir("XDG_CONFIG_HOME", ".config") {
        dirs.push(config.join("scaffold").join("blueprints"));
    }
    dirs
}

/// (name, where) of every blueprint found: the search path first, then the embedded ones.
pub fn available() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for dir in search_path() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        names.sort();
        for path in names {
            if path.join("blueprint.yaml").is_file()
                && let Some(name) = path.file_name()
            {
                found.push((
                    name.to_string_lossy().into_owned(),
                    path.display().to_string(),
                ));
            }
        }
    }
    for name in embedded_names() {
        found.push((name.clone(), format!("{EMBEDDED_ORIGIN}{name}")));
    }
    found
}

pub(super) fn read_layer(selector: &str, relative_to: Option<&Path>) -> Result<Layer> {
    let as_path = match relative_to {
        Some(base) if !Path::new(selector).is_absolute() => base.join(selector),
        _ => PathBuf::from(selector),
    };
    let looks_like_path = selector.contains('/') || selector.starts_with('.');
    if looks_like_path || as_path.join("blueprint.yaml").is_file() {
        return read_dir_layer(&as_path);
    }
    for dir in search_path() {
        let candidate = dir.join(selector);
        if candidate.join("blueprint.yaml").is_file() {
            return read_dir_layer(&candidate);
        }
    }
    let dir = EMBEDDED.get_dir(selector).ok_or_else(|| {
        Error::input(format!(
            "unknown blueprint `{selector}`: use one of {} or a path to a directory with a blueprint.yaml",
            available().into_iter().map(|(n, _)| n).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let origin = format!("{EMBEDDED_ORIGIN}{selector}");
    let mut layer = layer_from_tree(embedded_tree(dir), origin, None)?;
    layer.digest = crate::prebuilt::layer_digest(selector).map(Cow::Borrowed);
    Ok(layer)
}

/// The files of the embedded blueprint `name`, as loading reads them.
#[cfg(test)]
pub(super) fn embedded_files(name: &str) -> Option<FileTree> {
    EMBEDDED.get_dir(name).map(embedded_tree)
}

fn embedded_tree(dir: &Dir<'static>) -> FileTree {
    let mut tree = FileTree::new();
    collect_embedded(dir, dir.path(), &mut tree);
    tree
}

fn read_dir_layer(root: &Path) -> Result<Layer> {
    if !root.join("blueprint.yaml").is_file() {
        return Err(Error::input(
            Problem::new(format!(
                "blueprint `{}`: no blueprint.yaml there",
                root.display()
            ))
            .fix("pass an embedded name or a blueprint directory"),
        ));
    }
    let root = root
        .canonicalize()
        .map_err(|e| Error::io_path("resolve", root, e))?;
    let mut tree = FileTree::new();
    let mut executable = BTreeSet::new();
    let mut digests = BTreeMap::new();
    let mut listing = Vec::new();
    for file in super::read_tree::read_tree(&root)? {
        let ReadFile {
            rel,
            bytes,
            executable: is_executable,
            id,
        } = file;
        listing.extend_from_slice(rel.as_bytes());
        listing.push(0);
        listing.extend_from_slice(id.as_bytes());
        listing.extend_from_slice(if is_executable { b" x\n" } else { b" -\n" });
        if is_executable {
            executable.insert(rel.clone());
        }
        if in_layer_digest(&rel) {
            // The layer digest's per-file digest is the blob id's first 12 digits.
            digests.insert(rel.clone(), id[..12].to_string());
        }
        tree.insert(rel, bytes);
    }
    let mut layer = layer_from_tree(tree, root.display().to_string(), Some(root))?;
    layer.executable = executable;
    let in_path_order = digests
        .iter()
        .map(|(path, digest)| (path.as_str(), digest.as_str()));
    layer.digest = Some(Cow::Owned(layer_digest_of(in_path_order)));
    layer.content = Some(crate::tree::blob_id(&listing));
    Ok(layer)
}

fn layer_from_tree(tree: FileTree, origin: String, dir: Option<PathBuf>) -> Result<Layer> {
    let bytes = tree
        .get("blueprint.yaml")
        .ok_or_else(|| Error::blueprint(format!("{origin}: blueprint.yaml is missing")))?;
    let manifest: Manifest = match crate::prebuilt::typed(bytes) {
        Some(manifest) => manifest,
        None => crate::yaml::from_slice(bytes).map_err(|e| {
            Error::Located(Located::new(
                format!("{origin}/blueprint.yaml"),
                e.pair(),
                e.message,
            ))
        })?,
    };
    Ok(Layer {
        manifest,
        tree,
        executable: BTreeSet::new(),
        origin,
        dir,
        digest: None,
        content: None,
    })
}

impl Layer {
    pub(super) fn manifest_file(&self) -> String {
        format!("{}/blueprint.yaml", self.origin)
    }

    pub(super) fn text(&self) -> &str {
        self.tree
            .get("blueprint.yaml")
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }
}

pub fn embedded_names() -> Vec<String> {
    EMBEDDED
        .dirs()
        .map(|d| d.path().display().to_string())
        .collect()
}

fn collect_embedded(dir: &Dir<'static>, root: &Path, tree: &mut FileTree) {
    for file in dir.files() {
        if let Ok(rel) = file.path().strip_prefix(root) {
            tree.insert(slash_path(rel), file.contents().to_vec());
        }
    }
    for sub in dir.dirs() {
        collect_embedded(sub, root, tree);
    }
}

fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

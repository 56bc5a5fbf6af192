//! A blueprint: its manifest (questions, checks), the file trees it renders and its addon
//! catalog, loaded from the binary (embedded) or from a directory. Read-only; no rendering.
use std::collections::BTreeMap;
use std::path::Path;

use include_dir::{Dir, include_dir};
use serde::Deserialize;

use crate::catalog::Catalog;
use crate::error::{Error, Result};

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/blueprints");

/// Files of one tree, keyed by their path relative to the tree's root (`/`-separated).
pub type FileTree = BTreeMap<String, Vec<u8>>;

#[derive(Debug)]
pub struct Blueprint {
    pub manifest: Manifest,
    /// Rendered once per repo.
    pub files: FileTree,
    /// Rendered once per selected addon.
    pub addon_files: FileTree,
    pub catalog: Catalog,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub description: String,
    pub min_scaffold_version: Option<String>,
    #[serde(default)]
    pub questions: Vec<Question>,
    #[serde(default)]
    pub checks: Vec<Check>,
    /// Printed after `scaffold new` (a template over the answers).
    #[serde(default)]
    pub next_steps: Option<String>,
    /// Catalog layer → directory of its addons (a template over the answers).
    #[serde(default)]
    pub layers: BTreeMap<String, String>,
    /// The fields a chart added with `add-addon --chart` starts from.
    #[serde(default)]
    pub custom_addon: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuestionType {
    String,
    Bool,
    Int,
    Choice,
    MultiChoice,
    List,
    Map,
    Cidr,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub key: String,
    pub prompt: String,
    #[serde(default)]
    pub help: Option<String>,
    #[serde(rename = "type")]
    pub kind: QuestionType,
    #[serde(default)]
    pub default: Option<serde_yaml::Value>,
    /// Tera expression; the question is asked only when it is true.
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default)]
    pub secret: bool,
    #[serde(default)]
    pub allow_empty: bool,
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub max_length: Option<usize>,
    #[serde(default)]
    pub choices: Option<Vec<serde_yaml::Value>>,
    /// `catalog`: the choices are the blueprint's optional addons.
    #[serde(default)]
    pub choices_from: Option<String>,
    #[serde(default)]
    pub min: Option<i64>,
    #[serde(default)]
    pub max: Option<i64>,
    #[serde(default)]
    pub item_type: Option<QuestionType>,
    #[serde(default)]
    pub item_regex: Option<String>,
    #[serde(default)]
    pub item_error: Option<String>,
    #[serde(default)]
    pub min_items: Option<usize>,
    #[serde(default)]
    pub max_items: Option<usize>,
    #[serde(default)]
    pub unique: bool,
    #[serde(default)]
    pub min_prefix: Option<u8>,
    #[serde(default)]
    pub max_prefix: Option<u8>,
    #[serde(default)]
    pub not_overlapping: Vec<String>,
    /// For maps: the keys must be exactly the items of this earlier list answer.
    #[serde(default)]
    pub keys_from: Option<String>,
    #[serde(default)]
    pub value_regex: Option<String>,
    #[serde(default)]
    pub value_error: Option<String>,
}

/// A rule over several answers, checked once all are known.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub key: String,
    pub expr: String,
    pub error: String,
}

impl Blueprint {
    /// `default` (or another embedded name), or a directory holding a blueprint.yaml.
    pub fn load(selector: &str) -> Result<Self> {
        let as_path = Path::new(selector);
        if selector.contains('/') || as_path.join("blueprint.yaml").is_file() {
            return Self::from_dir(as_path);
        }
        let dir = EMBEDDED.get_dir(selector).ok_or_else(|| {
            Error::Input(format!(
                "unknown blueprint `{selector}`: use one of {} or a path to a directory with a blueprint.yaml",
                embedded_names().join(", ")
            ))
        })?;
        let mut tree = FileTree::new();
        collect_embedded(dir, dir.path(), &mut tree);
        Self::from_tree(selector, tree)
    }

    fn from_dir(root: &Path) -> Result<Self> {
        if !root.join("blueprint.yaml").is_file() {
            return Err(Error::Input(format!(
                "--blueprint `{}`: no blueprint.yaml there; pass an embedded name ({}) or a blueprint directory",
                root.display(),
                embedded_names().join(", ")
            )));
        }
        let mut tree = FileTree::new();
        for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
            let entry = entry.map_err(|e| Error::Input(format!("cannot read blueprint: {e}")))?;
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .map_err(|e| Error::Input(e.to_string()))?;
            let bytes =
                std::fs::read(entry.path()).map_err(|e| Error::io_path("read", entry.path(), e))?;
            tree.insert(slash_path(rel), bytes);
        }
        Self::from_tree(&root.display().to_string(), tree)
    }

    fn from_tree(origin: &str, mut tree: FileTree) -> Result<Self> {
        let manifest_bytes = tree
            .remove("blueprint.yaml")
            .ok_or_else(|| Error::Blueprint(format!("{origin}: blueprint.yaml is missing")))?;
        let manifest: Manifest = serde_yaml::from_slice(&manifest_bytes)
            .map_err(|e| Error::Blueprint(format!("{origin}/blueprint.yaml: {e}")))?;
        let files = subtree(&tree, "files/");
        let addon_files = subtree(&tree, "addon-files/");
        let catalog = Catalog::from_tree(origin, &subtree(&tree, "addons/"))?;
        Ok(Blueprint {
            manifest,
            files,
            addon_files,
            catalog,
        })
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

fn subtree(tree: &FileTree, prefix: &str) -> FileTree {
    tree.iter()
        .filter_map(|(path, bytes)| {
            path.strip_prefix(prefix)
                .map(|rel| (rel.to_string(), bytes.clone()))
        })
        .collect()
}

fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

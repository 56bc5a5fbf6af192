//! The repo model `check` judges: every text file, the Kubernetes objects of its YAML files
//! (with file and line), its Terraform modules, Makefiles and kops templates. Read once from
//! disk ([`Repo::read`]) or built from memory ([`Repo::from_files`]); the rules are pure over it.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value as Json;

use super::yaml::{self, Doc, ParseError};
use crate::error::{Error, Result};

/// A Kubernetes object: a YAML document with `apiVersion` and `kind`.
#[derive(Debug, Clone)]
pub struct Object {
    pub file: String,
    /// The file a kustomize build reaches it through (its own file).
    pub built_from: String,
    /// The overlay patch applied to it, if any (file and document): its `value` is the
    /// merged object, its text its own; findings about what the patch sets point there.
    pub overlay: Option<(String, Doc)>,
    pub doc: Doc,
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// `metadata.namespace` as written (kustomize may set it later).
    pub namespace: Option<String>,
}

impl Object {
    pub fn value(&self) -> &Json {
        &self.doc.value
    }
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }
    pub fn spec(&self, path: &str) -> Option<&Json> {
        yaml::at(&self.doc.value, &format!("spec/{path}"))
    }
    /// The file and document that write the value at `keys` (`/`-separated): the overlay's
    /// patch when it sets it, else the object's own.
    pub fn source_of(&self, keys: &str) -> (&str, &Doc) {
        match &self.overlay {
            Some((file, doc)) if yaml::at(&doc.value, keys).is_some() => (file, doc),
            _ => (&self.file, &self.doc),
        }
    }
    pub fn is(&self, group: &str, kind: &str) -> bool {
        self.kind == kind && self.group() == group
    }
}

/// One `.tf` file: its text and, when it parses, its body.
#[derive(Debug, Clone)]
pub struct TfFile {
    pub path: String,
    pub text: String,
    pub body: std::result::Result<hcl::Body, ParseError>,
}

/// A Terraform module: the `.tf` files of one directory.
#[derive(Debug, Clone)]
pub struct TfModule {
    pub dir: String,
    pub files: Vec<TfFile>,
}

impl TfModule {
    /// Top-level blocks of every parsed file, with the file they are in.
    pub fn blocks(&self) -> impl Iterator<Item = (&TfFile, &hcl::Block)> {
        self.files.iter().flat_map(|f| {
            f.body
                .as_ref()
                .ok()
                .into_iter()
                .flat_map(move |b| b.blocks().map(move |block| (f, block)))
        })
    }

    /// Labels of the top-level blocks named `kind` (`variable`, `output`, `module`...).
    pub fn labels(&self, kind: &str) -> Vec<String> {
        self.blocks()
            .filter(|(_, b)| b.identifier() == kind)
            .filter_map(|(_, b)| b.labels().first().map(|l| l.as_str().to_string()))
            .collect()
    }

    /// Names defined in `locals` blocks.
    pub fn locals(&self) -> Vec<String> {
        self.blocks()
            .filter(|(_, b)| b.identifier() == "locals")
            .flat_map(|(_, b)| b.body().attributes().map(|a| a.key().to_string()))
            .collect()
    }

    /// Resources of a type, with their name, file and body.
    pub fn resources<'a>(
        &'a self,
        kind: &'a str,
    ) -> impl Iterator<Item = (&'a TfFile, &'a str, &'a hcl::Body)> + 'a {
        self.blocks().filter_map(move |(f, b)| {
            let labels = b.labels();
            (b.identifier() == "resource" && labels.len() == 2 && labels[0].as_str() == kind)
                .then(|| (f, labels[1].as_str(), b.body()))
        })
    }
}

/// Line (1-based) of the first line of `text` containing `needle`, or 0: for text that is
/// not YAML until a tool renders it (Terraform's HCL, whose parser keeps no places; kops'
/// Go templates). YAML files are located through their nodes (`yaml::Doc`).
pub fn line_in(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map_or(0, |i| i + 1)
}

/// The whole repo, as `check` sees it.
/// Which environment a view of a repo of several is of, among which, and the values only
/// one environment's Terraform inputs hold (`environment.shared-value` finds them in
/// shared files). Set by `environments::views`.
#[derive(Debug, Clone, Default)]
pub struct EnvironmentScope {
    pub own: String,
    pub all: Vec<String>,
    /// A quoted `.tfvars` value → the one environment whose inputs hold it.
    pub values: BTreeMap<String, String>,
}

#[derive(Debug, Default)]
pub struct Repo {
    /// Every file (relative, `/`-separated) with its text; `None` for binary files. The
    /// texts are shared with every environment's view.
    pub files: BTreeMap<String, Option<Arc<str>>>,
    /// YAML files that do not parse, with why.
    pub yaml_errors: Vec<(String, ParseError)>,
    /// JSON files that do not parse, with why.
    pub json_errors: Vec<(String, ParseError)>,
    /// Parsed plain YAML files (Go templates excepted), by path.
    pub yaml: BTreeMap<String, Vec<Doc>>,
    pub objects: Vec<Object>,
    /// Shared (Arc) with every environment's view, as the YAML values are.
    pub terraform: Vec<std::sync::Arc<TfModule>>,
    /// Text files holding merge conflict markers, with the line of each `<<<<<<<`; they are
    /// not parsed (the markers, not the syntax, are what to fix).
    pub conflicts: BTreeMap<String, Vec<usize>>,
    /// Patches of a kustomization that match no object its resources build to (kustomize
    /// fails the build): by kustomization file, the patch file, its line and its target.
    pub unmatched_patches: BTreeMap<String, Vec<(String, usize, String)>>,
    /// What the blueprint's catalog says of each chart (the CRD groups it installs beyond
    /// check's built-in table, its features), given by the caller ([`Repo::with_catalog`])
    /// so a team addon shipping its own CRDs is known; shared by every environment's view.
    pub catalog: std::sync::Arc<crate::facts::CatalogFacts>,
    /// In one environment's view of a repo of several: which it is, and what only each
    /// environment holds (`environments::Scope`).
    pub environment: Option<EnvironmentScope>,
}

impl Repo {
    /// Reads the files of `root` that git would commit (ignored files are left out when
    /// `root` is a git work tree; `.git` always).
    pub fn read(root: &Path) -> Result<Repo> {
        let git = git2::Repository::open(root).ok();
        // Files git tracks count even when a .gitignore pattern matches them.
        let tracked: std::collections::BTreeSet<std::path::PathBuf> = git
            .as_ref()
            .and_then(|g| g.index().ok())
            .map(|index| {
                index
                    .iter()
                    .map(|e| {
                        std::path::PathBuf::from(String::from_utf8_lossy(&e.path).into_owned())
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut files = BTreeMap::new();
        let walker = walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let Ok(rel) = e.path().strip_prefix(root) else {
                    return true;
                };
                if rel.as_os_str().is_empty() {
                    return true;
                }
                if rel == Path::new(".git") {
                    return false;
                }
                git.as_ref()
                    .is_none_or(|g| !g.is_path_ignored(rel).unwrap_or(false))
                    || tracked.iter().any(|t| t.starts_with(rel))
            });
        for entry in walker {
            let entry = entry.map_err(|e| {
                Error::io(
                    format!("cannot read `{}`", root.display()),
                    std::io::Error::other(e.to_string()),
                )
            })?;
            if !entry.file_type().is_file() {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                continue;
            };
            let bytes =
                std::fs::read(entry.path()).map_err(|e| Error::io_path("read", entry.path(), e))?;
            let rel = rel.to_string_lossy().replace('\\', "/");
            files.insert(rel, String::from_utf8(bytes).ok());
        }
        Ok(Repo::from_files(files))
    }

    /// The model of a rendering in memory (`blueprint test`).
    pub fn from_plan(plan: &crate::tree::Plan) -> Repo {
        Repo::of_texts(texts_of(plan), Keep::Everything)
    }

    /// Builds the model from file texts (owned, or shared as a model holds them).
    pub fn from_files<Text: Into<Arc<str>>>(files: BTreeMap<String, Option<Text>>) -> Repo {
        let files = files
            .into_iter()
            .map(|(path, text)| (path, text.map(Into::into)))
            .collect();
        Repo::of_texts(files, Keep::Everything)
    }

    /// The model of file texts, keeping what `keep` says of each parsed file (a text
    /// borrowed from a rendering is copied only when kept).
    pub(crate) fn of_texts<Text: AsRef<str> + Into<Arc<str>>>(
        files: BTreeMap<String, Option<Text>>,
        keep: Keep,
    ) -> Repo {
        let mut repo = Repo::default();
        let mut modules: BTreeMap<String, Vec<TfFile>> = BTreeMap::new();
        for (path, text) in files {
            if let Some(text) = &text {
                repo.read_file(&mut modules, &path, text.as_ref(), keep);
            }
            let text = text.map(|text| keep.text(&path, text));
            repo.files.insert(path, text);
        }
        repo.terraform = modules
            .into_iter()
            .map(|(dir, files)| std::sync::Arc::new(TfModule { dir, files }))
            .collect();
        repo.objects.shrink_to_fit();
        repo
    }

    /// One file's text into the model: its conflict markers, its YAML documents and the
    /// objects they hold, whether its JSON parses, its Terraform body.
    fn read_file(
        &mut self,
        modules: &mut BTreeMap<String, Vec<TfFile>>,
        path: &str,
        text: &str,
        keep: Keep,
    ) {
        let markers = conflict_markers(text);
        if !markers.is_empty() {
            self.conflicts.insert(path.to_string(), markers);
            if path.ends_with(".tf") {
                let markers = Err(ParseError {
                    line: 0,
                    column: 0,
                    message: "merge conflict markers".into(),
                });
                add_tf(modules, path, keep.tf_text(text), markers);
            }
            return;
        }
        if is_yaml(path) && !is_kops_template(text) {
            match yaml::parse(text) {
                Ok(docs) => {
                    let docs = keep.yaml_docs(path, docs);
                    for doc in &docs {
                        if let Some(object) = object_of(path, doc) {
                            self.objects.push(object);
                        }
                    }
                    self.yaml.insert(path.to_string(), docs);
                }
                // A Helm chart's templates are YAML only once Helm renders them.
                Err(_) if text.contains("{{") => {}
                Err(e) => self.yaml_errors.push((path.to_string(), e)),
            }
        } else if path.ends_with(".json") {
            if let Err(e) = serde_json::from_str::<Json>(text) {
                self.json_errors.push((
                    path.to_string(),
                    ParseError {
                        line: e.line(),
                        column: e.column(),
                        message: e.to_string(),
                    },
                ));
            }
        } else if path.ends_with(".tf") {
            let body = hcl::parse(text).map_err(|e| hcl_error(&e));
            add_tf(modules, path, keep.tf_text(text), keep.tf_body(body));
        }
    }

    /// The part of the repo whose files `keep` accepts (an environment's view).
    /// The repo, knowing what its blueprint's catalog says of each chart.
    pub fn with_catalog(mut self, facts: crate::facts::CatalogFacts) -> Repo {
        self.catalog = std::sync::Arc::new(facts);
        self
    }

    pub fn view(&self, keep: impl Fn(&str) -> bool) -> Repo {
        let kept = |pairs: &[(String, ParseError)]| -> Vec<(String, ParseError)> {
            pairs.iter().filter(|(f, _)| keep(f)).cloned().collect()
        };
        Repo {
            files: self
                .files
                .iter()
                .filter(|(p, _)| keep(p))
                .map(|(p, t)| (p.clone(), t.clone()))
                .collect(),
            yaml_errors: kept(&self.yaml_errors),
            json_errors: kept(&self.json_errors),
            yaml: self
                .yaml
                .iter()
                .filter(|(p, _)| keep(p))
                .map(|(p, d)| (p.clone(), d.clone()))
                .collect(),
            objects: self
                .objects
                .iter()
                .filter(|o| keep(&o.file))
                .cloned()
                .collect(),
            terraform: self
                .terraform
                .iter()
                .filter(|m| keep(&format!("{}/", m.dir)))
                .cloned()
                .collect(),
            conflicts: self
                .conflicts
                .iter()
                .filter(|(p, _)| keep(p))
                .map(|(p, l)| (p.clone(), l.clone()))
                .collect(),
            unmatched_patches: BTreeMap::new(),
            catalog: self.catalog.clone(),
            environment: None,
        }
    }

    /// Files that could not be read as what they are (a parse error or conflict markers):
    /// findings that depend on them would be guesses.
    pub fn broken_files(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .yaml_errors
            .iter()
            .chain(&self.json_errors)
            .map(|(f, _)| f.as_str())
            .chain(self.conflicts.keys().map(String::as_str))
            .chain(
                self.terraform
                    .iter()
                    .flat_map(|m| &m.files)
                    .filter(|f| f.body.is_err())
                    .map(|f| f.path.as_str()),
            )
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether this looks like a platform repo: a Flux Kustomization, a Terraform module or
    /// a kops template.
    pub fn is_platform(&self) -> bool {
        !self.terraform.is_empty()
            || self
                .objects
                .iter()
                .any(|o| o.group() == "kustomize.toolkit.fluxcd.io")
            || self.texts().any(|(p, t)| is_yaml(p) && is_kops_template(t))
    }

    pub fn text(&self, path: &str) -> Option<&str> {
        self.files.get(path).and_then(|t| t.as_deref())
    }

    pub fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Whether `dir` holds any file. Paths sort, so the first one from `dir/` on is under
    /// it if any is (a scan of every path was a twentieth of `new`'s lint).
    pub fn is_dir(&self, dir: &str) -> bool {
        use std::ops::Bound;
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let from: (Bound<&str>, Bound<&str>) = (Bound::Included(&prefix), Bound::Unbounded);
        dir.is_empty()
            || dir == "."
            || self
                .files
                .range::<str, _>(from)
                .next()
                .is_some_and(|(f, _)| f.starts_with(&prefix))
    }

    /// Objects of a kind (any group).
    pub fn kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Object> + 'a {
        self.objects.iter().filter(move |o| o.kind == kind)
    }

    /// Text files with their content.
    pub fn texts(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files
            .iter()
            .filter_map(|(p, t)| t.as_deref().map(|t| (p.as_str(), t)))
    }

    /// The Makefiles, with their text.
    pub fn makefiles(&self) -> impl Iterator<Item = (&str, &str)> {
        self.texts()
            .filter(|(p, _)| p.rsplit('/').next() == Some("Makefile"))
    }
}

/// The 1-based lines opening a merge conflict (`<<<<<<< `), when the file also closes one
/// (`>>>>>>> `): what `git merge` and `scaffold update --conflicts=markers` leave.
pub fn conflict_markers(text: &str) -> Vec<usize> {
    if !text.contains("<<<<<<<") {
        return Vec::new();
    }
    let is = |line: &str, mark: &str| {
        line.strip_prefix(mark)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
    };
    let mut opens = Vec::new();
    let mut closed = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if is(line, "<<<<<<<") {
            opens.push(i + 1);
        } else if is(line, ">>>>>>>") {
            closed = true;
        }
    }
    if closed { opens } else { Vec::new() }
}

/// What a model keeps of the files it parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Every document whole and every `.tf` body: what `check`'s rules read.
    Everything,
    /// What `flux.path` reads (`crate::flux_path_findings`) and nothing more: of a
    /// kustomization file's documents and every `Kustomization` object the fields the rule
    /// reads and the nodes that place its findings (`read_by_flux_path`); of any other
    /// object only its identity (apiVersion, kind, name, namespace: what a build and a
    /// patch's target are matched by) and its first line; of a `.tf` file only whether it
    /// parses (a broken file suppresses the rule's findings, `without_guesses`); of a
    /// file's text what [`Keep::text`] says. A model
    /// this small holds no value another rule reads.
    FluxPaths,
}

impl Keep {
    fn yaml_docs(self, path: &str, docs: Vec<Doc>) -> Vec<Doc> {
        if self == Keep::Everything {
            return docs;
        }
        let kustomization_file = is_kustomization_file(path);
        docs.into_iter()
            .filter_map(|doc| {
                if kustomization_file
                    || doc.value.get("kind").and_then(Json::as_str) == Some("Kustomization")
                {
                    Some(read_by_flux_path(&doc))
                } else {
                    identity_of(&doc)
                }
            })
            .collect()
    }

    /// What the model keeps of a file's text once it is parsed: all of it, or for
    /// `flux.path` only what that rule reads, a suppression comment (`suppressed`) or a
    /// `.tfvars` input (`environments::own_values`); of any other file an empty text, so
    /// that the copy of a rendering's texts is not held beside the rendering.
    fn text(self, path: &str, text: impl AsRef<str> + Into<Arc<str>>) -> Arc<str> {
        static EMPTY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
        let read = |text: &str| path.ends_with(".tfvars") || text.contains("scaffold:ignore");
        match self {
            Keep::FluxPaths if !read(text.as_ref()) => EMPTY.clone(),
            _ => text.into(),
        }
    }

    fn tf_text(self, text: &str) -> &str {
        match self {
            Keep::Everything => text,
            Keep::FluxPaths => "",
        }
    }

    fn tf_body(
        self,
        body: std::result::Result<hcl::Body, ParseError>,
    ) -> std::result::Result<hcl::Body, ParseError> {
        match self {
            Keep::Everything => body,
            Keep::FluxPaths => body.map(|_| hcl::Body::default()),
        }
    }
}

/// What identifies an object: what a build and a patch's target are matched by.
const IDENTITY: &[&str] = &["apiVersion", "kind", "metadata/name", "metadata/namespace"];

/// What `flux.path` reads of a kustomization or a Flux Kustomization, besides its identity:
/// the kustomization's entries, patches, generators and namespace (`kustomize::build`), the
/// Flux Kustomization's path, source, dependencies and target namespace (`Context`).
const READ_BY_FLUX_PATH: &[&str] = &[
    "namespace",
    "resources",
    "components",
    "bases",
    "crds",
    "patchesStrategicMerge",
    "patches",
    "patchesJson6902",
    "configMapGenerator",
    "secretGenerator",
    "spec/path",
    "spec/sourceRef",
    "spec/dependsOn",
    "spec/targetNamespace",
];

/// An object's identity with its first line; nothing of a document that is no object.
fn identity_of(doc: &Doc) -> Option<Doc> {
    let value = doc.value.as_ref();
    let is_string = |key: &str| value.get(key).is_some_and(Json::is_string);
    if !is_string("apiVersion") || !is_string("kind") {
        return None;
    }
    Some(Doc {
        line: doc.line,
        node: Arc::new(empty_node(doc.line)),
        value: Arc::new(project(value, IDENTITY)),
    })
}

/// A kustomization's or a Flux Kustomization's document as far as `flux.path` reads it: the
/// fields it reads, and of the node tree the places the rule asks for (`line_of_scalar` of
/// each of their strings, `line_of_key("path")`), each the whole document's ([`places_of`]).
fn read_by_flux_path(doc: &Doc) -> Doc {
    let fields: Vec<&str> = IDENTITY.iter().chain(READ_BY_FLUX_PATH).copied().collect();
    let value = project(&doc.value, &fields);
    let mut texts = std::collections::BTreeSet::new();
    strings_of(&value, &mut texts);
    let node = places_of(&doc.node, &texts).unwrap_or_else(|| empty_node(doc.line));
    Doc {
        line: doc.line,
        node: Arc::new(node),
        value: Arc::new(value),
    }
}

fn empty_node(line: usize) -> scaffold_support::yaml::Node {
    scaffold_support::yaml::Node {
        pos: scaffold_support::yaml::Pos { line, column: 1 },
        kind: scaffold_support::yaml::Kind::Map(Vec::new()),
    }
}

/// The parts of `value` at these `/`-separated key paths (a value that is no mapping where
/// a path goes on is kept whole, so a merge patch merges the projection as the whole).
fn project(value: &Json, paths: &[&str]) -> Json {
    let Json::Object(map) = value else {
        return value.clone();
    };
    let mut kept = Vec::new();
    for (key, child) in map {
        let below: Vec<&str> = paths
            .iter()
            .filter_map(|p| match p.split_once('/') {
                Some((head, rest)) if head == key => Some(rest),
                _ => None,
            })
            .collect();
        if paths.contains(&key.as_str()) {
            kept.push((key.clone(), child.clone()));
        } else if !below.is_empty() {
            kept.push((key.clone(), project(child, &below)));
        }
    }
    // Sized once: a map grown one key at a time holds up to twice the room (most of a
    // kept document's memory is these small maps).
    let mut out = serde_json::Map::with_capacity(kept.len());
    out.extend(kept);
    Json::Object(out)
}

/// Every string in `value`, and the path part of a generator's `key=path`.
fn strings_of<'a>(value: &'a Json, out: &mut std::collections::BTreeSet<&'a str>) {
    match value {
        Json::String(text) => {
            out.insert(text);
            if let Some((_, path)) = text.split_once('=') {
                out.insert(path);
            }
        }
        Json::Array(items) => items.iter().for_each(|i| strings_of(i, out)),
        Json::Object(map) => map.values().for_each(|v| strings_of(v, out)),
        _ => {}
    }
}

/// The places `flux.path` asks a kept document for, as a flat list in document order (a
/// table of lines keyed by text, in the node type the model's documents hold): the first
/// scalar reading each of `texts` (what `line_of_scalar` finds) and the first key `path`
/// (what `line_of_key("path")` finds), each as the whole tree's depth-first search meets
/// them. A pruned tree kept every such scalar with the maps and lists above it: three
/// times the memory for the same answers.
fn places_of(
    node: &scaffold_support::yaml::Node,
    texts: &std::collections::BTreeSet<&str>,
) -> Option<scaffold_support::yaml::Node> {
    use scaffold_support::yaml::{Kind, Node};
    let mut places = Places {
        texts,
        found: std::collections::BTreeSet::new(),
        path_key: false,
        out: Vec::new(),
    };
    places.visit(node, false);
    places.out.shrink_to_fit();
    let first = places.out.first()?.pos;
    Some(Node {
        pos: first,
        kind: Kind::Seq(places.out),
    })
}

/// The walk [`places_of`] makes: `find`'s order (a node, then each key's subtree before its
/// value's), and `find_key`'s, which meets a map's keys but not what a key holds.
struct Places<'a> {
    texts: &'a std::collections::BTreeSet<&'a str>,
    found: std::collections::BTreeSet<&'a str>,
    path_key: bool,
    out: Vec<scaffold_support::yaml::Node>,
}

impl<'a> Places<'a> {
    fn visit(&mut self, node: &'a scaffold_support::yaml::Node, in_key: bool) {
        use scaffold_support::yaml::Kind;
        match &node.kind {
            Kind::Scalar(_) => self.scalar(node),
            Kind::Seq(items) => items.iter().for_each(|i| self.visit(i, in_key)),
            Kind::Map(entries) => {
                for (key, value) in entries {
                    if !in_key && !self.path_key && key.text() == Some("path") {
                        self.key_path(key);
                    } else {
                        self.visit(key, true);
                    }
                    self.visit(value, in_key);
                }
            }
        }
    }

    /// A scalar: kept when it is the first to read one of the texts.
    fn scalar(&mut self, node: &'a scaffold_support::yaml::Node) {
        if let Some(text) = node.text().filter(|t| self.texts.contains(t))
            && self.found.insert(text)
        {
            self.out.push(node.clone());
        }
    }

    /// The first key `path`: a one-entry map, so that `find_key` meets it as a key (and
    /// `find_scalar("path")` as the scalar it also is).
    fn key_path(&mut self, key: &'a scaffold_support::yaml::Node) {
        use scaffold_support::yaml::{Kind, Node};
        self.path_key = true;
        if let Some(text) = key.text() {
            self.found.insert(text);
        }
        let nothing = Node {
            pos: key.pos,
            kind: Kind::Map(Vec::new()),
        };
        self.out.push(Node {
            pos: key.pos,
            kind: Kind::Map(vec![(key.clone(), nothing)]),
        });
    }
}

/// Every file of a rendering with its text, borrowed (`None` when it is not UTF-8).
pub(crate) fn texts_of(plan: &crate::tree::Plan) -> BTreeMap<String, Option<&str>> {
    plan.files
        .iter()
        .map(|(path, bytes)| (path.as_str().to_string(), std::str::from_utf8(bytes).ok()))
        .collect()
}

pub(crate) const KUSTOMIZATION_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether `path` names a kustomization file (what kustomize reads in a directory).
pub fn is_kustomization_file(path: &str) -> bool {
    KUSTOMIZATION_NAMES.contains(&path.rsplit('/').next().unwrap_or(path))
}

/// A `.tf` file into its module (its directory), parsed or not.
fn add_tf(
    modules: &mut BTreeMap<String, Vec<TfFile>>,
    path: &str,
    text: &str,
    body: std::result::Result<hcl::Body, ParseError>,
) {
    modules
        .entry(parent(path).to_string())
        .or_default()
        .push(TfFile {
            path: path.to_string(),
            text: text.to_string(),
            body,
        });
}

fn hcl_error(e: &hcl::Error) -> ParseError {
    match e {
        hcl::Error::Parse(p) => ParseError {
            line: p.location().line(),
            column: p.location().column(),
            message: p.message().to_string(),
        },
        other => ParseError {
            line: 0,
            column: 0,
            message: other.to_string(),
        },
    }
}

pub fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

/// A kops cluster template: Go template actions in a file about `kops.k8s.io` objects.
pub fn is_kops_template(text: &str) -> bool {
    text.contains("kops.k8s.io/")
        && text
            .lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("{{"))
}

/// The directory part of a relative path (`""` at the top).
pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `base` joined with a relative `rel` (`..` and `.` resolved); None if it leaves the repo.
pub fn join(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        base.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn object_of(path: &str, doc: &Doc) -> Option<Object> {
    let api_version = doc.value.get("apiVersion")?.as_str()?.to_string();
    let kind = doc.value.get("kind")?.as_str()?.to_string();
    Some(Object {
        file: path.to_string(),
        built_from: path.to_string(),
        overlay: None,
        doc: doc.clone(),
        api_version,
        kind,
        name: yaml::str_at(&doc.value, "metadata/name")
            .unwrap_or_default()
            .to_string(),
        namespace: yaml::str_at(&doc.value, "metadata/namespace").map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every scalar's text in a node tree, keys included.
    fn every_text(node: &scaffold_support::yaml::Node) -> std::collections::BTreeSet<&str> {
        node.scalars()
            .into_iter()
            .filter_map(|n| n.text())
            .collect()
    }

    #[test]
    fn a_directory_is_one_some_path_is_under() {
        let files = ["a-b/x.yaml", "a/b.yaml", "ab/c/d.yaml", "z.yaml"]
            .map(|p| (p.to_string(), Some(String::new())));
        let repo = Repo::from_files(BTreeMap::from(files));
        for dir in ["", ".", "a", "a/", "ab", "ab/c", "a-b"] {
            assert!(repo.is_dir(dir), "{dir}");
        }
        for dir in ["a/b", "a/b.yaml", "ab/c/d", "a-", "b", "z", "zz"] {
            assert!(!repo.is_dir(dir), "{dir}");
        }
    }

    #[test]
    fn a_kept_documents_places_are_the_whole_trees() {
        let texts = [
            // A value reading `path` before the key, a `path` key in an annotation first,
            // the same text twice, an entry in a list of maps.
            "kind: Kustomization\nmetadata:\n  name: path\n  annotations:\n    path: x\nspec:\n  path: ./x\n  sourceRef:\n    name: x\n",
            "resources:\n  - a.yaml\n  - b.yaml\n  - a.yaml\npatches:\n  - path: p.yaml\n    target:\n      name: a.yaml\nconfigMapGenerator:\n  - files:\n      - k=path\n",
            "- x: path\n- path:\n    path: ./y\n",
            "a: 1\n",
        ];
        for text in texts {
            let doc = yaml::parse(text).expect("parses").remove(0);
            let all = every_text(&doc.node);
            let places = places_of(&doc.node, &all).expect("a place");
            for wanted in all.iter().chain(["absent"].iter()) {
                assert_eq!(
                    places.find_scalar(wanted),
                    doc.node.find_scalar(wanted),
                    "{wanted} in {text}"
                );
            }
            assert_eq!(places.find_key("path"), doc.node.find_key("path"), "{text}");
            assert_eq!(places.find_key("name"), None);
        }
        let doc = yaml::parse("a: b\n").expect("parses").remove(0);
        assert!(places_of(&doc.node, &std::collections::BTreeSet::new()).is_none());
    }
}

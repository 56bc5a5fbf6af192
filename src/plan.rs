//! The plan: every file of the repo, rendered in memory before anything is written.
//! Pure: blueprint + context in, `Plan` out.
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::blueprint::{Blueprint, FileTree};
use crate::error::{Error, Result};
use crate::render::{Renderer, Scope};

/// A repo-relative path that cannot escape the repo: no `..`, no absolute path, no empty
/// segment, no `.git`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RelPath(String);

impl RelPath {
    pub fn new(path: &str) -> std::result::Result<Self, String> {
        if path.starts_with('/') || path.contains('\\') {
            return Err(format!("`{path}` is absolute"));
        }
        for segment in path.split('/') {
            match segment {
                "" => return Err(format!("`{path}` has an empty segment")),
                "." | ".." => return Err(format!("`{path}` escapes the repository")),
                ".git" => return Err(format!("`{path}` writes into .git")),
                _ => {}
            }
        }
        Ok(RelPath(path.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub files: BTreeMap<RelPath, Vec<u8>>,
}

#[derive(Serialize)]
struct PlannedFile<'a> {
    path: &'a RelPath,
    bytes: usize,
}

impl Plan {
    pub fn add(&mut self, path: RelPath, contents: Vec<u8>) -> Result<()> {
        if self.files.contains_key(&path) {
            return Err(Error::Blueprint(format!(
                "renders `{}` twice; make the paths distinct",
                path.as_str()
            )));
        }
        self.files.insert(path, contents);
        Ok(())
    }

    /// What `--dry-run --json` prints.
    pub fn listing(&self) -> Json {
        let files: Vec<PlannedFile<'_>> = self
            .files
            .iter()
            .map(|(path, bytes)| PlannedFile {
                path,
                bytes: bytes.len(),
            })
            .collect();
        serde_json::to_value(files).unwrap_or(Json::Null)
    }
}

#[cfg(test)]
impl Plan {
    /// A plan of text files, for tests.
    pub fn of_texts(files: &[(&str, &str)]) -> Self {
        let mut plan = Plan::default();
        for (path, text) in files {
            plan.add(RelPath::new(path).expect("path"), text.as_bytes().to_vec())
                .expect("add");
        }
        plan
    }
}

/// Template names are the blueprint-relative paths, so errors point at the source file.
pub fn template_sources(blueprint: &Blueprint) -> Result<Vec<(String, String)>> {
    let mut sources = Vec::new();
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree {
            if path.ends_with(".tera") {
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    Error::Blueprint(format!(
                        "{prefix}{path}: a .tera template must be UTF-8 text"
                    ))
                })?;
                sources.push((format!("{prefix}{path}"), text.to_string()));
            }
        }
    }
    Ok(sources)
}

/// Every blueprint-relative name whose path may be a template (for `Renderer::add_paths`).
pub fn path_names(blueprint: &Blueprint) -> impl Iterator<Item = String> + '_ {
    [
        ("files/", &blueprint.files),
        ("addon-files/", &blueprint.addon_files),
    ]
    .into_iter()
    .flat_map(|(prefix, tree)| tree.keys().map(move |path| format!("{prefix}{path}")))
}

/// Renders the repo-wide files once and the addon files once per selected addon. The
/// context is converted for Tera once; each addon's scope adds only `addon` to it.
pub fn build(
    blueprint: &Blueprint,
    renderer: &Renderer,
    context: &Json,
    addons: &[Json],
) -> Result<Plan> {
    let mut plan = Plan::default();
    let scope = Scope::new(context);
    render_tree(&mut plan, renderer, "files/", &blueprint.files, &scope)?;
    for addon in addons {
        render_tree(
            &mut plan,
            renderer,
            "addon-files/",
            &blueprint.addon_files,
            &scope.with("addon", addon),
        )?;
    }
    Ok(plan)
}

fn render_tree(
    plan: &mut Plan,
    renderer: &Renderer,
    prefix: &str,
    tree: &FileTree,
    scope: &Scope,
) -> Result<()> {
    let entries: Vec<(&String, &Vec<u8>)> = tree.iter().collect();
    for file in render_all(renderer, prefix, &entries, scope) {
        if let Some((path, contents)) = file? {
            plan.add(path, contents)?;
        }
    }
    Ok(())
}

/// One blueprint file rendered: its repo path and bytes, or None when it renders away.
type Rendered = Result<Option<(RelPath, Vec<u8>)>>;

/// Below this many files per thread, a thread costs more than it saves.
const FILES_PER_THREAD: usize = 200;

/// Renders `entries` in order, split across the cores when there are enough of them.
/// Results stay in input order, so the first error reported is the first in the tree.
fn render_all(
    renderer: &Renderer,
    prefix: &str,
    entries: &[(&String, &Vec<u8>)],
    scope: &Scope,
) -> Vec<Rendered> {
    let one =
        |(path, bytes): &(&String, &Vec<u8>)| render_one(renderer, prefix, path, bytes, scope);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(entries.len() / FILES_PER_THREAD)
        .max(1);
    if threads == 1 {
        return entries.iter().map(one).collect();
    }
    let chunk = entries.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = entries
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|part| part.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// One blueprint file: its rendered path and contents, or None when it is conditional
/// and renders away (an empty path segment, or an empty template).
fn render_one(
    renderer: &Renderer,
    prefix: &str,
    source_path: &str,
    bytes: &[u8],
    scope: &Scope,
) -> Rendered {
    let name = format!("{prefix}{source_path}");
    let rendered_path = renderer.render_path(&name, source_path, scope)?;
    if rendered_path.starts_with('/') {
        return Err(Error::Blueprint(format!(
            "{prefix}{source_path}: rendered path `{rendered_path}` is absolute"
        )));
    }
    // A segment that renders empty makes the file conditional.
    if rendered_path
        .split('/')
        .any(|s| s.trim().is_empty() || s == ".tera")
    {
        return Ok(None);
    }
    let (path, contents) = match rendered_path.strip_suffix(".tera") {
        Some(stripped) => {
            let text = renderer.render_in(&name, scope)?;
            if text.trim().is_empty() {
                return Ok(None);
            }
            (stripped.to_string(), text.into_bytes())
        }
        None => (rendered_path, bytes.to_vec()),
    };
    let path = RelPath::new(&path)
        .map_err(|m| Error::Blueprint(format!("{prefix}{source_path}: rendered path {m}")))?;
    Ok(Some((path, contents)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Enough files for `render_all` to split them across threads (where there are cores).
    fn big_tree(n: usize, broken: &[usize]) -> (Renderer, FileTree) {
        let mut tree = FileTree::new();
        let mut sources = Vec::new();
        for i in 0..n {
            let path = format!("d{}/[[ name ]]-{i:04}.yaml.tera", i % 7);
            let text = if broken.contains(&i) {
                format!("[[ missing_{i} ]]")
            } else {
                format!("n: [[ name ]]-{i}\n")
            };
            sources.push((format!("files/{path}"), text.clone()));
            tree.insert(path, text.into_bytes());
        }
        let mut renderer =
            Renderer::plain(sources.iter().map(|(n, t)| (n.as_str(), t.as_str()))).expect("parses");
        let names: Vec<String> = tree.keys().map(|p| format!("files/{p}")).collect();
        renderer.add_paths(names.iter().map(String::as_str));
        (renderer, tree)
    }

    #[test]
    fn a_large_tree_renders_every_file_in_order() {
        let n = 3 * FILES_PER_THREAD;
        let (renderer, tree) = big_tree(n, &[]);
        let mut plan = Plan::default();
        let scope = Scope::new(&serde_json::json!({"name": "acme"}));
        render_tree(&mut plan, &renderer, "files/", &tree, &scope).expect("renders");
        assert_eq!(plan.files.len(), n);
        let path = RelPath::new("d3/acme-0010.yaml").expect("path");
        assert_eq!(plan.files[&path], b"n: acme-10\n");
    }

    #[test]
    fn a_large_tree_reports_its_first_error() {
        // In tree order d0/…-0014 comes first (first thread's half); d6/…-0006 is in the last half.
        let (renderer, tree) = big_tree(3 * FILES_PER_THREAD, &[6, 14]);
        let scope = Scope::new(&serde_json::json!({"name": "acme"}));
        let err = render_tree(&mut Plan::default(), &renderer, "files/", &tree, &scope)
            .expect_err("undefined variable");
        assert!(err.to_string().contains("missing_14"), "{err}");
    }

    #[test]
    fn relpath_refuses_escapes() {
        assert!(RelPath::new("a/b.yaml").is_ok());
        for bad in ["../x", "/etc/x", "a//b", "a/./b", ".git/config"] {
            assert!(RelPath::new(bad).is_err(), "{bad}");
        }
    }
}

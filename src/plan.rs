//! The plan: every file of the repo, rendered in memory before anything is written.
//! Pure: blueprint + context in, `Plan` out.
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::blueprint::{Blueprint, FileTree};
use crate::error::{Error, Result};
use crate::render::Renderer;

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
    /// Files written and committed with the executable bit (mode 755).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub executable: BTreeSet<RelPath>,
    /// The blueprint file each was rendered from (for findings).
    #[serde(skip)]
    pub sources: BTreeMap<RelPath, String>,
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
    // Patches are templates too: they may read answers and `addon`.
    for (path, bytes) in blueprint.patches.values().flatten() {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::Blueprint(format!("{path}: a patch must be UTF-8 text")))?;
        sources.push((path.clone(), text.to_string()));
    }
    Ok(sources)
}

/// Renders the repo-wide files once and the addon files once per selected addon.
pub fn build(
    blueprint: &Blueprint,
    renderer: &Renderer,
    context: &Json,
    addons: &[Json],
) -> Result<Plan> {
    let mut plan = Plan::default();
    render_tree(
        &mut plan,
        renderer,
        blueprint,
        "files/",
        &blueprint.files,
        context,
    )?;
    for addon in addons {
        let mut context = context.clone();
        if let Json::Object(map) = &mut context {
            map.insert("addon".into(), addon.clone());
        }
        render_tree(
            &mut plan,
            renderer,
            blueprint,
            "addon-files/",
            &blueprint.addon_files,
            &context,
        )
        .map_err(|e| for_addon(e, addon))?;
    }
    for addon in addons {
        crate::overrides::apply_addon_patches(&mut plan, renderer, context, addon)?;
    }
    Ok(plan)
}

fn render_tree(
    plan: &mut Plan,
    renderer: &Renderer,
    blueprint: &Blueprint,
    prefix: &str,
    tree: &FileTree,
    context: &Json,
) -> Result<()> {
    for (source_path, bytes) in tree {
        let rendered_path = renderer.render_path(prefix, source_path, context)?;
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
            continue;
        }
        let (path, contents) = match rendered_path.strip_suffix(".tera") {
            Some(stripped) => {
                let text = renderer.render(&format!("{prefix}{source_path}"), context)?;
                if text.trim().is_empty() {
                    continue;
                }
                (stripped.to_string(), text.into_bytes())
            }
            None => (rendered_path, bytes.clone()),
        };
        let source = format!("{prefix}{source_path}");
        let contents = patched(renderer, blueprint, &source, contents, context)?;
        let path = RelPath::new(&path)
            .map_err(|m| Error::Blueprint(format!("{source}: rendered path {m}")))?;
        if blueprint.executable.contains(&source) {
            plan.executable.insert(path.clone());
        }
        plan.sources.insert(path.clone(), source);
        plan.add(path, contents)?;
    }
    Ok(())
}

/// An addon file's error names the catalog entry it was rendering.
fn for_addon(err: Error, addon: &Json) -> Error {
    let name = addon.get("name").and_then(Json::as_str).unwrap_or_default();
    match err {
        Error::Located(mut at) => {
            at.message = format!("{} (rendering addon `{name}`)", at.message);
            Error::Located(at)
        }
        other => other,
    }
}

/// The file with the patches of every layer applied in order (base layers first).
fn patched(
    renderer: &Renderer,
    blueprint: &Blueprint,
    source: &str,
    contents: Vec<u8>,
    context: &Json,
) -> Result<Vec<u8>> {
    let Some(patches) = blueprint.patches.get(crate::overrides::output_of(source)) else {
        return Ok(contents);
    };
    let mut text = String::from_utf8(contents)
        .map_err(|_| Error::Blueprint(format!("{source}: a patched file must be UTF-8 text")))?;
    for (patch, _) in patches {
        let rendered = renderer.render(patch, context)?;
        text = crate::overrides::apply(&text, &rendered)
            .map_err(|m| Error::Located(crate::error::Located::new(patch.clone(), (1, 1), m)))?;
    }
    Ok(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relpath_refuses_escapes() {
        assert!(RelPath::new("a/b.yaml").is_ok());
        for bad in ["../x", "/etc/x", "a//b", "a/./b", ".git/config"] {
            assert!(RelPath::new(bad).is_err(), "{bad}");
        }
    }
}

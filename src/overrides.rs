//! How a layered blueprint changes inherited files without forking them: `remove_files`
//! patterns, `NAME.patch.yaml` merge patches applied to the rendered YAML, and the record
//! of which files a layer replaced (with the digest of the base it copied) or patched.
//! Pure.
use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::blueprint::FileTree;
use crate::error::{Error, Located, Result};
use crate::plan::Plan;
use crate::render::{Renderer, Scope};

/// Patches by the blueprint-relative output path they change (`files/x/release.yaml`):
/// (patch file, its template text), base layers first.
pub type Patches = BTreeMap<String, Vec<(String, Vec<u8>)>>;

pub const PATCH_SUFFIX: &str = ".patch.yaml";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideKind {
    Replaced,
    Patched,
}

/// An inherited file a layer changed.
#[derive(Debug, Clone)]
pub struct Override {
    pub kind: OverrideKind,
    /// The layer that changed it.
    pub by: String,
    /// The blueprint the replaced file came from, and its path there (the `replaces` key).
    pub base: String,
    pub base_path: String,
    /// Digest of the base file now, and the one the layer recorded in `replaces`.
    pub base_digest: String,
    pub recorded: Option<String>,
}

impl Override {
    pub fn patched(by: &str) -> Self {
        Override {
            kind: OverrideKind::Patched,
            by: by.into(),
            base: String::new(),
            base_path: String::new(),
            base_digest: String::new(),
            recorded: None,
        }
    }

    pub fn replaced(
        by: &str,
        base: &str,
        base_path: &str,
        base_bytes: &[u8],
        recorded: Option<String>,
    ) -> Self {
        Override {
            kind: OverrideKind::Replaced,
            by: by.into(),
            base: base.into(),
            base_path: base_path.into(),
            base_digest: digest(base_bytes),
            recorded,
        }
    }

    /// The base changed since the layer recorded the digest of what it copied.
    pub fn base_changed(&self) -> bool {
        self.recorded
            .as_ref()
            .is_some_and(|r| *r != self.base_digest)
    }
}

/// The digest `replaces` records for the inherited `base_path` replaced by the layer's
/// `own_path`: keyed by the base path, the output both write, or the layer's own path.
pub fn recorded_digest(
    replaces: &BTreeMap<String, String>,
    base_path: &str,
    own_path: &str,
) -> Option<String> {
    [base_path, output_of(base_path), own_path]
        .iter()
        .find_map(|k| replaces.get(*k))
        .cloned()
}

/// Every `replaces` entry names a file this layer (`label`) replaces: a typo, or a file
/// the layer does not fork, would switch drift tracking off without a word.
/// Err((key, message)).
pub fn check_replaces(
    replaces: &BTreeMap<String, String>,
    overridden: &BTreeMap<String, Override>,
    label: &str,
    tree: &FileTree,
) -> std::result::Result<(), (String, String)> {
    let mine: Vec<(&String, &Override)> = overridden
        .iter()
        .filter(|(_, o)| o.kind == OverrideKind::Replaced && o.by == label)
        .collect();
    for (key, recorded) in replaces {
        let known = mine.iter().any(|(own, o)| {
            [o.base_path.as_str(), output_of(&o.base_path), own.as_str()].contains(&key.as_str())
        });
        if known {
            if recorded.len() < 7 || !recorded.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err((
                    key.clone(),
                    format!(
                        "replaces: `{recorded}` for `{key}` is not a digest (the 12 hex digits `scaffold blueprint show` prints)"
                    ),
                ));
            }
            continue;
        }
        let inherited = tree.contains_key(key) || tree.contains_key(&format!("{key}.tera"));
        let message = if inherited {
            format!(
                "replaces: `{key}` is inherited, but this layer has no file replacing it; add `{}` or drop the entry",
                output_of(key)
            )
        } else {
            let candidates: Vec<&str> = mine.iter().map(|(_, o)| o.base_path.as_str()).collect();
            let hint = crate::scope::did_you_mean(key, candidates.iter().copied());
            let hint = if hint.is_empty() {
                crate::scope::did_you_mean(key, tree.keys().map(String::as_str))
            } else {
                hint
            };
            format!("replaces: `{key}` is no file this layer replaces{hint}")
        };
        return Err((key.clone(), message));
    }
    Ok(())
}

/// A short content digest (the git blob id's first 12 hex digits), as `replaces` records it.
pub fn digest(bytes: &[u8]) -> String {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .map(|oid| oid.to_string()[..12].to_string())
        .unwrap_or_default()
}

/// The output a blueprint file writes: its path without `.tera`.
pub fn output_of(path: &str) -> &str {
    path.strip_suffix(".tera").unwrap_or(path)
}

/// The output path a patch file changes, when `path` is one.
pub fn patch_target(path: &str) -> Option<&str> {
    path.strip_suffix(PATCH_SUFFIX)
        .filter(|t| t.starts_with("files/") || t.starts_with("addon-files/"))
}

/// The inherited file that writes `target`.
pub fn source_of(tree: &FileTree, target: &str) -> Option<String> {
    [target.to_string(), format!("{target}.tera")]
        .into_iter()
        .find(|p| tree.contains_key(p))
}

/// The files `pattern` names: the file itself, every file under it as a directory, or
/// the files a glob (`*`, `**`, `?`, `{a,b}`) matches.
pub fn matching(tree: &FileTree, pattern: &str) -> std::result::Result<Vec<String>, String> {
    let dir = format!("{}/", pattern.trim_end_matches('/'));
    let mut found: Vec<String> = tree
        .keys()
        .filter(|p| *p == pattern || p.starts_with(&dir))
        .cloned()
        .collect();
    if found.is_empty() && pattern.contains(['*', '?', '{']) {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("`{pattern}` is not a glob: {}", e.kind()))?
            .compile_matcher();
        found = tree
            .keys()
            .filter(|p| glob.is_match(p.as_str()))
            .cloned()
            .collect();
    }
    Ok(found)
}

/// Whether any of the globs matches `path`.
pub fn matches_any(globs: &[String], path: &str) -> bool {
    globs.iter().any(|g| {
        g == path
            || globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .is_ok_and(|g| g.compile_matcher().is_match(path))
    })
}

/// Applies a rendered patch to a rendered YAML file. Each patch document is an RFC 7386
/// JSON merge patch (mappings merge, `null` deletes, lists and scalars replace); one with
/// `kind` (and `metadata.name`) changes only the documents with the same, one without
/// changes every document. The file is written back as plain YAML (comments are dropped).
pub fn apply(target: &str, patch: &str) -> std::result::Result<String, String> {
    let mut documents = Vec::new();
    for document in serde_yaml::Deserializer::from_str(target) {
        let value: Json = serde::Deserialize::deserialize(document)
            .map_err(|e| format!("the patched file is not YAML: {e}"))?;
        documents.push(value);
    }
    for document in serde_yaml::Deserializer::from_str(patch) {
        let patch: Json =
            serde::Deserialize::deserialize(document).map_err(|e| format!("not YAML: {e}"))?;
        if patch.is_null() {
            continue;
        }
        let selector = |doc: &Json| {
            let same = |pointer: &str| {
                patch
                    .pointer(pointer)
                    .is_none_or(|want| doc.pointer(pointer) == Some(want))
            };
            same("/kind") && same("/metadata/name")
        };
        let mut applied = false;
        for doc in documents.iter_mut().filter(|d| selector(d)) {
            merge_patch(doc, &patch);
            applied = true;
        }
        if !applied {
            return Err(format!(
                "a patch document (kind {}, name {}) matches no document of the file",
                patch.pointer("/kind").unwrap_or(&Json::Null),
                patch.pointer("/metadata/name").unwrap_or(&Json::Null)
            ));
        }
    }
    let mut out = String::new();
    for (i, doc) in documents.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&serde_yaml::to_string(doc).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// A catalog entry's `patches`: `[{file, patch}]`, each applied to the files rendered from
/// the blueprint file `file` (an output path, `files/2-kops/values.yaml`); `patch` is a
/// template over the answers and `addon`, then a merge patch as for `.patch.yaml` files.
pub fn apply_addon_patches(
    plan: &mut Plan,
    renderer: &Renderer,
    scope: &Scope,
    addon: &Json,
) -> Result<()> {
    let Some(patches) = addon.get("patches").and_then(Json::as_array) else {
        return Ok(());
    };
    let name = addon.get("name").and_then(Json::as_str).unwrap_or_default();
    let entry_file = format!("addons/{name}.yaml");
    let fail = |m: String| Error::Located(Located::new(entry_file.clone(), (1, 1), m));
    for item in patches {
        let (Some(file), Some(patch)) = (
            item.get("file").and_then(Json::as_str),
            item.get("patch").and_then(Json::as_str),
        ) else {
            return Err(fail(
                "patches: each item needs `file` (a blueprint output path) and `patch` (YAML text)"
                    .into(),
            ));
        };
        let targets: Vec<_> = plan
            .sources
            .iter()
            .filter(|(_, source)| output_of(source) == file)
            .map(|(path, _)| path.clone())
            .collect();
        if targets.is_empty() {
            return Err(fail(format!(
                "patches: `{file}` is not a file this blueprint writes{}",
                crate::scope::did_you_mean(file, plan.sources.values().map(|s| output_of(s)))
            )));
        }
        let rendered =
            renderer.render_str_in(&format!("{entry_file}: patches of `{file}`"), patch, scope)?;
        for path in targets {
            let Some(bytes) = plan.files.get_mut(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(bytes).into_owned();
            let patched =
                apply(&text, &rendered).map_err(|m| fail(format!("patches `{file}`: {m}")))?;
            *bytes = patched.into_bytes();
        }
    }
    Ok(())
}

/// RFC 7386.
fn merge_patch(target: &mut Json, patch: &Json) {
    let Json::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Json::Object(Default::default());
    }
    if let Json::Object(map) = target {
        for (key, value) in changes {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Json::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_merges_into_the_document_it_names() {
        let target = "kind: A\nmetadata:\n  name: a\nspec:\n  labels:\n    x: '1'\n  drop: me\n---\nkind: B\nmetadata:\n  name: b\nspec: {}\n";
        let patch =
            "kind: A\nmetadata:\n  name: a\nspec:\n  labels:\n    team: payments\n  drop: null\n";
        let out = apply(target, patch).expect("applies");
        assert_eq!(
            out,
            "kind: A\nmetadata:\n  name: a\nspec:\n  labels:\n    x: '1'\n    team: payments\n---\nkind: B\nmetadata:\n  name: b\nspec: {}\n"
        );
        let err = apply(target, "kind: C\nspec: {}\n").expect_err("no such document");
        assert!(err.contains("matches no document"), "{err}");
    }

    #[test]
    fn remove_patterns_take_files_directories_and_globs() {
        let tree: FileTree = [
            "files/a/x.yaml",
            "files/a/y.yaml",
            "files/b.tf",
            "files/c.tf",
        ]
        .iter()
        .map(|p| (p.to_string(), Vec::new()))
        .collect();
        assert_eq!(matching(&tree, "files/a").expect("dir").len(), 2);
        assert_eq!(
            matching(&tree, "files/*.tf").expect("glob"),
            ["files/b.tf", "files/c.tf"]
        );
        assert_eq!(matching(&tree, "files/b.tf").expect("file"), ["files/b.tf"]);
        assert!(matching(&tree, "files/z").expect("none").is_empty());
    }
}

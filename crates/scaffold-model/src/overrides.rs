//! How a layered blueprint changes inherited files without forking them: `remove_files`
//! patterns, `NAME.patch.yaml` merge patches applied to the rendered YAML, and the record
//! of which files a layer replaced (with the digest of the base it copied) or patched.
//! Pure.
use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::tree::FileTree;
use crate::yaml;

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
    /// A base file a layer patches: like a replaced one, it records the digest of the base
    /// it was written against (`replaces`, keyed by the base path, its output or the patch
    /// file), so a changed base warns instead of the patch silently meeting other bytes.
    pub fn patched(
        by: &str,
        base: &str,
        base_path: &str,
        base_bytes: &[u8],
        recorded: Option<String>,
    ) -> Self {
        Override {
            kind: OverrideKind::Patched,
            ..Override::replaced(by, base, base_path, base_bytes, recorded)
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
    let mine: Vec<(&String, &Override)> =
        overridden.iter().filter(|(_, o)| o.by == label).collect();
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
            let hint = crate::suggest::did_you_mean(key, candidates.iter().copied());
            let hint = if hint.is_empty() {
                crate::suggest::did_you_mean(key, tree.keys().map(String::as_str))
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
    let mut id = crate::tree::blob_id(bytes);
    id.truncate(12);
    id
}

/// The output a blueprint file writes: its path without `.tera`.
pub fn output_of(path: &str) -> &str {
    path.strip_suffix(".tera").unwrap_or(path)
}

/// The output path a patch file changes, when `path` is one: a file of one of the
/// rendered trees (`tree_prefixes`, such as `files/`).
pub fn patch_target<'a>(path: &'a str, tree_prefixes: &[String]) -> Option<&'a str> {
    path.strip_suffix(PATCH_SUFFIX).filter(|t| {
        tree_prefixes
            .iter()
            .any(|prefix| t.starts_with(prefix.as_str()))
    })
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
        found = glob_matching(tree, pattern)?;
    }
    Ok(found)
}

/// The paths of `tree` that `pattern` matches as a glob (`[` a character class).
pub fn glob_matching(tree: &FileTree, pattern: &str) -> std::result::Result<Vec<String>, String> {
    let glob = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("`{pattern}` is not a glob: {}", e.kind()))?
        .compile_matcher();
    Ok(tree
        .keys()
        .filter(|p| glob.is_match(p.as_str()))
        .cloned()
        .collect())
}

/// The globs a brace glob stands for, each alternative of every `{a,b}` spelled out
/// (`a/{b,c}/d` → `a/b/d`, `a/c/d`); a glob without braces is itself.
pub fn alternatives(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut start = open + 1;
    for (at, c) in pattern.char_indices().skip_while(|(i, _)| *i <= open) {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&pattern[start..at]);
                start = at + 1;
            }
            '}' => {
                parts.push(&pattern[start..at]);
                let (head, tail) = (&pattern[..open], &pattern[at + 1..]);
                return parts
                    .into_iter()
                    .flat_map(|part| alternatives(&format!("{head}{part}{tail}")))
                    .collect();
            }
            _ => {}
        }
    }
    vec![pattern.to_string()] // unclosed: the glob's own error says so
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

/// Why a patch does not apply, at a line and column of the rendered patch when known.
#[derive(Debug)]
pub struct PatchError {
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl From<String> for PatchError {
    fn from(message: String) -> Self {
        PatchError { at: None, message }
    }
}

/// Applies a rendered patch to a rendered YAML file. Each patch document is a merge patch
/// (RFC 7386: mappings merge, `null` deletes, scalars replace) where lists of mappings that
/// all have a `name` (or all a `key`) merge item by item on it, as Kubernetes' strategic
/// merge does (`$patch: delete` in an item removes it); other lists replace. A patch
/// document with `kind` (and `metadata.name`) changes only the documents with the same,
/// one without changes every document. A patch without documents leaves the file byte for
/// byte, and so does every document it leaves unchanged; a changed document is written
/// back as plain YAML (its comments are dropped).
pub fn apply(target: &str, patch: &str) -> std::result::Result<String, PatchError> {
    let not_yaml = |e: yaml::Error| PatchError {
        at: Some(e.pair()),
        message: format!("not YAML: {}", e.message),
    };
    // Each change with where its document starts (its `kind:` when it names one).
    let mut changes = Vec::new();
    for document in yaml::parse(patch).map_err(not_yaml)? {
        let change = document.root.to_json().map_err(not_yaml)?;
        if !change.is_null() {
            let at = document.root.key_pos("kind").unwrap_or(document.root.pos);
            changes.push((change, at.pair()));
        }
    }
    if changes.is_empty() {
        return Ok(target.to_string());
    }
    if is_go_template(target) {
        return Err(PatchError::from(
            "the patched file is a Go template (`{{ }}`), not YAML until its tool renders it: change the values it reads (for kops, the `values.yaml` beside the template, and its extension points) instead of patching it"
                .to_string(),
        ));
    }
    let texts = split_documents(target);
    let mut documents = Vec::new();
    for text in &texts {
        let value =
            yaml::to_json(text).map_err(|e| format!("the patched file is not YAML: {e}"))?;
        documents.push(value);
    }
    let original = documents.clone();
    for (change, at) in &changes {
        let selector = |doc: &Json| {
            let same = |pointer: &str| {
                change
                    .pointer(pointer)
                    .is_none_or(|want| doc.pointer(pointer) == Some(want))
            };
            same("/kind") && same("/metadata/name")
        };
        let mut applied = false;
        for doc in documents.iter_mut().filter(|d| selector(d)) {
            crate::json_merge::keyed_merge_patch(doc, change);
            applied = true;
        }
        if !applied {
            return Err(PatchError {
                at: Some(*at),
                message: format!(
                    "a patch document (kind {}, name {}) matches no document of the file",
                    change.pointer("/kind").unwrap_or(&Json::Null),
                    change.pointer("/metadata/name").unwrap_or(&Json::Null)
                ),
            });
        }
    }
    if documents == original {
        return Ok(target.to_string());
    }
    let mut out = String::new();
    for (i, (doc, before)) in documents.iter().zip(&original).enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        if doc == before {
            out.push_str(texts[i]);
        } else {
            out.push_str(&edit_in_place(texts[i], before, doc)?);
        }
    }
    Ok(out)
}

/// `text` (whose value is `before`) changed to `after`, editing only the entries of its
/// block mappings that changed, so the comments and formatting of the rest survive. An
/// entry that changed is written anew (plain YAML); when the text is not block mappings
/// scaffold can follow (flow style, anchors, odd keys), or the edit would not read back as
/// `after`, the whole document is written anew instead.
fn edit_in_place(text: &str, before: &Json, after: &Json) -> std::result::Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if let Some(edited) = edit_block(&lines, 0, before, after) {
        let edited = edited.concat();
        if yaml::to_json(&edited).ok().as_ref() == Some(after) {
            return Ok(edited);
        }
    }
    yaml::to_string(after).map_err(|e| e.to_string())
}

/// Whether a line holds nothing for YAML (blank or a comment).
fn is_idle(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The key of a `key:` line at exactly `indent` spaces (plain or quoted keys).
fn entry_key(line: &str, indent: usize) -> Option<String> {
    let rest = line.strip_prefix(&" ".repeat(indent))?;
    if rest.starts_with([' ', '-', '#', '\n']) || rest.trim().is_empty() {
        return None;
    }
    let (key, after) = if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = rest[1..].find(q)? + 1;
        (&rest[1..end], &rest[end + 1..])
    } else {
        let colon = rest
            .find(": ")
            .or_else(|| rest.trim_end().strip_suffix(':').map(str::len))?;
        (&rest[..colon], &rest[colon..])
    };
    after.starts_with(':').then(|| key.to_string())
}

/// `key: value` as block YAML at `indent` spaces.
fn entry_text(key: &str, value: &Json, indent: usize) -> Option<Vec<String>> {
    let mut map = serde_json::Map::new();
    map.insert(key.to_string(), value.clone());
    let text = yaml::to_string(&Json::Object(map)).ok()?;
    Some(
        text.split_inclusive('\n')
            .map(|l| format!("{}{l}", " ".repeat(indent)))
            .collect(),
    )
}

/// The lines of a block mapping at `indent` with its changed entries rewritten; None when
/// the lines are not such a mapping.
fn edit_block(lines: &[&str], indent: usize, before: &Json, after: &Json) -> Option<Vec<String>> {
    let (Json::Object(old), Json::Object(new)) = (before, after) else {
        return None;
    };
    // Entry i spans from its key line to the next key line; leading idle lines stay put.
    let mut starts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if is_idle(line) {
            continue;
        }
        let depth = line.len() - line.trim_start_matches(' ').len();
        if depth < indent {
            return None;
        }
        if depth == indent {
            starts.push((i, entry_key(line, indent)?));
        }
    }
    if starts.len() != old.len() || starts.iter().any(|(_, k)| !old.contains_key(k)) {
        return None;
    }
    let mut out: Vec<String> = lines[..starts.first().map_or(lines.len(), |s| s.0)]
        .iter()
        .map(|l| l.to_string())
        .collect();
    for (n, (start, key)) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(lines.len(), |s| s.0);
        // Idle lines at the end of an entry (the next entry's comment) are kept.
        let mut body_end = end;
        while body_end > start + 1 && is_idle(lines[body_end - 1]) {
            body_end -= 1;
        }
        let entry = &lines[*start..body_end];
        match new.get(key) {
            None => {}
            Some(value) if Some(value) == old.get(key) => {
                out.extend(entry.iter().map(|l| l.to_string()))
            }
            Some(value) => {
                let head = entry[0];
                let is_block = head.trim_end().ends_with(':') && entry.len() > 1;
                let child = entry[1..]
                    .iter()
                    .find(|l| !is_idle(l))
                    .map(|l| l.len() - l.trim_start_matches(' ').len());
                let nested = match (is_block, child, old.get(key)) {
                    (true, Some(child), Some(previous)) if child > indent => {
                        edit_block(&entry[1..], child, previous, value)
                    }
                    _ => None,
                };
                match nested {
                    Some(body) => {
                        out.push(head.to_string());
                        out.extend(body);
                    }
                    None => out.extend(entry_text(key, value, indent)?),
                }
            }
        }
        out.extend(lines[body_end..end].iter().map(|l| l.to_string()));
    }
    for (key, value) in new {
        if !old.contains_key(key) {
            out.extend(entry_text(key, value, indent)?);
        }
    }
    Some(out)
}

/// The texts of a YAML stream's documents (split at `---` lines), each as written.
fn split_documents(text: &str) -> Vec<&str> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            if at > start || !documents.is_empty() {
                documents.push(&text[start..at]);
            }
            start = at + line.len();
        }
        at += line.len();
    }
    if start < text.len() || documents.is_empty() {
        documents.push(&text[start..]);
    }
    documents
}

/// Go template actions (`{{ .x }}`), not GitHub's `${{ }}` expressions.
fn is_go_template(text: &str) -> bool {
    text.match_indices("{{")
        .any(|(at, _)| !text[..at].ends_with('$'))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_brace_glob_stands_for_each_alternative() {
        assert_eq!(alternatives("a/*.sh"), ["a/*.sh"]);
        assert_eq!(alternatives("a/{b,c}/d"), ["a/b/d", "a/c/d"]);
        assert_eq!(
            alternatives("{a,b}/{c,d{e,f}}"),
            ["a/c", "a/de", "a/df", "b/c", "b/de", "b/df"]
        );
        assert_eq!(alternatives("a/{b,c"), ["a/{b,c"]);
    }

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
        assert!(err.message.contains("matches no document"), "{err:?}");
        assert_eq!(err.at, Some((1, 1)));
    }

    #[test]
    fn an_empty_or_idle_patch_leaves_the_file_byte_for_byte_and_untouched_documents_keep_comments()
    {
        let target = "# the base's explanation\nkind: A\nspec:   {x: 1}  # odd spacing\n---\n# B\nkind: B\nspec: {}\n";
        assert_eq!(apply(target, "").expect("empty"), target);
        assert_eq!(
            apply(target, "\n# nothing\n").expect("comment only"),
            target
        );
        assert_eq!(
            apply(target, "kind: A\nspec: {x: 1}\n").expect("no change"),
            target
        );
        let out = apply(target, "kind: B\nspec: {y: 2}\n").expect("B");
        assert!(
            out.starts_with(
                "# the base's explanation\nkind: A\nspec:   {x: 1}  # odd spacing\n---\n"
            ),
            "{out}"
        );
        assert!(out.ends_with("kind: B\nspec:\n  y: 2\n"), "{out}");
    }

    #[test]
    fn a_patch_edits_in_place_keeping_the_comments_of_what_it_leaves() {
        let target = "# Values.\nenvironment: prod   # kept as written\n\n# Tags of every resource.\ncloudLabels: {}\nspec:\n  # the size\n  size: 2\n  name: a\n";
        let out = apply(
            target,
            "cloudLabels:\n  team: payments\nspec:\n  size: 3\nextra: 1\n",
        )
        .expect("applies");
        assert_eq!(
            out,
            "# Values.\nenvironment: prod   # kept as written\n\n# Tags of every resource.\ncloudLabels:\n  team: payments\nspec:\n  # the size\n  size: 3\n  name: a\nextra: 1\n"
        );
    }

    #[test]
    fn lists_of_named_items_merge_by_name_other_lists_replace() {
        let target = "spec:\n  requirements:\n  - key: arch\n    values: [amd64]\n  - key: os\n    values: [linux]\n  args: [a, b]\n";
        let patch = "spec:\n  requirements:\n  - key: team\n    values: [payments]\n  - key: os\n    $patch: delete\n  args: [c]\n";
        let out: Json =
            crate::yaml::from_str(&apply(target, patch).expect("applies")).expect("yaml");
        assert_eq!(
            out,
            serde_json::json!({"spec": {"requirements": [
                {"key": "arch", "values": ["amd64"]},
                {"key": "team", "values": ["payments"]}
            ], "args": ["c"]}})
        );
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

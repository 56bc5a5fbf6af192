//! `blueprint rebase`'s path map: where a file of the old base is in the new one. A path
//! both bases have stays; a moved one is followed through the new base's `moves:`
//! migrations (repo paths, translated to the blueprint's) and then through renames git
//! would detect (same file name, at least half the lines alike). Pure.
use similar::TextDiff;

use crate::blueprint::Blueprint;
use crate::version::tuple;

/// How much alike a file and its renamed self must be (git's default rename threshold).
const RENAME_SIMILARITY: f32 = 0.5;

/// The repo path a blueprint path renders to, as a template (`files/a.tf.tera` → `a.tf`,
/// `env-files/envs/[[ environment ]]/x` → `envs/[[environment]]/x`), with the spaces
/// inside template tags dropped so `[[ environment ]]` and `[[environment]]` meet.
fn output_of(blueprint: &Blueprint, path: &str) -> Option<String> {
    let tree = blueprint
        .trees
        .iter()
        .find(|t| path.starts_with(&t.prefix))?;
    let output = &path[tree.prefix.len()..];
    Some(squeezed(output.strip_suffix(".tera").unwrap_or(output)))
}

fn squeezed(template: &str) -> String {
    template.replace(' ', "")
}

/// Every rendered file of `blueprint`, by blueprint-relative path.
fn rendered_paths(blueprint: &Blueprint) -> impl Iterator<Item = String> + '_ {
    blueprint
        .trees
        .iter()
        .flat_map(|t| t.files.keys().map(move |k| format!("{}{k}", t.prefix)))
}

/// The repo path `output` has after the new base's `moves:` newer than the old base, in
/// version order (a directory move ends in `/`).
fn moved_output(old_base: &Blueprint, new_base: &Blueprint, output: &str) -> Option<String> {
    let since = tuple(&old_base.manifest.version);
    let mut migrations: Vec<_> = new_base
        .manifest
        .migrations
        .iter()
        .filter(|m| tuple(&m.version) > since)
        .collect();
    migrations.sort_by_key(|m| tuple(&m.version));
    let mut current = output.to_string();
    let mut moved = false;
    for migration in migrations {
        for (from, to) in &migration.moves {
            let (from, to) = (squeezed(from), squeezed(to));
            let next = if from.ends_with('/') {
                current
                    .strip_prefix(&from)
                    .map(|rest| format!("{to}{rest}"))
            } else {
                (current == from).then(|| to.clone())
            };
            if let Some(next) = next {
                current = next;
                moved = true;
                break;
            }
        }
    }
    moved.then_some(current)
}

/// The last path segment, without `.tera`.
fn file_name(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_suffix(".tera").unwrap_or(name)
}

/// Where the old base's `path` is in the new base: the same path, the target of a move,
/// or a rename of it; `None` when it is gone.
pub fn follow(old_base: &Blueprint, new_base: &Blueprint, path: &str) -> Option<String> {
    if new_base.file(path).is_some() {
        return Some(path.to_string());
    }
    if let Some(target) =
        output_of(old_base, path).and_then(|o| moved_output(old_base, new_base, &o))
        && let Some(found) =
            rendered_paths(new_base).find(|p| output_of(new_base, p).as_ref() == Some(&target))
    {
        return Some(found);
    }
    renamed(old_base, new_base, path)
}

/// The new base's file of the same name, absent from the old base, most like `path`'s
/// old text, if alike enough.
fn renamed(old_base: &Blueprint, new_base: &Blueprint, path: &str) -> Option<String> {
    let old = String::from_utf8(old_base.file(path)?).ok()?;
    let mut best: Option<(f32, String)> = None;
    for candidate in rendered_paths(new_base) {
        if file_name(&candidate) != file_name(path) || old_base.file(&candidate).is_some() {
            continue;
        }
        let Some(text) = new_base
            .file(&candidate)
            .and_then(|b| String::from_utf8(b).ok())
        else {
            continue;
        };
        let ratio = TextDiff::from_lines(&old, &text).ratio();
        if ratio >= RENAME_SIMILARITY && best.as_ref().is_none_or(|(r, _)| ratio > *r) {
            best = Some((ratio, candidate));
        }
    }
    best.map(|(_, path)| path)
}

/// The old base's file that moved to the new base's `path` (for a fork already moved by
/// hand), if one did.
pub fn came_from(old_base: &Blueprint, new_base: &Blueprint, path: &str) -> Option<String> {
    rendered_paths(old_base)
        .filter(|old| new_base.file(old).is_none())
        .find(|old| follow(old_base, new_base, old).as_deref() == Some(path))
}

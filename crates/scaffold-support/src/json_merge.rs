//! Every way scaffold lays one JSON (YAML) document over another, each with its rule for
//! `null` stated, so the catalog, overrides, `check`'s kustomize model and `promote` agree:
//!
//! - [`merge_patch`]: RFC 7386. A `null` in the patch deletes the key; never writes null.
//! - [`keyed_merge_patch`]: RFC 7386 where lists of mappings keyed by `name` (or `key`)
//!   merge item by item, as Kubernetes' strategic merge does. `null` deletes, as in RFC 7386.
//! - [`deep_merge`]: Helm's values layering. Mappings merge, anything else replaces; a
//!   `null` is a value and is kept (for Helm it deletes the chart's default).
//! - [`diff`]: what turns one document into another, as a [`Delta`] of values to lay over
//!   with [`deep_merge`] and key paths to remove: a key the second lacks is removed, never
//!   written as `null`; a `null` the second holds is a value of the delta.
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// RFC 7386 JSON merge patch: mappings merge, a `null` in `patch` deletes the key (and is
/// never written, nor are the nulls inside a mapping it adds), anything else replaces.
pub fn merge_patch(target: &mut Json, patch: &Json) {
    merge_mappings(target, patch, merge_patch);
}

/// RFC 7386's rule for one level: a mapping patch merges key by key, each value through
/// `merge` (a `null` deletes the key); any other patch replaces the target.
fn merge_mappings(target: &mut Json, patch: &Json, merge: fn(&mut Json, &Json)) {
    let Json::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    if let Json::Object(map) = target {
        for (key, value) in changes {
            if value.is_null() {
                map.remove(key);
            } else {
                merge(map.entry(key.clone()).or_insert(Json::Null), value);
            }
        }
    }
}

/// The field lists of mappings merge on: `name`, else `key`, when every item has it.
fn list_key(items: &[Json]) -> Option<&'static str> {
    ["name", "key"]
        .into_iter()
        .find(|k| !items.is_empty() && items.iter().all(|i| i.get(*k).is_some()))
}

/// [`merge_patch`] where a list of mappings that all have a `name` (or all a `key`) merges
/// item by item on it (`$patch: delete` in an item removes it); other lists replace. A
/// `null` deletes the key, as in RFC 7386.
pub fn keyed_merge_patch(target: &mut Json, patch: &Json) {
    if let (Json::Array(have), Json::Array(want)) = (&mut *target, patch)
        && let Some(key) = list_key(want)
        && (have.is_empty() || list_key(have) == Some(key))
    {
        for item in want {
            let id = item.get(key);
            let delete = item.get("$patch").and_then(Json::as_str) == Some("delete");
            match have.iter().position(|h| h.get(key) == id) {
                Some(i) if delete => {
                    have.remove(i);
                }
                Some(i) => keyed_merge_patch(&mut have[i], item),
                None if delete => {}
                None => have.push(item.clone()),
            }
        }
        return;
    }
    merge_mappings(target, patch, keyed_merge_patch);
}

/// Helm's layering of values: mappings merge, anything else (lists included) replaces; a
/// `null` in `overlay` is a value and is written (Helm reads it as "drop the default").
pub fn deep_merge(target: &mut Json, overlay: &Json) {
    match (target, overlay) {
        (Json::Object(target), Json::Object(overlay)) => {
            for (key, value) in overlay {
                match target.get_mut(key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (target, overlay) => *target = overlay.clone(),
    }
}

/// A key path from the document's root (each mapping key in turn).
pub type KeyPath = Vec<String>;

/// What [`diff`] finds: values to lay over with [`deep_merge`] (a `null` here is a value),
/// then key paths to remove. The record holds it as `promoted: {set, unset}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delta {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Json>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<KeyPath>,
}

impl Delta {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.unset.is_empty()
    }

    /// Lays the delta over `target`: `set` deep-merges, then each `unset` path is removed.
    pub fn apply(&self, target: &mut Json) {
        deep_merge(target, &Json::Object(self.set.clone()));
        for path in &self.unset {
            remove_path(target, path);
        }
    }

    /// Every key path the delta changes, dotted (`a.b`), sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out: Vec<String> = self.unset.iter().map(|p| p.join(".")).collect();
        leaf_paths(&mut Vec::new(), &self.set, &mut out);
        out.sort();
        out.dedup();
        out
    }
}

fn leaf_paths(at: &mut Vec<String>, map: &Map<String, Json>, out: &mut Vec<String>) {
    for (key, value) in map {
        at.push(key.clone());
        match value {
            Json::Object(inner) if !inner.is_empty() => leaf_paths(at, inner, out),
            _ => out.push(at.join(".")),
        }
        at.pop();
    }
}

/// The delta that turns mapping `from` into `to`: a key `to` lacks is an `unset` path (never
/// a `null`); a key whose value differs is set (mappings recursively, anything else whole);
/// a `null` that `to` holds is set as a value. `diff(a, b).apply(a) == b` for mappings.
pub fn diff(from: &Json, to: &Json) -> Delta {
    let mut delta = Delta::default();
    let empty = Map::new();
    let from = from.as_object().unwrap_or(&empty);
    let to = to.as_object().unwrap_or(&empty);
    diff_maps(&mut Vec::new(), from, to, &mut delta);
    delta.unset.sort();
    delta
}

fn diff_maps(
    at: &mut KeyPath,
    from: &Map<String, Json>,
    to: &Map<String, Json>,
    delta: &mut Delta,
) {
    for key in from.keys().filter(|k| !to.contains_key(*k)) {
        let mut path = at.clone();
        path.push(key.clone());
        delta.unset.push(path);
    }
    for (key, value) in to {
        match (from.get(key), value) {
            (Some(old), new) if old == new => {}
            (Some(Json::Object(old)), Json::Object(new)) => {
                at.push(key.clone());
                diff_maps(at, old, new, delta);
                at.pop();
            }
            _ => {
                let mut path = at.clone();
                path.push(key.clone());
                set_path(&mut delta.set, &path, value.clone());
            }
        }
    }
}

fn set_path(map: &mut Map<String, Json>, path: &[String], value: Json) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = map;
    for key in parents {
        let next = here
            .entry(key.clone())
            .or_insert_with(|| Json::Object(Map::new()));
        if !next.is_object() {
            *next = Json::Object(Map::new());
        }
        let Json::Object(inner) = next else { return };
        here = inner;
    }
    here.insert(last.clone(), value);
}

/// Removes the key at `path` (nothing when a step is missing or not a mapping).
pub fn remove_path(target: &mut Json, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut here = target;
    for key in parents {
        match here.get_mut(key) {
            Some(next) => here = next,
            None => return,
        }
    }
    if let Json::Object(map) = here {
        map.remove(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_null_deletes_and_is_never_written() {
        let mut target = json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge_patch(
            &mut target,
            &json!({"a": null, "b": {"c": null, "e": 4}, "f": {"g": null, "h": 5}}),
        );
        assert_eq!(target, json!({"b": {"d": 3, "e": 4}, "f": {"h": 5}}));
    }

    #[test]
    fn merge_patch_replaces_lists_and_scalars_and_mappings_over_scalars() {
        let mut target = json!({"l": [1, 2], "s": "x", "m": 1});
        merge_patch(&mut target, &json!({"l": [3], "s": 2, "m": {"k": 1}}));
        assert_eq!(target, json!({"l": [3], "s": 2, "m": {"k": 1}}));
    }

    #[test]
    fn keyed_merge_patch_merges_named_items_and_null_deletes() {
        let mut target = json!({"c": [{"name": "a", "x": 1, "y": 2}, {"name": "b"}], "n": 1});
        keyed_merge_patch(
            &mut target,
            &json!({"c": [{"name": "a", "y": null, "z": 3}, {"name": "b", "$patch": "delete"}, {"name": "c"}], "n": null}),
        );
        assert_eq!(
            target,
            json!({"c": [{"name": "a", "x": 1, "z": 3}, {"name": "c"}]})
        );
        let mut plain = json!({"l": [1, 2]});
        keyed_merge_patch(&mut plain, &json!({"l": [3]}));
        assert_eq!(plain, json!({"l": [3]}));
    }

    #[test]
    fn deep_merge_keeps_a_null_as_a_value() {
        let mut target = json!({"a": {"b": 1, "c": 2}, "l": [1]});
        deep_merge(&mut target, &json!({"a": {"b": null}, "l": [2]}));
        assert_eq!(target, json!({"a": {"b": null, "c": 2}, "l": [2]}));
    }

    #[test]
    fn diff_removes_what_the_target_lacks_without_writing_null() {
        let from = json!({"a": {"b": 1, "c": 2}, "gone": true, "same": 1});
        let to = json!({"a": {"b": 5}, "same": 1, "new": null});
        let delta = diff(&from, &to);
        assert_eq!(
            delta.unset,
            vec![
                vec!["a".to_string(), "c".to_string()],
                vec!["gone".to_string()]
            ]
        );
        assert_eq!(
            Json::Object(delta.set.clone()),
            json!({"a": {"b": 5}, "new": null})
        );
        assert_eq!(delta.paths(), ["a.b", "a.c", "gone", "new"]);
        let mut applied = from.clone();
        delta.apply(&mut applied);
        assert_eq!(applied, to);
        assert!(diff(&to, &to).is_empty());
    }

    #[test]
    fn diff_replaces_a_scalar_with_a_mapping_whole() {
        let from = json!({"a": 1});
        let to = json!({"a": {"b": {"c": 1}}});
        let mut applied = from.clone();
        diff(&from, &to).apply(&mut applied);
        assert_eq!(applied, to);
    }
}

//! The template checks of `blueprint lint`: every template and file name parses and reads
//! only names in scope; catalog entries fit the manifest; replaced files' bases and
//! delimiter clashes (warnings).
use std::collections::HashSet;

use regex::Regex;
use serde_json::Value as Json;

use super::findings::{ADDON_BUILTIN, BUILTINS, Findings};
use crate::blueprint::Blueprint;
use crate::error::Error;
use crate::plan;
use crate::render::Renderer;
use crate::suggest;
use crate::yaml::Places;

/// Parses each template (so every syntax error is reported) and checks that every name it
/// reads is in scope: an answer or a built-in, `addon` in per-addon trees, and only fields
/// some catalog entry has on `addon`. Path templates too. Templates are compiled as
/// rendering compiles them, a chunk at a time with the shared ones (`plan::compile_chunk`);
/// only when a chunk fails is each of its templates compiled on its own (with the partials
/// it may include). When every template compiled, the names of the plain ones (which
/// `generate::renderer_for_linted` then need not read again).
pub(super) fn check_templates(
    blueprint: &Blueprint,
    found: &mut Findings,
) -> Option<HashSet<String>> {
    let sources = match plan::template_sources(blueprint) {
        Ok(sources) => sources,
        Err(e) => {
            found.report_error(&e);
            return None;
        }
    };
    // Found when a chunk has templates to compile. `template_sources` read every
    // template and patch as UTF-8 above, so finding the shared ones cannot fail.
    let shared = std::cell::OnceCell::new();
    let keys = blueprint.answer_names();
    let addon_fields = addon_fields(blueprint);
    let partials: Vec<&(String, &str)> = sources
        .iter()
        .filter(|(n, _)| n.starts_with("partials/"))
        .collect();
    let across = check_include_delimiters(blueprint, &sources, found);
    // A chunk holding such an include fails for it (Tera's report names no delimiters).
    let explained = |chunk: &[(String, &str)]| {
        chunk
            .iter()
            .any(|(name, _)| across.iter().any(|reported| reported == name))
    };
    let mut compiled = true;
    let mut plain = HashSet::new();
    for chunk in sources.chunks(plan::TEMPLATES_PER_CHUNK) {
        // Plain templates parse by construction and name their variables themselves;
        // the others are compiled as rendering compiles them.
        let read: Vec<_> = chunk
            .iter()
            .map(|(name, text)| {
                let delimiters = blueprint.delimiters_for(name);
                let plain = crate::render::plain_variables(text, &delimiters);
                (name, *text, delimiters, plain)
            })
            .collect();
        let others: Vec<(String, &str)> = read
            .iter()
            .filter(|(_, _, _, plain)| plain.is_none())
            .map(|(name, text, _, _)| ((*name).clone(), *text))
            .collect();
        let engine = (!others.is_empty()).then(|| {
            let shared = shared.get_or_init(|| plan::shared_sources(blueprint).unwrap_or_default());
            plan::compile_chunk(blueprint, &others, shared)
        });
        let mut clean = true;
        for (name, text, delimiters, plain_variables) in read {
            let variables = match (&engine, plain_variables) {
                (_, Some(variables)) => {
                    plain.insert(name.clone());
                    variables
                }
                (Some(Ok(renderer)), None) => renderer.variables(name),
                (_, None) => match compile_alone(name, text, &delimiters, &partials) {
                    Ok(single) => single.variables(name),
                    Err(e) => {
                        clean = false;
                        match &e {
                            // A partial's own error is reported once, with the partial.
                            Error::Located(at) if at.file != *name => {}
                            Error::Located(_) => found.report_error(&e),
                            other => {
                                let message = other.to_string();
                                if !partials
                                    .iter()
                                    .any(|(p, _)| p != name && message.contains(p.as_str()))
                                {
                                    found.error_text(name, &message);
                                }
                            }
                        }
                        continue;
                    }
                },
            };
            let in_addon = blueprint.reads_addon(name);
            for var in variables {
                if let Some(message) = out_of_scope(&var, &keys, in_addon) {
                    let at = variable(text, &var, &delimiters.variable[0], &delimiters.block[0]);
                    found.error(name, at, message);
                }
            }
            check_addon_fields(name, text, &addon_fields, found);
        }
        if let Some(Err(e)) = engine {
            compiled = false;
            if clean && !explained(chunk) {
                found.report_error(&e); // no template fails alone: they fail together
            }
        }
    }
    let rule = std::mem::replace(&mut found.rule, super::findings::rule::FILE_NAME);
    check_path_templates(blueprint, &keys, found);
    found.rule = rule;
    compiled.then_some(plain)
}

/// Each partial `text` includes (`BLOCK include "partials/x.tera"`), with where.
pub(super) fn includes(text: &str, block_start: &str) -> Vec<(String, (usize, usize))> {
    let pattern = format!(r#"{}-?\s*include\s+"([^"]+)""#, regex::escape(block_start));
    let Ok(include) = Regex::new(&pattern) else {
        return Vec::new();
    };
    include
        .captures_iter(text)
        .filter_map(|c| {
            let name = c.get(1)?;
            let at = position(text, name.start() - 1);
            Some((name.as_str().to_string(), at))
        })
        .collect()
}

/// An include of a partial written with other delimiters than the including template's:
/// each set of delimiters is its own engine, so the include would find no such template
/// ("Unknown template"). Reported at the include; the including templates, so the engine's
/// own report of the same include is not repeated.
fn check_include_delimiters(
    blueprint: &Blueprint,
    sources: &[(String, &str)],
    found: &mut Findings,
) -> Vec<String> {
    let mut reported = Vec::new();
    for (name, text) in sources {
        let delimiters = blueprint.delimiters_for(name);
        for (partial, at) in includes(text, &delimiters.block[0]) {
            let theirs = blueprint.delimiters_for(&partial);
            if theirs == delimiters || blueprint.file(&partial).is_none() {
                continue;
            }
            let [open, close] = &theirs.variable;
            let [our_open, our_close] = &delimiters.variable;
            found.error(
                name,
                at,
                format!(
                    "`{partial}` exists, but is written with other delimiters (`{open} {close}`) than this template (`{our_open} {our_close}`), and a template includes only partials of its own delimiters: give both the same (one `delimiters_by_glob` entry matching both, or none)"
                ),
            );
            reported.push(name.clone());
        }
    }
    reported
}

/// One template compiled with the partials it may include.
fn compile_alone(
    name: &str,
    text: &str,
    delimiters: &crate::blueprint::Delimiters,
    partials: &[&(String, &str)],
) -> crate::error::Result<Renderer> {
    let others = partials
        .iter()
        .filter(|(n, _)| n != name)
        .map(|(n, t)| (n.as_str(), *t));
    let sources = std::iter::once((name, text))
        .chain(others)
        .map(|(n, t)| crate::render::Source {
            name: n,
            text: t,
            delimiters: delimiters.clone(),
        });
    Renderer::new(delimiters, sources)
}

/// Why a template may not read `var` (`addon` only in per-addon trees and partials/).
fn out_of_scope(var: &str, keys: &[&str], in_addon: bool) -> Option<String> {
    let addon = in_addon.then_some(ADDON_BUILTIN);
    let mut in_scope = keys.iter().chain(BUILTINS).copied().chain(addon);
    if in_scope.any(|k| k == var) {
        return None;
    }
    let in_scope = keys.iter().chain(BUILTINS).copied().chain(addon);
    Some(format!(
        "`{var}` is neither a question of the blueprint nor a built-in{}",
        suggest::did_you_mean(var, in_scope)
    ))
}

/// Every field a template may read on `addon`: those of any catalog entry, the computed
/// ones and the documented optional ones.
fn addon_fields(blueprint: &Blueprint) -> Vec<String> {
    let mut fields: Vec<String> = COMPUTED_ADDON_FIELDS
        .iter()
        .map(|f| f.to_string())
        .chain(blueprint.manifest.catalog_fields.keys().cloned())
        .collect();
    for entry in blueprint.catalog.entries() {
        if let Json::Object(map) = entry.template_object("", &[]) {
            fields.extend(map.keys().cloned());
        }
    }
    if let Some(Json::Object(map)) = &blueprint.manifest.custom_addon {
        fields.extend(map.keys().cloned());
    }
    fields.sort();
    fields.dedup();
    fields
}

/// Fields scaffold computes on `addon` (the others are the blueprint's `catalog_fields`).
const COMPUTED_ADDON_FIELDS: &[&str] = &["dir"];

/// `addon.FIELD` (and `a.FIELD` for `for a in addons`) with a field no entry has reads as
/// undefined, which `if` takes for false: a misspelt field would drop output silently.
fn check_addon_fields(name: &str, text: &str, fields: &[String], found: &mut Findings) {
    // Every alias is `addon` or a loop over `addons`: a text without the word reads none.
    if !text.contains(ADDON_BUILTIN) {
        return;
    }
    static LOOP: std::sync::LazyLock<Option<Regex>> =
        std::sync::LazyLock::new(|| Regex::new(r"\bfor\s+(\w+)\s+in\s+addons\b").ok());
    static FIELD: std::sync::LazyLock<Option<Regex>> =
        std::sync::LazyLock::new(|| Regex::new(r"(?:^|[^\w.])(\w+)\.([A-Za-z_]\w*)").ok());
    let (Some(each), Some(field_of)) = (&*LOOP, &*FIELD) else {
        return;
    };
    let mut aliases = vec![ADDON_BUILTIN.to_string()];
    aliases.extend(each.captures_iter(text).map(|c| c[1].to_string()));
    for c in field_of.captures_iter(text) {
        let (alias, field) = (&c[1], &c[2]);
        if !aliases.iter().any(|a| a == alias) || fields.iter().any(|f| f == field) {
            continue;
        }
        let at = c.get(1).map_or(0, |m| m.start());
        found.error(
            name,
            position(text, at),
            format!(
                "`{alias}.{field}`: no catalog entry has a field `{field}`{}",
                suggest::did_you_mean(field, fields.iter().map(String::as_str))
            ),
        );
    }
}

/// File names are templates: they may read only answers and built-ins (and `addon`).
fn check_path_templates(blueprint: &Blueprint, keys: &[&str], found: &mut Findings) {
    // Names are rendered with the blueprint-wide delimiters, whatever their file's own.
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let Ok(mut scanner) = crate::render::Scanner::new(&delimiters) else {
        return; // bad delimiters are reported when the renderer is built
    };
    let per_environment: Vec<&str> = blueprint
        .trees
        .iter()
        .filter(|t| {
            blueprint.manifest.environments_answer.is_some()
                && matches!(
                    t.scope,
                    crate::blueprint::TreeScope::Environment
                        | crate::blueprint::TreeScope::AddonEnvironment
                )
        })
        .map(|t| t.prefix.as_str())
        .collect();
    for (prefix, tree) in blueprint.template_trees() {
        let in_addon = blueprint.reads_addon(prefix);
        for path in tree.keys() {
            if per_environment.contains(&prefix) && !path.contains(crate::answers::ENVIRONMENT) {
                found.warn(
                    &format!("{prefix}{path}"),
                    (1, 1),
                    format!(
                        "renders once per environment to a path that does not name `{}`: with two environments it is written twice",
                        crate::answers::ENVIRONMENT
                    ),
                );
            }
            if !path.contains(delimiters.variable[0].as_str())
                && !path.contains(delimiters.block[0].as_str())
            {
                continue;
            }
            let name = format!("{prefix}{path}");
            let column = |at: (usize, usize)| (1, prefix.chars().count() + at.1);
            let plain = crate::render::plain_variables(path, &delimiters);
            match plain.map_or_else(|| scanner.variables(path), Ok) {
                Err(e) => found.error(
                    &name,
                    column((e.line, e.column)),
                    format!("in the file name: {}", e.message),
                ),
                Ok(vars) => {
                    for var in vars {
                        if let Some(message) = out_of_scope(&var, keys, in_addon) {
                            let at =
                                variable(path, &var, &delimiters.variable[0], &delimiters.block[0]);
                            found.error(&name, column(at), format!("in the file name: {message}"));
                        }
                    }
                }
            }
        }
    }
}

/// Every catalog entry, selected by the defaults or not: its layer is one of the
/// manifest's, and what it `requires` are questions.
pub(super) fn check_catalog(blueprint: &Blueprint, found: &mut Findings) {
    let layers = &blueprint.manifest.layers;
    let keys = blueprint.answer_names();
    check_catalog_templates(blueprint, &keys, found);
    let declared = &blueprint.manifest.catalog_fields;
    for entry in blueprint.catalog.entries() {
        let file = format!("addons/{}.yaml", entry.spec.name);
        let places = Places::of(&String::from_utf8_lossy(entry.source()));
        // A field the blueprint does not declare is read by no template: a typo, most
        // likely, whose value is then silently ignored.
        if !declared.is_empty()
            && let Json::Object(fields) = entry.template_object("", &[])
        {
            for field in fields.keys().filter(|f| {
                !declared.contains_key(f.as_str()) && !COMPUTED_ADDON_FIELDS.contains(&f.as_str())
            }) {
                found.warn(
                    &file,
                    places.at(&[field.as_str()]),
                    format!(
                        "field `{field}` is not a catalog field of this blueprint{}; declare it under `catalog_fields` in blueprint.yaml if templates read it",
                        suggest::did_you_mean(field, declared.keys().map(String::as_str))
                    ),
                );
            }
        }
        let layer = &entry.spec.layer;
        if !layers.contains_key(layer) {
            found.error(
                &file,
                places.at(&["layer"]),
                format!(
                    "layer `{layer}` is not one of the blueprint's layers{}",
                    suggest::did_you_mean(layer, layers.keys().map(String::as_str))
                ),
            );
        }
        for key in entry
            .spec
            .requires
            .iter()
            .filter(|k| !keys.contains(&k.as_str()))
        {
            found.error(
                &file,
                places.section_key("requires", key),
                format!(
                    "requires `{key}`, which is not a question{}",
                    suggest::did_you_mean(key, keys.iter().copied())
                ),
            );
        }
    }
}

/// The templates inside catalog entries — `configs[].content` and `patches[].patch` —
/// checked like files for every entry, selected or not (an unselected entry's typo would
/// otherwise reach a user's `add-addon`): they parse, read only names in scope and
/// catalog fields that exist, and a patch names a file the blueprint writes.
fn check_catalog_templates(blueprint: &Blueprint, keys: &[&str], found: &mut Findings) {
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let Ok(mut scanner) = crate::render::Scanner::new(&delimiters) else {
        return;
    };
    let fields = addon_fields(blueprint);
    let outputs: Vec<String> = blueprint
        .template_trees()
        .iter()
        .filter(|(prefix, _)| *prefix != "partials/")
        .flat_map(|(prefix, tree)| {
            tree.keys()
                .map(move |p| crate::overrides::output_of(&format!("{prefix}{p}")).to_string())
        })
        .collect();
    for entry in blueprint.catalog.entries() {
        let file = format!("addons/{}.yaml", entry.spec.name);
        let text = String::from_utf8_lossy(entry.source()).into_owned();
        let places = Places::of(&text);
        let raw = entry.template_object("", &[]);
        // Each template with the place of its value in the entry.
        let mut templates: Vec<(&str, &str, (usize, usize))> = Vec::new();
        let place = |section: &str, index: usize, field: &str| {
            places
                .root()
                .and_then(|root| root.get(section)?.get(&index.to_string())?.get(field))
                .map_or_else(|| places.at(&[section]), |node| node.content_pos().pair())
        };
        for (index, config) in raw
            .get("configs")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(content) = config.get("content").and_then(Json::as_str) {
                templates.push(("configs", content, place("configs", index, "content")));
            }
        }
        for (index, patch) in raw
            .get("patches")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(target) = patch.get("file").and_then(Json::as_str)
                && !outputs.iter().any(|o| o == target)
            {
                found.error(
                    &file,
                    place("patches", index, "file"),
                    format!(
                        "patches: `{target}` is not a file this blueprint writes{}",
                        suggest::did_you_mean(target, outputs.iter().map(String::as_str))
                    ),
                );
            }
            if let Some(body) = patch.get("patch").and_then(Json::as_str) {
                templates.push(("patches", body, place("patches", index, "patch")));
            }
        }
        for (field, template, (line, column)) in templates {
            // A position inside the template is shifted to where its value starts.
            let indent = column.saturating_sub(1);
            let shift = |(l, c): (usize, usize)| {
                (
                    line + l - 1,
                    if l == 1 { column + c - 1 } else { indent + c },
                )
            };
            match scanner.variables(template) {
                Err(e) => found.error(
                    &file,
                    shift((e.line, e.column)),
                    format!("{field}: {}", e.message),
                ),
                Ok(vars) => {
                    for var in vars {
                        if let Some(message) = out_of_scope(&var, keys, true) {
                            let at = variable(
                                template,
                                &var,
                                &delimiters.variable[0],
                                &delimiters.block[0],
                            );
                            found.error(&file, shift(at), format!("{field}: {message}"));
                        }
                    }
                }
            }
            let mut inner = Findings::new(found.rule);
            check_addon_fields(&file, template, &fields, &mut inner);
            for f in inner.found {
                found.error(
                    &file,
                    shift((f.line, f.column)),
                    format!("{field}: {}", f.message),
                );
            }
        }
    }
}

/// A replaced inherited file whose base changed since the layer recorded its digest.
pub(super) fn check_overrides(blueprint: &Blueprint, found: &mut Findings) {
    for (path, change) in &blueprint.overrides {
        if change.base_changed() {
            let what = match change.kind {
                crate::overrides::OverrideKind::Replaced => {
                    "replaces a file of {} that changed since it was copied"
                }
                crate::overrides::OverrideKind::Patched => {
                    "is patched, and its file in {} changed since the patch was written"
                }
            };
            found.warn(
                path,
                (1, 1),
                format!(
                    "{} (recorded {}, now {}): compare them, then update `replaces`",
                    what.replace("{}", &change.base),
                    change.recorded.as_deref().unwrap_or_default(),
                    change.base_digest
                ),
            );
        }
    }
}

pub(super) fn check_delimiter_clashes(blueprint: &Blueprint, found: &mut Findings) {
    let keys = blueprint.question_keys();
    // `{{ answer }}` (or `{{ answer | f }}`) for any answer: one regex for all of them.
    let alternatives: Vec<String> = keys.iter().map(|k| regex::escape(k)).collect();
    let foreign = Regex::new(&format!(
        r"\{{\{{-?\s*({})\s*(\||-?\}}\}})",
        alternatives.join("|")
    ))
    .ok()
    .filter(|_| !keys.is_empty());
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree {
            let name = format!("{prefix}{path}");
            let delimiters = blueprint.delimiters_for(&name);
            let Ok(text) = std::str::from_utf8(bytes) else {
                continue;
            };
            if path.ends_with(".tera") {
                // `{{ answer }}` in a template whose variables are written otherwise.
                if delimiters.variable[0] != "{{"
                    && let Some(re) = &foreign
                {
                    let mut seen = Vec::new();
                    for c in re.captures_iter(text) {
                        let (Some(m), Some(key)) = (c.get(0), c.get(1)) else {
                            continue;
                        };
                        if seen.contains(&key.as_str()) {
                            continue;
                        }
                        seen.push(key.as_str());
                        found.warn(&name, position(text, m.start()), format!(
                            "`{}` looks like a template variable, but this template writes them `{} {} {}`",
                            m.as_str(), delimiters.variable[0], key.as_str(), delimiters.variable[1]
                        ));
                    }
                }
            } else {
                for start in [&delimiters.variable[0], &delimiters.block[0]] {
                    if let Some(at) = text.find(start.as_str()) {
                        found.warn(&name, position(text, at), format!(
                            "contains `{start}` but is copied as is (only `.tera` files are rendered)"
                        ));
                        break;
                    }
                }
            }
        }
    }
}

// Places in a template's text. A template is not YAML until it renders, and Tera 2 names
// the variables a template reads (`get_template_variables`) without their spans, so these
// search the text; each falls back to the first mention, never to a made-up place.

/// 1-based line and column of byte offset `at`.
pub(super) fn position(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

/// The first occurrence of `needle` (1:1 when absent).
pub(super) fn first_at(text: &str, needle: &str) -> (usize, usize) {
    text.find(needle)
        .map(|at| position(text, at))
        .unwrap_or((1, 1))
}

/// Where a template reads `var`: its first whole-word use after an opening delimiter on
/// the same line.
pub(super) fn variable(
    text: &str,
    var: &str,
    variable_start: &str,
    block_start: &str,
) -> (usize, usize) {
    let Ok(word) = Regex::new(&format!(r"\b{}\b", regex::escape(var))) else {
        return (1, 1);
    };
    for m in word.find_iter(text) {
        let line_start = text[..m.start()].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let before = &text[line_start..m.start()];
        if before.contains(variable_start) || before.contains(block_start) {
            return position(text, m.start());
        }
    }
    first_at(text, var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_variable_inside_delimiters() {
        let text = "team: x\nowner: [[ team ]]\n";
        assert_eq!(variable(text, "team", "[[", "[%"), (2, 11));
    }
}

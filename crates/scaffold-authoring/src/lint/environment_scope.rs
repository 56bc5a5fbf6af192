//! `blueprint.environment-scope`, read from the templates: a file that renders once for
//! every environment (a `repo`- or `addon`-scoped tree, its path, an addon's `configs`, a
//! catalog patch of such a file) or a shared question's templates must not read
//! `environment` or a `per_environment` answer: it would take the first environment's
//! value for all of them. (What differs between environments through the addons they run
//! is found by rendering two environments, `environment_render`.)
use crate::blueprint::{Blueprint, TreeScope};
use crate::render::Scanner;
use crate::yaml::Places;
use serde_json::Value as Json;

use super::findings::{BUILTINS, Findings};

/// The fix every finding names.
const FIX: &str = "move it to an environment-scoped tree (`scope: environment` or `addon-environment` under `trees:`), or substitute a per-cluster value from `cluster-vars` (`${VAR}`, written by each environment's bridge)";

/// The names whose value is an environment's own: `environment` and every
/// `per_environment` answer but the addons' (which `addons`, a built-in, shadows).
pub(super) fn environment_names(blueprint: &Blueprint) -> Vec<String> {
    if blueprint.manifest.environments_answer.is_none() {
        return Vec::new();
    }
    let addons_key = blueprint.manifest.addons_answer();
    let mut names: Vec<String> = blueprint
        .manifest
        .questions
        .iter()
        .filter(|q| q.per_environment && q.key != addons_key && !BUILTINS.contains(&q.key.as_str()))
        .map(|q| q.key.clone())
        .collect();
    if !names.iter().any(|n| n == crate::manifest::ENVIRONMENT) {
        names.push(crate::manifest::ENVIRONMENT.to_string());
    }
    names
}

/// Whether the blueprint-relative path lies in a tree rendered once for every environment.
pub(super) fn is_shared(blueprint: &Blueprint, path: &str) -> bool {
    blueprint.trees.iter().any(|t| {
        matches!(t.scope, TreeScope::Repo | TreeScope::Addon) && path.starts_with(&t.prefix)
    })
}

pub(super) fn check(blueprint: &Blueprint, manifest_text: &str, found: &mut Findings) {
    let names = environment_names(blueprint);
    if names.is_empty() {
        return;
    }
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let Ok(mut scanner) = Scanner::new(&delimiters) else {
        return; // bad delimiters are reported when the renderer is built
    };
    let mut scan = |source: &str| scanner.variables(source).unwrap_or_default();
    check_environment_list(blueprint, &mut scan, found);
    let mut reads = |source: &str| -> Vec<String> {
        scan(source)
            .into_iter()
            .filter(|v| names.contains(v))
            .collect()
    };
    check_files(blueprint, &mut reads, found);
    check_catalog(blueprint, &mut reads, found);
    check_questions(blueprint, manifest_text, &mut reads, found);
}

/// Templates of shared trees, and their paths.
fn check_files(
    blueprint: &Blueprint,
    reads: &mut dyn FnMut(&str) -> Vec<String>,
    found: &mut Findings,
) {
    for tree in blueprint
        .trees
        .iter()
        .filter(|t| matches!(t.scope, TreeScope::Repo | TreeScope::Addon))
    {
        for path in tree.files.keys() {
            let name = format!("{}{path}", tree.prefix);
            let paths = blueprint.manifest.delimiters.clone().unwrap_or_default();
            for var in reads(path) {
                let message = format!(
                    "in the file name: `{var}` is an environment's own value, but `{}` renders once for every environment; {FIX}",
                    tree.prefix
                );
                let at =
                    super::templates::variable(&name, &var, &paths.variable[0], &paths.block[0]);
                found.error(&name, at, message);
            }
            let Some(text) = blueprint
                .file(&name)
                .and_then(|bytes| String::from_utf8(bytes).ok())
            else {
                continue;
            };
            let delimiters = blueprint.delimiters_for(&name);
            for var in reads(&text) {
                let at = super::templates::variable(
                    &text,
                    &var,
                    &delimiters.variable[0],
                    &delimiters.block[0],
                );
                let message = format!(
                    "`{var}` is an environment's own value, but this file renders once for every environment (tree `{}`); {FIX}",
                    tree.prefix.trim_end_matches('/')
                );
                found.error(&name, at, message);
            }
            for (partial, at) in super::templates::includes(&text, &delimiters.block[0]) {
                for var in partial_reads(blueprint, &partial, reads) {
                    let message = format!(
                        "`{partial}`, included here, reads `{var}`, an environment's own value, but this file renders once for every environment (tree `{}`); {FIX}",
                        tree.prefix.trim_end_matches('/')
                    );
                    found.error(&name, at, message);
                }
            }
        }
    }
}

/// The environment names `partial` reads, itself or through the partials it includes.
fn partial_reads(
    blueprint: &Blueprint,
    partial: &str,
    reads: &mut dyn FnMut(&str) -> Vec<String>,
) -> Vec<String> {
    let mut seen = vec![partial.to_string()];
    let mut names = Vec::new();
    let mut at = 0;
    while let Some(name) = seen.get(at).cloned() {
        at += 1;
        let Some(text) = blueprint
            .file(&name)
            .filter(|_| name.starts_with("partials/"))
            .and_then(|bytes| String::from_utf8(bytes).ok())
        else {
            continue;
        };
        for var in reads(&text) {
            if !names.contains(&var) {
                names.push(var);
            }
        }
        let block = blueprint.delimiters_for(&name).block[0].clone();
        for (next, _) in super::templates::includes(&text, &block) {
            if !seen.contains(&next) {
                seen.push(next);
            }
        }
    }
    names
}

/// The environments answer (every environment's name) read where one environment's name
/// is meant: an environment's own file, or an addon's shared file (rendered for the
/// environments that run the addon, which need not be the first nor the last). A repo
/// file may list them, or name the first (as Renovate's rules do).
fn check_environment_list(
    blueprint: &Blueprint,
    scan: &mut dyn FnMut(&str) -> Vec<String>,
    found: &mut Findings,
) {
    let Some(list) = blueprint.manifest.environments_answer.as_deref() else {
        return;
    };
    for tree in blueprint
        .trees
        .iter()
        .filter(|t| !matches!(t.scope, TreeScope::Repo))
    {
        let fix = match tree.scope {
            TreeScope::Addon => format!(
                "an addon's shared file renders for the environments that run it: name the first of them with `{}[addon.name]`, or move the file to an `addon-environment` tree and name its own with `environment`",
                crate::generate::FIRST_ENVIRONMENT_OF
            ),
            _ => "this file is one environment's: name it with `environment` (its templates see only their own environment's answers); what concerns every environment belongs in a `repo`-scoped file".to_string(),
        };
        for path in tree.files.keys() {
            let name = format!("{}{path}", tree.prefix);
            let Some(text) = blueprint
                .file(&name)
                .and_then(|bytes| String::from_utf8(bytes).ok())
            else {
                continue;
            };
            if !scan(&text).iter().any(|v| v == list) {
                continue;
            }
            let delimiters = blueprint.delimiters_for(&name);
            let at = super::templates::variable(
                &text,
                list,
                &delimiters.variable[0],
                &delimiters.block[0],
            );
            let message = format!(
                "`{list}` lists every environment, but this file renders once per {} (tree `{}`): {fix}",
                if matches!(tree.scope, TreeScope::Addon) {
                    "addon"
                } else {
                    "environment"
                },
                tree.prefix.trim_end_matches('/')
            );
            found.error(&name, at, message);
        }
    }
}

/// An addon's `configs` (rendered into its shared config directory) and its `patches` of
/// shared files.
fn check_catalog(
    blueprint: &Blueprint,
    reads: &mut dyn FnMut(&str) -> Vec<String>,
    found: &mut Findings,
) {
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    for entry in blueprint.catalog.entries() {
        let file = format!("addons/{}.yaml", entry.spec.name);
        let text = String::from_utf8_lossy(entry.source()).into_owned();
        let places = Places::of(&text);
        let raw = entry.template_object("", &[]);
        let place = |section: &str, index: usize, field: &str| {
            places
                .root()
                .and_then(|root| root.get(section)?.get(&index.to_string())?.get(field))
                .map_or_else(|| places.at(&[section]), |node| node.content_pos().pair())
        };
        let items = |section: &str| -> Vec<Json> {
            raw.get(section)
                .and_then(Json::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for (index, config) in items("configs").iter().enumerate() {
            let content = config.get("content").and_then(Json::as_str).unwrap_or("");
            for var in reads(content) {
                let at = within(
                    content,
                    &var,
                    place("configs", index, "content"),
                    &delimiters,
                );
                let message = format!(
                    "configs: `{var}` is an environment's own value, but an addon's configs render once for every environment; {FIX}"
                );
                found.error(&file, at, message);
            }
        }
        for (index, patch) in items("patches").iter().enumerate() {
            let target = patch.get("file").and_then(Json::as_str).unwrap_or("");
            if !is_shared(blueprint, target) {
                continue; // applied per environment, with its own answers
            }
            if !entry.spec.always {
                let message = format!(
                    "patches: `{target}` renders once for every environment, so this patch lands in environments that do not run {}; patch a file of an environment-scoped tree (applied only where the addon runs), or make the addon `always`",
                    entry.spec.name
                );
                found.error(&file, place("patches", index, "file"), message);
            }
            let body = patch.get("patch").and_then(Json::as_str).unwrap_or("");
            for var in reads(body) {
                let at = within(body, &var, place("patches", index, "patch"), &delimiters);
                let message = format!(
                    "patches: `{var}` is an environment's own value, but `{target}` renders once for every environment; {FIX}"
                );
                found.error(&file, at, message);
            }
        }
    }
}

/// A question answered once for the repo whose templates read an environment's value.
fn check_questions(
    blueprint: &Blueprint,
    manifest_text: &str,
    reads: &mut dyn FnMut(&str) -> Vec<String>,
    found: &mut Findings,
) {
    let places = Places::of(manifest_text);
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let [open, close] = &delimiters.block;
    for question in blueprint
        .manifest
        .questions
        .iter()
        .filter(|q| !q.per_environment)
    {
        let fields = [
            ("default", question.default.as_ref().and_then(Json::as_str)),
            ("when", question.when.as_deref()),
            ("regex", question.regex.as_deref()),
            ("error", question.error.as_deref()),
        ];
        for (field, source) in fields {
            let Some(source) = source else { continue };
            // `when` is an expression: scanned as the condition it is.
            let source = match field {
                "when" => format!("{open} if {source} {close}x{open} endif {close}"),
                _ => source.to_string(),
            };
            let at = places
                .item_field("questions", "key", &question.key, field)
                .or_else(|| {
                    (field == "default").then(|| places.section_key("defaults", &question.key))
                })
                .unwrap_or((1, 1));
            for var in reads(&source) {
                let message = format!(
                    "question `{}`: `{field}` reads `{var}`, an environment's own value, but `{}` is answered once for every environment: mark it `per_environment: true`, or read only shared answers",
                    question.key, question.key
                );
                found.error("blueprint.yaml", at, message);
            }
        }
    }
}

/// Where `var` is read in a block scalar `text` whose first line is at `start` in its file.
fn within(
    text: &str,
    var: &str,
    start: (usize, usize),
    delimiters: &crate::blueprint::Delimiters,
) -> (usize, usize) {
    let (line, column) =
        super::templates::variable(text, var, &delimiters.variable[0], &delimiters.block[0]);
    (start.0 + line - 1, start.1 + column - 1)
}

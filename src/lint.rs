//! `scaffold blueprint lint`: everything that can be known wrong about a blueprint before
//! anyone answers it, each finding at FILE:LINE:COLUMN.
use std::cell::RefCell;
use std::path::Path;

use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::answers::{self, Prompt, Prompter, Sources, as_text};
use crate::blueprint::{Blueprint, Manifest};
use crate::error::{Error, Result};
use crate::generate;
use crate::locate::{self, locate, position};
use crate::plan::{self, RelPath};
use crate::record::Record;
use crate::references;
use crate::render::Renderer;
use crate::scope;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub warning: bool,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let level = if self.warning { "warning" } else { "error" };
        write!(
            f,
            "{}:{}:{}: {level}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Variables every template may read besides the answers.
pub const BUILTINS: &[&str] = &["blueprint", "scaffold_version", "addons", "addon_names"];
/// Read only by templates under addon-files/ (and the partials they include).
pub const ADDON_BUILTIN: &str = "addon";

#[derive(Default)]
struct Findings(Vec<Finding>, String);

impl Findings {
    fn error(&mut self, file: &str, (line, column): (usize, usize), message: impl Into<String>) {
        self.0.push(Finding {
            file: file.into(),
            line,
            column,
            warning: false,
            message: message.into(),
        });
    }

    fn warn(&mut self, file: &str, (line, column): (usize, usize), message: impl Into<String>) {
        self.0.push(Finding {
            file: file.into(),
            line,
            column,
            warning: true,
            message: message.into(),
        });
    }

    /// An error: where it says, or (for the few Tera reports that exist only as text, and
    /// messages without a place) where its text names a blueprint file.
    fn report_error(&mut self, err: &crate::error::Error) {
        match err {
            crate::error::Error::Located(at) => {
                let file = at.file.strip_prefix(self.1.as_str()).unwrap_or(&at.file);
                self.error(file, (at.line, at.column), at.message.clone());
            }
            other => self.error_text("blueprint.yaml", &other.to_string()),
        }
    }

    /// An error message naming a blueprint file, maybe with `:LINE:COL`: reported there.
    fn error_text(&mut self, fallback_file: &str, text: &str) {
        let re = Regex::new(
            r"^(?:.*?/)?((?:files|addon-files|addons)/.+?|blueprint\.yaml)(?::(\d+):(\d+))?: (.*)$",
        );
        let text = text.strip_prefix("blueprint ").unwrap_or(text);
        let located = re.ok().and_then(|re| {
            re.captures(text).map(|c| {
                let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(1);
                (c[1].to_string(), num(2), num(3), c[4].to_string())
            })
        });
        match located {
            Some((file, line, col, message)) => self.error(&file, (line, col), message),
            None => self.error(fallback_file, (1, 1), text),
        }
    }
}

pub fn lint(dir: &Path) -> Result<Vec<Finding>> {
    let mut found = Findings::default();
    let manifest_path = dir.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| crate::error::Error::io_path("read", &manifest_path, e))?;
    let manifest: Manifest = match serde_yaml::from_str(&text) {
        Ok(m) => m,
        Err(e) => {
            let at = e
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((1, 1));
            found.error(
                "blueprint.yaml",
                at,
                e.to_string().split(" at line ").next().unwrap_or_default(),
            );
            return Ok(found.0);
        }
    };
    check_regexes(&manifest, &text, &mut found);
    for path in &manifest.remove_files {
        if RelPath::new(path.trim_end_matches('/')).is_err() {
            found.error(
                "blueprint.yaml",
                locate(&text, path),
                format!("remove_files: `{path}` is not a path inside the blueprint"),
            );
        }
    }
    check_symlinks(dir, &mut found);
    if !found.0.is_empty() {
        found.0.sort();
        return Ok(found.0);
    }
    let root = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    found.1 = format!("{}/", root.display());
    let blueprint = match Blueprint::load(&dir.display().to_string()) {
        Ok(b) => b,
        Err(e) => {
            found.report_error(&e);
            return Ok(found.0);
        }
    };
    found.0.extend(lint_loaded(&blueprint, &text));
    found.0.iter_mut().for_each(|f| {
        if let Some(rel) = f.file.strip_prefix(found.1.as_str()) {
            f.file = rel.to_string();
        }
    });
    found.0.sort();
    found.0.dedup();
    Ok(found.0)
}

/// The checks of a loaded blueprint: templates, the names they read, delimiter clashes,
/// overrides, then a render with every default and the references in the result.
/// `manifest_text` is the text of its own `blueprint.yaml`.
pub fn lint_loaded(blueprint: &Blueprint, manifest_text: &str) -> Vec<Finding> {
    let mut found = Findings::default();
    let renderer = check_templates(blueprint, &mut found);
    check_delimiter_clashes(blueprint, &mut found);
    check_overrides(blueprint, &mut found);
    check_catalog(blueprint, &mut found);
    if let Some(renderer) = renderer {
        check_defaults_and_render(blueprint, &renderer, manifest_text, &mut found);
    }
    found.0
}

/// The errors `scaffold new` refuses a blueprint for, before asking anything: every check
/// that needs no answers (templates parse, read only names in scope). Embedded blueprints
/// are linted by scaffold's own tests and skip this.
pub fn static_findings(blueprint: &Blueprint) -> Vec<Finding> {
    if blueprint.origin.starts_with("embedded:") {
        return Vec::new();
    }
    let mut found = Findings(Vec::new(), format!("{}/", blueprint.origin));
    check_templates(blueprint, &mut found);
    check_delimiter_clashes(blueprint, &mut found);
    check_overrides(blueprint, &mut found);
    found.0.sort();
    found.0.dedup();
    found.0
}

fn check_regexes(manifest: &Manifest, text: &str, found: &mut Findings) {
    let delimiters = manifest.delimiters.clone().unwrap_or_default();
    for question in &manifest.questions {
        for pattern in [&question.regex, &question.item_regex, &question.value_regex]
            .into_iter()
            .flatten()
        {
            if pattern.contains(delimiters.variable[0].as_str())
                || pattern.contains(delimiters.block[0].as_str())
            {
                continue; // a template: compiled once rendered, below
            }
            if let Err(e) = Regex::new(pattern) {
                let message = e
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                found.error(
                    "blueprint.yaml",
                    locate(text, pattern),
                    format!(
                        "question `{}`: regex does not compile: {message}",
                        question.key
                    ),
                );
            }
        }
    }
}

fn check_symlinks(dir: &Path, found: &mut Findings) {
    let Ok(root) = dir.canonicalize() else { return };
    for entry in walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if !entry.path_is_symlink() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&root)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match entry.path().canonicalize() {
            Ok(target) if target.starts_with(&root) => {}
            Ok(target) => found.error(
                &rel,
                (1, 1),
                format!(
                    "symlink points outside the blueprint ({})",
                    target.display()
                ),
            ),
            Err(_) => found.error(&rel, (1, 1), "symlink points nowhere"),
        }
    }
}

/// Parses each template on its own (so every syntax error is reported) and checks that
/// every name it reads is in scope: an answer or a built-in, `addon` under addon-files/,
/// and only fields some catalog entry has on `addon`. Path templates too.
fn check_templates(blueprint: &Blueprint, found: &mut Findings) -> Option<Renderer> {
    let sources = match plan::template_sources(blueprint) {
        Ok(s) => s,
        Err(e) => {
            found.report_error(&e);
            return None;
        }
    };
    let keys = blueprint.question_keys();
    let addon_fields = addon_fields(blueprint);
    let mut clean = true;
    let partials: Vec<&(String, String)> = sources
        .iter()
        .filter(|(n, _)| n.starts_with("partials/"))
        .collect();
    for (name, text) in &sources {
        let delimiters = blueprint.delimiters_for(name);
        // Compiled with the partials it may include, but reported on its own.
        let with_partials = std::iter::once((name, text))
            .chain(
                partials
                    .iter()
                    .filter(|(n, _)| n != name)
                    .map(|(n, t)| (n, t)),
            )
            .map(|(n, t)| crate::render::Source {
                name: n,
                text: t,
                delimiters: delimiters.clone(),
            });
        let single = match Renderer::new(&delimiters, with_partials) {
            Ok(r) => r,
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
        };
        let in_addon = name.starts_with("addon-files/") || name.starts_with("partials/");
        for var in single.variables(name) {
            let known = keys.contains(&var.as_str())
                || BUILTINS.contains(&var.as_str())
                || (var == ADDON_BUILTIN && in_addon);
            if !known {
                let in_scope = keys
                    .iter()
                    .chain(BUILTINS)
                    .copied()
                    .chain(in_addon.then_some(ADDON_BUILTIN));
                found.error(
                    name,
                    locate::variable(text, &var, &delimiters.variable[0], &delimiters.block[0]),
                    format!(
                        "`{var}` is neither a question of the blueprint nor a built-in{}",
                        scope::did_you_mean(&var, in_scope)
                    ),
                );
            }
        }
        check_addon_fields(name, text, &addon_fields, found);
    }
    check_path_templates(blueprint, &keys, found);
    if !clean {
        return None;
    }
    generate::renderer_for(blueprint)
        .map_err(|e| found.report_error(&e))
        .ok()
}

/// Every field a template may read on `addon`: those of any catalog entry, the computed
/// ones and the documented optional ones.
fn addon_fields(blueprint: &Blueprint) -> Vec<String> {
    let mut fields: Vec<String> = OPTIONAL_ADDON_FIELDS
        .iter()
        .map(|f| f.to_string())
        .collect();
    for entry in blueprint.catalog.entries() {
        if let Json::Object(map) = entry.template_object("") {
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

/// Catalog fields that entries may leave out (templates test them with `is defined`).
const OPTIONAL_ADDON_FIELDS: &[&str] = &[
    "name",
    "description",
    "layer",
    "always",
    "default",
    "namespace",
    "create_namespace",
    "requires",
    "depends_on",
    "chart",
    "crds",
    "service_account",
    "iam_policy",
    "values",
    "bridge_values",
    "release_depends_on",
    "wait",
    "configs",
    "prerequisites",
    "dir",
];

/// `addon.FIELD` (and `a.FIELD` for `for a in addons`) with a field no entry has reads as
/// undefined, which `if` takes for false: a misspelt field would drop output silently.
fn check_addon_fields(name: &str, text: &str, fields: &[String], found: &mut Findings) {
    let mut aliases = vec![ADDON_BUILTIN.to_string()];
    if let Ok(re) = Regex::new(r"\bfor\s+(\w+)\s+in\s+addons\b") {
        aliases.extend(re.captures_iter(text).map(|c| c[1].to_string()));
    }
    for alias in aliases {
        let Ok(re) = Regex::new(&format!(
            r"(?:^|[^\w.])({})\.([A-Za-z_]\w*)",
            regex::escape(&alias)
        )) else {
            continue;
        };
        for c in re.captures_iter(text) {
            let field = &c[2];
            if fields.iter().any(|f| f == field) {
                continue;
            }
            let at = c.get(1).map_or(0, |m| m.start());
            found.error(
                name,
                locate::position(text, at),
                format!(
                    "`{alias}.{field}`: no catalog entry has a field `{field}`{}",
                    scope::did_you_mean(field, fields.iter().map(String::as_str))
                ),
            );
        }
    }
}

/// File names are templates: they may read only answers and built-ins (and `addon`).
fn check_path_templates(blueprint: &Blueprint, keys: &[&str], found: &mut Findings) {
    for (prefix, tree) in blueprint.template_trees() {
        let in_addon = prefix == "addon-files/" || prefix == "partials/";
        for path in tree.keys() {
            let delimiters = blueprint.delimiters_for(&format!("{prefix}{path}"));
            if !path.contains(delimiters.variable[0].as_str())
                && !path.contains(delimiters.block[0].as_str())
            {
                continue;
            }
            let name = format!("{prefix}{path}");
            let column = |at: (usize, usize)| (1, prefix.chars().count() + at.1);
            match crate::render::variables_of(&delimiters, path) {
                Err(e) => found.error(
                    &name,
                    column((e.line, e.column)),
                    format!("in the file name: {}", e.message),
                ),
                Ok(vars) => {
                    for var in vars {
                        let known = keys.contains(&var.as_str())
                            || BUILTINS.contains(&var.as_str())
                            || (var == ADDON_BUILTIN && in_addon);
                        if !known {
                            let in_scope = keys
                                .iter()
                                .chain(BUILTINS)
                                .copied()
                                .chain(in_addon.then_some(ADDON_BUILTIN));
                            found.error(
                                &name,
                                column(locate::variable(path, &var, &delimiters.variable[0], &delimiters.block[0])),
                                format!(
                                    "in the file name: `{var}` is neither a question of the blueprint nor a built-in{}",
                                    scope::did_you_mean(&var, in_scope)
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Every catalog entry, selected by the defaults or not: its layer is one of the
/// manifest's, and what it `requires` are questions.
fn check_catalog(blueprint: &Blueprint, found: &mut Findings) {
    let layers = &blueprint.manifest.layers;
    let keys = blueprint.question_keys();
    for entry in blueprint.catalog.entries() {
        let file = format!("addons/{}.yaml", entry.spec.name);
        let text = String::from_utf8_lossy(entry.source());
        let layer = &entry.spec.layer;
        if !layers.contains_key(layer) {
            found.error(
                &file,
                locate(&text, "layer:"),
                format!(
                    "layer `{layer}` is not one of the blueprint's layers{}",
                    scope::did_you_mean(layer, layers.keys().map(String::as_str))
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
                locate::section_key(&text, "requires", key),
                format!(
                    "requires `{key}`, which is not a question{}",
                    scope::did_you_mean(key, keys.iter().copied())
                ),
            );
        }
    }
}

/// A replaced inherited file whose base changed since the layer recorded its digest.
fn check_overrides(blueprint: &Blueprint, found: &mut Findings) {
    for (path, change) in &blueprint.overrides {
        if change.base_changed() {
            found.warn(
                path,
                (1, 1),
                format!(
                    "replaces a file of {} that changed since it was copied (recorded {}, now {}): compare them, then update `replaces`",
                    change.base,
                    change.recorded.as_deref().unwrap_or_default(),
                    change.base_digest
                ),
            );
        }
    }
}

fn check_delimiter_clashes(blueprint: &Blueprint, found: &mut Findings) {
    let keys = blueprint.question_keys();
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree {
            let name = format!("{prefix}{path}");
            let delimiters = blueprint.delimiters_for(&name);
            let Ok(text) = std::str::from_utf8(bytes) else {
                continue;
            };
            if path.ends_with(".tera") {
                // `{{ answer }}` in a template whose variables are written otherwise.
                if delimiters.variable[0] != "{{" {
                    for key in &keys {
                        let pattern = format!(r"\{{\{{-?\s*{}\s*(\||-?\}}\}})", regex::escape(key));
                        if let Ok(re) = Regex::new(&pattern)
                            && let Some(m) = re.find(text)
                        {
                            found.warn(&name, position(text, m.start()), format!(
                                "`{}` looks like a template variable, but this template writes them `{} {key} {}`",
                                m.as_str(), delimiters.variable[0], delimiters.variable[1]
                            ));
                        }
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

/// Answers every question with its default (recording defaults that fail their own
/// validation), then renders the blueprint with them.
fn check_defaults_and_render(
    blueprint: &Blueprint,
    renderer: &Renderer,
    manifest_text: &str,
    found: &mut Findings,
) {
    struct Defaults<'f> {
        failures: &'f RefCell<Vec<(String, String)>>,
    }
    impl Prompter for Defaults<'_> {
        fn ask(&mut self, prompt: &Prompt<'_>) -> Result<Json> {
            let key = prompt.question.key.clone();
            match &prompt.default {
                Some(default) => match (prompt.check)(&as_text(default)) {
                    Ok(value) => Ok(value),
                    Err(message) => {
                        self.failures.borrow_mut().push((key, message));
                        Ok(default.clone())
                    }
                },
                None => Ok(Json::String(String::new())),
            }
        }
    }
    let failures = RefCell::new(Vec::new());
    let mut prompter = Defaults {
        failures: &failures,
    };
    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), Json::String("lint".into()));
    let gathered = answers::gather(
        blueprint,
        renderer,
        Sources {
            set: Vec::new(),
            values: Default::default(),
            prompter: Some(&mut prompter),
            builtins,
        },
    );
    for (key, message) in failures.into_inner() {
        let at = locate::question_field(manifest_text, &key, "default");
        found.error(
            "blueprint.yaml",
            at,
            format!("question `{key}`: the default fails its own validation: {message}"),
        );
    }
    let answers = match gathered {
        Ok(a) => a,
        Err(e) => {
            found.report_error(&e);
            return;
        }
    };
    if found.0.iter().any(|f| !f.warning) {
        return; // rendering would only repeat what is already reported
    }
    let record: Record = generate::record_for(blueprint, &answers, Map::new());
    match generate::render(blueprint, renderer, &answers, &record) {
        Err(e) => found.report_error(&e),
        Ok(rendered) => {
            for broken in references::check(&rendered.plan) {
                let (file, at) =
                    source_place(blueprint, &rendered.plan, &broken.file, &broken.reference);
                found.error(&file, at, broken.message);
            }
        }
    }
}

/// The blueprint file a rendered file came from, and where in it `needle` is.
fn source_place(
    blueprint: &Blueprint,
    plan: &plan::Plan,
    file: &RelPath,
    needle: &str,
) -> (String, (usize, usize)) {
    let Some(source) = plan.sources.get(file) else {
        return (file.as_str().to_string(), (1, 1));
    };
    let text = blueprint
        .template_trees()
        .iter()
        .find_map(|(prefix, tree)| source.strip_prefix(prefix).and_then(|p| tree.get(p)))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    (source.clone(), locate::locate(&text, needle))
}

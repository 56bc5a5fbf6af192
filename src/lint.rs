//! `scaffold blueprint lint`: everything that can be known wrong about a blueprint before
//! anyone answers it, each finding at FILE:LINE:COLUMN.
use std::cell::RefCell;
use std::path::Path;

use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::answers::{self, Prompt, Prompter, Sources, as_text};
use crate::blueprint::{Blueprint, Manifest};
use crate::error::Result;
use crate::generate;
use crate::plan::{self, RelPath};
use crate::record::Record;
use crate::render::Renderer;

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

struct Findings(Vec<Finding>);

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
    let mut found = Findings(Vec::new());
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
    check_duplicate_keys(&manifest, &text, &mut found);
    for path in &manifest.remove_files {
        if RelPath::new(path).is_err() {
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
    let blueprint = match Blueprint::load(&dir.display().to_string()) {
        Ok(b) => b,
        Err(e) => {
            found.error_text("blueprint.yaml", &e.to_string());
            return Ok(found.0);
        }
    };
    let renderer = check_templates(&blueprint, &mut found);
    check_delimiter_clashes(&blueprint, &mut found);
    if let Some(renderer) = renderer {
        check_defaults_and_render(&blueprint, &renderer, &text, &mut found);
    }
    found.0.sort();
    found.0.dedup();
    Ok(found.0)
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
/// every variable it reads is an answer or a built-in.
fn check_templates(blueprint: &Blueprint, found: &mut Findings) -> Option<Renderer> {
    let sources = match plan::template_sources(blueprint) {
        Ok(s) => s,
        Err(e) => {
            found.error_text("blueprint.yaml", &e.to_string());
            return None;
        }
    };
    let keys = blueprint.question_keys();
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
                let message = e.to_string();
                if !partials
                    .iter()
                    .any(|(p, _)| p != name && message.contains(p.as_str()))
                {
                    found.error_text(name, &message);
                }
                continue;
            }
        };
        for var in single.variables(name) {
            let known = keys.contains(&var.as_str())
                || BUILTINS.contains(&var.as_str())
                || (var == ADDON_BUILTIN
                    && (name.starts_with("addon-files/") || name.starts_with("partials/")));
            if !known {
                found.error(
                    name,
                    locate_variable(text, &var, &delimiters.variable[0], &delimiters.block[0]),
                    format!(
                        "`{var}` is neither a question of the blueprint nor a built-in ({})",
                        BUILTINS.join(", ")
                    ),
                );
            }
        }
    }
    if !clean {
        return None;
    }
    generate::renderer_for(blueprint)
        .map_err(|e| found.error_text("blueprint.yaml", &e.to_string()))
        .ok()
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
        let at = locate_question_field(manifest_text, &key, "default");
        found.error(
            "blueprint.yaml",
            at,
            format!("question `{key}`: the default fails its own validation: {message}"),
        );
    }
    let answers = match gathered {
        Ok(a) => a,
        Err(e) => {
            found.error_text("blueprint.yaml", &e.to_string());
            return;
        }
    };
    if found.0.iter().any(|f| !f.warning) {
        return; // rendering would only repeat what is already reported
    }
    let record: Record = generate::record_for(blueprint, &answers, Map::new());
    if let Err(e) = generate::render(blueprint, renderer, &answers, &record) {
        found.error_text("blueprint.yaml", &e.to_string());
    }
}

/// 1-based line and column of the first occurrence of `needle` (1:1 when absent).
/// Each question key names one answer: a second question with the same key would be
/// silently shadowed (and an extending blueprint replaces by key).
fn check_duplicate_keys(manifest: &Manifest, text: &str, found: &mut Findings) {
    let mut seen = std::collections::BTreeSet::new();
    for question in &manifest.questions {
        if !seen.insert(question.key.as_str()) {
            let needle = format!("key: {}", question.key);
            let at = text
                .match_indices(&needle)
                .nth(1)
                .map(|(at, _)| position(text, at))
                .unwrap_or((1, 1));
            found.error(
                "blueprint.yaml",
                at,
                format!(
                    "question `{}` is asked twice; rename or remove one (each key names one answer)",
                    question.key
                ),
            );
        }
    }
}

fn locate(text: &str, needle: &str) -> (usize, usize) {
    text.find(needle)
        .map(|at| position(text, at))
        .unwrap_or((1, 1))
}

fn position(text: &str, at: usize) -> (usize, usize) {
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

/// Where a template reads `var`: its first whole-word use after an opening delimiter.
fn locate_variable(
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
        let opened = before
            .rfind(variable_start)
            .into_iter()
            .chain(before.rfind(block_start))
            .max();
        if opened.is_some() {
            return position(text, m.start());
        }
    }
    locate(text, var)
}

/// The line of `field:` within the question `key` of the manifest text.
fn locate_question_field(text: &str, key: &str, field: &str) -> (usize, usize) {
    let Some(start) = Regex::new(&format!(r"(?m)^\s*-\s*key:\s*{}\s*$", regex::escape(key)))
        .ok()
        .and_then(|re| re.find(text))
    else {
        return (1, 1);
    };
    let rest = &text[start.end()..];
    let end = rest
        .find("\n  - ")
        .map(|i| start.end() + i)
        .unwrap_or(text.len());
    match Regex::new(&format!(r"(?m)^\s*{field}:"))
        .ok()
        .and_then(|re| re.find(&text[start.end()..end]))
    {
        Some(m) => {
            let at = start.end() + m.start() + m.as_str().len() - m.as_str().trim_start().len();
            position(text, at)
        }
        None => position(
            text,
            start.start() + start.as_str().len() - start.as_str().trim_start().len(),
        ),
    }
}

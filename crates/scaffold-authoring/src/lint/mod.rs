//! `scaffold blueprint lint`: everything that can be known wrong about a blueprint before
//! anyone answers it, each finding at FILE:LINE:COLUMN.
use std::cell::RefCell;
use std::path::Path;

use serde_json::{Map, Value as Json};

use crate::answers::{self, Prompt, Prompter, Sources, as_text};
use crate::blueprint::{Blueprint, Manifest};
use crate::diagnostic::Diagnostic;
use crate::error::Result;
use crate::generate;
use crate::plan::{self, RelPath};
use crate::record::Record;
use crate::render::Renderer;
use crate::yaml::{self, Places};

mod environment_render;
mod environment_scope;
mod findings;
mod migrations;
mod templates;
mod verdict_cache;
use findings::Findings;
pub use findings::{ADDON_BUILTIN, BUILTINS, RULES, rule};
use templates::{check_catalog, check_delimiter_clashes, check_overrides, check_templates};

pub fn lint(dir: &Path) -> Result<Vec<Diagnostic>> {
    Ok(lint_dir(dir, None, &lint_builtins())?.findings)
}

/// `lint` of the blueprint at `dir` as a release after the one at `old`: besides its own
/// findings, every path `old` writes with its defaults is written here too or moved by a
/// `moves:` migration of a version between them, and every move names a path `old` wrote.
pub fn lint_release(dir: &Path, old: &Path) -> Result<Vec<Diagnostic>> {
    let builtins = lint_builtins();
    let new = lint_dir(dir, None, &builtins)?;
    if new.findings.iter().any(Diagnostic::is_error) {
        return Ok(new.findings);
    }
    let previous = lint_dir(old, None, &builtins)?;
    let (Some(now), Some(before)) = (&new.defaults, &previous.defaults) else {
        return Err(crate::error::Error::input(format!(
            "--from {}: that blueprint does not render with its defaults (lint it on its own)",
            old.display()
        )));
    };
    let blueprint = Blueprint::load(&dir.display().to_string())?;
    let old_blueprint = Blueprint::load(&old.display().to_string())?;
    let manifest_path = dir.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| crate::error::Error::io_path("read", &manifest_path, e))?;
    let Some(renderer) = &new.renderer else {
        return Ok(new.findings);
    };
    let mut found = Findings::new(rule::MIGRATION);
    migrations::check_release(
        migrations::Release {
            blueprint: &blueprint,
            old_version: &old_blueprint.manifest.version,
            renderer,
            places: &Places::of(&text),
            old_answers: &before.answers,
            old_paths: before
                .rendered
                .plan
                .files
                .keys()
                .map(RelPath::as_str)
                .collect(),
            new_paths: now
                .rendered
                .plan
                .files
                .keys()
                .map(RelPath::as_str)
                .collect(),
        },
        &mut found,
    );
    let mut findings = new.findings;
    findings.extend(found.found);
    Ok(sorted(findings))
}

/// The built-in answers of lint's render with every default.
fn lint_builtins() -> Map<String, Json> {
    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), Json::String("lint".into()));
    builtins
}

/// What lint found, and what its render with every default made when it rendered (with
/// the renderer it compiled, which `new` uses rather than compiling it again).
pub struct Linted {
    pub findings: Vec<Diagnostic>,
    pub defaults: Option<DefaultRendering>,
    pub renderer: Option<Renderer>,
}

/// The answers of every default and the repo they render: `new` writes this rendering when
/// its own answers are the same, rather than rendering the blueprint a second time.
pub struct DefaultRendering {
    pub answers: answers::Answers,
    pub rendered: generate::Rendered,
}

impl From<Vec<Diagnostic>> for Linted {
    fn from(findings: Vec<Diagnostic>) -> Self {
        Linted {
            findings,
            defaults: None,
            renderer: None,
        }
    }
}

/// `lint` of the blueprint at `dir`; `loaded` is that blueprint when the caller has loaded
/// it already (`new`), so its files are not read and merged a second time. `builtins` are
/// the built-in answers of the render with every default.
fn lint_dir(
    dir: &Path,
    loaded: Option<&Blueprint>,
    builtins: &Map<String, Json>,
) -> Result<Linted> {
    let mut found = Findings::new(rule::MANIFEST);
    let manifest_path = dir.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| crate::error::Error::io_path("read", &manifest_path, e))?;
    let manifest: Manifest = match yaml::from_str(&text) {
        Ok(m) => m,
        Err(e) => {
            found.error("blueprint.yaml", e.pair(), e.message);
            return Ok(found.found.into());
        }
    };
    let places = Places::of(&text);
    found.rule = rule::REGEX;
    check_regexes(&manifest, &places, &mut found);
    found.rule = rule::ON_CHANGE;
    check_on_change(&manifest, &places, &mut found);
    found.rule = rule::QUESTION_TWICE;
    check_duplicate_keys(&manifest, &places, &mut found);
    found.rule = rule::MANIFEST;
    for path in &manifest.remove_files {
        if RelPath::new(path.trim_end_matches('/')).is_err() {
            found.error(
                "blueprint.yaml",
                places.section_key("remove_files", path),
                format!("remove_files: `{path}` is not a path inside the blueprint"),
            );
        }
    }
    found.rule = rule::SYMLINK;
    // A blueprint loaded from `dir` has none to find: loading refuses a symlink that
    // points outside it or nowhere (`source::read_dir_layer`), on the same walk.
    if loaded.is_none() {
        check_symlinks(dir, &mut found);
    }
    if !found.found.is_empty() {
        return Ok(sorted(found.found).into());
    }
    let root = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    found.root = format!("{}/", root.display());
    found.rule = rule::MANIFEST;
    let reloaded;
    let blueprint = match loaded {
        Some(blueprint) => blueprint,
        None => match Blueprint::load(&dir.display().to_string()) {
            Ok(b) => {
                reloaded = b;
                &reloaded
            }
            Err(e) => {
                found.report_error(&e);
                return Ok(sorted(found.found).into());
            }
        },
    };
    let linted = lint_loaded(blueprint, &text, builtins);
    found.found.extend(linted.findings);
    for finding in &mut found.found {
        if let Some(rel) = finding.file.strip_prefix(found.root.as_str()) {
            finding.file = rel.to_string();
        }
    }
    Ok(Linted {
        findings: sorted(found.found),
        ..linted
    })
}

/// In report order, each finding once.
fn sorted(mut findings: Vec<Diagnostic>) -> Vec<Diagnostic> {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    findings.dedup();
    findings
}

/// The checks of a loaded blueprint: templates, the names they read, delimiter clashes,
/// overrides, then a render with every default and the references in the result.
/// `manifest_text` is the text of its own `blueprint.yaml`.
fn lint_loaded(blueprint: &Blueprint, manifest_text: &str, builtins: &Map<String, Json>) -> Linted {
    let mut found = Findings::new(rule::TEMPLATE);
    let plain = check_templates(blueprint, &mut found);
    found.rule = rule::DELIMITERS;
    check_delimiter_clashes(blueprint, &mut found);
    found.rule = rule::OVERRIDE;
    check_overrides(blueprint, &mut found);
    found.rule = rule::CATALOG;
    check_catalog(blueprint, &mut found);
    found.rule = rule::ENVIRONMENT_SCOPE;
    environment_scope::check(blueprint, manifest_text, &mut found);
    let mut defaults = None;
    let mut compiled_renderer = None;
    if let Some(plain) = plain
        && let Ok(renderer) = crate::generate::renderer_for_linted(blueprint, &plain)
    {
        defaults =
            check_defaults_and_render(blueprint, &renderer, manifest_text, builtins, &mut found);
        compiled_renderer = Some(renderer);
    }
    Linted {
        findings: found.found,
        defaults,
        renderer: compiled_renderer,
    }
}

/// The findings `scaffold new` refuses a blueprint for (errors) or shows (warnings),
/// before asking anything: every check of `blueprint lint`, the render with every default
/// included, so `new` never writes a repo that lint rejects. Embedded blueprints are
/// linted by scaffold's own tests and skip this.
fn lint_before_new(blueprint: &Blueprint, builtins: &Map<String, Json>) -> Result<Linted> {
    if blueprint
        .origin
        .starts_with(crate::blueprint::EMBEDDED_ORIGIN)
    {
        return Ok(Vec::new().into());
    }
    // `origin` is the blueprint's canonical directory: the one `lint` would load again.
    lint_dir(Path::new(&blueprint.origin), Some(blueprint), builtins)
}

fn check_regexes(manifest: &Manifest, places: &Places, found: &mut Findings) {
    let delimiters = manifest.delimiters.clone().unwrap_or_default();
    for question in &manifest.questions {
        for (field, pattern) in [
            ("regex", &question.regex),
            ("item_regex", &question.item_regex),
            ("value_regex", &question.value_regex),
        ]
        .into_iter()
        .filter_map(|(field, pattern)| Some((field, pattern.as_ref()?)))
        {
            if pattern.contains(delimiters.variable[0].as_str())
                || pattern.contains(delimiters.block[0].as_str())
            {
                continue; // a template: compiled once rendered, below
            }
            if let Err(e) = crate::pattern::compile(pattern) {
                let message = e.lines().last().unwrap_or_default().trim().to_string();
                let at = places
                    .item("questions", "key", &question.key)
                    .and_then(|item| item.get(field))
                    .map_or((1, 1), |pattern| pattern.content_pos().pair());
                found.error(
                    "blueprint.yaml",
                    at,
                    format!(
                        "question `{}`: regex does not compile: {message}",
                        question.key
                    ),
                );
            }
        }
    }
}

/// Each question key names one answer: a second question with the same key would be
/// silently shadowed (and an extending blueprint replaces by key).
/// A question's `on_change` is rendered by `update` over `key`, `before` and `after` only:
/// a syntax error or another name would fail there, in a user's repo, not here.
fn check_on_change(manifest: &Manifest, places: &Places, found: &mut Findings) {
    const NAMES: &[&str] = &["key", "before", "after"];
    let delimiters = manifest.delimiters.clone().unwrap_or_default();
    let Ok(mut scanner) = crate::render::Scanner::new(&delimiters) else {
        return;
    };
    for question in &manifest.questions {
        let Some(source) = &question.on_change else {
            continue;
        };
        let at = places
            .item_field("questions", "key", &question.key, "on_change")
            .unwrap_or((1, 1));
        match scanner.variables(source) {
            Err(e) => found.error(
                "blueprint.yaml",
                at,
                format!(
                    "question `{}`: on_change does not parse: {}",
                    question.key, e.message
                ),
            ),
            Ok(names) => {
                for name in names.iter().filter(|n| !NAMES.contains(&n.as_str())) {
                    found.error(
                        "blueprint.yaml",
                        at,
                        format!(
                            "question `{}`: on_change reads `{name}`; it is rendered over key, before and after only{}",
                            question.key,
                            crate::suggest::did_you_mean(name, NAMES.iter().copied())
                        ),
                    );
                }
            }
        }
    }
}

fn check_duplicate_keys(manifest: &Manifest, places: &Places, found: &mut Findings) {
    let mut seen = std::collections::BTreeSet::new();
    for question in &manifest.questions {
        if !seen.insert(question.key.as_str()) {
            // The second item asking it.
            let at = places
                .items("questions", "key", &question.key)
                .nth(1)
                .map_or((1, 1), |item| {
                    item.key_pos("key").unwrap_or(item.pos).pair()
                });
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

/// Answers every question with its default (recording defaults that fail their own
/// validation), then renders the blueprint with them: that rendering, when it is whole.
/// Whether every default that is a plain value is an answer of its question's type; each
/// one that is not is reported at its line (the question's `default:`, or `defaults:`).
fn literal_defaults_parse(
    blueprint: &Blueprint,
    manifest_text: &str,
    found: &mut Findings,
) -> bool {
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let places = Places::of(manifest_text);
    let before = found.found.len();
    found.rule = rule::DEFAULT_INVALID;
    for question in &blueprint.manifest.questions {
        let Some(message) = answers::literal_default_error(question, &delimiters) else {
            continue;
        };
        let key = &question.key;
        let at = places
            .item_field("questions", "key", key, "default")
            .or_else(|| places.section_entry("defaults", key))
            .unwrap_or_else(|| places.at(&["extends"]));
        found.error(
            "blueprint.yaml",
            at,
            format!("question `{key}`: the default is not an answer: {message}"),
        );
    }
    found.found.len() == before
}

fn check_defaults_and_render(
    blueprint: &Blueprint,
    renderer: &Renderer,
    manifest_text: &str,
    builtins: &Map<String, Json>,
    found: &mut Findings,
) -> Option<DefaultRendering> {
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
    if !literal_defaults_parse(blueprint, manifest_text, found) {
        return None; // gathering would stop at the first of them, at no line
    }
    let failures = RefCell::new(Vec::new());
    let mut prompter = Defaults {
        failures: &failures,
    };
    let gathered = answers::gather(
        blueprint,
        renderer,
        Sources {
            set: Vec::new(),
            values: Default::default(),
            prompter: Some(&mut prompter),
            builtins: builtins.clone(),
            recorded_environments: Default::default(),
        },
    );
    found.rule = rule::DEFAULT_INVALID;
    let places = Places::of(manifest_text);
    for (key, message) in failures.into_inner() {
        // An inherited question's default is changed under `defaults:`; else the base's
        // own default fails, which the layer sees where it says `extends:`.
        let at = places
            .item_field("questions", "key", &key, "default")
            .or_else(|| places.section_entry("defaults", &key))
            .unwrap_or_else(|| places.at(&["extends"]));
        found.error(
            "blueprint.yaml",
            at,
            format!("question `{key}`: the default fails its own validation: {message}"),
        );
    }
    found.rule = rule::RENDER;
    let answers = match gathered {
        Ok(a) => a,
        Err(e) => {
            found.report_error(&e);
            return None;
        }
    };
    found.rule = rule::MIGRATION;
    migrations::check_moves(blueprint, renderer, &places, &answers, found);
    found.rule = rule::RENDER;
    if found.has_errors() {
        return None; // rendering would only repeat what is already reported
    }
    let record: Record = generate::record_for(blueprint, &answers, Map::new());
    match generate::render(blueprint, renderer, &answers, &record) {
        Err(e) => {
            found.report_error(&e);
            None
        }
        Ok(rendered) => {
            // What `new` refuses at write time (CRLF bytes git would store as LF, a filter
            // driver it cannot run), found here first.
            if let Err(e) = crate::attributes::work_tree_for_new(&rendered.plan) {
                found.report_error(&e);
            }
            found.found.extend(missing_files(blueprint, &rendered.plan));
            found.rule = rule::ENVIRONMENT_SCOPE;
            environment_render::check(blueprint, renderer, builtins, found);
            Some(DefaultRendering { answers, rendered })
        }
    }
}

/// What a missing file breaks in the rendering (a layer's `remove_files`, a template that
/// renders nothing): `check`'s `flux.path` on the plan in memory (kustomizations' entries
/// and patch files, Flux Kustomizations' paths), each finding moved to the blueprint file
/// the rendered file came from, at the first line there that reads as the rendered one.
fn missing_files(blueprint: &Blueprint, plan: &plan::Plan) -> Vec<Diagnostic> {
    // `flux.path` judges Flux Kustomizations: a render without one has no finding, and the
    // model of every rendered file (most of `new`'s time and memory at 2,000 files,
    // BENCHMARKS.md) is not built.
    if !plan
        .files
        .values()
        .any(|bytes| may_declare_kustomization(bytes))
    {
        return Vec::new();
    }
    crate::check::flux_path_findings(plan)
        .into_iter()
        .map(|finding| {
            let path = RelPath::new(&finding.file).ok();
            let rendered = path
                .as_ref()
                .and_then(|path| plan.files.get(path))
                .and_then(|bytes| std::str::from_utf8(bytes).ok())
                .unwrap_or_default();
            let rendered_line = finding
                .line
                .checked_sub(1)
                .and_then(|index| rendered.lines().nth(index))
                .map(|line| line.trim().trim_start_matches("- ").trim())
                .unwrap_or_default();
            let source = path.and_then(|path| plan.sources.get(&path).cloned());
            let Some(source) = source else {
                return finding;
            };
            let text = blueprint
                .file(&source)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            // The rendered line as written, else its key (`path:`), else the file.
            let key = rendered_line
                .split_once(": ")
                .map(|(key, _)| format!("{key}:"));
            let (line, column) = [Some(rendered_line.to_string()), key]
                .into_iter()
                .flatten()
                .filter(|needle| !needle.is_empty())
                .find_map(|needle| text.find(&needle))
                .map_or((1, 1), |at| templates::position(&text, at));
            Diagnostic {
                file: source,
                line,
                column,
                ..finding
            }
        })
        .collect()
}

/// Whether a rendered file may hold an object of kind `Kustomization`: its text says so,
/// or has a backslash (a YAML escape could spell it). `check` reads only UTF-8 files.
fn may_declare_kustomization(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes)
        .is_ok_and(|text| text.contains("Kustomization") || text.contains('\\'))
}

/// What `new` does first: a blueprint with lint errors (those found by rendering its
/// defaults included) is refused before anything is asked (warnings are shown); then its
/// renderer, and lint's rendering of every default (with `builtins`, `new`'s own). Where
/// lint did not run (an embedded blueprint, a cached verdict), the renderer is the one for
/// the answers: `new` compiles the file templates while it gathers them
/// (`generate::gather_while_compiling`). With a `cache_dir`, a passing verdict is kept
/// there by the blueprint's content digest, and a blueprint with one is not linted again
/// (its warnings are shown again).
#[allow(clippy::print_stderr)] // the findings `new` refuses a blueprint for, said before the refusal (docs/decisions.md)
pub fn compile_linted(
    blueprint: &Blueprint,
    builtins: &Map<String, Json>,
    cache_dir: Option<&Path>,
) -> crate::error::Result<(crate::render::Renderer, Option<DefaultRendering>)> {
    let embedded = blueprint
        .origin
        .starts_with(crate::blueprint::EMBEDDED_ORIGIN);
    let cache = cache_dir
        .filter(|_| !embedded)
        .map(|dir| verdict_cache::VerdictCache::of(dir, blueprint, builtins));
    if let Some(warnings) = cache.as_ref().and_then(verdict_cache::VerdictCache::read) {
        for warning in &warnings {
            eprintln!("{warning}");
        }
        return Ok((crate::generate::renderer_for_answers(blueprint)?, None));
    }
    let Linted {
        findings,
        defaults,
        renderer,
    } = lint_before_new(blueprint, builtins)?;
    for finding in &findings {
        eprintln!("{finding}");
    }
    let errors = findings.iter().filter(|f| f.is_error()).count();
    if errors > 0 {
        let origin = &blueprint.origin;
        let problem = crate::error::Problem::new(format!("{origin}: {errors} lint error(s) above"));
        let fix = format!("fix them (scaffold blueprint lint {origin})");
        return Err(crate::error::Error::blueprint(problem.fix(fix)));
    }
    if let Some(cache) = cache {
        cache.write(findings.iter().map(ToString::to_string).collect());
    }
    let renderer = match renderer {
        Some(renderer) => renderer,
        None => crate::generate::renderer_for_answers(blueprint)?,
    };
    Ok((renderer, defaults))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_that_could_spell_kustomization_need_the_flux_model() {
        assert!(may_declare_kustomization(b"kind: Kustomization\n"));
        // A YAML escape can spell the kind without its letters.
        assert!(may_declare_kustomization(
            b"kind: \"Kustom\\u0069zation\"\n"
        ));
        assert!(!may_declare_kustomization(b"kind: ConfigMap\n"));
        assert!(!may_declare_kustomization(b"\xff kind: Kustomization"));
        let parsed = crate::check::yaml::parse("kind: \"Kustom\\u0069zation\"\n").expect("parses");
        assert_eq!(parsed[0].value["kind"], "Kustomization");
    }

    #[test]
    fn every_rule_is_documented_once() {
        let docs = include_str!("../../../../docs/blueprints.md");
        for (id, finds) in RULES {
            let row = format!("| `{id}` | {finds} |");
            assert_eq!(
                docs.matches(&row).count(),
                1,
                "docs/blueprints.md lacks {row}"
            );
        }
    }
}

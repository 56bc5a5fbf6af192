//! Answers to a blueprint's questions: where each comes from (precedence --set > --values >
//! prompt or default), how it is parsed and validated, and what is recorded afterwards.
//! Asking is injected through `Prompter`, so this module never touches a terminal.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::blueprint::{Blueprint, Question, QuestionType};
use crate::error::{Error, Problem, Result};
use crate::render::Renderer;

mod check;
pub mod environments;
mod names;
pub use check::parse_text;
use check::{from_yaml, validate};
pub use environments::ENVIRONMENT;

/// Answers in question order; skipped questions (`when` false) hold an empty value of
/// their type so templates can always read them.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub values: Map<String, Json>,
    /// Keys whose question was asked (its `when` held) and is not secret: what gets recorded.
    pub recorded: Vec<String>,
    /// Failed `severity: warning` checks, one line each (`key: `value` message`); the
    /// answers stand.
    pub warnings: Vec<String>,
    /// Keys that took their default (neither given nor asked).
    pub defaulted: Vec<String>,
    /// Each environment's answers, in the order the environments answer lists them, when
    /// the blueprint has environments (`recorded` there: its `per_environment` keys).
    pub environments: Vec<(String, Answers)>,
    /// The blueprint's `aws_names`, computed from these answers (never recorded): what
    /// templates read as `aws_names.KEY`.
    pub aws_names: Map<String, Json>,
}

impl Answers {
    /// Whether a repo rendered from `other` is the one rendered from these: the same
    /// values in the same order (a map's order is rendered), the same recorded keys, the
    /// same environments.
    pub fn renders_as(&self, other: &Answers) -> bool {
        let in_order = |values: &Map<String, Json>| serde_json::to_string(values).ok();
        in_order(&self.values).is_some_and(|ours| Some(ours) == in_order(&other.values))
            && self.recorded == other.recorded
            && self.environments.len() == other.environments.len()
            && self
                .environments
                .iter()
                .zip(&other.environments)
                .all(|((a, own_a), (b, own_b))| a == b && own_a.renders_as(own_b))
    }
}

/// Asks one question; `check` parses and validates a typed-in answer.
pub trait Prompter {
    fn ask(&mut self, question: &Prompt<'_>) -> Result<Json>;
    /// Says why an answer was refused before the question is asked again.
    fn refused(&mut self, _message: &str) {}
    /// Says why an accepted answer deserves a second look (a failed warning check).
    fn warned(&mut self, _message: &str) {}
    /// Shows what is about to be written and asks to go on: false leaves nothing written.
    fn confirm(&mut self, _summary: &str, _question: &str) -> Result<bool> {
        Ok(true)
    }
}

/// The answers as a review before writing: one `key: value` line each, in question order,
/// secrets shown as `(hidden)`, each environment's own answers under its name.
pub fn review(blueprint: &Blueprint, answers: &Answers) -> String {
    let mut out = String::new();
    let line = |out: &mut String, indent: &str, question: &Question, value: &Json| {
        let text = if question.secret {
            "(hidden)".to_string()
        } else {
            as_text(value)
        };
        out.push_str(&format!("{indent}{}: {}\n", question.key, text));
    };
    for question in &blueprint.manifest.questions {
        if let Some(value) = answers.values.get(&question.key)
            && (answers.recorded.contains(&question.key) || question.secret)
            && !question.per_environment
        {
            line(&mut out, "  ", question, value);
        }
    }
    for (name, own) in &answers.environments {
        out.push_str(&format!("  {name}:\n"));
        for question in blueprint
            .manifest
            .questions
            .iter()
            .filter(|q| q.per_environment)
        {
            if let Some(value) = own.values.get(&question.key) {
                line(&mut out, "    ", question, value);
            }
        }
    }
    out
}

/// How often a refused answer is asked again before giving up.
const ASK_AGAIN: usize = 20;

pub struct Prompt<'a> {
    pub question: &'a Question,
    pub default: Option<Json>,
    pub choices: Vec<String>,
    pub check: &'a dyn Fn(&str) -> std::result::Result<Json, String>,
}

#[derive(Default)]
pub struct Sources<'a> {
    /// `--set key=value`, in order (a later one wins).
    pub set: Vec<(String, String)>,
    /// The `--values` file, already parsed.
    pub values: BTreeMap<String, Json>,
    /// Present when a terminal can be asked; otherwise defaults apply and a missing
    /// answer is an error.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// Built-in variables defaults may use (e.g. target_dir_name).
    pub builtins: Map<String, Json>,
    /// A repo's recorded answers of each environment (rank as `recorded` does).
    pub recorded_environments: BTreeMap<String, Map<String, Json>>,
}

/// Secret answers from `--secret KEY=VALUE` and `SCAFFOLD_SECRET_<KEY>` (the flag wins), as
/// --set pairs. A key that is not a secret question is refused, so a secret is never
/// recorded by mistake.
pub fn secrets(
    blueprint: &Blueprint,
    flags: &[(String, String)],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>> {
    let questions = &blueprint.manifest.questions;
    let mut out = Vec::new();
    for (key, value) in flags {
        if !questions.iter().any(|q| q.secret && &q.key == key) {
            return Err(Error::input(
                Problem::new(format!(
                    "--secret `{key}`: not a secret question of this blueprint"
                ))
                .fix("use --set for ordinary answers"),
            ));
        }
        out.push((key.clone(), value.clone()));
    }
    for question in questions.iter().filter(|q| q.secret) {
        if flags.iter().any(|(k, _)| k == &question.key) {
            continue;
        }
        if let Some(value) = env(&secret_env(&question.key)) {
            out.push((question.key.clone(), value));
        }
    }
    Ok(out)
}

/// The environment variable a secret answer can come from.
pub fn secret_env(key: &str) -> String {
    format!("SCAFFOLD_SECRET_{}", key.to_ascii_uppercase())
}

pub fn gather(blueprint: &Blueprint, renderer: &Renderer, sources: Sources<'_>) -> Result<Answers> {
    gather_over(blueprint, renderer, sources, &Map::new())
}

/// `gather` over a repo's recorded answers, which rank below `--values`: each is used while
/// its question still applies and dropped silently once its `when` no longer holds.
pub fn gather_over(
    blueprint: &Blueprint,
    renderer: &Renderer,
    sources: Sources<'_>,
    recorded: &Map<String, Json>,
) -> Result<Answers> {
    let (mut sources, given) = environments::split(blueprint, sources)?;
    let shared = gather_shared(blueprint, renderer, &mut sources, recorded)?;
    let builtins = sources.builtins.clone();
    let mut answers = environments::gather_each(blueprint, renderer, shared, given, &mut sources)?;
    names::compute(blueprint, renderer, &mut answers, &builtins)?;
    Ok(answers)
}

fn gather_shared(
    blueprint: &Blueprint,
    renderer: &Renderer,
    sources: &mut Sources<'_>,
    recorded: &Map<String, Json>,
) -> Result<Answers> {
    // Every given answer is checked before the first prompt, so nobody types answers
    // only to lose them to a bad --set.
    if sources.prompter.is_some() && (!sources.set.is_empty() || !sources.values.is_empty()) {
        let probe = Sources {
            set: sources.set.clone(),
            values: sources.values.clone(),
            prompter: None,
            builtins: sources.builtins.clone(),
            recorded_environments: BTreeMap::new(),
        };
        collect(blueprint, renderer, probe, recorded, true)?;
    }
    // Borrowed, not taken: each environment's pass may ask too.
    let prompter: Option<&mut dyn Prompter> = match sources.prompter.as_mut() {
        Some(p) => Some(&mut **p),
        None => None,
    };
    collect(
        blueprint,
        renderer,
        Sources {
            prompter,
            set: sources.set.clone(),
            values: sources.values.clone(),
            builtins: sources.builtins.clone(),
            recorded_environments: BTreeMap::new(),
        },
        recorded,
        false,
    )
}

/// With `probe`, only the given answers matter: a missing one gets an empty placeholder,
/// and a given one that fails only in a context built from guesses is left for later.
fn collect(
    blueprint: &Blueprint,
    renderer: &Renderer,
    mut sources: Sources<'_>,
    recorded: &Map<String, Json>,
    probe: bool,
) -> Result<Answers> {
    let questions = &blueprint.manifest.questions;
    for key in sources
        .set
        .iter()
        .map(|(k, _)| k)
        .chain(sources.values.keys())
    {
        if !questions.iter().any(|q| &q.key == key) {
            return Err(Error::input(format!(
                "unknown answer key `{key}`: the blueprint asks {}",
                questions
                    .iter()
                    .map(|q| q.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let set: BTreeMap<String, String> = sources.set.iter().cloned().collect();
    let mut answers = Answers::default();
    let mut guessed = false;
    // With environments, answers are gathered in a shared pass, then once per environment
    // (`environments::gather_each`, which sets the `environment` built-in).
    let with_environments = blueprint.manifest.environments_answer.is_some();
    let environment_pass =
        with_environments && sources.builtins.contains_key(environments::ENVIRONMENT);
    let shared_pass = with_environments && !environment_pass;
    for question in questions {
        let context = context_of(&answers, &sources.builtins);
        let key = &question.key;
        if let Some(when) = &question.when
            && !renderer.truth(&format!("question `{key}` when"), when, &context)?
        {
            if set.contains_key(key) || sources.values.contains_key(key) {
                return Err(Error::input(
                    Problem::new(format!("{key}: only applies when {when}"))
                        .fix("drop it or change the answers it depends on"),
                ));
            }
            answers.values.insert(key.clone(), empty_of(question.kind));
            continue;
        }
        // An environment's pass takes the shared answers as the shared pass settled them.
        if environment_pass
            && !question.per_environment
            && let Some(value) = recorded.get(key)
        {
            answers.values.insert(key.clone(), value.clone());
            continue;
        }
        let choices = choices_of(question, blueprint);
        let mut defaulted = false;
        let valid = |value: Json| {
            always_installed(blueprint, question, &value)?;
            validate(question, value, &choices, &answers, renderer, &context)
                .and_then(|v| cross_check(blueprint, renderer, &context, key, v))
                .and_then(|v| addon_requirements(blueprint, question, &context, v))
        };
        let check = |text: &str| parse_text(question, text).and_then(valid);
        let given = if let Some(text) = set.get(key) {
            Some(check(text).map_err(|m| (m, "--set".to_string())))
        } else if let Some(value) = sources.values.get(key) {
            Some(
                from_yaml(question, value)
                    .and_then(valid)
                    .map_err(|m| (m, "--values".to_string())),
            )
        } else {
            recorded.get(key).map(|value| {
                from_yaml(question, value).and_then(valid).map_err(|m| {
                    (
                        m,
                        format!("{}; --set {key}=… changes it", crate::record::PATH),
                    )
                })
            })
        };
        let value = match given {
            Some(Ok(value)) => value,
            Some(Err(_)) if probe && guessed && depends_on_others(blueprint, question) => {
                empty_of(question.kind)
            }
            Some(Err((message, source))) => {
                let message = match set.get(key) {
                    Some(text) if question.secret && !text.trim().is_empty() => {
                        message.replace(text.trim(), "(hidden)")
                    }
                    _ => message,
                };
                return Err(bad(key, &message, &source));
            }
            None if probe => {
                guessed = true;
                let default = default_of(question, blueprint, renderer, &context)
                    .ok()
                    .flatten();
                default.unwrap_or_else(|| empty_of(question.kind))
            }
            None => {
                let default = default_of(question, blueprint, renderer, &context)?;
                // Asked once, a per-environment answer would be every environment's (one
                // cluster name for all): one with a default takes each environment's, or
                // --set ENV.KEY; one without is asked once, for every environment.
                let per_environment = question.per_environment && with_environments;
                // A repo of one environment is asked everything, in that environment's pass.
                let only_environment = environment_pass
                    && blueprint
                        .manifest
                        .environments_answer
                        .as_ref()
                        .and_then(|list| recorded.get(list))
                        .and_then(Json::as_array)
                        .is_some_and(|names| names.len() == 1);
                let asked = !(per_environment && default.is_some()) || only_environment;
                match sources.prompter.as_deref_mut().filter(|_| asked) {
                    Some(prompter) => {
                        let value = ask(
                            prompter,
                            key,
                            &Prompt {
                                question,
                                default,
                                choices: choices.clone(),
                                check: &check,
                            },
                        )?;
                        for warning in warnings_on(blueprint, renderer, &context, key, &value)? {
                            prompter.warned(&warning);
                        }
                        value
                    }
                    None => match default {
                        // Re-rendering a repo: its files hold the real secret's output, and
                        // a default would silently replace it.
                        Some(_) if question.secret && !recorded.is_empty() => {
                            return Err(Error::input(format!(
                                "missing secret answer `{key}` ({}): set {} or pass --secret {key}=… with the value this repo was made with (secrets are never recorded, and the default would replace what the files hold)",
                                question.prompt,
                                secret_env(key)
                            )));
                        }
                        // The shared pass's stand-in for a per-environment answer: each
                        // environment's pass renders and checks its own.
                        Some(value) if per_environment && shared_pass => {
                            defaulted = true;
                            value
                        }
                        Some(value) => {
                            defaulted = true;
                            valid(value).map_err(|m| bad(key, &m, "the default"))?
                        }
                        // The shared pass of a blueprint with environments: each
                        // environment's own pass asks for it (environments::gather_each).
                        None if per_environment && shared_pass => {
                            defaulted = true;
                            empty_of(question.kind)
                        }
                        None if question.secret => {
                            return Err(Error::input(format!(
                                "missing secret answer `{key}` ({}): set {} or pass --secret {key}=… (secrets are never recorded)",
                                question.prompt,
                                secret_env(key)
                            )));
                        }
                        None => {
                            return Err(Error::input(format!(
                                "missing answer `{key}` ({}): pass --set {key}=… or put `{key}:` in a --values file",
                                question.prompt
                            )));
                        }
                    },
                }
            }
        };
        answers.values.insert(key.clone(), value);
        if defaulted {
            answers.defaulted.push(key.clone());
        }
        if !question.secret {
            answers.recorded.push(key.clone());
        }
    }
    if probe {
        return Ok(answers);
    }
    let context = context_of(&answers, &sources.builtins);
    // The shared pass holds placeholders for the per-environment answers: their checks run
    // in each environment's pass.
    let per_environment = |key: &str| questions.iter().any(|q| q.key == key && q.per_environment);
    for check in &blueprint.manifest.checks {
        if shared_pass && per_environment(&check.key) {
            continue;
        }
        if !renderer.truth(&format!("check on `{}`", check.key), &check.expr, &context)? {
            let message = renderer.render_str("check error", &check.error, &context)?;
            let value = answers.values.get(&check.key).map(show).unwrap_or_default();
            let line = format!("{}: `{value}` {message}", check.key);
            if check.severity.is_error() {
                return Err(Error::input(line));
            }
            answers.warnings.push(line);
        }
    }
    Ok(answers)
}

/// Asks until the answer passes its checks (a select whose choice breaks a cross-field
/// rule, for instance, is offered again with the reason).
fn ask(prompter: &mut dyn Prompter, key: &str, prompt: &Prompt<'_>) -> Result<Json> {
    let mut tries = 0;
    loop {
        match prompter.ask(prompt) {
            Err(Error::Input(message)) if tries < ASK_AGAIN => {
                tries += 1;
                prompter.refused(&format!("{key}: {message}; try again"));
            }
            other => return other,
        }
    }
}

/// The blueprint's cross-field checks on `key`, run as soon as `key` has a candidate value.
fn cross_check(
    blueprint: &Blueprint,
    renderer: &Renderer,
    context: &Json,
    key: &str,
    value: Json,
) -> std::result::Result<Json, String> {
    let mut context = context.clone();
    if let Json::Object(map) = &mut context {
        map.insert(key.to_string(), value.clone());
    }
    let refusing = blueprint.manifest.checks.iter();
    for check in refusing.filter(|c| c.key == key && c.severity.is_error()) {
        let holds = renderer
            .truth(&format!("check on `{key}`"), &check.expr, &context)
            .map_err(|e| e.to_string())?;
        if !holds {
            let message = renderer
                .render_str("check error", &check.error, &context)
                .map_err(|e| e.to_string())?;
            return Err(format!("`{}` {message}", show(&value)));
        }
    }
    Ok(value)
}

/// The failed warning checks on `key` once it has its value, one line each.
fn warnings_on(
    blueprint: &Blueprint,
    renderer: &Renderer,
    context: &Json,
    key: &str,
    value: &Json,
) -> Result<Vec<String>> {
    let mut context = context.clone();
    if let Json::Object(map) = &mut context {
        map.insert(key.to_string(), value.clone());
    }
    let mut warnings = Vec::new();
    let warning_checks = blueprint.manifest.checks.iter();
    for check in warning_checks.filter(|c| c.key == key && !c.severity.is_error()) {
        if !renderer.truth(&format!("check on `{key}`"), &check.expr, &context)? {
            let message = renderer.render_str("check error", &check.error, &context)?;
            warnings.push(format!("{key}: `{}` {message}", show(value)));
        }
    }
    Ok(warnings)
}

/// An addon the catalog installs in every repo, named in a `choices_from: catalog` answer:
/// said so, rather than "not one of" the choices.
fn always_installed(
    blueprint: &Blueprint,
    question: &Question,
    value: &Json,
) -> std::result::Result<(), String> {
    if question.choices_from.as_deref() != Some("catalog") {
        return Ok(());
    }
    let always = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .find(|name| {
            blueprint
                .catalog
                .get(name)
                .is_some_and(|entry| entry.spec.always)
        });
    match always {
        Some(name) => Err(format!(
            "`{name}` is always installed (every repo this blueprint makes has it); leave it out"
        )),
        None => Ok(()),
    }
}

/// The catalog's `requires:` for the addons a `choices_from: catalog` question picks,
/// checked as soon as it is answered against the answers known by then (an interactive
/// user is asked again); a required answer asked later is checked when rendering.
fn addon_requirements(
    blueprint: &Blueprint,
    question: &Question,
    context: &Json,
    value: Json,
) -> std::result::Result<Json, String> {
    if question.choices_from.as_deref() != Some("catalog") {
        return Ok(value);
    }
    let chosen = crate::json::strings(Some(&value));
    let Ok(selection) = blueprint.catalog.select(&chosen) else {
        return Ok(value);
    };
    let known = |key: &str| context.get(key);
    let unmet = selection.unmet(|key| known(key).is_none_or(satisfies));
    match unmet {
        None => Ok(value),
        // A yes/no question answered no: its requirement is `true`, not any answer.
        Some(unmet) if matches!(known(&unmet.key), Some(Json::Bool(_))) => Err(format!(
            "{unmet} to be true, and it was answered no: leave {} out of addons, or answer `{}` yes (a new run with --set {}=true)",
            unmet.chosen, unmet.key, unmet.key
        )),
        Some(unmet) => Err(format!(
            "{unmet}, and `{}` is empty: leave {} out, or answer `{}`",
            unmet.key, unmet.chosen, unmet.key
        )),
    }
}

/// Whether a question's rules read other answers (templated patterns, keys_from, checks).
fn depends_on_others(blueprint: &Blueprint, question: &Question) -> bool {
    let templated = |p: &Option<String>| {
        p.as_deref()
            .is_some_and(|p| p.contains("[[") || p.contains("[%") || p.contains("{{"))
    };
    templated(&question.regex)
        || templated(&question.item_regex)
        || templated(&question.value_regex)
        || question.keys_from.is_some()
        || blueprint
            .manifest
            .checks
            .iter()
            .any(|c| c.key == question.key)
}

fn bad(key: &str, message: &str, source: &str) -> Error {
    // One line, whatever the value held (a newline inside a --set value).
    let message = message.replace('\n', "\\n");
    // A default that fails (one derived from the directory's name) is fixed by an answer.
    let fix = if source == "the default" {
        format!("; pass --set {key}=…")
    } else {
        String::new()
    };
    Error::input(format!("{key}: {message} (from {source}{fix})"))
}

/// The answers so far plus built-ins, as the template context for defaults and checks.
pub fn context_of(answers: &Answers, builtins: &Map<String, Json>) -> Json {
    let mut map = builtins.clone();
    for (k, v) in &answers.values {
        map.insert(k.clone(), v.clone());
    }
    if !answers.aws_names.is_empty() {
        map.insert("aws_names".into(), Json::Object(answers.aws_names.clone()));
    }
    Json::Object(map)
}

fn choices_of(question: &Question, blueprint: &Blueprint) -> Vec<String> {
    if question.choices_from.as_deref() == Some("catalog") {
        return blueprint.catalog.optional_names();
    }
    question
        .choices
        .iter()
        .flatten()
        .map(|c| match c {
            Json::String(s) => s.clone(),
            other => crate::yaml::to_string(other)
                .unwrap_or_default()
                .trim()
                .to_string(),
        })
        .collect()
}

/// Why a default that is no template (a value, or text without the delimiters) is not an
/// answer of its question's type; lint reports it at the default's line.
pub fn literal_default_error(
    question: &Question,
    delimiters: &crate::manifest::Delimiters,
) -> Option<String> {
    let parsed = match question.default.as_ref()? {
        Json::String(text)
            if text.contains(delimiters.variable[0].as_str())
                || text.contains(delimiters.block[0].as_str()) =>
        {
            return None;
        }
        Json::String(text) if text.trim().is_empty() => return None,
        Json::String(text) => parse_text(question, text),
        other => from_yaml(question, other),
    };
    parsed.err()
}

fn default_of(
    question: &Question,
    blueprint: &Blueprint,
    renderer: &Renderer,
    context: &Json,
) -> Result<Option<Json>> {
    let Some(default) = &question.default else {
        return Ok(None);
    };
    let what = format!("default of `{}`", question.key);
    let parsed = match default {
        Json::String(template) => {
            let mut context = context.clone();
            if let Json::Object(map) = &mut context {
                // The default selection leaves out addons whose required answers are empty.
                let satisfied = |key: &String| map.get(key).is_some_and(satisfies);
                let defaults: Vec<String> = blueprint
                    .catalog
                    .entries()
                    .filter(|e| {
                        e.spec.default && !e.spec.always && e.spec.requires.iter().all(satisfied)
                    })
                    .map(|e| e.spec.name.clone())
                    .collect();
                map.insert("default_addons".into(), Json::String(defaults.join(",")));
            }
            let text = renderer.render_str(&what, template, &context)?;
            if text.trim().is_empty()
                && !question.allow_empty
                && question.kind != QuestionType::MultiChoice
            {
                return Ok(None);
            }
            parse_text(question, &text)
        }
        other => from_yaml(question, other),
    };
    parsed
        .map(Some)
        .map_err(|m| Error::blueprint(format!("{what}: {m}")))
}

fn empty_of(kind: QuestionType) -> Json {
    match kind {
        QuestionType::List | QuestionType::MultiChoice => Json::Array(vec![]),
        QuestionType::Map => Json::Object(Map::new()),
        QuestionType::Bool => Json::Bool(false),
        QuestionType::Int => Json::from(0),
        _ => Json::String(String::new()),
    }
}

/// Whether an answer satisfies a catalog entry's `requires`: non-empty, and `true` for a
/// bool (a `false` answer says the thing is off, not that it is there).
pub fn satisfies(value: &Json) -> bool {
    !matches!(value, Json::Bool(false) | Json::Null) && !show(value).is_empty()
}

pub fn show(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value as it would be typed: lists `a,b`, maps `k=v,k2=v2`.
pub fn as_text(value: &Json) -> String {
    match value {
        Json::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(","),
        Json::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", show(v)))
            .collect::<Vec<_>>()
            .join(","),
        other => show(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn default_blueprint() -> (Blueprint, Renderer) {
        let blueprint = Blueprint::load("default").expect("the default blueprint");
        let renderer = crate::generate::renderer_for(&blueprint).expect("its renderer");
        (blueprint, renderer)
    }

    fn builtins() -> Map<String, Json> {
        let mut builtins = Map::new();
        builtins.insert("target_dir_name".into(), json!("shop"));
        builtins
    }

    /// The answers from `--set` pairs, `--values` entries and a record, with no prompter.
    fn gathered(
        set: &[(&str, &str)],
        values: Json,
        recorded: Json,
    ) -> std::result::Result<Answers, String> {
        let (blueprint, renderer) = default_blueprint();
        let sources = Sources {
            set: set
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            values: serde_json::from_value(values).expect("values"),
            builtins: builtins(),
            ..Sources::default()
        };
        let recorded: Map<String, Json> = serde_json::from_value(recorded).expect("record");
        gather_over(&blueprint, &renderer, sources, &recorded).map_err(|e| e.to_string())
    }

    fn value<'a>(answers: &'a Answers, key: &str) -> &'a Json {
        answers.values.get(key).unwrap_or(&Json::Null)
    }

    fn own<'a>(answers: &'a Answers, env: &str, key: &str) -> &'a Json {
        let (_, own) = answers
            .environments
            .iter()
            .find(|(name, _)| name == env)
            .expect("the environment");
        value(own, key)
    }

    #[test]
    fn set_beats_values_beats_the_record_beats_the_default() {
        let record = json!({"git_branch": "recorded"});
        let values = json!({"git_branch": "from-values"});
        let all = gathered(
            &[("git_branch", "from-set")],
            values.clone(),
            record.clone(),
        )
        .expect("answers");
        assert_eq!(value(&all, "git_branch"), &json!("from-set"));
        let no_set = gathered(&[], values, record.clone()).expect("answers");
        assert_eq!(value(&no_set, "git_branch"), &json!("from-values"));
        let only_record = gathered(&[], json!({}), record).expect("answers");
        assert_eq!(value(&only_record, "git_branch"), &json!("recorded"));
        assert!(!only_record.defaulted.contains(&"git_branch".to_string()));
        let defaults = gathered(&[], json!({}), json!({})).expect("answers");
        assert_eq!(value(&defaults, "git_branch"), &json!("main"));
        assert!(defaults.defaulted.contains(&"git_branch".to_string()));
        // Defaults render over earlier answers and the built-ins.
        assert_eq!(value(&defaults, "name"), &json!("shop"));
        assert_eq!(
            value(&defaults, "git_url"),
            &json!("ssh://git@github.com/example-org/shop.git")
        );
    }

    #[test]
    fn a_bad_given_answer_names_its_key_and_source() {
        let refused =
            gathered(&[("name", "Shop")], json!({}), json!({})).expect_err("an uppercase name");
        assert!(refused.contains("name"), "{refused}");
        assert!(refused.contains("Shop"), "{refused}");
        let unknown =
            gathered(&[("nmae", "shop")], json!({}), json!({})).expect_err("an unknown key");
        assert!(unknown.contains("nmae"), "{unknown}");
    }

    #[test]
    fn each_environment_answers_its_own_questions_over_the_shared_answers() {
        let answers = gathered(
            &[
                ("environments", "dev,prod"),
                ("region", "eu-central-1"),
                ("prod.region", "us-east-1"),
            ],
            json!({"dev": {"node_max": 4}}),
            json!({}),
        )
        .expect("answers");
        let names: Vec<&str> = answers
            .environments
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, ["dev", "prod"]);
        assert_eq!(own(&answers, "dev", "environment"), &json!("dev"));
        assert_eq!(own(&answers, "prod", "environment"), &json!("prod"));
        // ENV.KEY beats an answer for all; an answer for all beats the default.
        assert_eq!(own(&answers, "prod", "region"), &json!("us-east-1"));
        assert_eq!(own(&answers, "dev", "region"), &json!("eu-central-1"));
        assert_eq!(own(&answers, "dev", "node_max"), &json!(4));
        assert_eq!(own(&answers, "prod", "node_max"), &json!(10));
        // Defaults render per environment: the zones follow each one's region.
        assert_eq!(
            own(&answers, "prod", "zones"),
            &json!(["us-east-1a", "us-east-1b", "us-east-1c"])
        );
    }

    #[test]
    fn per_environment_answers_must_name_a_per_environment_question_and_environment() {
        let shared = gathered(
            &[("environments", "dev,prod"), ("dev.git_branch", "x")],
            json!({}),
            json!({}),
        )
        .expect_err("a shared question");
        assert!(shared.contains("shared by every environment"), "{shared}");
        let stranger = gathered(
            &[
                ("environments", "dev,prod"),
                ("staging.region", "eu-west-2"),
            ],
            json!({}),
            json!({}),
        )
        .expect_err("no such environment");
        assert!(stranger.contains("not an environment"), "{stranger}");
        let named = gathered(
            &[("environments", "dev,prod"), ("environment", "dev")],
            json!({}),
            json!({}),
        )
        .expect_err("environment is each one's name");
        assert!(named.contains("its own name"), "{named}");
    }

    #[test]
    fn two_environments_may_not_share_a_distinct_answer() {
        let clash = gathered(
            &[
                ("environments", "dev,prod"),
                ("dev.dns_zone", "example.org"),
                ("prod.dns_zone", "example.org"),
            ],
            json!({}),
            json!({}),
        )
        .expect_err("one zone for two");
        assert!(clash.contains("dns_zone"), "{clash}");
    }
}

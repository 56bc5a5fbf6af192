//! One pass of gathering answers (the shared one, an environment's, or a probe): each
//! question in order, answered by `--set`, `--values`, the record, the terminal or its
//! default, then the blueprint's cross-field checks.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::check::{from_yaml, parse_text, validate};
use super::values::{
    Answers, Prompt, Prompter, Sources, context_of, empty_of, satisfies, secret_env, show,
};
use crate::blueprint::{Blueprint, Question, QuestionType};
use crate::error::{Error, Problem, Result};
use crate::render::{Renderer, Scope};

/// How often a refused answer is asked again before giving up.
pub(super) const ASK_AGAIN: usize = 20;

/// With `probe`, only the given answers matter: a missing one gets an empty placeholder,
/// and a given one that fails only in a context built from guesses is left for later.
pub(super) fn collect(
    blueprint: &Blueprint,
    renderer: &Renderer,
    mut sources: Sources<'_>,
    recorded: &Map<String, Json>,
    probe: bool,
) -> Result<Answers> {
    let questions = &blueprint.manifest.questions;
    refuse_unknown_keys(questions, &sources)?;
    let pass = Pass::new(blueprint, renderer, &sources, recorded, probe);
    let mut answers = Answers::default();
    let mut guessed = false;
    // Grown by each answer as `context_of` would build it again, and converted for Tera
    // once per answer: not rebuilt and converted for each question and each template (every
    // answer cloned, and converted, for every question was 4 % of a three-environment dry
    // run).
    let mut context = context_of(&answers, &sources.builtins);
    let mut scope = Scope::new(&context);
    for question in questions {
        let key = question.key.clone();
        let known = Known {
            context: &context,
            scope: &scope,
        };
        let value = match pass.answer(question, &answers, known, &mut sources, &mut guessed)? {
            Outcome::Settled(value) => value,
            Outcome::Answered { value, defaulted } => {
                if defaulted {
                    answers.defaulted.push(key.clone());
                }
                if !question.secret {
                    answers.recorded.push(key.clone());
                }
                value
            }
        };
        if let Json::Object(map) = &mut context {
            map.insert(key.clone(), value.clone());
        }
        scope.insert(key.clone(), &value);
        answers.values.insert(key, value);
    }
    if probe {
        return Ok(answers);
    }
    let warnings = pass.run_checks(&answers, &sources.builtins)?;
    answers.warnings.extend(warnings);
    Ok(answers)
}

pub(super) fn refuse_unknown_keys(questions: &[Question], sources: &Sources<'_>) -> Result<()> {
    let given = sources
        .set
        .iter()
        .map(|(k, _)| k)
        .chain(sources.values.keys());
    for key in given {
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
    Ok(())
}

/// One pass of gathering answers: the shared one, one environment's, or a probe.
pub(super) struct Pass<'a> {
    blueprint: &'a Blueprint,
    renderer: &'a Renderer,
    recorded: &'a Map<String, Json>,
    /// `--set`, a later pair winning.
    set: BTreeMap<String, String>,
    probe: bool,
    /// The blueprint answers per environment: a shared pass, then one per environment
    /// (`environments::gather_each`, which sets the `environment` built-in).
    with_environments: bool,
    environment_pass: bool,
    shared_pass: bool,
}

/// The answers so far as a template context: as JSON (`context_of`), and converted for
/// Tera once.
#[derive(Clone, Copy)]
pub(super) struct Known<'c> {
    pub context: &'c Json,
    pub scope: &'c Scope,
}

/// What a question came to.
pub(super) enum Outcome {
    /// Fixed by something other than an answer (a `when` that is false, the shared pass's
    /// value in an environment's pass): neither recorded nor defaulted here.
    Settled(Json),
    Answered {
        value: Json,
        defaulted: bool,
    },
}

pub(super) type Check<'c> = dyn Fn(&str) -> std::result::Result<Json, String> + 'c;

pub(super) type Valid<'c> = dyn Fn(Json) -> std::result::Result<Json, String> + 'c;

impl<'a> Pass<'a> {
    fn new(
        blueprint: &'a Blueprint,
        renderer: &'a Renderer,
        sources: &Sources<'_>,
        recorded: &'a Map<String, Json>,
        probe: bool,
    ) -> Self {
        let with_environments = blueprint.manifest.environments_answer.is_some();
        let environment_pass =
            with_environments && sources.builtins.contains_key(crate::manifest::ENVIRONMENT);
        Pass {
            blueprint,
            renderer,
            recorded,
            set: sources.set.iter().cloned().collect(),
            probe,
            with_environments,
            environment_pass,
            shared_pass: with_environments && !environment_pass,
        }
    }

    fn answer(
        &self,
        question: &Question,
        answers: &Answers,
        known: Known<'_>,
        sources: &mut Sources<'_>,
        guessed: &mut bool,
    ) -> Result<Outcome> {
        let key = &question.key;
        let context = known.context;
        if let Some(when) = &question.when
            && !self
                .renderer
                .truth_in(&format!("question `{key}` when"), when, known.scope)?
        {
            if self.set.contains_key(key) || sources.values.contains_key(key) {
                return Err(Error::input(
                    Problem::new(format!("{key}: only applies when {when}"))
                        .fix("drop it or change the answers it depends on")
                        .about(key),
                ));
            }
            return Ok(Outcome::Settled(empty_of(question.kind)));
        }
        // An environment's pass takes the shared answers as the shared pass settled them.
        if self.environment_pass
            && !question.per_environment
            && let Some(value) = self.recorded.get(key)
        {
            return Ok(Outcome::Settled(value.clone()));
        }
        let blueprint = self.blueprint;
        let choices = choices_of(question, blueprint);
        let valid = |value: Json| {
            always_installed(blueprint, question, &value)?;
            validate(question, value, &choices, answers, self.renderer, context)
                .and_then(|v| cross_check(blueprint, self.renderer, context, key, v))
                .and_then(|v| addon_requirements(blueprint, question, context, v))
        };
        let check = |text: &str| parse_text(question, text).and_then(valid);
        let answered = |value| Outcome::Answered {
            value,
            defaulted: false,
        };
        match self.given(question, sources, &valid) {
            Some(Ok(value)) => Ok(answered(value)),
            Some(Err(_)) if self.probe && *guessed && depends_on_others(blueprint, question) => {
                Ok(answered(empty_of(question.kind)))
            }
            Some(Err((message, source))) => {
                let message = match self.set.get(key) {
                    Some(text) if question.secret && !text.trim().is_empty() => {
                        message.replace(text.trim(), "(hidden)")
                    }
                    _ => message,
                };
                Err(bad(key, &message, &source))
            }
            None if self.probe => {
                *guessed = true;
                let default = default_of(question, blueprint, self.renderer, known)
                    .ok()
                    .flatten();
                Ok(answered(default.unwrap_or_else(|| empty_of(question.kind))))
            }
            None => self.unanswered(question, known, sources, choices.clone(), &check, &valid),
        }
    }

    /// The answer given by `--set`, `--values` or the record (in that order), checked;
    /// an error names where it came from.
    fn given(
        &self,
        question: &Question,
        sources: &Sources<'_>,
        valid: &Valid<'_>,
    ) -> Option<std::result::Result<Json, (String, String)>> {
        let key = &question.key;
        if let Some(text) = self.set.get(key) {
            return Some(
                parse_text(question, text)
                    .and_then(valid)
                    .map_err(|m| (m, "--set".to_string())),
            );
        }
        if let Some(value) = sources.values.get(key) {
            return Some(
                from_yaml(question, value)
                    .and_then(valid)
                    .map_err(|m| (m, "--values".to_string())),
            );
        }
        self.recorded.get(key).map(|value| {
            from_yaml(question, value).and_then(valid).map_err(|m| {
                (
                    m,
                    format!("{}; --set {key}=… changes it", crate::record::PATH),
                )
            })
        })
    }

    /// A question nothing answered: asked at the terminal when there is one (and the
    /// question is asked in this pass), else its default, else a refusal.
    fn unanswered(
        &self,
        question: &Question,
        known: Known<'_>,
        sources: &mut Sources<'_>,
        choices: Vec<String>,
        check: &Check<'_>,
        valid: &Valid<'_>,
    ) -> Result<Outcome> {
        let key = &question.key;
        let context = known.context;
        let default = default_of(question, self.blueprint, self.renderer, known)?;
        // Asked once, a per-environment answer would be every environment's (one cluster
        // name for all): one with a default takes each environment's, or --set ENV.KEY;
        // one without is asked once, for every environment.
        let per_environment = question.per_environment && self.with_environments;
        // A repo of one environment is asked everything, in that environment's pass.
        let only_environment = self.environment_pass
            && self
                .blueprint
                .manifest
                .environments_answer
                .as_ref()
                .and_then(|list| self.recorded.get(list))
                .and_then(Json::as_array)
                .is_some_and(|names| names.len() == 1);
        let asked = !(per_environment && default.is_some()) || only_environment;
        let Some(prompter) = sources.prompter.as_deref_mut().filter(|_| asked) else {
            return self.unprompted(question, default, per_environment, valid);
        };
        let value = ask(
            prompter,
            key,
            &Prompt {
                question,
                default,
                choices,
                check,
            },
        )?;
        for warning in warnings_on(self.blueprint, self.renderer, context, key, &value)? {
            prompter.warned(&warning);
        }
        Ok(Outcome::Answered {
            value,
            defaulted: false,
        })
    }

    /// No terminal to ask: the default, checked, or a refusal saying how to answer.
    fn unprompted(
        &self,
        question: &Question,
        default: Option<Json>,
        per_environment: bool,
        valid: &Valid<'_>,
    ) -> Result<Outcome> {
        let key = &question.key;
        let defaulted = |value| {
            Ok(Outcome::Answered {
                value,
                defaulted: true,
            })
        };
        match default {
            // Re-rendering a repo: its files hold the real secret's output, and a default
            // would silently replace it.
            Some(_) if question.secret && !self.recorded.is_empty() => Err(Error::input(
                Problem::new(format!(
                    "missing secret answer `{key}` ({}): set {} or pass --secret {key}=… with the value this repo was made with (secrets are never recorded, and the default would replace what the files hold)",
                    question.prompt,
                    secret_env(key)
                ))
                .about(key),
            )),
            // The shared pass's stand-in for a per-environment answer: each environment's
            // pass renders and checks its own.
            Some(value) if per_environment && self.shared_pass => defaulted(value),
            Some(value) => defaulted(valid(value).map_err(|m| bad(key, &m, "the default"))?),
            // The shared pass of a blueprint with environments: each environment's own pass
            // asks for it (environments::gather_each).
            None if per_environment && self.shared_pass => defaulted(empty_of(question.kind)),
            None if question.secret => Err(Error::input(
                Problem::new(format!(
                    "missing secret answer `{key}` ({}): set {} or pass --secret {key}=… (secrets are never recorded)",
                    question.prompt,
                    secret_env(key)
                ))
                .about(key),
            )),
            None => Err(Error::input(
                Problem::new(format!(
                    "missing answer `{key}` ({}): pass --set {key}=… or put `{key}:` in a --values file",
                    question.prompt
                ))
                .about(key),
            )),
        }
    }

    /// The blueprint's cross-field `checks`: an error refuses, a warning is returned. The
    /// shared pass holds placeholders for the per-environment answers, so their checks run
    /// in each environment's pass.
    fn run_checks(&self, answers: &Answers, builtins: &Map<String, Json>) -> Result<Vec<String>> {
        let questions = &self.blueprint.manifest.questions;
        let context = context_of(answers, builtins);
        let per_environment =
            |key: &str| questions.iter().any(|q| q.key == key && q.per_environment);
        let mut warnings = Vec::new();
        for check in &self.blueprint.manifest.checks {
            if self.shared_pass && per_environment(&check.key) {
                continue;
            }
            let renderer = self.renderer;
            if !renderer.truth(&format!("check on `{}`", check.key), &check.expr, &context)? {
                let message = renderer.render_str("check error", &check.error, &context)?;
                let value = answers.values.get(&check.key).map(show).unwrap_or_default();
                let line = format!("{}: `{value}` {message}", check.key);
                if check.severity.is_error() {
                    return Err(Error::input(Problem::new(line).about(&check.key)));
                }
                warnings.push(line);
            }
        }
        Ok(warnings)
    }
}

/// Asks until the answer passes its checks (a select whose choice breaks a cross-field
/// rule, for instance, is offered again with the reason).
pub(super) fn ask(prompter: &mut dyn Prompter, key: &str, prompt: &Prompt<'_>) -> Result<Json> {
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
pub(super) fn cross_check(
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
pub(super) fn warnings_on(
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
pub(super) fn always_installed(
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
pub(super) fn addon_requirements(
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
pub(super) fn depends_on_others(blueprint: &Blueprint, question: &Question) -> bool {
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

pub(super) fn bad(key: &str, message: &str, source: &str) -> Error {
    // One line, whatever the value held (a newline inside a --set value).
    let message = message.replace('\n', "\\n");
    // A default that fails (one derived from the directory's name) is fixed by an answer.
    let fix = if source == "the default" {
        format!("; pass --set {key}=…")
    } else {
        String::new()
    };
    Error::input(Problem::new(format!("{key}: {message} (from {source}{fix})")).about(key))
}

pub(super) fn choices_of(question: &Question, blueprint: &Blueprint) -> Vec<String> {
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

pub(super) fn default_of(
    question: &Question,
    blueprint: &Blueprint,
    renderer: &Renderer,
    known: Known<'_>,
) -> Result<Option<Json>> {
    let Some(default) = &question.default else {
        return Ok(None);
    };
    let what = format!("default of `{}`", question.key);
    let parsed = match default {
        Json::String(template) => {
            let text = match known.context {
                Json::Object(map) if renderer.is_template(template) => {
                    // The default selection leaves out addons whose required answers are
                    // empty.
                    let satisfied = |key: &String| map.get(key).is_some_and(satisfies);
                    let defaults: Vec<String> = blueprint
                        .catalog
                        .entries()
                        .filter(|e| {
                            e.spec.default
                                && !e.spec.always
                                && e.spec.requires.iter().all(satisfied)
                        })
                        .map(|e| e.spec.name.clone())
                        .collect();
                    let defaults = Json::String(defaults.join(","));
                    let scope = known.scope.with("default_addons", &defaults);
                    renderer.render_str_in(&what, template, &scope)?
                }
                _ => renderer.render_str(&what, template, known.context)?,
            };
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

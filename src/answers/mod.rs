//! Answers to a blueprint's questions: where each comes from (precedence --set > --values >
//! prompt or default), how it is parsed and validated, and what is recorded afterwards.
//! Asking is injected through `Prompter`, so this module never touches a terminal.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::blueprint::{Blueprint, Question, QuestionType};
use crate::error::{Error, Result};
use crate::render::Renderer;

mod check;
pub use check::parse_text;
use check::{from_yaml, validate};

/// Answers in question order; skipped questions (`when` false) hold an empty value of
/// their type so templates can always read them.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub values: Map<String, Json>,
    /// Keys whose question was asked (its `when` held) and is not secret: what gets recorded.
    pub recorded: Vec<String>,
}

/// Asks one question; `check` parses and validates a typed-in answer.
pub trait Prompter {
    fn ask(&mut self, question: &Prompt<'_>) -> Result<Json>;
}

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
    pub values: BTreeMap<String, serde_yaml::Value>,
    /// Present when a terminal can be asked; otherwise defaults apply and a missing
    /// answer is an error.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// Built-in variables defaults may use (e.g. target_dir_name).
    pub builtins: Map<String, Json>,
}

pub fn gather(blueprint: &Blueprint, renderer: &Renderer, sources: Sources<'_>) -> Result<Answers> {
    gather_over(blueprint, renderer, sources, &Map::new())
}

/// `gather` over a repo's recorded answers, which rank below `--values`: each is used while
/// its question still applies and dropped silently once its `when` no longer holds.
pub fn gather_over(
    blueprint: &Blueprint,
    renderer: &Renderer,
    mut sources: Sources<'_>,
    recorded: &Map<String, Json>,
) -> Result<Answers> {
    let questions = &blueprint.manifest.questions;
    for key in sources
        .set
        .iter()
        .map(|(k, _)| k)
        .chain(sources.values.keys())
    {
        if !questions.iter().any(|q| &q.key == key) {
            return Err(Error::Input(format!(
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
    for question in questions {
        let context = context_of(&answers, &sources.builtins);
        let key = &question.key;
        if let Some(when) = &question.when
            && !renderer.truth(&format!("question `{key}` when"), when, &context)?
        {
            if set.contains_key(key) || sources.values.contains_key(key) {
                return Err(Error::Input(format!(
                    "{key}: only applies when {when}; drop it or change the answers it depends on"
                )));
            }
            answers.values.insert(key.clone(), empty_of(question.kind));
            continue;
        }
        let choices = choices_of(question, blueprint);
        let check = |text: &str| {
            parse_text(question, text)
                .and_then(|v| validate(question, v, &choices, &answers, renderer, &context))
        };
        let given = if let Some(text) = set.get(key) {
            Some(check(text).map_err(|m| bad(key, &m, "--set"))?)
        } else if let Some(value) = sources.values.get(key) {
            let parsed = from_yaml(question, value)
                .and_then(|v| validate(question, v, &choices, &answers, renderer, &context));
            Some(parsed.map_err(|m| bad(key, &m, "--values"))?)
        } else if let Some(value) = recorded.get(key) {
            let parsed = serde_yaml::to_value(value)
                .map_err(|e| e.to_string())
                .and_then(|v| from_yaml(question, &v))
                .and_then(|v| validate(question, v, &choices, &answers, renderer, &context));
            let from = format!("{}; --set {key}=… changes it", crate::record::PATH);
            Some(parsed.map_err(|m| bad(key, &m, &from))?)
        } else {
            None
        };
        let value = match given {
            Some(value) => value,
            None => {
                let default = default_of(question, blueprint, renderer, &context)?;
                match sources.prompter.as_deref_mut() {
                    Some(prompter) => prompter.ask(&Prompt {
                        question,
                        default,
                        choices: choices.clone(),
                        check: &check,
                    })?,
                    None => match default {
                        Some(value) => {
                            validate(question, value, &choices, &answers, renderer, &context)
                                .map_err(|m| bad(key, &m, "the default"))?
                        }
                        None => {
                            return Err(Error::Input(format!(
                                "missing answer `{key}` ({}): pass --set {key}=… or put `{key}:` in a --values file",
                                question.prompt
                            )));
                        }
                    },
                }
            }
        };
        answers.values.insert(key.clone(), value);
        if !question.secret {
            answers.recorded.push(key.clone());
        }
    }
    let context = context_of(&answers, &sources.builtins);
    for check in &blueprint.manifest.checks {
        if !renderer.truth(&format!("check on `{}`", check.key), &check.expr, &context)? {
            let message = renderer.render_str("check error", &check.error, &context)?;
            let value = answers.values.get(&check.key).map(show).unwrap_or_default();
            return Err(Error::Input(format!("{}: `{value}` {message}", check.key)));
        }
    }
    Ok(answers)
}

fn bad(key: &str, message: &str, source: &str) -> Error {
    Error::Input(format!("{key}: {message} (from {source})"))
}

/// The answers so far plus built-ins, as the template context for defaults and checks.
pub fn context_of(answers: &Answers, builtins: &Map<String, Json>) -> Json {
    let mut map = builtins.clone();
    for (k, v) in &answers.values {
        map.insert(k.clone(), v.clone());
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
            serde_yaml::Value::String(s) => s.clone(),
            other => serde_yaml::to_string(other)
                .unwrap_or_default()
                .trim()
                .to_string(),
        })
        .collect()
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
        serde_yaml::Value::String(template) => {
            let mut context = context.clone();
            if let Json::Object(map) = &mut context {
                // The default selection leaves out addons whose required answers are empty.
                let satisfied = |key: &String| map.get(key).is_some_and(|v| !show(v).is_empty());
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
        .map_err(|m| Error::Blueprint(format!("{what}: {m}")))
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

//! What answers are: the values in question order and what became of each, the sources
//! they come from, and the prompter that asks for the rest. Shared by every part of
//! `answers`; knows nothing of how they are gathered.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::blueprint::{Question, QuestionType};
use crate::error::Result;

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

pub(super) fn empty_of(kind: QuestionType) -> Json {
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

/// The environment variable a secret answer can come from.
pub fn secret_env(key: &str) -> String {
    format!("SCAFFOLD_SECRET_{}", key.to_ascii_uppercase())
}

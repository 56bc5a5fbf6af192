//! Parsing an answer by its question's type and checking it against the question's
//! rules. Pure; messages say what is wrong and what would be right.
use std::str::FromStr;

use ipnet::Ipv4Net;
use serde_json::{Map, Value as Json};

use super::values::{Answers, show};
use crate::blueprint::{Question, QuestionType};
use crate::manifest::Format;
use crate::render::Renderer;

/// Text typed at a prompt or given with --set, parsed by the question's type.
pub fn parse_text(question: &Question, text: &str) -> std::result::Result<Json, String> {
    let text = text.trim();
    match question.kind {
        QuestionType::String | QuestionType::Cidr => Ok(Json::String(text.to_string())),
        QuestionType::Choice => match question.choices.as_ref().and_then(|c| c.first()) {
            Some(Json::Number(_)) => parse_int(text),
            _ => Ok(Json::String(text.to_string())),
        },
        QuestionType::Int => parse_int(text),
        QuestionType::Bool => match text.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" => Ok(Json::Bool(true)),
            "false" | "no" | "n" | "0" => Ok(Json::Bool(false)),
            _ => Err(format!("`{text}` is not a boolean (true or false)")),
        },
        QuestionType::List | QuestionType::MultiChoice => {
            if text.starts_with('[') {
                let value = crate::yaml::to_json(text)
                    .map_err(|e| format!("`{text}` is not a list: {e}"))?;
                return from_yaml(question, &value);
            }
            Ok(Json::Array(
                text.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Json::String(s.to_string()))
                    .collect(),
            ))
        }
        QuestionType::Map => {
            if text.starts_with('{') {
                let value = crate::yaml::to_json(text)
                    .map_err(|e| format!("`{text}` is not a map: {e}"))?;
                return from_yaml(question, &value);
            }
            let mut map = Map::new();
            for pair in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    format!("`{pair}` is not key=value (e.g. eu-west-1a=subnet-0123…)")
                })?;
                map.insert(k.trim().to_string(), Json::String(v.trim().to_string()));
            }
            Ok(Json::Object(map))
        }
    }
}

fn parse_int(text: &str) -> std::result::Result<Json, String> {
    text.parse::<i64>()
        .map(Json::from)
        .map_err(|_| format!("`{text}` is not a whole number"))
}

/// A value from a --values file (or a non-string default), coerced to the question's type.
pub(super) fn from_yaml(question: &Question, json: &Json) -> std::result::Result<Json, String> {
    match (question.kind, json) {
        (_, Json::String(s))
            if !matches!(question.kind, QuestionType::String | QuestionType::Cidr) =>
        {
            parse_text(question, s)
        }
        (QuestionType::String | QuestionType::Cidr, Json::Number(n)) => {
            Ok(Json::String(n.to_string()))
        }
        (QuestionType::List | QuestionType::MultiChoice, Json::Array(items)) => Ok(Json::Array(
            items
                .iter()
                .map(|i| match i {
                    Json::String(_) => i.clone(),
                    other => Json::String(other.to_string()),
                })
                .collect(),
        )),
        _ => Ok(json.clone()),
    }
}

/// Checks a parsed value against the question's rules; returns the normalised value or
/// a message saying what is wrong and what would be right. One rule set per question kind.
pub(super) fn validate(
    question: &Question,
    value: Json,
    choices: &[String],
    answers: &Answers,
    renderer: &Renderer,
    context: &Json,
) -> std::result::Result<Json, String> {
    let judge = Judge {
        question,
        choices,
        answers,
        renderer,
        context,
    };
    match question.kind {
        QuestionType::String => judge.text(value),
        QuestionType::Cidr => judge.cidr(value),
        QuestionType::Int => judge.int(value),
        QuestionType::Bool => value
            .as_bool()
            .map(Json::Bool)
            .ok_or_else(|| format!("`{}` is not true or false", show(&value))),
        QuestionType::Choice => judge.choice(value),
        QuestionType::List | QuestionType::MultiChoice => judge.list(value),
        QuestionType::Map => judge.map(value),
    }
}

/// What judging an answer needs besides its value: the question, the choices it offers,
/// the answers so far (a map's keys may come from a list answer), and the renderer its
/// patterns and messages are templates of.
struct Judge<'a> {
    question: &'a Question,
    choices: &'a [String],
    answers: &'a Answers,
    renderer: &'a Renderer,
    context: &'a Json,
}

type Verdict = std::result::Result<Json, String>;

impl Judge<'_> {
    fn render(&self, template: &str) -> std::result::Result<String, String> {
        self.renderer
            .render_str("validation", template, self.context)
            .map_err(|e| e.to_string())
    }

    /// The question's own `error` message, else `fallback`.
    fn error(&self, fallback: &str) -> String {
        self.question
            .error
            .as_deref()
            .map(|e| self.render(e).unwrap_or_else(|m| m))
            .unwrap_or_else(|| fallback.to_string())
    }

    /// Whether `text` matches the pattern `template` renders to (none: it matches).
    fn matches(&self, template: Option<&String>, text: &str) -> std::result::Result<bool, String> {
        match template {
            Some(pattern) => matches(&self.render(pattern)?, text),
            None => Ok(true),
        }
    }

    fn text(&self, value: Json) -> Verdict {
        let question = self.question;
        let Json::String(s) = &value else {
            return Err(format!("`{}` is not text", show(&value)));
        };
        if s.is_empty() {
            return if question.allow_empty {
                Ok(value)
            } else {
                Err("must not be empty".into())
            };
        }
        if let Some(max) = question.max_length
            && s.len() > max
        {
            return Err(format!(
                "`{s}` is {} characters long; {}",
                s.len(),
                self.error(&format!("at most {max} allowed"))
            ));
        }
        if !self.matches(question.regex.as_ref(), s)? {
            let pattern = question.regex.as_deref().unwrap_or_default();
            return Err(format!(
                "`{s}` {}",
                self.error(&format!("does not match {pattern}"))
            ));
        }
        if question.format == Some(Format::GitBranch) && !crate::git_paths::is_valid_branch(s) {
            return Err(format!(
                "`{s}` is not a valid git branch name (git's rules: no `..`, no leading `-`, no trailing `.lock` or `/`, no spaces or `~^:?*[\\`); use a name such as main"
            ));
        }
        Ok(value)
    }

    fn cidr(&self, value: Json) -> Verdict {
        let Json::String(s) = &value else {
            return Err(format!("`{}` is not a CIDR", show(&value)));
        };
        check_cidr(self.question, s).map_err(|m| format!("`{s}` {m}"))?;
        Ok(value)
    }

    fn int(&self, value: Json) -> Verdict {
        let question = self.question;
        let Some(n) = value.as_i64() else {
            return Err(format!("`{}` is not a whole number", show(&value)));
        };
        if !self.choices.is_empty() && !self.choices.iter().any(|c| c == &n.to_string()) {
            return Err(format!("`{n}` is not one of {}", self.choices.join(", ")));
        }
        if question.min.is_some_and(|min| n < min) || question.max.is_some_and(|max| n > max) {
            return Err(format!(
                "`{n}` is out of range {}..={}",
                question.min.map(|v| v.to_string()).unwrap_or_default(),
                question.max.map(|v| v.to_string()).unwrap_or_default()
            ));
        }
        Ok(value)
    }

    fn choice(&self, value: Json) -> Verdict {
        let shown = show(&value);
        if self.choices.iter().any(|c| c == &shown) {
            Ok(value)
        } else {
            Err(format!(
                "`{shown}` is not one of {}",
                self.choices.join(", ")
            ))
        }
    }

    fn list(&self, value: Json) -> Verdict {
        let question = self.question;
        let Json::Array(items) = &value else {
            return Err(format!("`{}` is not a list", show(&value)));
        };
        let mut seen = Vec::new();
        for item in items {
            let text = show(item);
            self.list_item(&text, &seen)?;
            seen.push(text);
        }
        if let Some(min) = question.min_items
            && items.len() < min
        {
            return Err(format!("needs at least {min} item(s)"));
        }
        if let Some(max) = question.max_items
            && items.len() > max
        {
            return Err(format!("takes at most {max} items, got {}", items.len()));
        }
        Ok(value)
    }

    /// One item of a list, given the items before it.
    fn list_item(&self, text: &str, seen: &[String]) -> std::result::Result<(), String> {
        let question = self.question;
        let multi = question.kind == QuestionType::MultiChoice;
        if multi && !self.choices.iter().any(|c| c == text) {
            return Err(format!(
                "`{text}` is not one of {}",
                self.choices.join(", ")
            ));
        }
        if question.item_type == Some(QuestionType::Cidr) {
            check_cidr(question, text).map_err(|m| format!("`{text}` {m}"))?;
        }
        if !self.matches(question.item_regex.as_ref(), text)? {
            let pattern = question.item_regex.as_deref().unwrap_or_default();
            let message = question
                .item_error
                .as_deref()
                .map(|m| self.render(m))
                .transpose()?;
            return Err(format!(
                "`{text}` {}",
                message.unwrap_or_else(|| format!("does not match {pattern}"))
            ));
        }
        if (question.unique || multi) && seen.iter().any(|s| s == text) {
            return Err(format!("`{text}` is listed twice"));
        }
        Ok(())
    }

    fn map(&self, value: Json) -> Verdict {
        let question = self.question;
        let Json::Object(map) = &value else {
            return Err(format!("`{}` is not a map", show(&value)));
        };
        if let Some(list_key) = &question.keys_from {
            self.keys_from(list_key, map)?;
        }
        for (k, v) in map {
            let text = show(v);
            if !self.matches(question.value_regex.as_ref(), &text)? {
                let pattern = question.value_regex.as_deref().unwrap_or_default();
                let message = question
                    .value_error
                    .as_deref()
                    .map(|m| self.render(m))
                    .transpose()?;
                return Err(format!(
                    "{k}: `{text}` {}",
                    message.unwrap_or_else(|| format!("does not match {pattern}"))
                ));
            }
        }
        Ok(value)
    }

    /// A map whose keys must be exactly the items of the list answer `list_key`.
    fn keys_from(
        &self,
        list_key: &str,
        map: &Map<String, Json>,
    ) -> std::result::Result<(), String> {
        let wanted: Vec<String> = self
            .answers
            .values
            .get(list_key)
            .and_then(Json::as_array)
            .map(|a| a.iter().map(show).collect())
            .unwrap_or_default();
        let mut have: Vec<String> = map.keys().cloned().collect();
        let mut want_sorted = wanted.clone();
        have.sort();
        want_sorted.sort();
        if have == want_sorted {
            return Ok(());
        }
        Err(format!(
            "needs exactly one entry per {list_key} ({}), got {}",
            wanted.join(", "),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ))
    }
}

fn check_cidr(question: &Question, text: &str) -> std::result::Result<(), String> {
    let net = Ipv4Net::from_str(text)
        .map_err(|_| "is not an IPv4 CIDR such as 10.0.0.0/16".to_string())?;
    if net.network() != net.addr() {
        return Err(format!("has host bits set; the network is {}", net.trunc()));
    }
    if question.min_prefix.is_some_and(|p| net.prefix_len() < p)
        || question.max_prefix.is_some_and(|p| net.prefix_len() > p)
    {
        return Err(format!(
            "must have a prefix between /{} and /{}",
            question.min_prefix.unwrap_or(0),
            question.max_prefix.unwrap_or(32)
        ));
    }
    for other in &question.not_overlapping {
        let reserved = Ipv4Net::from_str(other).map_err(|e| e.to_string())?;
        if net.contains(&reserved.network()) || reserved.contains(&net.network()) {
            return Err(question
                .error
                .clone()
                .unwrap_or_else(|| format!("overlaps {other}")));
        }
    }
    Ok(())
}

fn matches(pattern: &str, text: &str) -> std::result::Result<bool, String> {
    crate::pattern::is_match(pattern, text)
        .map_err(|e| format!("blueprint regex `{pattern}` does not compile: {e}"))
}

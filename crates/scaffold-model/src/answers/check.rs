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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::manifest::Delimiters;

    /// A question of `kind` with the rules in `rules` (the manifest's field names).
    fn question(kind: &str, rules: Json) -> Question {
        let mut fields = json!({"key": "k", "prompt": "K", "type": kind});
        if let (Some(fields), Json::Object(rules)) = (fields.as_object_mut(), rules) {
            fields.extend(rules);
        }
        serde_json::from_value(fields).expect("a question")
    }

    /// Parses `text` for the question and validates it with `choices` and `answers`.
    fn judge(
        question: &Question,
        text: &str,
        choices: &[&str],
        answers: &Answers,
    ) -> Result<Json, String> {
        let renderer = Renderer::new(&Delimiters::default(), []).expect("a renderer");
        let choices: Vec<String> = choices.iter().map(|c| c.to_string()).collect();
        let value = parse_text(question, text)?;
        validate(question, value, &choices, answers, &renderer, &json!({}))
    }

    fn accepts(question: &Question, text: &str) -> Json {
        judge(question, text, &[], &Answers::default()).expect("accepted")
    }

    fn refuses(question: &Question, text: &str) -> String {
        judge(question, text, &[], &Answers::default()).expect_err("refused")
    }

    #[test]
    fn strings_are_trimmed_and_held_to_length_pattern_and_emptiness() {
        let name = question(
            "string",
            json!({"regex": "^[a-z][a-z0-9-]*$", "max_length": 8, "error": "lowercase letters, digits and -"}),
        );
        assert_eq!(accepts(&name, "  shop-1 "), json!("shop-1"));
        assert_eq!(
            refuses(&name, "Shop"),
            "`Shop` lowercase letters, digits and -"
        );
        assert!(refuses(&name, "shop-platform").contains("13 characters long"));
        assert_eq!(refuses(&name, ""), "must not be empty");
        let optional = question("string", json!({"allow_empty": true}));
        assert_eq!(accepts(&optional, ""), json!(""));
        let branch = question("string", json!({"format": "git-branch"}));
        assert!(refuses(&branch, "a..b").contains("not a valid git branch name"));
        assert_eq!(accepts(&branch, "main"), json!("main"));
    }

    #[test]
    fn ints_and_bools_parse_their_spellings_and_keep_to_range() {
        let count = question("int", json!({"min": 1, "max": 5}));
        assert_eq!(accepts(&count, "3"), json!(3));
        assert_eq!(refuses(&count, "three"), "`three` is not a whole number");
        assert_eq!(refuses(&count, "7"), "`7` is out of range 1..=5");
        let flag = question("bool", json!({}));
        assert_eq!(accepts(&flag, "Yes"), json!(true));
        assert_eq!(accepts(&flag, "0"), json!(false));
        assert!(refuses(&flag, "maybe").contains("is not a boolean"));
    }

    #[test]
    fn choices_and_multi_choices_hold_to_the_offered_values() {
        let mode = question("choice", json!({"choices": ["new", "existing"]}));
        let answers = Answers::default();
        assert_eq!(
            judge(&mode, "new", &["new", "existing"], &answers),
            Ok(json!("new"))
        );
        assert_eq!(
            judge(&mode, "old", &["new", "existing"], &answers),
            Err("`old` is not one of new, existing".to_string())
        );
        let numbers = question("choice", json!({"choices": [1, 3]}));
        assert_eq!(judge(&numbers, "3", &["1", "3"], &answers), Ok(json!(3)));
        let addons = question("multi-choice", json!({}));
        let offered = ["a", "b"];
        assert_eq!(
            judge(&addons, "a, b", &offered, &answers),
            Ok(json!(["a", "b"]))
        );
        assert_eq!(
            judge(&addons, "a,a", &offered, &answers),
            Err("`a` is listed twice".to_string())
        );
        assert_eq!(
            judge(&addons, "[c]", &offered, &answers),
            Err("`c` is not one of a, b".to_string())
        );
    }

    #[test]
    fn cidrs_and_cidr_lists_are_networks_within_the_prefix_bounds() {
        let vpc = question(
            "cidr",
            json!({"min_prefix": 16, "max_prefix": 24, "not_overlapping": ["100.64.0.0/10"]}),
        );
        assert_eq!(accepts(&vpc, "10.0.0.0/16"), json!("10.0.0.0/16"));
        assert_eq!(
            refuses(&vpc, "10.0.0.1/16"),
            "`10.0.0.1/16` has host bits set; the network is 10.0.0.0/16"
        );
        assert!(refuses(&vpc, "10.0.0.0/8").contains("between /16 and /24"));
        assert_eq!(
            refuses(&vpc, "100.64.0.0/16"),
            "`100.64.0.0/16` overlaps 100.64.0.0/10"
        );
        assert!(refuses(&vpc, "ten").contains("not an IPv4 CIDR"));
        let admins = question(
            "list",
            json!({"item_type": "cidr", "min_items": 1, "max_items": 2, "unique": true}),
        );
        assert_eq!(
            accepts(&admins, "10.0.0.0/8,192.168.0.0/16"),
            json!(["10.0.0.0/8", "192.168.0.0/16"])
        );
        assert_eq!(refuses(&admins, ""), "needs at least 1 item(s)");
        assert!(refuses(&admins, "10.0.0.0/8,10.0.0.0/8").contains("listed twice"));
        assert!(refuses(&admins, "[1.0.0.0/8, 2.0.0.0/8, 3.0.0.0/8]").contains("at most 2"));
        assert!(refuses(&admins, "10.0.0.1/8").contains("host bits"));
    }

    #[test]
    fn maps_parse_pairs_and_need_one_entry_per_listed_key() {
        let subnets = question(
            "map",
            json!({"keys_from": "zones", "value_regex": "^subnet-[0-9a-f]+$", "value_error": "is not a subnet id"}),
        );
        let mut answers = Answers::default();
        answers
            .values
            .insert("zones".into(), json!(["eu-west-1a", "eu-west-1b"]));
        let judged = |text: &str| judge(&subnets, text, &[], &answers);
        assert_eq!(
            judged("eu-west-1a=subnet-1, eu-west-1b=subnet-2"),
            Ok(json!({"eu-west-1a": "subnet-1", "eu-west-1b": "subnet-2"}))
        );
        assert_eq!(
            judged("eu-west-1a=subnet-1"),
            Err(
                "needs exactly one entry per zones (eu-west-1a, eu-west-1b), got eu-west-1a"
                    .to_string()
            )
        );
        assert_eq!(
            judged("{eu-west-1a: subnet-1, eu-west-1b: vpc-2}"),
            Err("eu-west-1b: `vpc-2` is not a subnet id".to_string())
        );
        assert!(
            judged("eu-west-1a")
                .expect_err("not a pair")
                .contains("is not key=value")
        );
    }

    #[test]
    fn values_file_entries_are_coerced_to_the_questions_type() {
        let name = question("string", json!({}));
        assert_eq!(from_yaml(&name, &json!(42)), Ok(json!("42")));
        let count = question("int", json!({}));
        assert_eq!(from_yaml(&count, &json!("4")), Ok(json!(4)));
        let zones = question("list", json!({}));
        assert_eq!(from_yaml(&zones, &json!([1, "b"])), Ok(json!(["1", "b"])));
        assert_eq!(from_yaml(&zones, &json!("a,b")), Ok(json!(["a", "b"])));
    }
}

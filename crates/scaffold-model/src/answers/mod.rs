//! Answers to a blueprint's questions: where each comes from (precedence --set > --values >
//! prompt or default), how it is parsed and validated, and what is recorded afterwards.
//! Asking is injected through `Prompter`, so this module never touches a terminal. The parts: `values` (what
//! answers are), `pass` (one pass over the questions), `check` (parsing and one rule set
//! per question kind), `environments` (the per-environment passes), `names`.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::blueprint::{Blueprint, Question};
use crate::error::{Error, Problem, Result};
use crate::render::Renderer;

mod check;
pub mod environments;
mod names;
mod pass;
mod values;
pub use check::parse_text;
pub use environments::ENVIRONMENT;
use pass::collect;
pub use pass::literal_default_error;
pub use values::{
    Answers, Prompt, Prompter, Sources, as_text, context_of, satisfies, secret_env, show,
};

/// The one-off templates gathering answers renders (`templates`: defaults, patterns and
/// their messages, checks' messages, derived names, layer directories) and the conditions
/// it evaluates (questions' `when`, checks' `expr`), for `Renderer::add_one_offs`.
pub fn one_offs(blueprint: &Blueprint) -> (Vec<&str>, Vec<&str>) {
    let manifest = &blueprint.manifest;
    let mut templates: Vec<&str> = Vec::new();
    let mut conditions: Vec<&str> = Vec::new();
    for question in &manifest.questions {
        if let Some(Json::String(default)) = &question.default {
            templates.push(default);
        }
        let texts = [
            &question.regex,
            &question.error,
            &question.item_regex,
            &question.item_error,
            &question.value_regex,
            &question.value_error,
        ];
        templates.extend(texts.into_iter().flatten().map(String::as_str));
        conditions.extend(question.when.as_deref());
    }
    for check in &manifest.checks {
        templates.push(&check.error);
        conditions.push(&check.expr);
    }
    templates.extend(manifest.aws_names.iter().map(|name| name.value.as_str()));
    templates.extend(manifest.layers.values().map(String::as_str));
    (templates, conditions)
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

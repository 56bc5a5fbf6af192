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

//! Answers per environment: a blueprint that names an `environments_answer` answers its
//! `per_environment` questions once per environment listed there. `--set ENV.KEY=…` (and
//! `ENV.KEY:` or `ENV: {KEY: …}` in a --values file) answers for one environment; an answer
//! without a prefix is every environment's. Each environment's defaults render with
//! `environment` set to its name.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::pass::collect;
use super::values::{Answers, Prompter, Sources, satisfies, show};
use crate::blueprint::Blueprint;
use crate::error::{Error, Problem, Result};
use crate::render::Renderer;

pub use crate::manifest::ENVIRONMENT;

/// What was given for one environment only.
#[derive(Default)]
struct Own {
    set: Vec<(String, String)>,
    values: BTreeMap<String, Json>,
}

/// The answers given for one environment, taken out of `sources` (which keeps the rest).
pub struct Given {
    by_environment: BTreeMap<String, Own>,
    set: Vec<(String, String)>,
    values: BTreeMap<String, Json>,
    recorded: BTreeMap<String, Map<String, Json>>,
}

/// Separates answers for one environment (`ENV.KEY`, or a mapping under a name that is not
/// a question) from the shared ones. A blueprint without environments keeps every key, so
/// an unknown one is reported as before.
pub fn split<'a>(blueprint: &Blueprint, mut sources: Sources<'a>) -> Result<(Sources<'a>, Given)> {
    let mut given = Given {
        by_environment: BTreeMap::new(),
        set: Vec::new(),
        values: BTreeMap::new(),
        recorded: std::mem::take(&mut sources.recorded_environments),
    };
    if blueprint.manifest.environments_answer.is_none() {
        return Ok((sources, given));
    }
    let is_question = |key: &str| blueprint.manifest.questions.iter().any(|q| q.key == key);
    let mut set = Vec::new();
    for (key, value) in std::mem::take(&mut sources.set) {
        match key.split_once('.') {
            Some((env, own)) if !is_question(&key) => {
                per_environment_key(blueprint, env, own, "--set")?;
                let entry = given.by_environment.entry(env.to_string()).or_default();
                entry.set.push((own.to_string(), value));
            }
            _ => set.push((key, value)),
        }
    }
    let mut values = BTreeMap::new();
    for (key, value) in std::mem::take(&mut sources.values) {
        if let Some((env, own)) = key.split_once('.')
            && !is_question(&key)
        {
            per_environment_key(blueprint, env, own, "--values")?;
            let entry = given.by_environment.entry(env.to_string()).or_default();
            entry.values.insert(own.to_string(), value);
        } else if let (false, Json::Object(map)) = (is_question(&key), &value) {
            for (own, v) in map {
                let own = own.clone();
                per_environment_key(blueprint, &key, &own, "--values")?;
                let entry = given.by_environment.entry(key.clone()).or_default();
                entry.values.insert(own, v.clone());
            }
        } else {
            values.insert(key, value);
        }
    }
    given.set = set.clone();
    given.values = values.clone();
    sources.set = set;
    sources.values = values;
    Ok((sources, given))
}

fn per_environment_key(blueprint: &Blueprint, env: &str, key: &str, flag: &str) -> Result<()> {
    match blueprint.manifest.questions.iter().find(|q| q.key == key) {
        Some(q) if q.per_environment => Ok(()),
        Some(_) => Err(Error::input(
            Problem::new(format!(
                "{flag} {env}.{key}: `{key}` is shared by every environment"
            ))
            .fix(format!("set it without `{env}.`")),
        )),
        None => Err(Error::input(format!(
            "{flag} {env}.{key}: `{key}` is not a question of the blueprint{}",
            crate::suggest::did_you_mean(
                key,
                blueprint
                    .manifest
                    .questions
                    .iter()
                    .filter(|q| q.per_environment)
                    .map(|q| q.key.as_str())
            )
        ))),
    }
}

/// The environments' own answers after the shared ones: each environment answers the
/// `per_environment` questions over the shared answers, with what was given for it, then
/// what was given for all, then what its record holds, then defaults rendered for it.
pub fn gather_each(
    blueprint: &Blueprint,
    renderer: &Renderer,
    mut shared: Answers,
    given: Given,
    sources: &mut Sources<'_>,
) -> Result<Answers> {
    let builtins = &sources.builtins.clone();
    let Some(list_key) = &blueprint.manifest.environments_answer else {
        return Ok(shared);
    };
    let names = crate::json::strings(shared.values.get(list_key));
    if let Some(clash) = names
        .iter()
        .find(|n| blueprint.manifest.questions.iter().any(|q| &q.key == *n))
    {
        return Err(Error::input(Problem::new(format!("{list_key}: `{clash}` is the name of a question, so `{clash}.KEY` would be ambiguous")).fix("name the environment otherwise")));
    }
    if let Some(unknown) = given.by_environment.keys().find(|e| !names.contains(e)) {
        return Err(Error::input(format!(
            "{unknown}.…: `{unknown}` is not an environment of this repo ({list_key}: {})",
            names.join(", ")
        )));
    }
    let per_env = |key: &str| per_environment(blueprint, key);
    let asks_environment = blueprint
        .manifest
        .questions
        .iter()
        .any(|q| q.key == ENVIRONMENT);
    // Each environment's pass answers it with the environment's name: a value given for it
    // would be silently replaced.
    if asks_environment
        && (given.set.iter().any(|(k, _)| k == ENVIRONMENT)
            || given.values.contains_key(ENVIRONMENT)
            || given.by_environment.values().any(|o| {
                o.set.iter().any(|(k, _)| k == ENVIRONMENT) || o.values.contains_key(ENVIRONMENT)
            }))
    {
        return Err(Error::input(
            Problem::new(format!(
                "{ENVIRONMENT}: each environment answers it with its own name"
            ))
            .fix(format!(
                "name the environments with {list_key} (e.g. --set {list_key}=staging)"
            ))
            .about(ENVIRONMENT),
        ));
    }
    // One environment needs no naming in messages.
    let several = names.len() > 1;
    let pass = Pass {
        blueprint,
        renderer,
        shared: &shared,
        given: &given,
        builtins,
        asks_environment,
        several,
    };
    let gathered: Vec<Result<Answers>> = match sources.prompter.as_mut() {
        // Nothing is asked: the environments' passes run on every core, and the first
        // error in their order is the one a serial run meets.
        None => crate::parallel::map(&names, |name| pass.answer(name, None)),
        Some(prompter) => {
            let mut gathered = Vec::with_capacity(names.len());
            for name in &names {
                let answers = pass.answer(name, Some(&mut **prompter));
                let failed = answers.is_err();
                gathered.push(answers);
                if failed {
                    break;
                }
            }
            gathered
        }
    };
    for (name, answers) in names.iter().zip(gathered) {
        let mut answers = answers?;
        answers.recorded.retain(|k| per_env(k));
        shared.warnings.extend(
            std::mem::take(&mut answers.warnings)
                .into_iter()
                .map(|w| if several { format!("{name}: {w}") } else { w }),
        );
        shared.environments.push((name.clone(), answers));
    }
    distinct(blueprint, &shared)?;
    let nested = nested(blueprint, &shared);
    shared.warnings.extend(nested);
    shared.recorded.retain(|k| !per_env(k));
    Ok(shared)
}

/// Whether `key` is a `per_environment` question's.
fn per_environment(blueprint: &Blueprint, key: &str) -> bool {
    blueprint
        .manifest
        .questions
        .iter()
        .any(|q| q.key == key && q.per_environment)
}

/// What every environment's pass reads: the shared answers and what was given.
struct Pass<'a> {
    blueprint: &'a Blueprint,
    renderer: &'a Renderer,
    shared: &'a Answers,
    given: &'a Given,
    builtins: &'a Map<String, Json>,
    asks_environment: bool,
    several: bool,
}

impl Pass<'_> {
    /// The environment `name`'s own answers (asked through `prompter` when there is one).
    fn answer(&self, name: &String, prompter: Option<&mut dyn Prompter>) -> Result<Answers> {
        let (shared, given) = (self.shared, self.given);
        // Shared answers stand as recorded ones; a per-environment answer given or typed
        // for all counts too, but not a default (the environment renders its own) nor an
        // empty one (asked again).
        let mut recorded: Map<String, Json> = shared
            .values
            .iter()
            .filter(|(k, v)| {
                !per_environment(self.blueprint, k)
                    || (!shared.defaulted.contains(*k) && satisfies(v))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(own) = given.recorded.get(name) {
            recorded.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let own = given.by_environment.get(name);
        let mut set = given.set.clone();
        set.extend(own.map(|o| o.set.clone()).unwrap_or_default());
        if self.asks_environment {
            set.push((ENVIRONMENT.to_string(), name.clone()));
        }
        let mut values = given.values.clone();
        values.extend(own.map(|o| o.values.clone()).unwrap_or_default());
        let mut builtins = self.builtins.clone();
        builtins.insert(ENVIRONMENT.into(), Json::String(name.clone()));
        let sources = Sources {
            set,
            values,
            prompter,
            builtins,
            recorded_environments: BTreeMap::new(),
        };
        collect(self.blueprint, self.renderer, sources, &recorded, false).map_err(|e| match e {
            Error::Input(problem) if self.several => Error::Input(Problem {
                what: format!("environment `{name}`: {}", problem.what),
                ..problem
            }),
            other => other,
        })
    }
}

/// A `distinct` question's answers: the first two environments that give the same
/// non-empty one are refused.
fn distinct(blueprint: &Blueprint, answers: &Answers) -> Result<()> {
    for question in blueprint.manifest.questions.iter().filter(|q| q.distinct) {
        let mut seen: BTreeMap<String, &str> = BTreeMap::new();
        for (env, own) in &answers.environments {
            let Some(value) = own.values.get(&question.key).filter(|v| satisfies(v)) else {
                continue;
            };
            let text = show(value);
            if let Some(first) = seen.insert(text.clone(), env) {
                let key = &question.key;
                let why = question
                    .distinct_reason
                    .as_ref()
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                return Err(Error::input(
                    Problem::new(format!("{env}.{key}: `{text}` is {first}'s too{why}")).fix(
                        format!("each environment needs its own {key} (--set {env}.{key}=…)"),
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A `not_nested` question's answers: an environment whose name lies inside another
/// environment's (`a.example.org` under `example.org`) gets a warning, one line each, with
/// what it needs (a one-environment repo's default zone is the parent of the next
/// environment's default, so refusing would refuse `env add`'s defaults).
fn nested(blueprint: &Blueprint, answers: &Answers) -> Vec<String> {
    let mut warnings = Vec::new();
    for question in blueprint.manifest.questions.iter().filter(|q| q.not_nested) {
        let key = &question.key;
        let names: Vec<(&str, String)> = answers
            .environments
            .iter()
            .filter_map(|(env, own)| {
                let value = own.values.get(key).filter(|v| satisfies(v))?;
                Some((env.as_str(), show(value)))
            })
            .collect();
        for (env, name) in &names {
            if let Some((parent_env, parent)) = names
                .iter()
                .find(|(_, parent)| name.ends_with(&format!(".{parent}")))
            {
                warnings.push(format!(
                    "{env}.{key}: `{name}` lies inside {parent_env}'s `{parent}`: nothing delegates it, so add {env}'s NS records to `{parent}` by hand, and tear {env} down before {parent_env} (or give {env} a {key} outside `{parent}`)"
                ));
            }
        }
    }
    warnings
}

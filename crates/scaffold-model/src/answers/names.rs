//! The blueprint's `aws_names`: names derived from each environment's answers, computed
//! once so templates and the checks here read the same value. A name over its resource's
//! limit, or one two environments share, is refused before anything is written.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use super::values::{Answers, context_of};
use crate::blueprint::Blueprint;
use crate::error::{Error, Problem, Result};
use crate::manifest::AwsName;
use crate::render::Renderer;

/// Computes every environment's names (or the repo's, without environments) into
/// `aws_names`, then refuses a name too long or shared.
pub fn compute(
    blueprint: &Blueprint,
    renderer: &Renderer,
    answers: &mut Answers,
    builtins: &Map<String, Json>,
) -> Result<()> {
    let declared = &blueprint.manifest.aws_names;
    if declared.is_empty() {
        return Ok(());
    }
    if answers.environments.is_empty() {
        answers.aws_names = render_names(declared, renderer, answers, builtins)?;
        return within_limits(declared, None, &answers.aws_names);
    }
    for (env, own) in &mut answers.environments {
        let mut builtins = builtins.clone();
        builtins.insert(
            crate::manifest::ENVIRONMENT.into(),
            Json::String(env.clone()),
        );
        own.aws_names = render_names(declared, renderer, own, &builtins)?;
        within_limits(declared, Some(env), &own.aws_names)?;
    }
    unshared(declared, &answers.environments)
}

fn render_names(
    declared: &[AwsName],
    renderer: &Renderer,
    answers: &Answers,
    builtins: &Map<String, Json>,
) -> Result<Map<String, Json>> {
    let context = context_of(answers, builtins);
    let mut names = Map::new();
    for name in declared {
        let what = format!("aws_names `{}`", name.key);
        let value = renderer.render_str(&what, &name.value, &context)?;
        names.insert(name.key.clone(), Json::String(value.trim().to_string()));
    }
    Ok(names)
}

fn text<'a>(names: &'a Map<String, Json>, key: &str) -> &'a str {
    names.get(key).and_then(Json::as_str).unwrap_or_default()
}

fn within_limits(declared: &[AwsName], env: Option<&str>, names: &Map<String, Json>) -> Result<()> {
    for name in declared {
        let value = text(names, &name.key);
        let length = value.chars().count();
        if length > name.max_length || value.is_empty() {
            let whose = env
                .map(|e| format!("environment `{e}`: "))
                .unwrap_or_default();
            return Err(Error::input(
                Problem::new(format!(
                    "{whose}{} `{value}` has {length} characters; AWS takes 1 to {}",
                    name.resource, name.max_length
                ))
                .fix("use a shorter platform or environment name"),
            ));
        }
    }
    Ok(())
}

/// Two environments with one name of a resource would share (or fight over) it.
fn unshared(declared: &[AwsName], environments: &[(String, Answers)]) -> Result<()> {
    for name in declared {
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for (env, own) in environments {
            let value = text(&own.aws_names, &name.key);
            if let Some(first) = seen.insert(value, env) {
                return Err(Error::input(
                    Problem::new(format!(
                        "environments `{first}` and `{env}` both name their {} `{value}`",
                        name.resource
                    ))
                    .fix(format!(
                        "rename `{env}` so its AWS names differ from `{first}`'s"
                    )),
                ));
            }
        }
    }
    Ok(())
}

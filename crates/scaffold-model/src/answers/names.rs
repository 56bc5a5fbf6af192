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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::answers::Sources;

    /// The default blueprint with `aws_names` replaced by one name rendered from `value`.
    fn with_name(value: &str, max_length: usize) -> (Blueprint, Renderer) {
        let mut blueprint = Blueprint::load("default").expect("the default blueprint");
        blueprint.manifest.aws_names = vec![AwsName {
            key: "prefix".into(),
            resource: "IAM role prefix".into(),
            value: value.into(),
            max_length,
        }];
        let renderer = crate::generate::renderer_for(&blueprint).expect("its renderer");
        (blueprint, renderer)
    }

    fn gathered(
        blueprint: &Blueprint,
        renderer: &Renderer,
        set: &[(&str, &str)],
    ) -> Result<Answers> {
        let mut builtins = Map::new();
        builtins.insert("target_dir_name".into(), json!("shop"));
        let sources = Sources {
            set: set
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            builtins,
            ..Sources::default()
        };
        super::super::gather(blueprint, renderer, sources)
    }

    #[test]
    fn each_environment_gets_its_names_from_its_own_answers() {
        let (blueprint, renderer) = with_name("[[ name ]]-[[ environment ]]", 20);
        let answers =
            gathered(&blueprint, &renderer, &[("environments", "dev,prod")]).expect("answers");
        let prefixes: Vec<(&str, &Json)> = answers
            .environments
            .iter()
            .map(|(env, own)| (env.as_str(), &own.aws_names["prefix"]))
            .collect();
        assert_eq!(
            prefixes,
            [("dev", &json!("shop-dev")), ("prod", &json!("shop-prod"))]
        );
    }

    #[test]
    fn a_name_over_its_limit_is_refused_naming_the_environment() {
        let (blueprint, renderer) = with_name("[[ name ]]-[[ environment ]]", 8);
        let refused = gathered(&blueprint, &renderer, &[("environments", "dev,prod")])
            .expect_err("shop-prod is 9 characters");
        let message = refused.to_string();
        assert!(
            message.contains(
                "environment `prod`: IAM role prefix `shop-prod` has 9 characters; AWS takes 1 to 8"
            ),
            "{message}"
        );
    }

    #[test]
    fn two_environments_with_one_name_are_refused() {
        let (blueprint, renderer) = with_name("[[ name ]]", 20);
        let refused = gathered(&blueprint, &renderer, &[("environments", "dev,prod")])
            .expect_err("one name for two");
        let message = refused.to_string();
        assert!(
            message
                .contains("environments `dev` and `prod` both name their IAM role prefix `shop`"),
            "{message}"
        );
        let single = gathered(&blueprint, &renderer, &[("environments", "prod")]).expect("answers");
        assert_eq!(single.environments[0].1.aws_names["prefix"], json!("shop"));
    }
}

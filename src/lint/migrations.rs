//! The layer's `moves:` migrations, checked as `update` will apply them: each renders over
//! the answers of every default (once per environment when the blueprint has them, with
//! that environment's answers and name), to a path inside the repo that is not its own
//! source, and no two sources of one version land on one target.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json};

use super::Findings;
use crate::answers::{self, Answers};
use crate::blueprint::Blueprint;
use crate::plan::RelPath;
use crate::render::Renderer;
use crate::yaml::Places;

/// The contexts `update` renders moves in: the answers, or each environment's.
fn contexts(answers: &Answers) -> Vec<(Option<&str>, Json)> {
    if answers.environments.is_empty() {
        return vec![(None, Json::Object(answers.values.clone()))];
    }
    answers
        .environments
        .iter()
        .map(|(name, own)| {
            let mut context: Map<String, Json> = answers.values.clone();
            context.extend(own.values.clone());
            context.insert(answers::ENVIRONMENT.into(), Json::String(name.clone()));
            (Some(name.as_str()), Json::Object(context))
        })
        .collect()
}

pub(super) fn check_moves(
    blueprint: &Blueprint,
    renderer: &Renderer,
    places: &Places,
    answers: &Answers,
    found: &mut Findings,
) {
    let contexts = contexts(answers);
    for migration in blueprint
        .manifest
        .migrations
        .iter()
        .filter(|m| m.blueprint.as_deref() == Some(blueprint.manifest.name.as_str()))
    {
        let item = places.item("migrations", "version", &migration.version);
        let at = |scalar: &str| {
            item.as_ref()
                .and_then(|i| i.find_scalar(scalar))
                .map_or_else(|| places.at(&["migrations"]), |at| at.pair())
        };
        // One finding a move, in the first environment that shows it.
        let mut reported: BTreeSet<&str> = BTreeSet::new();
        for (environment, context) in &contexts {
            let within = environment.map_or(String::new(), |e| format!(" (environment {e})"));
            let mut targets: BTreeMap<String, &str> = BTreeMap::new();
            for (from, to) in &migration.moves {
                let what = format!("migrations {} moves `{from}`", migration.version);
                let rendered = renderer
                    .render_str(&what, from, context)
                    .and_then(|f| Ok((f, renderer.render_str(&what, to, context)?)));
                let (source, target) = match rendered {
                    Ok(pair) => pair,
                    Err(e) => {
                        if reported.insert(from) {
                            found.error("blueprint.yaml", at(to), format!("{e}{within}"));
                        }
                        continue;
                    }
                };
                let message = if RelPath::new(target.trim_end_matches('/')).is_err() {
                    Some(format!(
                        "to `{target}`, which is not a path inside the repo"
                    ))
                } else if source == target {
                    Some(format!("onto itself (`{target}`)"))
                } else if source.ends_with('/') != target.ends_with('/') {
                    Some("a directory (ending in `/`) to a file, or a file to a directory: end both in `/` or neither".to_string())
                } else {
                    targets
                        .insert(target.clone(), from)
                        .map(|other| format!("to `{target}`, where `{other}` moves too"))
                };
                if let Some(message) = message
                    && reported.insert(from)
                {
                    found.error(
                        "blueprint.yaml",
                        at(to),
                        format!("{what}: {message}{within}"),
                    );
                }
            }
        }
    }
}

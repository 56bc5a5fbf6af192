//! The layer's `moves:` migrations, checked as `update` will apply them: each renders over
//! the answers of every default (once per environment when the blueprint has them, with
//! that environment's answers and name), to a path inside the repo that is not its own
//! source, and no two sources of one version land on one target.
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value as Json};

use super::findings::Findings;
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

/// A release checked against the one before it: both rendered with their defaults.
pub(super) struct Release<'a> {
    pub blueprint: &'a Blueprint,
    pub old_version: &'a str,
    pub renderer: &'a Renderer,
    pub places: &'a Places,
    pub old_answers: &'a Answers,
    pub old_paths: BTreeSet<&'a str>,
    pub new_paths: BTreeSet<&'a str>,
}

/// Where a path goes by one rendered move (a file, or a directory ending in `/`).
fn moved(path: &str, source: &str, target: &str) -> Option<String> {
    if source.ends_with('/') {
        path.strip_prefix(source)
            .map(|rest| format!("{target}{rest}"))
    } else {
        (path == source).then(|| target.to_string())
    }
}

/// The layer's moves of the versions after the old one, rendered over the old release's
/// answers (as `update` renders them over a repo's), with the manifest key of each.
fn due_moves<'m>(release: &'m Release) -> Vec<(&'m str, &'m str, String, String)> {
    let since = crate::version::tuple(release.old_version);
    let contexts = contexts(release.old_answers);
    let mut due = Vec::new();
    for migration in release.blueprint.manifest.migrations.iter().filter(|m| {
        m.blueprint.as_deref() == Some(release.blueprint.manifest.name.as_str())
            && crate::version::tuple(&m.version) > since
    }) {
        for (from, to) in &migration.moves {
            for (_, context) in &contexts {
                let render = |t: &str| release.renderer.render_str("moves", t, context).ok();
                if let (Some(source), Some(target)) = (render(from), render(to))
                    && !due.iter().any(|(_, _, s, t)| *s == source && *t == target)
                {
                    due.push((migration.version.as_str(), from.as_str(), source, target));
                }
            }
        }
    }
    due
}

/// The release's findings: a move of a path the old release did not write (warning: a
/// repo may have it of its own, such as a file its Makefile writes), a path
/// it wrote that this one writes under the same file name elsewhere with no move (error:
/// `update` would refuse every edited copy), and one it drops (warning: `update` removes
/// it from every repo).
pub(super) fn check_release(release: Release, found: &mut Findings) {
    let places = release.places;
    let due = due_moves(&release);
    let at_version = places.at(&["version"]);
    for (version, key, source, _) in &due {
        let wrote = release
            .old_paths
            .iter()
            .any(|p| moved(p, source, "").is_some());
        if !wrote {
            let at = places
                .item("migrations", "version", version)
                .and_then(|item| item.find_scalar(key))
                .map_or_else(|| places.at(&["migrations"]), |at| at.pair());
            found.warn(
                "blueprint.yaml",
                at,
                format!(
                    "moves `{key}`: {} {} wrote no `{source}`: the move applies only where a repo has that path of its own (a misspelt source never applies)",
                    release.blueprint.manifest.name, release.old_version
                ),
            );
        }
    }
    for path in &release.old_paths {
        if release.new_paths.contains(path) || path.starts_with(".scaffold/") {
            continue;
        }
        if let Some(target) = due.iter().find_map(|(_, _, s, t)| moved(path, s, t)) {
            if !release.new_paths.contains(target.as_str()) {
                found.error(
                    "blueprint.yaml",
                    at_version,
                    format!("`{path}` moves to `{target}`, which this version does not write"),
                );
            }
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        let elsewhere = release
            .new_paths
            .iter()
            .find(|p| p.rsplit('/').next() == Some(name) && !release.old_paths.contains(*p));
        match elsewhere {
            Some(new) => found.error(
                "blueprint.yaml",
                at_version,
                format!(
                    "`{path}` of {} moved to `{new}` with no migration: add `moves: {{{path}: {new}}}` under a `migrations:` entry of version {}",
                    release.old_version, release.blueprint.manifest.version
                ),
            ),
            None => found.warn(
                "blueprint.yaml",
                at_version,
                format!(
                    "`{path}` of {} is no longer written: `update` removes it from every repo (an edited copy stops the update)",
                    release.old_version
                ),
            ),
        }
    }
}

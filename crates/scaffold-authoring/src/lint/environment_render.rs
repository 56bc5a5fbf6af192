//! `blueprint.environment-scope`, found by rendering: the blueprint is rendered with two
//! synthetic environments whose addon sets differ (the first runs the default addons, the
//! second every other one), and each environment alone. An addon's shared file (rendered
//! once, over every environment's addons) must read the same as when its environment is
//! alone: else it depends on an addon that only the other environment runs, as istio's
//! Gateway scaling did on metrics-server. (What a template reads of the answers is
//! checked on its text, `environment_scope`.)
use serde_json::{Map, Value as Json};

use super::Findings;
use crate::answers::{self, Sources};
use crate::blueprint::{Blueprint, TreeScope};
use crate::generate;
use crate::plan::Plan;
use crate::render::Renderer;

const FIRST: &str = "lint-a";
const SECOND: &str = "lint-b";

pub(super) fn check(
    blueprint: &Blueprint,
    renderer: &Renderer,
    builtins: &Map<String, Json>,
    found: &mut Findings,
) {
    let Some(environments) = blueprint.manifest.environments_answer.clone() else {
        return;
    };
    let addons_key = blueprint.manifest.addons_answer().to_string();
    let others: Vec<&str> = blueprint
        .catalog
        .entries()
        .filter(|e| !e.spec.default && !e.spec.always)
        .map(|e| e.spec.name.as_str())
        .collect();
    if others.is_empty() {
        return; // every environment runs the same addons
    }
    let second_addons = others.join(",");
    let render = |envs: &[&str]| {
        let mut set = vec![(environments.clone(), envs.join(","))];
        if envs.contains(&SECOND) {
            set.push((format!("{SECOND}.{addons_key}"), second_addons.clone()));
        }
        render_with(blueprint, renderer, builtins, set)
    };
    // A set of addons the blueprint cannot render (a requirement its defaults leave
    // unmet) is no finding here: nothing is compared.
    let (Some(both), Some(first), Some(second)) = (
        render(&[FIRST, SECOND]),
        render(&[FIRST]),
        render(&[SECOND]),
    ) else {
        return;
    };
    for (alone, name) in [(&first, FIRST), (&second, SECOND)] {
        compare(blueprint, &both, alone, name, found);
    }
}

/// The plan of the blueprint rendered with `set`, every other answer its default.
fn render_with(
    blueprint: &Blueprint,
    renderer: &Renderer,
    builtins: &Map<String, Json>,
    set: Vec<(String, String)>,
) -> Option<Plan> {
    let sources = Sources {
        set,
        values: Default::default(),
        prompter: None,
        builtins: builtins.clone(),
        recorded_environments: Default::default(),
    };
    let answers = answers::gather(blueprint, renderer, sources).ok()?;
    let record = generate::record_for(blueprint, &answers, Map::new());
    generate::render(blueprint, renderer, &answers, &record)
        .ok()
        .map(|rendered| rendered.plan)
}

/// Each file of an addon-scoped tree that `alone` (environment `name` by itself) renders
/// and `both` renders otherwise, reported at its template's line that wrote the first
/// differing line (or the catalog entry's, when an addon's text wrote it).
fn compare(blueprint: &Blueprint, both: &Plan, alone: &Plan, name: &str, found: &mut Findings) {
    for (path, bytes) in &alone.files {
        let Some(source) = alone.sources.get(path) else {
            continue;
        };
        let shared = blueprint
            .trees
            .iter()
            .any(|t| matches!(t.scope, TreeScope::Addon) && source.starts_with(&t.prefix));
        let Some(shared_bytes) = both.files.get(path) else {
            continue;
        };
        if !shared || shared_bytes == bytes {
            continue;
        }
        let (ours, theirs) = (
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(shared_bytes),
        );
        let differing = theirs
            .lines()
            .zip(ours.lines().chain(std::iter::repeat("")))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let line = theirs.lines().nth(differing).unwrap_or_default().trim();
        let (file, at) = locate(blueprint, source, line);
        let other = if name == FIRST { SECOND } else { FIRST };
        found.error(
            &file,
            at,
            format!(
                "`{}` renders once for every environment but reads what differs between them: with environment {name} alone its line `{line}` is not what it is when {other} (which runs other addons) is there too; read only what every environment running the addon shares (its own fields, the answers), or substitute a per-cluster value from `cluster-vars` (`${{VAR}}`, written by each environment's bridge)",
                path.as_str()
            ),
        );
    }
}

/// The blueprint file and place that wrote `line`: the template, else the catalog entry
/// holding it (an addon's configs), else the template's first line.
fn locate(blueprint: &Blueprint, source: &str, line: &str) -> (String, (usize, usize)) {
    let text_of = |file: &str| {
        blueprint
            .file(file)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let key = line.split_once(": ").map_or(line, |(key, _)| key);
    let template = text_of(source);
    for needle in [line, key].into_iter().filter(|n| !n.is_empty()) {
        if let Some(at) = template.find(needle) {
            return (
                source.to_string(),
                super::templates::position(&template, at),
            );
        }
    }
    for entry in blueprint.catalog.entries().filter(|_| !line.is_empty()) {
        let text = String::from_utf8_lossy(entry.source()).into_owned();
        if let Some(at) = text.find(line) {
            let file = format!("addons/{}.yaml", entry.spec.name);
            return (file, super::templates::position(&text, at));
        }
    }
    (source.to_string(), (1, 1))
}

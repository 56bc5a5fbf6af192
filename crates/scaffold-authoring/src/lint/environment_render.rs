//! `blueprint.environment-scope`, found by rendering: the blueprint is rendered with two
//! synthetic environments that differ in every answer lint can vary (each per-environment
//! answer moved to another value its question accepts) and in their addons (the first
//! runs the default addons, the second every other one), and each environment alone.
//! - An addon's shared file (rendered once, over every environment's addons) must read the
//!   same as when its environment is alone: else it depends on what only the other
//!   environment has, as istio's Gateway scaling did on metrics-server.
//! - A shared file (repo- or addon-scoped) must read the same when only the first
//!   environment's own answers change: else it reads one of them, directly, through a
//!   partial, or through a shared answer derived from one.
//!
//! (What a template reads of the answers is checked on its text, `environment_scope`.)
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use regex::Regex;
use serde_json::{Map, Value as Json};

use super::findings::Findings;
use crate::answers::{self, Answers, Sources};
use crate::blueprint::{Blueprint, Delimiters, Question, QuestionType, TreeScope};
use crate::generate;
use crate::plan::Plan;
use crate::render::Renderer;

const FIRST: &str = "lint-a";
const SECOND: &str = "lint-b";

/// An environment's own answers lint gives it: `(KEY, TEXT)` as `--set ENV.KEY=TEXT`.
type Given = Vec<(String, String)>;

pub(super) fn check(
    blueprint: &Blueprint,
    renderer: &Renderer,
    builtins: &Map<String, Json>,
    found: &mut Findings,
) {
    let Some(environments) = blueprint.manifest.environments_answer.clone() else {
        return;
    };
    let synthetic = Synthetic {
        blueprint,
        renderer,
        builtins,
        environments,
    };
    let others: Vec<&str> = blueprint
        .catalog
        .entries()
        .filter(|e| !e.spec.default && !e.spec.always)
        .map(|e| e.spec.name.as_str())
        .collect();
    let mut second_addons = Given::new();
    if !others.is_empty() {
        let key = blueprint.manifest.addons_answer().to_string();
        second_addons.push((key, others.join(",")));
    }
    // The first environment's answers with every default: what the second's move from.
    let Some(first_alone) = synthetic.gather(&[(FIRST, &Given::new())]) else {
        return;
    };
    let Some((_, own)) = first_alone.environments.first() else {
        return;
    };
    let mut second = second_addons;
    second.extend(moves(blueprint, &own.values, &own.recorded, 1));
    let second = synthetic.accepted(second, |given| {
        synthetic
            .gather(&[(FIRST, &Given::new()), (SECOND, given)])
            .is_some()
    });
    let (Some((answers, both)), Some((_, first)), Some((_, second_alone))) = (
        synthetic.render(&[(FIRST, &Given::new()), (SECOND, &second)]),
        synthetic.render(&[(FIRST, &Given::new())]),
        synthetic.render(&[(SECOND, &second)]),
    ) else {
        return; // a combination the blueprint cannot render: nothing is compared
    };
    for (alone, name) in [(&first, FIRST), (&second_alone, SECOND)] {
        compare_addon_files(blueprint, &both, alone, name, found);
    }
    // Every per-environment answer given anew for all, each environment's own kept: only
    // a shared file that reads one of them (as its shared default) can change.
    let keys: Vec<String> = per_environment_keys(blueprint)
        .map(str::to_string)
        .collect();
    let pinned_keys: Vec<String> = keys
        .iter()
        .cloned()
        .chain([blueprint.manifest.addons_answer().to_string()])
        .collect();
    let pinned: Vec<(&'static str, Given)> = answers
        .environments
        .iter()
        .zip([FIRST, SECOND])
        .map(|((_, own), name)| (name, own_answers(own, &pinned_keys)))
        .collect();
    // Two places on: not the second environment's own.
    let shared = moves(blueprint, &answers.values, &keys, 2);
    let borrowed: Vec<(&str, &Given)> = pinned.iter().map(|(n, g)| (*n, g)).collect();
    let shared = synthetic.accepted(shared, |given| {
        synthetic.gather_over(given, &borrowed).is_some()
    });
    if shared.is_empty() {
        return; // no answer lint could move
    }
    if let Some((_, moved)) = synthetic.render_over(&shared, &borrowed) {
        compare_shared_files(blueprint, &both, &moved, found);
    }
}

/// The keys of the per-environment answers lint varies: not the environment's name, its
/// addons, nor a secret.
fn per_environment_keys(blueprint: &Blueprint) -> impl Iterator<Item = &str> {
    let addons_key = blueprint.manifest.addons_answer();
    blueprint
        .manifest
        .questions
        .iter()
        .filter(move |q| q.per_environment && q.key != addons_key && !q.secret)
        .filter(|q| q.key != crate::manifest::ENVIRONMENT)
        .map(|q| q.key.as_str())
}

/// An environment's answers to `keys` it was asked, as given.
fn own_answers(own: &Answers, keys: &[String]) -> Given {
    keys.iter()
        .filter(|k| own.recorded.contains(k))
        .filter_map(|k| Some((k.clone(), answers::as_text(own.values.get(k)?))))
        .collect()
}

/// For each per-environment key among `keys` with a value in `values`, that value moved
/// `step` places on (`moved`), as given.
fn moves(blueprint: &Blueprint, values: &Map<String, Json>, keys: &[String], step: u32) -> Given {
    let varied: Vec<&str> = per_environment_keys(blueprint).collect();
    blueprint
        .manifest
        .questions
        .iter()
        .filter(|q| varied.contains(&q.key.as_str()) && keys.contains(&q.key))
        .filter_map(|q| {
            let moved = moved(blueprint, q, values.get(&q.key)?, step)?;
            Some((q.key.clone(), answers::as_text(&moved)))
        })
        .collect()
}

/// Lint's synthetic environments: their answers gathered, and rendered, with every other
/// answer its default.
struct Synthetic<'b> {
    blueprint: &'b Blueprint,
    renderer: &'b Renderer,
    builtins: &'b Map<String, Json>,
    /// The key of the environments answer.
    environments: String,
}

impl Synthetic<'_> {
    /// Environments `envs`, each with its own answers, and `shared` answers for all.
    fn sources(&self, shared: &Given, envs: &[(&str, &Given)]) -> Sources<'static> {
        let names: Vec<&str> = envs.iter().map(|(name, _)| *name).collect();
        let mut set = vec![(self.environments.clone(), names.join(","))];
        set.extend(shared.iter().cloned());
        for (name, given) in envs {
            set.extend(
                given
                    .iter()
                    .map(|(k, v)| (format!("{name}.{k}"), v.clone())),
            );
        }
        Sources {
            set,
            values: Default::default(),
            prompter: None,
            builtins: self.builtins.clone(),
            recorded_environments: Default::default(),
        }
    }

    fn gather(&self, envs: &[(&str, &Given)]) -> Option<Answers> {
        self.gather_over(&Given::new(), envs)
    }

    fn gather_over(&self, shared: &Given, envs: &[(&str, &Given)]) -> Option<Answers> {
        let sources = self.sources(shared, envs);
        answers::gather(self.blueprint, self.renderer, sources).ok()
    }

    fn render(&self, envs: &[(&str, &Given)]) -> Option<(Answers, Plan)> {
        self.render_over(&Given::new(), envs)
    }

    fn render_over(&self, shared: &Given, envs: &[(&str, &Given)]) -> Option<(Answers, Plan)> {
        let answers = self.gather_over(shared, envs)?;
        let record = generate::record_for(self.blueprint, &answers, Map::new());
        let rendered = generate::render(self.blueprint, self.renderer, &answers, &record).ok()?;
        Some((answers, rendered.plan))
    }

    /// `candidates` when the blueprint accepts them together (`passes`), else those it
    /// accepts one at a time, each kept that passes with those kept before.
    fn accepted(&self, candidates: Given, passes: impl Fn(&Given) -> bool) -> Given {
        if passes(&candidates) {
            return candidates;
        }
        let mut kept = Given::new();
        for candidate in candidates {
            kept.push(candidate);
            if !passes(&kept) {
                kept.pop();
            }
        }
        kept
    }
}

/// `value` of `question` moved `step` places on, keeping its shape (the last letter or
/// digit of a text, the next network of a CIDR's size, another choice, a number one
/// further within bounds, the other boolean); `None` for what lint does not vary.
fn moved(blueprint: &Blueprint, question: &Question, value: &Json, step: u32) -> Option<Json> {
    let delimiters = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let moved = match (question.kind, value) {
        (QuestionType::Bool, Json::Bool(b)) => Json::Bool(!b),
        // By twos first: a count that must be odd stays odd.
        (QuestionType::Int, Json::Number(n)) => {
            let (n, step) = (n.as_i64()?, i64::from(step));
            let within = |v: &i64| {
                question.min.is_none_or(|m| *v >= m) && question.max.is_none_or(|m| *v <= m)
            };
            Json::from(
                [n + 2 * step, n - 2 * step, n + step, n - step]
                    .into_iter()
                    .find(within)?,
            )
        }
        (QuestionType::Choice, value) if !gates(blueprint, question) => {
            let choices = question.choices.as_ref()?;
            let at = choices.iter().position(|c| c == value)?;
            choices[(at + step as usize) % choices.len()].clone()
        }
        (QuestionType::Cidr, Json::String(text)) => Json::String(next_network(text, step)?),
        (QuestionType::String, Json::String(text)) => Json::String(nudged(text, step)?),
        // A list its default derives from other answers moves with them.
        (QuestionType::List, Json::Array(items)) if !templated(question, &delimiters) => {
            let items: Option<Vec<Json>> = items
                .iter()
                .map(|item| {
                    match item {
                        Json::String(text) if text.contains('/') => next_network(text, step),
                        Json::String(text) => nudged(text, step),
                        _ => None,
                    }
                    .map(Json::String)
                })
                .collect();
            Json::Array(items?)
        }
        _ => return None,
    };
    (&moved != value).then_some(moved)
}

/// Whether the question's default is a template (derived from other answers).
fn templated(question: &Question, delimiters: &Delimiters) -> bool {
    question
        .default
        .as_ref()
        .and_then(Json::as_str)
        .is_some_and(|text| {
            text.contains(delimiters.variable[0].as_str())
                || text.contains(delimiters.block[0].as_str())
        })
}

/// Whether another question's `when` reads `question`: moving it would ask questions
/// lint has no answers for.
fn gates(blueprint: &Blueprint, question: &Question) -> bool {
    let word = Regex::new(&format!(r"\b{}\b", regex::escape(&question.key)));
    blueprint.manifest.questions.iter().any(|q| {
        q.when
            .as_deref()
            .is_some_and(|when| word.as_ref().is_ok_and(|w| w.is_match(when)))
    })
}

/// `text` with its last ASCII letter or digit moved `step` places on in its class.
fn nudged(text: &str, step: u32) -> Option<String> {
    let (at, last) = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_ascii_alphanumeric())?;
    let (first, count) = match last {
        '0'..='9' => (b'0', 10),
        'a'..='z' => (b'a', 26),
        _ => (b'A', 26),
    };
    let offset = (u32::from(last as u8 - first) + step) % count;
    let replaced = char::from(first + u8::try_from(offset).ok()?);
    let mut nudged = text.to_string();
    nudged.replace_range(at..at + 1, &replaced.to_string());
    Some(nudged)
}

/// The IPv4 network `step` networks of the same size after `cidr`'s.
fn next_network(cidr: &str, step: u32) -> Option<String> {
    let net: Ipv4Net = cidr.parse().ok()?;
    let size = 1u64 << (32 - u32::from(net.prefix_len()));
    let start = u64::from(u32::from(net.network())) + size * u64::from(step);
    let start = u32::try_from(start).ok()?;
    Ipv4Net::new(Ipv4Addr::from(start), net.prefix_len())
        .ok()
        .map(|n| n.to_string())
}

/// The fix of a shared file that reads what differs between environments.
const FIX: &str = "read only what every environment shares (the shared answers, an addon's own fields), or substitute a per-cluster value from `cluster-vars` (`${VAR}`, written by each environment's bridge), or move the file to an environment-scoped tree";

/// Each file of an addon-scoped tree that `alone` (environment `name` by itself) renders
/// and `both` renders otherwise, reported at its template's line that wrote the first
/// differing line (or the catalog entry's, when an addon's text wrote it).
fn compare_addon_files(
    blueprint: &Blueprint,
    both: &Plan,
    alone: &Plan,
    name: &str,
    found: &mut Findings,
) {
    let other = if name == FIRST { SECOND } else { FIRST };
    for (path, source, line) in differing(blueprint, alone, both, &[TreeScope::Addon]) {
        let (file, at) = locate(blueprint, &source, &line);
        found.error(
            &file,
            at,
            format!(
                "`{path}` renders once for every environment but reads what differs between them: with environment {name} alone its line `{line}` is not what it is when {other} (which runs other addons) is there too; {FIX}"
            ),
        );
    }
}

/// Each file of a shared tree that `moved` (every per-environment answer given anew for
/// all, each environment's own kept) renders otherwise than `both`: it reads one of them.
fn compare_shared_files(blueprint: &Blueprint, both: &Plan, moved: &Plan, found: &mut Findings) {
    let shared = [TreeScope::Repo, TreeScope::Addon];
    for (path, source, line) in differing(blueprint, moved, both, &shared) {
        let (file, at) = locate(blueprint, &source, &line);
        found.error(
            &file,
            at,
            format!(
                "`{path}` renders once for every environment but reads a per-environment answer (which it takes as that question's default, not any environment's answer): given other values for every environment alike, each environment's own kept, its line `{line}` changes; {FIX}"
            ),
        );
    }
}

/// `(path, template, line)` of each file of a tree of `scopes` that `ours` and `theirs`
/// both render, differently: `line` is `theirs`'s first line that differs, trimmed.
fn differing(
    blueprint: &Blueprint,
    ours: &Plan,
    theirs: &Plan,
    scopes: &[TreeScope],
) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (path, bytes) in &ours.files {
        let Some(source) = ours.sources.get(path) else {
            continue;
        };
        let shared = blueprint
            .trees
            .iter()
            .any(|t| scopes.contains(&t.scope) && source.starts_with(&t.prefix));
        let Some(their_bytes) = theirs.files.get(path) else {
            continue;
        };
        if !shared || their_bytes == bytes {
            continue;
        }
        let (ours, theirs) = (
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(their_bytes),
        );
        let differing = theirs
            .lines()
            .zip(ours.lines().chain(std::iter::repeat("")))
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        let line = theirs.lines().nth(differing).unwrap_or_default().trim();
        found.push((path.as_str().to_string(), source.clone(), line.to_string()));
    }
    found
}

/// The blueprint file and place that wrote `line`: where the template, a partial, a patch or a
/// catalog entry (an addon's configs) holds it or its key; else where the template or a
/// partial holds the literal text it starts with (up to where a value was substituted);
/// else the template's first line.
fn locate(blueprint: &Blueprint, source: &str, line: &str) -> (String, (usize, usize)) {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let template = vec![(
        source.to_string(),
        blueprint.file(source).map(|b| text(&b)).unwrap_or_default(),
    )];
    // What else wrote into it: a partial, a layer's patch.
    let partials: Vec<(String, String)> = blueprint
        .partials
        .iter()
        .map(|(path, bytes)| (format!("partials/{path}"), text(bytes)))
        .chain(
            blueprint
                .patches
                .values()
                .flatten()
                .map(|(path, bytes)| (path.clone(), text(bytes))),
        )
        .collect();
    let entries: Vec<(String, String)> = blueprint
        .catalog
        .entries()
        .map(|e| (format!("addons/{}.yaml", e.spec.name), text(e.source())))
        .collect();
    let holds = |places: &[(String, String)], needle: &str| {
        places.iter().find_map(|(file, text)| {
            let at = text.find(needle).filter(|_| !needle.is_empty())?;
            Some((file.clone(), super::templates::position(text, at)))
        })
    };
    let key = line.split_once(": ").map_or(line, |(key, _)| key);
    let mut starts = (4..line.len())
        .rev()
        .filter(|end| line.is_char_boundary(*end))
        .map(|end| &line[..end]);
    holds(&template, line)
        .or_else(|| holds(&template, key))
        .or_else(|| holds(&partials, line))
        .or_else(|| holds(&entries, line))
        .or_else(|| {
            starts.find_map(|start| holds(&template, start).or_else(|| holds(&partials, start)))
        })
        .unwrap_or((source.to_string(), (1, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_move_to_another_value_of_their_shape() {
        assert_eq!(nudged("eu-west-1", 1).as_deref(), Some("eu-west-2"));
        assert_eq!(
            nudged("lint.example.com", 2).as_deref(),
            Some("lint.example.coo")
        );
        assert_eq!(nudged("m6i.largZ", 1).as_deref(), Some("m6i.largA"));
        assert_eq!(nudged("--", 1), None);
        assert_eq!(
            next_network("10.0.0.0/16", 1).as_deref(),
            Some("10.1.0.0/16")
        );
        assert_eq!(
            next_network("10.0.0.0/16", 2).as_deref(),
            Some("10.2.0.0/16")
        );
        assert_eq!(next_network("255.255.0.0/16", 1), None);
    }
}

//! `scaffold update`, the core: from the repo's pristine base, its recorded answers and any
//! changed ones, the new rendering and the three-way merge onto the user's files. Reads the
//! repo; writes nothing. Nothing here assumes one environment: the base, the answers and
//! the rendering are whatever the blueprint makes of the whole repo.
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use crate::answers::{Prompter, Sources, as_text};
use crate::blueprint::Blueprint;
use crate::edit::{self, Merge};
use crate::error::{Error, Problem, Result};
use crate::generate;
use crate::plan::{Plan, RelPath};
use crate::record::{self, BlueprintId};
use crate::repo::{Found, load_blueprint, recorded_answers};
use crate::write;

pub struct Request<'a> {
    pub start: &'a Path,
    /// This run's hold on the repository's lock, taken before anything is read.
    pub lock: &'a crate::lock::RepoLock,
    /// The blueprint to move to (default: the recorded one, found by name).
    pub blueprint: Option<&'a str>,
    pub set: Vec<(String, String)>,
    /// `--secret KEY=VALUE` pairs; secrets are also read from `SCAFFOLD_SECRET_<KEY>` and
    /// are never recorded.
    pub secrets: Vec<(String, String)>,
    pub values: BTreeMap<String, Json>,
    /// Asks new questions on a terminal; without it they take their defaults.
    pub prompter: Option<&'a mut dyn Prompter>,
}

/// An answer that differs between the record and the update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerChange {
    pub key: String,
    pub before: Option<Json>,
    pub after: Option<Json>,
}

impl fmt::Display for AnswerChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.before, &self.after) {
            (Some(before), Some(after)) => {
                write!(f, "{}: {} → {}", self.key, as_text(before), as_text(after))
            }
            (None, Some(after)) => write!(f, "{}: {} (new question)", self.key, as_text(after)),
            (Some(before), None) => {
                write!(f, "{}: dropped (was {})", self.key, as_text(before))
            }
            (None, None) => write!(f, "{}", self.key),
        }
    }
}

pub struct Update {
    pub root: PathBuf,
    pub from: BlueprintId,
    pub to: BlueprintId,
    pub answers: Vec<AnswerChange>,
    /// Whether the base came from the repo's stored base (else it was re-rendered).
    pub base_stored: bool,
    /// The new rendering: the repo's next base.
    pub next: Plan,
    /// Nothing to merge: the new rendering is the base.
    pub up_to_date: bool,
    /// How many files the new rendering changes against the base (the record excluded).
    pub changed_files: usize,
    /// The answer migrations applied, one line each.
    pub migrations: Vec<String>,
    /// What the blueprint says of the answers this update changes (their `on_change`).
    pub warnings: Vec<String>,
    pub merge: Merge,
}

/// The files the blueprint moved since the recorded version, rendered over the answers as
/// recorded (before the migrations rename them): once, or in a repo with environments
/// once per environment with its own answers and name, so a move may name
/// `[[ environment ]]` either way. The same move from two environments counts once.
fn due_moves(
    blueprint: &Blueprint,
    renderer: &crate::render::Renderer,
    record: &record::Record,
) -> Result<Vec<(String, String)>> {
    let mut contexts = Vec::new();
    if record.environments.is_empty() {
        contexts.push(record.answers.clone());
    }
    for (name, own) in &record.environments {
        let mut context = record.answers.clone();
        context.extend(own.clone());
        context.insert(
            crate::answers::ENVIRONMENT.into(),
            Json::String(name.clone()),
        );
        contexts.push(context);
    }
    let mut moves = Vec::new();
    for migration in crate::migrate::due(
        &blueprint.manifest.migrations,
        &record.blueprint,
        &blueprint.id(),
    ) {
        for (from, to) in &migration.moves {
            let what = format!("migrations {} moves `{from}`", migration.version);
            for context in &contexts {
                let context = Json::Object(context.clone());
                let pair = (
                    renderer.render_str(&what, from, &context)?,
                    renderer.render_str(&what, to, &context)?,
                );
                if !moves.contains(&pair) {
                    moves.push(pair);
                }
            }
        }
    }
    Ok(moves)
}

pub fn prepare(request: Request<'_>) -> Result<Update> {
    let found = Found::open(request.start, request.lock)?;
    let mut request = request;
    let blueprint = load_blueprint(&found.record, request.blueprint)?;
    let addons_key = blueprint.manifest.addons_answer();
    if request.set.iter().any(|(k, _)| k == addons_key) || request.values.contains_key(addons_key) {
        return Err(Error::input(format!(
            "{addons_key}: change addons with scaffold add-addon and remove-addon, not update"
        )));
    }
    let mut base = found.base(&blueprint)?;
    // A record edited by hand: the base's record is where the repo is, and each edited
    // answer is applied as a --values answer would be (and checked the same way).
    let (record, edited) = match &base.edited_from {
        Some(from) => {
            let edited = hand_edits(from, &found.record, addons_key)?;
            for (key, value) in &edited {
                if !request.set.iter().any(|(k, _)| k == key) {
                    request.values.entry(key.clone()).or_insert(value.clone());
                }
            }
            (from, edited.into_keys().collect::<Vec<_>>())
        }
        None => (&found.record, Vec::new()),
    };
    if !edited.is_empty() {
        crate::ui::note(format!(
            "note: {} was edited by hand since scaffold last wrote it; applying: {}",
            record::PATH,
            edited.join(", ")
        ));
    }
    let renderer = generate::renderer_for(&blueprint)?;
    let moves = due_moves(&blueprint, &renderer, record)?;
    // The blueprint's declared renames, applied to the recorded answers first.
    let mut migrated = record.clone();
    let mut migrations = crate::migrate::apply(
        &mut migrated.answers,
        &blueprint.manifest.migrations,
        &record.blueprint,
        &blueprint.id(),
    );
    migrations.extend(into_environments(&blueprint, &mut migrated));
    let record = &migrated;
    let tracked = crate::git::tracked_paths(&found.root)?;
    let relocation = crate::relocate::Relocation::new(
        &moves,
        base.plan
            .files
            .keys()
            .map(RelPath::as_str)
            .chain(tracked.iter().map(String::as_str)),
    )
    .map_err(Error::blueprint)?;
    relocation.rename(&mut base.plan);
    migrations.extend(relocation.lines());
    let secrets = crate::answers::secrets(&blueprint, &request.secrets, |name| {
        std::env::var(name).ok()
    })?;
    let mut builtins = Map::new();
    builtins.insert(
        "target_dir_name".into(),
        Json::String(dir_name(&found.root)),
    );
    let answers = recorded_answers(
        &blueprint,
        &renderer,
        record,
        Sources {
            set: secrets.into_iter().chain(request.set).collect(),
            values: request.values,
            prompter: request.prompter,
            builtins,
            recorded_environments: Default::default(),
        },
    )?;
    // A newer scaffold alone is no reason for a commit: the record keeps the version that
    // made it until something else changes.
    let mut next_record =
        generate::record_for(&blueprint, &answers, found.record.addon_settings.clone());
    next_record.scaffold_version = record.scaffold_version.clone();
    next_record.environment_addon_settings = record.environment_addon_settings.clone();
    let mut next = generate::render(&blueprint, &renderer, &answers, &next_record)?;
    let up_to_date = next.plan.files == base.plan.files;
    if !up_to_date && next_record.scaffold_version != generate::VERSION {
        next_record.scaffold_version = generate::VERSION.into();
        let path = RelPath::new(record::PATH).map_err(Error::blueprint)?;
        next.plan
            .files
            .insert(path, next_record.to_yaml()?.into_bytes());
    }
    let mut changed = answer_changes(&record.answers, &next_record.answers);
    // Each environment's own answers, named ENV.KEY as --set names them.
    let empty = Map::new();
    let envs: std::collections::BTreeSet<&String> = record
        .environments
        .keys()
        .chain(next_record.environments.keys())
        .collect();
    let several = envs.len() > 1;
    for env in envs {
        let before = record.environments.get(env).unwrap_or(&empty);
        let after = next_record.environments.get(env).unwrap_or(&empty);
        changed.extend(
            answer_changes(before, after)
                .into_iter()
                // An environment's own name is not an answer of it.
                .filter(|c| c.key != crate::answers::environments::ENVIRONMENT)
                .map(|c| AnswerChange {
                    key: if several {
                        format!("{env}.{}", c.key)
                    } else {
                        c.key.clone()
                    },
                    ..c
                }),
        );
    }
    let warnings = change_warnings(&blueprint, &renderer, &changed)?;
    let changed_files = crate::repo::differing(&base.plan, &next.plan).len();
    let eol = crate::attributes::Eol::of(&found.root);
    // The record is scaffold's own file: it is always the new one, never merged line by
    // line (its `rendering:` digest would conflict with any hand edit).
    let record_path = RelPath::new(record::PATH).map_err(Error::blueprint)?;
    let read = |path: &RelPath| write::read_canonical(&found.root, path, &eol);
    let mut merge = edit::merge(
        &base.plan,
        &next.plan,
        |path| {
            if path == &record_path {
                Ok(base.plan.files.get(path).cloned())
            } else {
                relocation.read(path, read)
            }
        },
        &label(&blueprint),
    )?;
    relocation.complete(&mut merge, read)?;
    let mut warnings = warnings;
    warnings.extend(relocation.left_behind(&found.root, &tracked));
    Ok(Update {
        from: record.blueprint.clone(),
        to: next_record.blueprint.clone(),
        root: found.root,
        answers: changed,
        base_stored: base.stored,
        next: next.plan,
        up_to_date,
        changed_files,
        migrations,
        warnings,
        merge,
    })
}

/// A record made before its blueprint had environments: the environments answer becomes a
/// list, and each per-environment answer moves from the shared answers to every
/// environment's own (an empty one too: a gossip cluster's empty `dns_zone` stays empty).
fn into_environments(blueprint: &Blueprint, record: &mut record::Record) -> Vec<String> {
    let Some(list_key) = &blueprint.manifest.environments_answer else {
        return Vec::new();
    };
    if !record.environments.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = match record.answers.get(list_key) {
        Some(Json::String(text)) => text
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect(),
        Some(Json::Array(items)) => items
            .iter()
            .filter_map(Json::as_str)
            .map(String::from)
            .collect(),
        _ => return Vec::new(),
    };
    record.answers.insert(
        list_key.clone(),
        Json::Array(names.iter().cloned().map(Json::String).collect()),
    );
    let mut moved = Vec::new();
    for question in blueprint
        .manifest
        .questions
        .iter()
        .filter(|q| q.per_environment)
    {
        let Some(value) = record.answers.remove(&question.key) else {
            continue;
        };
        for name in &names {
            record
                .environments
                .entry(name.clone())
                .or_default()
                .insert(question.key.clone(), value.clone());
        }
        moved.push(question.key.as_str());
    }
    if moved.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "- answers {} are now per environment ({})",
        moved.join(", "),
        names.join(", ")
    )]
}

/// The `on_change` text of each question whose recorded answer this update changes
/// (`ENV.KEY` for a per-environment answer), rendered over the key and both values.
fn change_warnings(
    blueprint: &crate::blueprint::Blueprint,
    renderer: &crate::render::Renderer,
    changed: &[AnswerChange],
) -> Result<Vec<String>> {
    let mut warnings = Vec::new();
    for change in changed {
        let (Some(before), Some(after)) = (&change.before, &change.after) else {
            continue;
        };
        let key = change
            .key
            .split_once('.')
            .map_or(change.key.as_str(), |(_, key)| key);
        let Some(template) = blueprint
            .manifest
            .questions
            .iter()
            .find(|q| q.key == key)
            .and_then(|q| q.on_change.as_deref())
        else {
            continue;
        };
        let context = serde_json::json!({ "key": change.key, "before": before, "after": after });
        let text =
            renderer.render_str(&format!("question {key}'s on_change"), template, &context)?;
        warnings.push(format!("{}: {}", change.key, text.trim()));
    }
    Ok(warnings)
}

impl Update {
    /// `scaffold: update default 0.1.0 → 0.2.0`, then one line per changed answer.
    pub fn message(&self) -> String {
        let (from, to) = (&self.from, &self.to);
        let mut subject = if from.name != to.name {
            format!(
                "scaffold: update {} {} → {} {}",
                from.name, from.version, to.name, to.version
            )
        } else if from.version != to.version {
            format!(
                "scaffold: update {} {} → {}",
                from.name, from.version, to.version
            )
        } else {
            format!("scaffold: update {} {}", to.name, to.version)
        };
        // The subject names the blueprint itself; the body its bases.
        let layers = layer_changes(from.base.as_deref(), to.base.as_deref(), self.changed_files);
        let in_place = from.name == to.name
            && from.version == to.version
            && from.digest.is_some()
            && to.digest.is_some()
            && from.digest != to.digest;
        if in_place {
            subject.push_str(&format!(
                " (blueprint changed in place, {} files)",
                self.changed_files
            ));
        } else if from.name == to.name && from.version == to.version && !layers.is_empty() {
            subject.push_str(" (its base changed)");
        } else if from == to && !self.answers.is_empty() {
            let keys: Vec<&str> = self.answers.iter().map(|a| a.key.as_str()).collect();
            subject.push_str(&format!(" ({})", keys.join(", ")));
        }
        let mut body = String::new();
        if !layers.is_empty() {
            body.push_str(&format!("\n\nBlueprints:\n{}", layers.join("\n")));
        }
        if !self.migrations.is_empty() {
            body.push_str(&format!("\n\nMigrations:\n{}", self.migrations.join("\n")));
        }
        if !self.answers.is_empty() {
            let lines: Vec<String> = self.answers.iter().map(|a| format!("- {a}")).collect();
            body.push_str(&format!("\n\nAnswers:\n{}", lines.join("\n")));
        }
        if body.is_empty() {
            return subject;
        }
        format!("{subject}{body}\n")
    }
}

/// One line per layer (the blueprint, then its bases) that changed: `default 0.1.0 →
/// 0.2.0`, or `default 0.1.0 changed in place (N files)` when its content digest changed
/// under the same version. Layers recorded without a digest (older records) count as
/// unchanged unless their version moved.
fn layer_changes(
    from: Option<&BlueprintId>,
    to: Option<&BlueprintId>,
    changed_files: usize,
) -> Vec<String> {
    let (Some(from), Some(to)) = (from, to) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if from.name != to.name {
        lines.push(format!(
            "- {} {} → {} {}",
            from.name, from.version, to.name, to.version
        ));
    } else if from.version != to.version {
        lines.push(format!("- {} {} → {}", to.name, from.version, to.version));
    } else if let (Some(a), Some(b)) = (&from.digest, &to.digest)
        && a != b
    {
        lines.push(format!(
            "- {} {} changed in place ({changed_files} files)",
            to.name, to.version
        ));
    }
    lines.extend(layer_changes(
        from.base.as_deref(),
        to.base.as_deref(),
        changed_files,
    ));
    lines
}

/// The answers a hand-edited record changes against the record `from` (addons excepted:
/// add-addon and remove-addon own them).
fn hand_edits(
    from: &record::Record,
    edited: &record::Record,
    addons_key: &str,
) -> Result<BTreeMap<String, Json>> {
    if from.chosen_addons(addons_key) != edited.chosen_addons(addons_key) {
        let path = record::PATH;
        return Err(Error::input(
            Problem::new(format!("{path}: `{addons_key}` was edited by hand")).fix(format!(
                "change addons with scaffold add-addon and remove-addon (restore the line first: `git checkout HEAD -- {path}`)"
            )),
        ));
    }
    let mut out = BTreeMap::new();
    let empty = Map::new();
    // Shared answers by key; an environment's own as `ENV.KEY`, as --values names them.
    let sides = std::iter::once((None, &from.answers, &edited.answers)).chain(
        edited
            .environments
            .iter()
            .map(|(env, own)| (Some(env), from.environments.get(env).unwrap_or(&empty), own)),
    );
    for (env, before, after) in sides {
        for (key, value) in after {
            if key == addons_key || before.get(key) == Some(value) {
                continue;
            }
            let value = value.clone();
            let key = match env {
                Some(env) => format!("{env}.{key}"),
                None => key.clone(),
            };
            out.insert(key, value);
        }
    }
    Ok(out)
}

fn answer_changes(before: &Map<String, Json>, after: &Map<String, Json>) -> Vec<AnswerChange> {
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| AnswerChange {
            key: k.clone(),
            before: before.get(k).cloned(),
            after: after.get(k).cloned(),
        })
        .collect()
}

/// How conflict markers name the new rendering.
fn label(blueprint: &Blueprint) -> String {
    format!(
        "blueprint {} {}",
        blueprint.manifest.name, blueprint.manifest.version
    )
}

fn dir_name(root: &Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

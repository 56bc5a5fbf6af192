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
use crate::edit::{self, Change, ConflictKind, Merge};
use crate::error::{Error, Result};
use crate::generate;
use crate::plan::{Plan, RelPath};
use crate::record::{self, BlueprintId};
use crate::repo::{Found, load_blueprint, recorded_answers};

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
    /// Update this commit of the repo at `start` (never checked out) instead of its work
    /// tree.
    pub commit: Option<crate::snapshot::CommitFiles>,
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
    /// `origin`'s base holds a teammate's change the local base does not: the base is
    /// recorded again (merging it) even when no file changes.
    pub remote_unmerged: bool,
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
    /// The secret answers given to this run, when they change what the recorded answers
    /// render (a rotation, or a typo): named in the subject and the body, never silent.
    pub secrets_changed: Vec<String>,
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
    let found = match request.commit {
        Some(files) => Found::open_commit(request.start, request.lock, files)?,
        None => Found::open(request.start, request.lock)?,
    };
    let blueprint = load_blueprint(&found.record, request.blueprint)?;
    let addons_key = blueprint.manifest.addons_answer();
    if request.set.iter().any(|(k, _)| k == addons_key) || request.values.contains_key(addons_key) {
        return Err(Error::input(format!(
            "{addons_key}: change addons with scaffold add-addon and remove-addon, not update"
        )));
    }
    let mut base = found.base(&blueprint)?;
    // A record no stored base holds was edited by hand or merged (a teammate's scaffold
    // change): it is rendered as it stands (its answers checked as recorded ones are), from
    // the newest base, and its changes are listed against that base's record.
    let previous = base.edited_from.as_ref().unwrap_or(&found.record);
    let edited = answer_keys(previous, &found.record, addons_key);
    if !edited.is_empty() {
        crate::notes::note(format!(
            "note: {} changed since scaffold last recorded it (edited by hand, or merged); applying: {}",
            record::PATH,
            edited.join(", ")
        ));
    }
    let record = &found.record;
    let renderer = generate::renderer_for(&blueprint)?;
    let moves = due_moves(&blueprint, &renderer, record)?;
    let (renamed, mut migrations) = migrated(&blueprint, record);
    let record = &renamed;
    let previous = match &base.edited_from {
        Some(from) => migrated(&blueprint, from).0,
        None => record.clone(),
    };
    let tracked = found.files.tracked_paths(&found.root)?;
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
    let secrets = crate::answers::secrets(&blueprint, &request.secrets, crate::process_env::var)?;
    let mut builtins = Map::new();
    builtins.insert(
        "target_dir_name".into(),
        Json::String(dir_name(&found.root)),
    );
    let secret_files = secret_changes(&blueprint, &renderer, record, &secrets, &base)?;
    let answers = recorded_answers(
        &blueprint,
        &renderer,
        record,
        Sources {
            set: secrets.iter().cloned().chain(request.set).collect(),
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
    refuse_dropped_environments(record, &next_record)?;
    let mut next = generate::render(&blueprint, &renderer, &answers, &next_record)?;
    let up_to_date = next.plan.files == base.plan.files;
    if !up_to_date && next_record.scaffold_version != generate::VERSION {
        next_record.scaffold_version = generate::VERSION.into();
        generate::set_record(&mut next.plan, &next_record, &next.digest)?;
    }
    let changed = record_changes(&previous, &next_record);
    let mut warnings = change_warnings(&blueprint, &renderer, &changed)?;
    let secrets_changed: Vec<String> = match secret_files.first() {
        Some(first) => {
            let keys: Vec<String> = secrets.iter().map(|(k, _)| k.clone()).collect();
            warnings.push(rotation_warning(&keys, first, secret_files.len()));
            keys
        }
        None => Vec::new(),
    };
    let changed_files = crate::repo::differing(&base.plan, &next.plan).len();
    let merge = merge_with_files(
        &found,
        &base.plan,
        &next.plan,
        &relocation,
        &label(&blueprint),
    )?;
    if found.files.is_work_tree() {
        warnings.extend(relocation.left_behind(&found.root, &tracked));
    }
    let remote_unmerged = crate::pristine::remote_unmerged(&found.root)?;
    Ok(Update {
        from: record.blueprint.clone(),
        to: next_record.blueprint.clone(),
        root: found.root,
        answers: changed,
        base_stored: base.stored,
        remote_unmerged,
        next: next.plan,
        up_to_date,
        changed_files,
        migrations,
        warnings,
        secrets_changed,
        merge,
    })
}

/// A record with the blueprint's declared renames applied to its answers, and its
/// answers moved into environments where the blueprint now has them; the lines that say
/// what moved.
fn migrated(blueprint: &Blueprint, record: &record::Record) -> (record::Record, Vec<String>) {
    let mut migrated = record.clone();
    let mut migrations = crate::migrate::apply(
        &mut migrated.answers,
        &blueprint.manifest.migrations,
        &record.blueprint,
        &blueprint.id(),
    );
    migrations.extend(into_environments(blueprint, &mut migrated));
    (migrated, migrations)
}

/// A `--secret` that changes what the recorded answers render: said, since it is either a
/// rotation or a typo.
fn rotation_warning(keys: &[String], first: &str, files: usize) -> String {
    format!(
        "secret answer {} changes what the recorded answers render ({files} file(s), e.g. {first}): this commit records it as a rotation; if it is a typo, `git revert` the commit and pass the secret the repo was made with",
        keys.join(", ")
    )
}

/// The three-way merge of the base, the new rendering and the files as they are (read as
/// git stores them, through the migration's moves). The record and its digest are
/// scaffold's own files: always the new ones, never merged line by line (a hand edit or a
/// merge changed them).
fn merge_with_files(
    found: &Found,
    base: &Plan,
    next: &Plan,
    relocation: &crate::relocate::Relocation,
    label: &str,
) -> Result<Merge> {
    let read = |path: &RelPath| found.files.read_canonical(&found.root, path);
    let mut merge = edit::merge(
        base,
        next,
        |path| {
            if record::is_internal(path.as_str()) {
                Ok(base.files.get(path).cloned())
            } else {
                relocation.read(path, read)
            }
        },
        label,
    )?;
    relocation.complete(&mut merge, read)?;
    Ok(merge)
}

/// The files the recorded answers render differently with this run's `secrets` than the
/// stored base holds (same blueprint, record unchanged): a `--secret` other than the one
/// the repo was last made with. Empty when that cannot be told apart from other changes.
fn secret_changes(
    blueprint: &Blueprint,
    renderer: &crate::render::Renderer,
    record: &record::Record,
    secrets: &[(String, String)],
    base: &crate::repo::Base,
) -> Result<Vec<String>> {
    let same_blueprint = record.blueprint.name == blueprint.manifest.name
        && record.blueprint.version == blueprint.manifest.version
        && record.blueprint.digest == blueprint.id().digest;
    if secrets.is_empty() || !base.stored || base.edited_from.is_some() || !same_blueprint {
        return Ok(Vec::new());
    }
    let sources = Sources {
        set: secrets.to_vec(),
        ..Sources::default()
    };
    let answers = recorded_answers(blueprint, renderer, record, sources)?;
    let rendered = generate::render(blueprint, renderer, &answers, record)?;
    Ok(crate::repo::differing(&base.plan, &rendered.plan)
        .iter()
        .map(|p| p.as_str().to_string())
        .collect())
}

/// An environment the answers drop would lose its files here as `env remove` loses them,
/// without that command's guard (its cluster must be torn down first): refused, naming it.
fn refuse_dropped_environments(before: &record::Record, after: &record::Record) -> Result<()> {
    if after.environments.is_empty() {
        return Ok(());
    }
    let dropped: Vec<&str> = before
        .environments
        .keys()
        .filter(|name| !after.environments.contains_key(*name))
        .map(String::as_str)
        .collect();
    let Some(first) = dropped.first() else {
        return Ok(());
    };
    Err(Error::refused(crate::error::Problem::new(format!(
        "the answers drop environment {}, which deletes its files from this repo but not its cluster or cloud resources: remove it with `scaffold env remove {first}` (it names the teardown to do first and asks for --force), then run update again",
        dropped.join(", ")
    ))
    .fix("nothing was changed")))
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
        } else if from == to && (!self.answers.is_empty() || !self.secrets_changed.is_empty()) {
            let keys: Vec<String> = self
                .answers
                .iter()
                .map(|a| a.key.clone())
                .chain(self.secrets_changed.iter().map(|k| format!("secret {k}")))
                .collect();
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
        if !self.secrets_changed.is_empty() {
            let lines: Vec<String> = self
                .secrets_changed
                .iter()
                .map(|k| format!("- {k}: changed (its value is never recorded)"))
                .collect();
            body.push_str(&format!("\n\nSecrets:\n{}", lines.join("\n")));
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

/// The answers (`ENV.KEY` for an environment's own) `edited` changes against `from`, for
/// the note about a record edited by hand or merged.
fn answer_keys(from: &record::Record, edited: &record::Record, addons_key: &str) -> Vec<String> {
    let mut keys: Vec<String> = record_changes(from, edited)
        .into_iter()
        .map(|c| c.key)
        .collect();
    if from.chosen_addons(addons_key) != edited.chosen_addons(addons_key)
        && !keys.iter().any(|k| k == addons_key)
    {
        keys.push(addons_key.to_string());
    }
    keys
}

/// Every answer that differs between two records: the shared ones by key, each
/// environment's own as `ENV.KEY` (plain `KEY` in a repo of one environment).
fn record_changes(before: &record::Record, after: &record::Record) -> Vec<AnswerChange> {
    let mut changed = answer_changes(&before.answers, &after.answers);
    let empty = Map::new();
    let envs: std::collections::BTreeSet<&String> = before
        .environments
        .keys()
        .chain(after.environments.keys())
        .collect();
    let several = envs.len() > 1;
    for env in envs {
        let was = before.environments.get(env).unwrap_or(&empty);
        let now = after.environments.get(env).unwrap_or(&empty);
        changed.extend(
            answer_changes(was, now)
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
    changed
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

/// Appended to a file's path for the blueprint's version of a file-level conflict.
pub const BLUEPRINT_COPY: &str = ".scaffold-new";

/// An update's changes with its conflicts written out (`--conflicts=markers`).
pub struct Marked {
    pub changes: Vec<Change>,
    /// (the conflicting file, where the blueprint's version of it is written beside it):
    /// never part of the suggested commit.
    pub copies: Vec<(RelPath, RelPath)>,
}

/// The merge's changes plus each conflict as a write: a line conflict with its markers,
/// a file you deleted that the blueprint changed in its new version (as git does for a
/// modify/delete conflict), and a binary or existing file's new version in a copy beside
/// it (`BLUEPRINT_COPY`).
pub fn with_markers(merge: &Merge, next: &Plan) -> Result<Marked> {
    let mut changes = merge.changes.clone();
    let mut copies = Vec::new();
    for conflict in &merge.conflicts {
        let theirs = next.files.get(&conflict.path);
        match (&conflict.kind, theirs) {
            (ConflictKind::Lines { marked, before, .. }, _) => changes.push(Change::Write {
                path: conflict.path.clone(),
                contents: marked.clone(),
                before: Some(before.clone()),
            }),
            (ConflictKind::DeletedButChanged, Some(contents)) => changes.push(Change::Write {
                path: conflict.path.clone(),
                contents: contents.clone(),
                before: None,
            }),
            (ConflictKind::Binary | ConflictKind::Exists, Some(contents)) => {
                let copy = RelPath::new(&format!("{}{BLUEPRINT_COPY}", conflict.path.as_str()))
                    .map_err(Error::blueprint)?;
                copies.push((conflict.path.clone(), copy.clone()));
                changes.push(Change::Write {
                    path: copy,
                    contents: contents.clone(),
                    before: None,
                });
            }
            _ => {}
        }
    }
    Ok(Marked { changes, copies })
}

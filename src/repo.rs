//! A repo made by `scaffold new`: its record, the blueprint it renders with and its
//! rendering, so `add-addon`, `remove-addon` and `update` share one model. Reads the repo
//! (record, files); writes nothing.
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::answers::{self, Answers, Sources};
use crate::blueprint::Blueprint;
use crate::edit::{self, Change};
use crate::error::{Error, Result};
use crate::generate::{self, Rendered};
use crate::plan::{Plan, RelPath};
use crate::pristine;
use crate::record::{self, Record};
use crate::render::Renderer;
use crate::write;

pub struct Repo {
    pub root: PathBuf,
    pub record: Record,
    pub blueprint: Blueprint,
    renderer: Renderer,
    answers: Answers,
    /// The repo as its record renders.
    pub rendered: Rendered,
}

impl Repo {
    /// The repo around `start`, with the blueprint `selector` names (default: the recorded
    /// one, by name), which must render it as it was last made: add-addon and remove-addon
    /// change one thing at a time, and a newer blueprint comes in through `scaffold update`.
    /// `secret_flags` are `--secret KEY=VALUE` pairs (secrets are never recorded; the
    /// environment's SCAFFOLD_SECRET_<KEY> serve too).
    pub fn open(
        start: &Path,
        selector: Option<&str>,
        secret_flags: &[(String, String)],
    ) -> Result<Self> {
        let found = Found::locate(start)?;
        let blueprint = load_blueprint(&found.record, selector)?;
        let made_with = &found.record.blueprint;
        let stored = pristine::find(&found.root, &found.record_bytes)?;
        if blueprint.manifest.name != made_with.name
            || blueprint.manifest.version != made_with.version
        {
            return Err(Error::Input(format!(
                "this repo is at blueprint {} {}, but scaffold has {} {}: run `scaffold update` first (it keeps your edits){}, or pass --blueprint with version {}",
                made_with.name,
                made_with.version,
                blueprint.manifest.name,
                blueprint.manifest.version,
                if stored.is_some() {
                    String::new()
                } else {
                    format!(
                        "; this clone has no stored base either: fetch it with `{}`",
                        pristine::FETCH_HINT
                    )
                },
                made_with.version,
            )));
        }
        let secrets = answers::secrets(&blueprint, secret_flags, |name| std::env::var(name).ok())?;
        let (renderer, answers, rendered) = render_record(&blueprint, &found.record, secrets)?;
        if let Some(base) = stored
            && base.files != rendered.plan.files
        {
            let differ = differing(&base, &rendered.plan);
            return Err(Error::Input(format!(
                "blueprint {} {} changed since this repo was last made from it ({} file(s) render differently, e.g. {}): run `scaffold update` first (it keeps your edits)",
                made_with.name,
                made_with.version,
                differ.len(),
                differ.first().map(RelPath::as_str).unwrap_or_default()
            )));
        }
        // Only after the base check: a blueprint changed in place is update's to say.
        found.record.check_drift(&rendered.digest)?;
        Ok(Repo {
            root: found.root,
            record: found.record,
            blueprint,
            renderer,
            answers,
            rendered,
        })
    }

    /// The repo as `record` would render it.
    pub fn render(&self, record: &Record) -> Result<Rendered> {
        generate::render(&self.blueprint, &self.renderer, &self.answers, record)
    }

    /// The writes and deletions that take the work tree to `next`, keeping user edits.
    pub fn changes_to(&self, next: &Rendered) -> Result<Vec<Change>> {
        let eol = crate::attributes::Eol::of(&self.root);
        edit::changes(&self.rendered.plan, &next.plan, |path| {
            write::read_canonical(&self.root, path, &eol)
        })
    }
}

/// The rendering a repo was last made from.
pub struct Base {
    pub plan: Plan,
    /// Read from `refs/scaffold/base` (else re-rendered from the recorded blueprint).
    pub stored: bool,
}

/// A scaffold repo on disk: where it is and its record.
pub struct Found {
    pub root: PathBuf,
    pub record: Record,
    /// The record file's bytes, which identify its pristine base.
    pub record_bytes: Vec<u8>,
}

impl Found {
    pub fn locate(start: &Path) -> Result<Self> {
        let root = write::find_repo(start)?;
        let path = root.join(record::PATH);
        let record_bytes = std::fs::read(&path).map_err(|e| Error::io_path("read", &path, e))?;
        let record_bytes = crate::attributes::Eol::of(&root)
            .from_work_tree(record::PATH, &record_bytes)
            .into_owned();
        let text = String::from_utf8_lossy(&record_bytes);
        let record = Record::parse(&text)?;
        Ok(Found {
            root,
            record,
            record_bytes,
        })
    }

    /// What the repo was last made from: the stored pristine base, or (a repo made before
    /// bases were stored, or a clone without them) a re-rendering of its record with
    /// `blueprint` when that is the recorded version.
    pub fn base(&self, blueprint: &Blueprint) -> Result<Base> {
        if let Some(plan) = pristine::find(&self.root, &self.record_bytes)? {
            return Ok(Base { plan, stored: true });
        }
        let made_with = &self.record.blueprint;
        let is_recorded = |b: &Blueprint| {
            b.manifest.name == made_with.name && b.manifest.version == made_with.version
        };
        let loaded;
        let recorded = if is_recorded(blueprint) {
            Some(blueprint)
        } else {
            loaded = Blueprint::load(&made_with.name).ok();
            loaded.as_ref().filter(|b| is_recorded(b))
        };
        match recorded {
            Some(blueprint) => Ok(Base {
                plan: render_record(
                    blueprint,
                    &self.record,
                    answers::secrets(blueprint, &[], |name| std::env::var(name).ok())?,
                )?
                .2
                .plan,
                stored: false,
            }),
            None => Err(Error::Input(format!(
                "this clone has no stored base ({}) and scaffold cannot find blueprint {} {} to re-render it: fetch the base with `{}`, or run `scaffold update --blueprint DIR` once with blueprint {} {} to record it",
                pristine::BASE_REF,
                made_with.name,
                made_with.version,
                pristine::FETCH_HINT,
                made_with.name,
                made_with.version
            ))),
        }
    }
}

/// Paths whose contents differ between two renderings; the answers record (whose digest
/// follows every other change) is not counted.
pub fn differing(a: &Plan, b: &Plan) -> Vec<RelPath> {
    let paths: std::collections::BTreeSet<&RelPath> =
        a.files.keys().chain(b.files.keys()).collect();
    paths
        .into_iter()
        .filter(|p| p.as_str() != record::PATH && a.files.get(*p) != b.files.get(*p))
        .cloned()
        .collect()
}

/// The chart version an addon has in a rendering.
pub fn addon_version(rendered: &Rendered, name: &str) -> Option<String> {
    rendered
        .addons
        .get(name)?
        .get("chart")?
        .get("version")?
        .as_str()
        .map(String::from)
}

/// `selector`, or the recorded blueprint found by name.
pub fn load_blueprint(record: &Record, selector: Option<&str>) -> Result<Blueprint> {
    match selector {
        Some(selector) => Blueprint::load(selector),
        None => Blueprint::load(&record.blueprint.name)
            .or_else(|e| {
                // A team blueprint off the search path: the directory it was made from.
                match record.blueprint.source.as_deref() {
                    Some(dir) if Path::new(dir).join("blueprint.yaml").is_file() => {
                        Blueprint::load(dir)
                    }
                    _ => Err(e),
                }
            })
            .map_err(|_| {
            Error::Input(format!(
                "this repo was made with blueprint {} {}, which scaffold cannot find by name: pass --blueprint DIR, or put it on SCAFFOLD_BLUEPRINT_PATH",
                record.blueprint.name, record.blueprint.version
            ))
        }),
    }
}

/// The renderer, answers and rendering of `record` with `blueprint`.
fn render_record(
    blueprint: &Blueprint,
    record: &Record,
    secrets: Vec<(String, String)>,
) -> Result<(Renderer, Answers, Rendered)> {
    let renderer = generate::renderer_for(blueprint)?;
    let sources = Sources {
        set: secrets,
        ..Sources::default()
    };
    let answers = recorded_answers(blueprint, &renderer, record, sources)?;
    let rendered = generate::render(blueprint, &renderer, &answers, record)?;
    Ok((renderer, answers, rendered))
}

/// The recorded answers under `sources`, checked by the blueprint. `addons` may name custom
/// charts the blueprint's catalog does not list: the effective catalog checks those when
/// rendering, so only the catalog's names go through the question.
pub fn recorded_answers(
    blueprint: &Blueprint,
    renderer: &Renderer,
    record: &Record,
    sources: Sources<'_>,
) -> Result<Answers> {
    let chosen = record.chosen_addons();
    let mut recorded = record.answers.clone();
    if recorded.contains_key(ADDONS) {
        let listed = blueprint.catalog.optional_names();
        recorded.insert(
            ADDONS.into(),
            Json::Array(
                chosen
                    .iter()
                    .filter(|name| listed.contains(name))
                    .cloned()
                    .map(Json::String)
                    .collect(),
            ),
        );
    }
    let mut answers = answers::gather_over(blueprint, renderer, sources, &recorded)?;
    answers.values.insert(
        ADDONS.into(),
        Json::Array(chosen.into_iter().map(Json::String).collect()),
    );
    Ok(answers)
}

/// The answer that lists the chosen addons; add-addon and remove-addon own it.
pub const ADDONS: &str = "addons";

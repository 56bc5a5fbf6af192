//! A repo made by `scaffold new`: its record, the blueprint it renders with and its
//! rendering, so `add-addon`, `remove-addon` and `update` share one model. Reads the repo
//! (record, files); writes nothing.
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use crate::answers::{self, Answers, Sources};
use crate::blueprint::Blueprint;
use crate::edit::{self, Change};
use crate::error::{Error, Result};
use crate::generate::{self, Rendered};
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
    /// one, by name), which must be the version that made it.
    pub fn open(start: &Path, selector: Option<&str>) -> Result<Self> {
        let root = write::find_repo(start)?;
        let record = read_record(&root)?;
        let blueprint = load_blueprint(&record, selector)?;
        let made_with = &record.blueprint;
        if blueprint.manifest.name != made_with.name
            || blueprint.manifest.version != made_with.version
        {
            return Err(Error::Input(format!(
                "this repo was made with blueprint {} {}, but scaffold has {} {}: use the scaffold release that made it (updates come with a later command)",
                made_with.name,
                made_with.version,
                blueprint.manifest.name,
                blueprint.manifest.version
            )));
        }
        let renderer = generate::renderer_for(&blueprint)?;
        let answers = recorded_answers(&blueprint, &renderer, &record)?;
        let rendered = generate::render(&blueprint, &renderer, &answers, &record)?;
        Ok(Repo {
            root,
            record,
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
        edit::changes(&self.rendered.plan, &next.plan, |path| {
            write::read(&self.root, path)
        })
    }
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

pub fn read_record(root: &Path) -> Result<Record> {
    let path = root.join(record::PATH);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io_path("read", &path, e))?;
    Record::parse(&text)
}

/// `selector`, or the recorded blueprint found by name.
pub fn load_blueprint(record: &Record, selector: Option<&str>) -> Result<Blueprint> {
    match selector {
        Some(selector) => Blueprint::load(selector),
        None => Blueprint::load(&record.blueprint.name).map_err(|_| {
            Error::Input(format!(
                "this repo was made with blueprint {} {}, which scaffold cannot find by name: pass --blueprint DIR, or put it on SCAFFOLD_BLUEPRINT_PATH",
                record.blueprint.name, record.blueprint.version
            ))
        }),
    }
}

/// The recorded answers, checked by the blueprint. `addons` may name custom charts the
/// blueprint's catalog does not list: the effective catalog checks those when rendering.
fn recorded_answers(
    blueprint: &Blueprint,
    renderer: &Renderer,
    record: &Record,
) -> Result<Answers> {
    let values = record
        .answers
        .iter()
        .filter(|(k, _)| k.as_str() != "addons")
        .map(|(k, v)| {
            Ok((
                k.clone(),
                serde_yaml::to_value(v).map_err(|e| Error::Input(e.to_string()))?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut answers = answers::gather(
        blueprint,
        renderer,
        Sources {
            set: Vec::new(),
            values,
            prompter: None,
            builtins: Map::new(),
        },
    )
    .map_err(|e| Error::Input(format!("{}: {e}", record::PATH)))?;
    answers.values.insert(
        "addons".into(),
        Json::Array(
            record
                .chosen_addons()
                .into_iter()
                .map(Json::String)
                .collect(),
        ),
    );
    Ok(answers)
}

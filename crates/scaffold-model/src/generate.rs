//! The one rendering pipeline every command shares: recorded answers + per-addon settings
//! → selected addons → template context → `Plan` (answers record included). `new` renders
//! once; `add-addon`/`remove-addon` render before and after and merge the difference.
use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::{Map, Value as Json, json};

use crate::answers;
use crate::blueprint::Blueprint;
use crate::blueprint::TreeScope;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::plan::{self, Plan, RelPath};
use crate::record::{self, Record};
use crate::render::{FileTemplates, Renderer, Scope, Source};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub struct Rendered {
    pub plan: Plan,
    /// The digest of the plan without the answers record (`Record::rendering`).
    pub digest: String,
    /// (dependency added, the addon that needs it)
    pub added: Vec<(String, String)>,
    /// name → the effective catalog entry of every addon in the repo
    pub addons: Map<String, Json>,
}

/// The renderer of a run: templated paths, patches and the shared templates (partials,
/// components), compiled once, and the file templates that need Tera (not plain) when they
/// fit in one chunk; else those are compiled where they are rendered, a chunk at a time
/// (`plan::build`). Two engines per run (`renderer_for_answers` and `file_templates`), not
/// one per tree and chunk: building an engine (Tera's filters) and compiling the shared
/// templates into each cost more than the default blueprint's render (BENCHMARKS.md, round
/// two).
pub fn renderer_for(blueprint: &Blueprint) -> Result<Renderer> {
    renderer_of(blueprint, None)
}

/// `renderer_for` after lint, which found the plain templates among them: those are not
/// read again.
pub fn renderer_for_linted(blueprint: &Blueprint, plain: &HashSet<String>) -> Result<Renderer> {
    renderer_of(blueprint, Some(plain))
}

fn renderer_of(blueprint: &Blueprint, plain: Option<&HashSet<String>>) -> Result<Renderer> {
    let mut renderer = renderer_for_answers(blueprint)?;
    adopt(&mut renderer, file_templates(blueprint, plain)?);
    Ok(renderer)
}

/// What gathering the answers renders: the shared templates and patches, the templated
/// paths and the one-offs (defaults, conditions, derived names). Rendering the repo needs
/// `file_templates` too, which `new` compiles meanwhile on another core
/// (`gather_while_compiling`).
pub fn renderer_for_answers(blueprint: &Blueprint) -> Result<Renderer> {
    let sources = plan::shared_sources(blueprint)?;
    let default = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let mut renderer = Renderer::new(
        &default,
        sources.iter().map(|(name, text)| Source {
            name,
            text,
            delimiters: blueprint.delimiters_for(name),
        }),
    )?;
    let paths: Vec<String> = plan::path_names(blueprint).collect();
    renderer.add_paths(paths.iter().map(String::as_str));
    let (one_offs, conditions) = answers::one_offs(blueprint);
    renderer.add_one_offs(one_offs, conditions);
    Ok(renderer)
}

/// The file templates that need Tera (`plain`: those lint found plain, left out), with the
/// shared ones they may include, in engines of their own (for
/// `Renderer::adopt_file_templates`). None when they do not fit in one chunk: rendering
/// compiles them a chunk at a time.
pub fn file_templates(
    blueprint: &Blueprint,
    plain: Option<&HashSet<String>>,
) -> Result<Option<Renderer>> {
    let files = plan::file_templates_for_tera(blueprint, plain)?;
    if files.len() > plan::TEMPLATES_PER_CHUNK {
        return Ok(None);
    }
    let shared = match files.is_empty() {
        true => Vec::new(),
        false => plan::shared_sources(blueprint)?,
    };
    plan::compile_chunk(blueprint, &files, &shared).map(Some)
}

/// `renderer` with `files` (`file_templates`) in it, or told to compile its file templates
/// a chunk at a time.
fn adopt(renderer: &mut Renderer, files: Option<Renderer>) {
    match files {
        Some(files) => renderer.adopt_file_templates(files),
        None => renderer.compile_file_templates_in_chunks(),
    }
}

/// Compiles into `renderer` the file templates it lacks (`renderer_for_answers`).
pub fn compile_file_templates(blueprint: &Blueprint, renderer: &mut Renderer) -> Result<()> {
    if renderer.file_templates() == FileTemplates::NotYet {
        adopt(renderer, file_templates(blueprint, None)?);
    }
    Ok(())
}

/// `gather` (the answers) run while the file templates `renderer` lacks compile on another
/// core, then adopted: the answers need none of them. A file template that does not
/// compile fails the run before an answer does, as when it was compiled first. A blueprint
/// with more `.tera` files than a chunk holds (shared and plain ones counted) has its file
/// templates sorted out on this thread first: scanned, and compiled only if they fit in
/// one chunk after all (else a chunk at a time where rendered); a second thread costs more
/// there.
pub fn gather_while_compiling<T>(
    blueprint: &Blueprint,
    renderer: &mut Renderer,
    gather: impl FnOnce(&Renderer) -> Result<T>,
) -> Result<T> {
    let templates = blueprint
        .template_trees()
        .iter()
        .map(|(_, tree)| tree.keys().filter(|path| path.ends_with(".tera")).count())
        .sum::<usize>();
    if templates > plan::TEMPLATES_PER_CHUNK {
        compile_file_templates(blueprint, renderer)?;
    }
    if renderer.file_templates() != FileTemplates::NotYet {
        return gather(renderer);
    }
    let (files, gathered) =
        crate::parallel::beside(|| file_templates(blueprint, None), || gather(renderer));
    adopt(renderer, files?);
    gathered
}

pub fn record_for(
    blueprint: &Blueprint,
    answers: &answers::Answers,
    addon_settings: Map<String, Json>,
) -> Record {
    let addons_key = blueprint.manifest.addons_answer();
    // The addons answer is recorded sorted, as `add-addon` keeps it (one a line: two
    // teammates' additions merge).
    let recorded = |key: &String, value: &Json| match value {
        Json::Array(names) if key == addons_key => {
            let mut names = names.clone();
            names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            names.dedup();
            (key.clone(), Json::Array(names))
        }
        _ => (key.clone(), value.clone()),
    };
    Record {
        blueprint: blueprint.id(),
        scaffold_version: VERSION.to_string(),
        answers: answers
            .recorded
            .iter()
            .filter_map(|k| answers.values.get(k).map(|v| recorded(k, v)))
            .collect(),
        addon_settings,
        environment_addon_settings: Default::default(),
        environments: answers
            .environments
            .iter()
            .map(|(name, own)| {
                let own_record = own
                    .recorded
                    .iter()
                    .filter_map(|k| own.values.get(k).map(|v| recorded(k, v)))
                    .collect();
                (name.clone(), own_record)
            })
            .collect(),
        rendering: None,
    }
}

/// Writes `record` into `plan` (rendered to `digest`), with its digest line and the
/// attributes that merge teammates' digest lines.
pub fn set_record(plan: &mut Plan, record: &Record, digest: &str) -> Result<()> {
    let record = Record {
        rendering: None,
        ..record.clone()
    };
    let record_bytes = record.to_yaml()?.into_bytes();
    let digests = record::digests_text(&record_bytes, digest);
    for (path, contents) in [
        (record::PATH, record_bytes),
        (record::DIGESTS_PATH, digests.into_bytes()),
        (
            record::ATTRIBUTES_PATH,
            record::ATTRIBUTES.as_bytes().to_vec(),
        ),
    ] {
        plan.files
            .insert(RelPath::new(path).map_err(Error::blueprint)?, contents);
    }
    Ok(())
}

/// `answers` holds every question's value (secrets and skipped questions included);
/// `record` is what gets written to `.scaffold/answers.yaml`.
pub fn render(
    blueprint: &Blueprint,
    renderer: &Renderer,
    answers: &answers::Answers,
    record: &Record,
) -> Result<Rendered> {
    let catalog = settled(&blueprint.catalog, blueprint, &record.addon_settings)?;
    let addons_key = blueprint.manifest.addons_answer();
    let (mut plan, mut scoped) = if answers.environments.is_empty() {
        let scoped = scoped(
            blueprint,
            renderer,
            &catalog,
            answers,
            &record.chosen_addons(addons_key),
        )?;
        let plan = plan::build(blueprint, renderer, &scoped.scope, scoped.addons())?;
        (plan, scoped)
    } else {
        render_environments(blueprint, renderer, &catalog, answers, record, addons_key)?
    };
    let digest = plan.digest();
    for path in [record::PATH, record::DIGESTS_PATH, record::ATTRIBUTES_PATH] {
        plan.add(RelPath::new(path).map_err(Error::blueprint)?, Vec::new())?;
    }
    set_record(&mut plan, record, &digest)?;
    Ok(Rendered {
        digest,
        plan,
        added: std::mem::take(&mut scoped.added),
        addons: scoped.into_by_name(),
    })
}

/// The template context of one set of answers (the repo's, or one environment's) and the
/// addons it selects.
struct Scoped {
    /// The answers, with `addons` (their effective catalog entries, configs rendered).
    context: Json,
    /// `context` converted for Tera, once: the conversion of the addons' entries is a
    /// tenth of the default blueprint's render.
    scope: Scope,
    added: Vec<(String, String)>,
}

impl Scoped {
    fn addons(&self) -> &[Json] {
        match self.context.get("addons") {
            Some(Json::Array(addons)) => addons,
            _ => &[],
        }
    }

    /// name → addon, taken out of the context.
    fn into_by_name(mut self) -> Map<String, Json> {
        let addons = match self.context.get_mut("addons").map(Json::take) {
            Some(Json::Array(addons)) => addons,
            _ => Vec::new(),
        };
        addons
            .into_iter()
            .map(|addon| (text_of(&addon, "name"), addon))
            .collect()
    }
}

/// Several environments: the repo's and per-addon trees render once over the shared
/// answers (per-addon trees for every addon some environment selects); each environment's
/// trees render over its own answers and addons. Catalog patches apply last: an
/// environment's files take those of its own addons, with its answers; the shared files
/// those of every addon some environment selects, with the shared answers.
fn render_environments(
    blueprint: &Blueprint,
    renderer: &Renderer,
    catalog: &Catalog,
    answers: &answers::Answers,
    record: &Record,
    addons_key: &str,
) -> Result<(Plan, Scoped)> {
    // As for one environment, the record's choice is the one rendered (add-addon and
    // remove-addon change it over answers gathered before).
    let chosen: Vec<Vec<String>> = answers
        .environments
        .iter()
        .map(|(name, own)| {
            let recorded = record.environments.get(name);
            let chosen = recorded.and_then(|recorded| recorded.get(addons_key));
            crate::json::strings(chosen.or_else(|| own.values.get(addons_key)))
        })
        .collect();
    let mut union: Vec<String> = Vec::new();
    for addon in chosen.iter().flatten() {
        if !union.contains(addon) {
            union.push(addon.clone());
        }
    }
    // Each environment's context, then the shared one, on every core: the first error in
    // that order is the one a serial run would meet first.
    let contexts: Vec<Option<usize>> = (0..answers.environments.len())
        .map(Some)
        .chain([None])
        .collect();
    let mut each = crate::parallel::map(&contexts, |which| match which {
        Some(k) => {
            let (name, own) = &answers.environments[*k];
            environment_scoped(blueprint, renderer, catalog, record, name, own, &chosen[*k])
        }
        None => scoped(blueprint, renderer, catalog, answers, &union),
    })
    .into_iter()
    .collect::<Result<Vec<Scoped>>>()?;
    let mut shared = each
        .pop()
        .ok_or_else(|| Error::blueprint("no shared context"))?;
    let first = first_environment_of(&answers.environments, &each, catalog);
    shared.scope = shared.scope.with(FIRST_ENVIRONMENT_OF, &first);
    if let Json::Object(map) = &mut shared.context {
        map.insert(FIRST_ENVIRONMENT_OF.into(), first);
    }
    let (mut plan, owned) = match render_environment_trees(blueprint, renderer, &shared, &each) {
        Some(rendered) => rendered,
        None => render_environment_trees_in_order(blueprint, renderer, &shared, &each)?,
    };
    let shared_files: BTreeSet<RelPath> = plan
        .files
        .keys()
        .filter(|path| !owned.iter().any(|files| files.contains(*path)))
        .cloned()
        .collect();
    // Each environment's files take the patches of the addons it runs, in its own scope;
    // the shared files those of every addon some environment runs (lint reports a patch
    // there that an environment without the addon would get).
    for (own, files) in each.iter().zip(&owned) {
        let within = |path: &RelPath| files.contains(path);
        plan::apply_addon_patches(&mut plan, renderer, &own.scope, own.addons(), &within)?;
    }
    let within = |path: &RelPath| shared_files.contains(path);
    plan::apply_addon_patches(&mut plan, renderer, &shared.scope, shared.addons(), &within)?;
    Ok((plan, shared))
}

/// One environment's context: its answers and its own addons, named `environment`.
fn environment_scoped(
    blueprint: &Blueprint,
    renderer: &Renderer,
    catalog: &Catalog,
    record: &Record,
    name: &str,
    own: &answers::Answers,
    chosen: &[String],
) -> Result<Scoped> {
    let own_catalog = match record.environment_addon_settings.get(name) {
        Some(settings) => settled(catalog, blueprint, settings)?,
        None => std::borrow::Cow::Borrowed(catalog),
    };
    let mut scoped = scoped(blueprint, renderer, &own_catalog, own, chosen)?;
    let environment = Json::String(name.to_string());
    scoped.scope = scoped.scope.with(crate::answers::ENVIRONMENT, &environment);
    if let Json::Object(map) = &mut scoped.context {
        map.insert(crate::answers::ENVIRONMENT.into(), environment);
    }
    Ok(scoped)
}

/// Whether a tree is the shared one's (the repo's and per-addon trees) or an environment's.
fn shared_tree(scope: TreeScope) -> bool {
    match scope {
        TreeScope::Repo | TreeScope::Addon => true,
        TreeScope::Environment | TreeScope::AddonEnvironment => false,
    }
}

/// The shared trees and each environment's, rendered on every core into a plan of their
/// own each, then joined: the plan and the paths each environment rendered. None when any
/// of them fails or two of them render one path: `render_environment_trees_in_order` then
/// meets the same error where a serial run meets it first, and reports it as it does.
fn render_environment_trees(
    blueprint: &Blueprint,
    renderer: &Renderer,
    shared: &Scoped,
    each: &[Scoped],
) -> Option<(Plan, Vec<BTreeSet<RelPath>>)> {
    let jobs: Vec<Option<&Scoped>> = std::iter::once(None).chain(each.iter().map(Some)).collect();
    let mut plans = crate::parallel::map(&jobs, |job| {
        let mut plan = Plan::default();
        let (scoped, which): (&Scoped, &dyn Fn(TreeScope) -> bool) = match job {
            None => (shared, &shared_tree),
            Some(own) => (*own, &|scope| !shared_tree(scope)),
        };
        plan::render_trees(
            &mut plan,
            blueprint,
            renderer,
            &scoped.scope,
            scoped.addons(),
            which,
        )
        .ok()
        .map(|()| plan)
    })
    .into_iter();
    let mut plan = plans.next()??;
    let mut owned = Vec::with_capacity(each.len());
    for own in plans {
        let own = own?;
        if own.files.keys().any(|path| plan.files.contains_key(path)) {
            return None;
        }
        owned.push(own.files.keys().cloned().collect());
        plan.files.extend(own.files);
        plan.sources.extend(own.sources);
        plan.executable.extend(own.executable);
    }
    Some((plan, owned))
}

/// `render_environment_trees` one tree after another into one plan, which meets the first
/// error of a failing blueprint where a reader of the blueprint would.
fn render_environment_trees_in_order(
    blueprint: &Blueprint,
    renderer: &Renderer,
    shared: &Scoped,
    each: &[Scoped],
) -> Result<(Plan, Vec<BTreeSet<RelPath>>)> {
    let mut plan = Plan::default();
    let (scope, addons) = (&shared.scope, shared.addons());
    plan::render_trees(&mut plan, blueprint, renderer, scope, addons, &shared_tree)?;
    let mut owned = Vec::with_capacity(each.len());
    for own in each {
        let before: BTreeSet<RelPath> = plan.files.keys().cloned().collect();
        let which = |scope| !shared_tree(scope);
        plan::render_trees(
            &mut plan,
            blueprint,
            renderer,
            &own.scope,
            own.addons(),
            &which,
        )?;
        let files: BTreeSet<RelPath> = plan
            .files
            .keys()
            .filter(|path| !before.contains(*path))
            .cloned()
            .collect();
        owned.push(files);
    }
    Ok((plan, owned))
}

/// The context of `answers` with the addons `chosen` (and what they need) selected.
/// The builtin naming, for each component of a repo of environments, the first
/// environment (in the environments answer's order) that runs it: a shared file such as
/// `renovate.json` updates it there only. Every catalog component has an entry, sorted by
/// name (one no environment runs: the first environment), so a shared file rendering one
/// line per entry changes only the lines of the component an edit moves: two teammates'
/// `add-addon` of different addons then merge with git's default merge.
pub const FIRST_ENVIRONMENT_OF: &str = "first_environment_of";

fn first_environment_of(
    environments: &[(String, answers::Answers)],
    each: &[Scoped],
    catalog: &Catalog,
) -> Json {
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    for ((env, _), own) in environments.iter().zip(each) {
        let names = own.context.get("addon_names").and_then(Json::as_array);
        for name in names.into_iter().flatten().filter_map(Json::as_str) {
            first.entry(name.to_string()).or_insert_with(|| env.clone());
        }
    }
    if let Some((env, _)) = environments.first() {
        for entry in catalog.entries() {
            first
                .entry(entry.spec.name.clone())
                .or_insert_with(|| env.clone());
        }
    }
    Json::Object(
        first
            .into_iter()
            .map(|(name, env)| (name, Json::String(env)))
            .collect(),
    )
}

fn scoped(
    blueprint: &Blueprint,
    renderer: &Renderer,
    catalog: &Catalog,
    answers: &answers::Answers,
    chosen: &[String],
) -> Result<Scoped> {
    let selection = catalog.select(chosen)?;
    let base_context = answers::context_of(answers, &Map::new());
    let answered = |key: &str| answers.values.get(key).is_some_and(answers::satisfies);
    if let Some(unmet) = selection.unmet(answered) {
        // A yes/no question answered no: its requirement is `true`, not any answer.
        if let Some(Json::Bool(_)) = answers.values.get(&unmet.key) {
            return Err(Error::input(format!(
                "addons: {unmet} to be true: leave {} out of addons, or answer `{}` true (`--set {}=true` to new; `scaffold update --set {}=true` in an existing repo)",
                unmet.chosen, unmet.key, unmet.key, unmet.key
            )));
        }
        return Err(Error::input(format!(
            "addons: {unmet}, and this repo's answers leave `{}` empty: leave {} out",
            unmet.key, unmet.chosen
        )));
    }
    let present: Vec<&str> = selection
        .entries
        .iter()
        .map(|e| e.spec.name.as_str())
        .collect();
    let mut addons = Vec::new();
    for entry in &selection.entries {
        let layer = &entry.spec.layer;
        let dir_template = blueprint.manifest.layers.get(layer).ok_or_else(|| {
            let layers = blueprint.manifest.layers.keys().map(String::as_str);
            Error::Located(crate::error::Located::new(
                format!("addons/{}.yaml", entry.spec.name),
                crate::yaml::Places::of(&String::from_utf8_lossy(entry.source())).at(&["layer"]),
                format!(
                    "layer `{layer}` is not one of the blueprint's layers{}",
                    crate::suggest::did_you_mean(layer, layers)
                ),
            ))
        })?;
        let dir = renderer.render_str(&format!("layer {layer}"), dir_template, &base_context)?;
        addons.push(entry.template_object(&dir, &present));
    }
    let mut context = match base_context {
        Json::Object(map) => map,
        _ => Map::new(),
    };
    context.insert(
        "blueprint".into(),
        json!({"name": blueprint.manifest.name, "version": blueprint.manifest.version}),
    );
    context.insert("scaffold_version".into(), Json::String(VERSION.into()));
    context.insert(
        "addon_names".into(),
        Json::Array(
            selection
                .entries
                .iter()
                .map(|e| Json::String(e.spec.name.clone()))
                .collect(),
        ),
    );
    context.insert("addons".into(), Json::Array(addons));
    let scope = render_configs(renderer, &mut context)?;
    Ok(Scoped {
        context: Json::Object(context),
        scope,
        added: selection.added,
    })
}

/// Renders each addon's `configs[].content` (catalog text that is a template too) with the
/// repo's context and the addon as `addon`, so a config can name answers and other addons.
/// Returns the scope of the context so rendered: the one before, with only the configs
/// that changed converted again.
fn render_configs(renderer: &Renderer, context: &mut Map<String, Json>) -> Result<Scope> {
    // Every addon's scope sees the addons as they were before any config rendered.
    let base = Scope::of_map(context);
    let Some(Json::Array(addons)) = context.get_mut("addons") else {
        return Ok(base);
    };
    let mut rendered = base.clone();
    for (index, addon) in addons.iter_mut().enumerate() {
        let name = text_of(addon, "name");
        let scope = base.with_addon(index, addon);
        let Some(Json::Array(configs)) = addon.get_mut("configs") else {
            continue;
        };
        let mut changed = false;
        for config in configs.iter_mut() {
            let file = text_of(config, "file");
            if let Some(Json::String(content)) = config.get_mut("content") {
                let text = renderer.render_str_in(
                    &format!("addons/{name}.yaml configs {file}"),
                    content,
                    &scope,
                )?;
                changed |= text != *content;
                *content = text;
            }
        }
        if changed && let Some(configs) = addon.get("configs") {
            rendered = rendered.with_item_field("addons", index, "configs", configs);
        }
    }
    Ok(rendered)
}

fn text_of(object: &Json, key: &str) -> String {
    object
        .get(key)
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `catalog` with `settings` applied; itself, not a copy, when there are none.
fn settled<'c>(
    catalog: &'c Catalog,
    blueprint: &Blueprint,
    settings: &Map<String, Json>,
) -> Result<std::borrow::Cow<'c, Catalog>> {
    if settings.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(catalog));
    }
    let custom = blueprint.manifest.custom_addon.as_ref();
    Ok(std::borrow::Cow::Owned(
        catalog.with_settings(settings, custom)?,
    ))
}

/// The catalog a record sees: the blueprint's, with its addon settings applied.
pub fn catalog_of(blueprint: &Blueprint, record: &Record) -> Result<Catalog> {
    blueprint.catalog.with_settings(
        &record.addon_settings,
        blueprint.manifest.custom_addon.as_ref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blueprint with a partial, a file template that includes it, a templated path, a
    /// plain file and a question whose default is a template; `broken` replaces the file
    /// template with one that does not compile.
    fn blueprint(broken: bool) -> (tempfile::TempDir, Blueprint) {
        let manifest = "name: apart\nversion: 0.1.0\nquestions:\n  - key: name\n    prompt: name\n    type: string\n    default: acme\n  - key: label\n    prompt: label\n    type: string\n    default: \"[[ name ]]-label\"\n";
        let template = match broken {
            true => "[% if name %]never closed\n",
            false => "[% include \"partials/tag.tera\" %]: [[ label ]]\n",
        };
        let dir = crate::tree::temp_dir_with(&[
            ("blueprint.yaml", manifest),
            ("partials/tag.tera", "tag-[[ name ]]"),
            ("files/a.yaml.tera", template),
            ("files/[[ name ]]/plain.txt.tera", "plain [[ name ]]\n"),
        ]);
        let blueprint = Blueprint::load(&dir.path().display().to_string()).expect("loads");
        (dir, blueprint)
    }

    #[test]
    fn file_templates_compiled_beside_the_answers_render_as_compiled_first() {
        let (_dir, blueprint) = blueprint(false);
        let mut apart = renderer_for_answers(&blueprint).expect("compiles");
        assert_eq!(apart.file_templates(), FileTemplates::NotYet);
        let label = gather_while_compiling(&blueprint, &mut apart, |renderer| {
            renderer.render_str("default", "[[ name ]]-label", &json!({"name": "acme"}))
        })
        .expect("gathers");
        assert_eq!(label, "acme-label");
        assert_eq!(apart.file_templates(), FileTemplates::Held);
        let whole = renderer_for(&blueprint).expect("compiles");
        let scope = Scope::new(&json!({"name": "acme", "label": "acme-label"}));
        let plan = plan::build(&blueprint, &apart, &scope, &[]).expect("renders");
        assert_eq!(
            plan.files,
            plan::build(&blueprint, &whole, &scope, &[])
                .expect("renders")
                .files
        );
        let rendered = RelPath::new("a.yaml").expect("path");
        assert_eq!(plan.files[&rendered], b"tag-acme: acme-label\n");
    }

    #[test]
    fn a_file_template_that_does_not_compile_fails_before_the_answers_do() {
        let (_dir, blueprint) = blueprint(true);
        let mut apart = renderer_for_answers(&blueprint).expect("the shared templates compile");
        let err = gather_while_compiling(&blueprint, &mut apart, |_| -> Result<()> {
            Err(Error::input("an answer refused"))
        })
        .expect_err("does not compile");
        assert!(err.to_string().contains("files/a.yaml.tera"), "{err}");
        let compiled_first = renderer_for(&blueprint).err().expect("does not compile");
        assert_eq!(err.to_string(), compiled_first.to_string());
    }
}

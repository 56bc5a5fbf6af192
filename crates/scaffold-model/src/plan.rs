//! The plan: every file of the repo, rendered in memory before anything is written.
//! Pure: blueprint + context in, `Plan` out.
use std::collections::{BTreeSet, HashSet};

use serde_json::Value as Json;

use crate::blueprint::{Blueprint, TreeScope};
use crate::error::{Error, Located, Problem, Result};
use crate::overrides;
use crate::render::{FileTemplates, Renderer, Scope};
use crate::tree::FileTree;
pub use crate::tree::{Plan, RelPath};

/// Template names are the blueprint-relative paths, so errors point at the source file.
/// The texts are borrowed from the blueprint: Tera keeps its own copy of each.
pub fn template_sources(blueprint: &Blueprint) -> Result<Vec<(String, &str)>> {
    let mut sources = Vec::new();
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree {
            if path.ends_with(".tera") {
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    Error::blueprint(format!(
                        "{prefix}{path}: a .tera template must be UTF-8 text"
                    ))
                })?;
                sources.push((format!("{prefix}{path}"), text));
            }
        }
    }
    // Patches are templates too: they may read answers and `addon`.
    for (path, bytes) in blueprint.patches.values().flatten() {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::blueprint(format!("{path}: a patch must be UTF-8 text")))?;
        sources.push((path.clone(), text));
    }
    Ok(sources)
}

/// A template other templates may use, so every engine holds it: a partial, or a file that
/// defines a component (every template sees every component): a block tag whose first word
/// is `component`, after the block delimiter and an optional `-`.
fn is_shared(name: &str, text: &[u8], block_start: &str) -> bool {
    let block_start = block_start.as_bytes();
    name.starts_with("partials/")
        || crate::render::delimiter_positions(text, block_start).any(|at| {
            let tag = &text[at + block_start.len()..];
            let dashes = tag.iter().take_while(|b| **b == b'-').count();
            let tag = tag[dashes..].trim_ascii_start();
            tag.strip_prefix(b"component")
                .is_some_and(|rest| rest.first().is_some_and(u8::is_ascii_whitespace))
        })
}

/// The templates the renderer of a whole run holds: the shared ones and the patches.
/// File templates are compiled `TEMPLATES_PER_CHUNK` at a time where they are rendered.
/// Only these are checked for UTF-8 here (rendering checks the others).
pub fn shared_sources(blueprint: &Blueprint) -> Result<Vec<(String, &str)>> {
    let mut sources = Vec::new();
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree.iter().filter(|(path, _)| path.ends_with(".tera")) {
            let name = format!("{prefix}{path}");
            if !is_shared(&name, bytes, &blueprint.delimiters_for(&name).block[0]) {
                continue;
            }
            let text = std::str::from_utf8(bytes).map_err(|_| {
                Error::blueprint(format!("{name}: a .tera template must be UTF-8 text"))
            })?;
            sources.push((name, text));
        }
    }
    for (path, bytes) in blueprint.patches.values().flatten() {
        let text = std::str::from_utf8(bytes)
            .map_err(|_| Error::blueprint(format!("{path}: a patch must be UTF-8 text")))?;
        sources.push((path.clone(), text));
    }
    Ok(sources)
}

/// The file templates (not shared, not plain) that only Tera renders.
pub fn file_templates_for_tera<'b>(
    blueprint: &'b Blueprint,
    known_plain: Option<&HashSet<String>>,
) -> Result<Vec<(String, &'b str)>> {
    let mut templates = Vec::new();
    for (prefix, tree) in blueprint.template_trees() {
        for (path, bytes) in tree.iter().filter(|(path, _)| path.ends_with(".tera")) {
            let name = format!("{prefix}{path}");
            if known_plain.is_some_and(|plain| plain.contains(&name)) {
                continue;
            }
            let delimiters = blueprint.delimiters_for(&name);
            if is_shared(&name, bytes, &delimiters.block[0]) {
                continue;
            }
            let text = std::str::from_utf8(bytes).map_err(|_| {
                Error::blueprint(format!("{name}: a .tera template must be UTF-8 text"))
            })?;
            if !crate::render::is_plain(text, &delimiters) {
                templates.push((name, text));
            }
        }
    }
    Ok(templates)
}

/// How many templates one engine compiles at a time. Tera's compiled form of a template is
/// about 6x its text (12 KB for a 1.8 KB file, allocator overhead included): compiled all at
/// once, 2,000 templates held 24 MB (BENCHMARKS.md); a chunk is compiled, used and dropped.
pub const TEMPLATES_PER_CHUNK: usize = 200;

/// One engine for `chunk` (blueprint-relative names and texts) and the `shared` templates.
pub fn compile_chunk(
    blueprint: &Blueprint,
    chunk: &[(String, &str)],
    shared: &[(String, &str)],
) -> Result<Renderer> {
    let default = blueprint.manifest.delimiters.clone().unwrap_or_default();
    let names: BTreeSet<&str> = chunk.iter().map(|(name, _)| name.as_str()).collect();
    let others = shared
        .iter()
        .filter(|(name, _)| !names.contains(name.as_str()));
    Renderer::new(
        &default,
        chunk
            .iter()
            .chain(others)
            .map(|(name, text)| crate::render::Source {
                name,
                text,
                delimiters: blueprint.delimiters_for(name),
            }),
    )
}

/// Every blueprint-relative name whose path may be a template (for `Renderer::add_paths`).
pub fn path_names(blueprint: &Blueprint) -> impl Iterator<Item = String> + '_ {
    blueprint.trees.iter().flat_map(|tree| {
        tree.files
            .keys()
            .map(move |path| format!("{}{path}", tree.prefix))
    })
}

/// Renders the repo-wide files once and the addon files once per selected addon, in
/// `scope` (the context, converted for Tera once; each addon's scope adds only `addon`).
pub fn build(
    blueprint: &Blueprint,
    renderer: &Renderer,
    scope: &Scope,
    addons: &[Json],
) -> Result<Plan> {
    let mut plan = Plan::default();
    // One environment: an environment's tree renders once, like the repo's.
    render_trees(&mut plan, blueprint, renderer, scope, addons, &|_| true)?;
    apply_addon_patches(&mut plan, renderer, scope, addons, &|_| true)?;
    Ok(plan)
}

/// Renders into `plan` the trees whose scope `which` admits: once in `scope`, or once per
/// addon of `addons` for per-addon trees. A path rendered twice is an error.
pub fn render_trees(
    plan: &mut Plan,
    blueprint: &Blueprint,
    renderer: &Renderer,
    scope: &Scope,
    addons: &[Json],
    which: &dyn Fn(TreeScope) -> bool,
) -> Result<()> {
    let files = Files {
        blueprint,
        renderer,
        shared: Default::default(),
    };
    let per_addon = blueprint
        .trees
        .iter()
        .any(|t| which(t.scope) && t.scope.per_addon());
    let scopes: Vec<(Option<&Json>, Scope)> = match per_addon {
        true => addons
            .iter()
            .enumerate()
            .map(|(index, a)| (Some(a), scope.with_addon(index, a)))
            .collect(),
        false => Vec::new(),
    };
    let once = [(None, scope.clone())];
    for tree in blueprint.trees.iter().filter(|t| which(t.scope)) {
        let scopes: &[(Option<&Json>, Scope)] = if tree.scope.per_addon() {
            &scopes
        } else {
            &once
        };
        files.render_tree(plan, &tree.prefix, &tree.files, scopes)?;
    }
    Ok(())
}

/// Each addon of `addons`' catalog `patches`, in `scope`, over the files of the plan that
/// `within` admits (one environment's, or the shared ones): an environment that does not
/// run an addon gets none of its patches. A patch naming no file of the whole plan is an
/// error wherever it would apply.
pub fn apply_addon_patches(
    plan: &mut Plan,
    renderer: &Renderer,
    scope: &Scope,
    addons: &[Json],
    within: &dyn Fn(&RelPath) -> bool,
) -> Result<()> {
    for (index, addon) in addons.iter().enumerate() {
        let scope = scope.with_addon(index, addon);
        apply_entry_patches(plan, renderer, &scope, addon, within)?;
    }
    Ok(())
}

/// A catalog entry's `patches`: `[{file, patch}]`, each applied to the files rendered from
/// the blueprint file `file` (an output path, `env-files/envs/[[ environment ]]/2-kops/values.yaml`); `patch` is a
/// template over the answers and `addon`, then a merge patch as for `.patch.yaml` files.
fn apply_entry_patches(
    plan: &mut Plan,
    renderer: &Renderer,
    scope: &Scope,
    addon: &Json,
    within: &dyn Fn(&RelPath) -> bool,
) -> Result<()> {
    let Some(patches) = addon.get("patches").and_then(Json::as_array) else {
        return Ok(());
    };
    let name = addon.get("name").and_then(Json::as_str).unwrap_or_default();
    let entry_file = format!("addons/{name}.yaml");
    let fail = |m: String| Error::Located(Located::new(entry_file.clone(), (1, 1), m));
    for item in patches {
        let (Some(file), Some(patch)) = (
            item.get("file").and_then(Json::as_str),
            item.get("patch").and_then(Json::as_str),
        ) else {
            return Err(fail(
                "patches: each item needs `file` (a blueprint output path) and `patch` (YAML text)"
                    .into(),
            ));
        };
        let targets: Vec<_> = plan
            .sources
            .iter()
            .filter(|(_, source)| overrides::output_of(source) == file)
            .map(|(path, _)| path.clone())
            .collect();
        if targets.is_empty() {
            return Err(fail(format!(
                "patches: `{file}` is not a file this blueprint writes{}",
                crate::suggest::did_you_mean(
                    file,
                    plan.sources.values().map(|s| overrides::output_of(s))
                )
            )));
        }
        let targets: Vec<_> = targets.into_iter().filter(|path| within(path)).collect();
        if targets.is_empty() {
            continue;
        }
        let rendered =
            renderer.render_str_in(&format!("{entry_file}: patches of `{file}`"), patch, scope)?;
        for path in targets {
            let Some(bytes) = plan.files.get_mut(&path) else {
                continue;
            };
            let text = String::from_utf8_lossy(bytes).into_owned();
            let patched = overrides::apply(&text, &rendered)
                .map_err(|m| fail(format!("patches `{file}`: {}", m.message)))?;
            *bytes = patched.into_bytes();
        }
    }
    Ok(())
}

/// What rendering a blueprint file needs besides the file and its scope.
struct Files<'a> {
    blueprint: &'a Blueprint,
    /// Paths, patches and the shared templates, compiled once for the run.
    renderer: &'a Renderer,
    /// The templates every chunk's engine holds besides its own: found when a chunk is
    /// compiled (a blueprint whose renderer holds its templates never compiles one).
    shared: std::cell::OnceCell<Vec<(String, &'a str)>>,
}

/// One blueprint file rendered: its repo path, bytes and blueprint-relative source.
struct RenderedFile {
    path: RelPath,
    contents: Vec<u8>,
    source: String,
}

/// A rendered file, or None when it renders away.
type Rendered = Result<Option<RenderedFile>>;

impl<'a> Files<'a> {
    fn shared(&self) -> Result<&[(String, &'a str)]> {
        if self.shared.get().is_none() {
            let _ = self.shared.set(shared_sources(self.blueprint)?);
        }
        Ok(self.shared.get().map(Vec::as_slice).unwrap_or_default())
    }

    /// Renders `tree` once per scope (once for the repo, once per addon under
    /// `addon-files/`), a chunk of templates at a time: each chunk is compiled, rendered in
    /// every scope and dropped, so the run never holds every compiled template at once.
    /// Within a scope, files render in tree order; one thread (a second render thread
    /// measured no faster at 2,000 files and cost a malloc arena, BENCHMARKS.md). A repo's
    /// environments are what runs on every core (`generate`, round three e).
    fn render_tree(
        &self,
        plan: &mut Plan,
        prefix: &str,
        tree: &FileTree,
        scopes: &[(Option<&Json>, Scope)],
    ) -> Result<()> {
        let entries: Vec<(&String, &Vec<u8>)> = tree.iter().collect();
        for chunk in entries.chunks(TEMPLATES_PER_CHUNK) {
            // Plain templates render without Tera (`render::plain`); the others of the
            // chunk share one engine, built only when there is one and the run's renderer
            // does not hold them all.
            let mut templates = Vec::new();
            let file_templates = chunk
                .iter()
                .filter(|(path, _)| path.ends_with(".tera"))
                .filter(|_| self.renderer.file_templates() != FileTemplates::Held);
            for (path, bytes) in file_templates {
                let text = std::str::from_utf8(bytes).map_err(|_| {
                    Error::blueprint(format!(
                        "{prefix}{path}: a .tera template must be UTF-8 text"
                    ))
                })?;
                let name = format!("{prefix}{path}");
                let compiled_for_the_run = self.renderer.has(&name);
                if !compiled_for_the_run
                    && !crate::render::is_plain(text, &self.blueprint.delimiters_for(&name))
                {
                    templates.push((name, text));
                }
            }
            let compiled = if templates.is_empty() {
                None
            } else {
                Some(compile_chunk(self.blueprint, &templates, self.shared()?)?)
            };
            for (addon, scope) in scopes {
                for (path, bytes) in chunk {
                    let rendered = self.render_one(compiled.as_ref(), prefix, path, bytes, scope);
                    let file = match (rendered, addon) {
                        (Err(e), Some(addon)) => return Err(for_addon(e, addon)),
                        (rendered, _) => rendered?,
                    };
                    let Some(file) = file else { continue };
                    if self.blueprint.executable.contains(&file.source) {
                        plan.executable.insert(file.path.clone());
                    }
                    if let Some(first) = plan.sources.get(&file.path) {
                        // A chart added with --chart is named by the user: the clash is
                        // theirs to fix, not the blueprint's.
                        let custom =
                            addon.filter(|a| a.get("custom").and_then(Json::as_bool) == Some(true));
                        if let Some(name) =
                            custom.and_then(|a| a.get("name")).and_then(Json::as_str)
                        {
                            return Err(Error::input(Problem::new(format!("addon name `{name}`: its files would be written at `{}`, which the blueprint's own `{first}` already writes",
                                file.path.as_str())).fix("give the chart another addon name (add-addon NAME --chart …)")));
                        }
                        let addon = addon
                            .and_then(|a| a.get("name"))
                            .and_then(Json::as_str)
                            .map(|n| format!(" (rendering addon `{n}`)"))
                            .unwrap_or_default();
                        return Err(Error::Located(Located::new(
                            file.source.clone(),
                            (1, 1),
                            format!(
                                "renders `{}`, which `{first}` renders too{addon}; make the paths distinct",
                                file.path.as_str()
                            ),
                        )));
                    }
                    plan.sources.insert(file.path.clone(), file.source);
                    plan.add(file.path, file.contents)?;
                }
            }
        }
        Ok(())
    }

    /// One blueprint file: its rendered path and contents (patched), or None when it is
    /// conditional and renders away (an empty path segment, or an empty template).
    fn render_one(
        &self,
        compiled: Option<&Renderer>,
        prefix: &str,
        source_path: &str,
        bytes: &[u8],
        scope: &Scope,
    ) -> Rendered {
        let rendered_path = self.renderer.render_path(prefix, source_path, scope)?;
        let source = format!("{prefix}{source_path}");
        if rendered_path.starts_with('/') {
            return Err(Error::blueprint(format!(
                "{source}: rendered path `{rendered_path}` is absolute"
            )));
        }
        // A segment that renders empty makes the file conditional.
        if rendered_path
            .split('/')
            .any(|s| s.trim().is_empty() || s == ".tera")
        {
            return Ok(None);
        }
        let (path, contents) = match rendered_path.strip_suffix(".tera") {
            Some(stripped) => {
                let text = self.render_template(compiled, &source, bytes, scope)?;
                if text.trim().is_empty() {
                    return Ok(None);
                }
                (stripped.to_string(), text.into_bytes())
            }
            None => (rendered_path, bytes.to_vec()),
        };
        let contents = self.patched(&source, contents, scope)?;
        let path = RelPath::new(&path).map_err(|m| {
            // The template's own text cannot make `..`: an answer it reads did.
            if source_path.contains("..") {
                Error::blueprint(format!("{source}: rendered path {m}"))
            } else {
                Error::input(format!(
                    "{source}: rendered path {m}: an answer it reads holds a `..` or `.` path segment; answer a plain name"
                ))
            }
        })?;
        if let Some(rule) = crate::git_paths::content_rule(path.as_str(), &contents) {
            return Err(Error::blueprint(format!(
                "{source}: git would reject the rendered {}: {rule}",
                path.as_str()
            )));
        }
        Ok(Some(RenderedFile {
            path,
            contents,
            source,
        }))
    }

    /// A file template rendered: plain ones here, the others by the chunk's engine. A
    /// plain template whose values only Tera can write is compiled alone, so Tera renders
    /// it or reports its error at its own file.
    fn render_template(
        &self,
        compiled: Option<&Renderer>,
        name: &str,
        bytes: &[u8],
        scope: &Scope,
    ) -> Result<String> {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            Error::blueprint(format!("{name}: a .tera template must be UTF-8 text"))
        })?;
        let delimiters = self.blueprint.delimiters_for(name);
        if let Some(text) = scope.render_plain(text, &delimiters) {
            return Ok(text);
        }
        match compiled {
            _ if self.renderer.has(name) => self.renderer.render_in(name, scope),
            Some(renderer) if renderer.has(name) => renderer.render_in(name, scope),
            _ => compile_chunk(self.blueprint, &[(name.to_string(), text)], self.shared()?)?
                .render_in(name, scope),
        }
    }

    /// The file with the patches of every layer applied in order (base layers first).
    fn patched(&self, source: &str, contents: Vec<u8>, scope: &Scope) -> Result<Vec<u8>> {
        let Some(patches) = self.blueprint.patches.get(overrides::output_of(source)) else {
            return Ok(contents);
        };
        let mut text = String::from_utf8(contents).map_err(|_| {
            Error::blueprint(format!("{source}: a patched file must be UTF-8 text"))
        })?;
        for (patch, _) in patches {
            let rendered = self.renderer.render_in(patch, scope)?;
            text = crate::overrides::apply(&text, &rendered).map_err(|e| {
                Error::Located(Located::new(
                    patch.clone(),
                    e.at.unwrap_or((1, 1)),
                    e.message,
                ))
            })?;
        }
        Ok(text.into_bytes())
    }
}

/// An addon file's error names the catalog entry it was rendering.
fn for_addon(err: Error, addon: &Json) -> Error {
    let name = addon.get("name").and_then(Json::as_str).unwrap_or_default();
    match err {
        Error::Located(mut at) => {
            at.message = format!("{} (rendering addon `{name}`)", at.message);
            Error::Located(at)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blueprint on disk with `n` templated files under `files/` (more than one chunk),
    /// `broken` ones reading an undefined name, and `extra` files as given.
    fn big_blueprint(n: usize, broken: &[usize], extra: &[(&str, &str)]) -> tempfile::TempDir {
        let mut files: Vec<(String, String)> = vec![(
            "blueprint.yaml".into(),
            "name: big\nversion: 0.1.0\nquestions:\n  - key: name\n    prompt: name\n    type: string\n    default: acme\n".into(),
        )];
        for i in 0..n {
            let text = if broken.contains(&i) {
                format!("[[ missing_{i} ]]")
            } else {
                format!("n: [[ name ]]-{i}\n")
            };
            files.push((
                format!("files/d{}/[[ name ]]-{i:04}.yaml.tera", i % 7),
                text,
            ));
        }
        files.extend(extra.iter().map(|(p, t)| (p.to_string(), t.to_string())));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        crate::tree::temp_dir_with(&files)
    }

    fn render(dir: &tempfile::TempDir) -> Result<Plan> {
        let blueprint = Blueprint::load(&dir.path().display().to_string()).expect("loads");
        let renderer = crate::generate::renderer_for(&blueprint).expect("compiles");
        build(
            &blueprint,
            &renderer,
            &Scope::new(&serde_json::json!({"name": "acme"})),
            &[],
        )
    }

    #[test]
    fn a_large_tree_renders_every_file_in_order() {
        let n = 3 * TEMPLATES_PER_CHUNK;
        let plan = render(&big_blueprint(n, &[], &[])).expect("renders");
        assert_eq!(plan.files.len(), n);
        let path = RelPath::new("d3/acme-0010.yaml").expect("path");
        assert_eq!(plan.files[&path], b"n: acme-10\n");
    }

    #[test]
    fn a_large_tree_reports_its_first_error() {
        // In tree order d0/…-0014 comes before d6/…-0006.
        let err = render(&big_blueprint(3 * TEMPLATES_PER_CHUNK, &[6, 14], &[]))
            .expect_err("undefined variable");
        assert!(err.to_string().contains("missing_14"), "{err}");
    }

    #[test]
    fn every_chunk_sees_partials_and_components_of_any_file() {
        // `a-first` sorts into the first chunk, `zz-last` into the last.
        let extra = [
            ("partials/label.tera", "label-[[ name ]]"),
            (
                "files/a-first.yaml.tera",
                "[% component tag(v) %]tag-[[ v ]][% endcomponent tag %]first\n",
            ),
            (
                "files/zz-last.yaml.tera",
                "[% include \"partials/label.tera\" %] [[<tag v={name} />]]\n",
            ),
        ];
        let plan = render(&big_blueprint(2 * TEMPLATES_PER_CHUNK, &[], &extra)).expect("renders");
        let last = RelPath::new("zz-last.yaml").expect("path");
        assert_eq!(plan.files[&last], b"label-acme tag-acme\n");
    }

    #[test]
    fn only_partials_and_component_definitions_are_shared() {
        assert!(is_shared("partials/x.tera", b"anything", "[%"));
        assert!(is_shared(
            "files/a.tera",
            b"x\n[% component tag(v) %]",
            "[%"
        ));
        assert!(is_shared("files/a.tera", b"[%- component tag(v) -%]", "[%"));
        assert!(is_shared("files/a.tera", b"{%component tag(v) %}", "{%"));
        // Kubernetes labels and closing tags are not definitions.
        assert!(!is_shared(
            "files/a.tera",
            b"app.kubernetes.io/component: web",
            "[%"
        ));
        assert!(!is_shared("files/a.tera", b"[% endcomponent tag %]", "[%"));
        assert!(!is_shared("files/a.tera", b"[% components_list %]", "[%"));
    }

    #[test]
    fn relpath_refuses_escapes() {
        assert!(RelPath::new("a/b.yaml").is_ok());
        for bad in ["../x", "/etc/x", "a//b", "a/./b", ".git/config"] {
            assert!(RelPath::new(bad).is_err(), "{bad}");
        }
    }
}

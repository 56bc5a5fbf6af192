//! The Tera engines of a run: one for what the answers render
//! (`generate::renderer_for_answers`), one for the file templates
//! (`generate::file_templates`, adopted into it), each per delimiter set. Delimiters are
//! moved to `[[ ]]`, `[% %]` and `[# #]` so Go templates, Helm, GitHub Actions and
//! Flux/Terraform `${VAR}` pass through untouched. Undefined variables are errors. Pure:
//! strings in, strings out.
//!
//! Hot path: templates and templated paths are compiled once, when the renderer is built;
//! the context is converted from JSON once per run into a `Scope` (Tera values are
//! `Arc`-backed, so a per-addon scope is a cheap clone plus one insert).
use std::collections::HashMap;

use serde_json::Value as Json;
use tera::{Context, Kwargs, State, Tera, TeraResult, Value};

use crate::manifest::Delimiters;

use crate::error::{Error, Located, Result};

mod plain;
pub use plain::{delimiter_positions, is_plain, variables as plain_variables};

pub struct Renderer {
    /// One engine per delimiter set; the first is the blueprint's default.
    engines: Vec<(Delimiters, Tera)>,
    /// Template name → its engine (an index into `engines`).
    engine_of: HashMap<String, usize>,
    /// Where the file templates that need Tera are compiled.
    file_templates: FileTemplates,
    /// One-off templates (a condition, a default, a derived name) compiled once in the
    /// default engine, under `one_off_template(source)`: each environment's answers render
    /// the same ones again (`add_one_offs`).
    one_offs: std::collections::HashSet<String>,
}

/// The name a templated path is registered under (in the default engine).
fn path_template(name: &str) -> String {
    format!("path:{name}")
}

/// The name a one-off template is registered under (in the default engine).
fn one_off_template(source: &str) -> String {
    format!("one-off:{source}")
}

/// Where a renderer's file templates that need Tera (not plain) are compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileTemplates {
    /// Not yet (`generate::renderer_for_answers`): adopted before rendering
    /// (`generate::gather_while_compiling`), else compiled where they are rendered.
    NotYet,
    /// Here, every one (`adopt_file_templates`): rendering compiles none.
    Held,
    /// More than one chunk holds: where they are rendered, a chunk at a time.
    InChunks,
}

/// A render context, converted from JSON once.
#[derive(Clone, Default)]
pub struct Scope(Context);

impl Scope {
    pub fn new(json: &Json) -> Self {
        match json {
            Json::Object(map) => Self::of_map(map),
            _ => Scope::default(),
        }
    }

    /// The scope of an object's keys.
    pub fn of_map(map: &serde_json::Map<String, Json>) -> Self {
        let mut context = Context::new();
        for (key, value) in map {
            context.insert(key.clone(), value);
        }
        Scope(context)
    }

    /// `text` rendered here when it is plain (`render::plain`), else None: Tera must.
    pub fn render_plain(&self, text: &str, delimiters: &Delimiters) -> Option<String> {
        plain::render(text, delimiters, &self.0)
    }

    /// Sets `key` to `value`, converting only `value`.
    pub fn insert(&mut self, key: String, value: &Json) {
        self.0.insert(key, value);
    }

    /// This scope with one more variable (e.g. `addon`).
    pub fn with(&self, key: &'static str, value: &Json) -> Self {
        let mut context = self.0.clone();
        context.insert(key, value);
        Scope(context)
    }

    /// This scope with `field` of the `index`-th item of the array `key` set to `value`:
    /// only `value` is converted, the rest is shared (Tera's arrays and maps are behind an
    /// `Arc`). Unchanged when `key` has no such item or it is not a map.
    pub fn with_item_field(
        &self,
        key: &'static str,
        index: usize,
        field: &str,
        value: &Json,
    ) -> Self {
        let Some(items) = self.0.get(key).and_then(Value::as_array) else {
            return self.clone();
        };
        let mut items = items.to_vec();
        let Some(mut item) = items.get(index).and_then(Value::as_map).cloned() else {
            return self.clone();
        };
        item.insert(field.to_string().into(), Value::from_serializable(value));
        items[index] = Value::from(item);
        let mut context = self.0.clone();
        context.insert_value(key, Value::from(items));
        Scope(context)
    }

    /// This scope with `addon` set to `addon`, which is the `index`-th of the scope's own
    /// `addons`: that item's Tera value is shared (its data is behind an `Arc`), not
    /// converted again. Converted when that item is another addon.
    pub fn with_addon(&self, index: usize, addon: &Json) -> Self {
        fn name(value: &Value) -> Option<&str> {
            value.get_from_path("name").and_then(Value::as_str)
        }
        let own = self
            .0
            .get("addons")
            .and_then(Value::as_array)
            .and_then(|addons| addons.get(index))
            .filter(|own| {
                name(own).is_some() && name(own) == addon.get("name").and_then(Json::as_str)
            });
        match own {
            Some(own) => {
                let mut context = self.0.clone();
                context.insert_value("addon", own.clone());
                Scope(context)
            }
            None => self.with("addon", addon),
        }
    }
}

/// A template to register: its name (blueprint-relative path), source and delimiters.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub delimiters: Delimiters,
}

impl Renderer {
    pub fn new<'a>(
        default: &Delimiters,
        templates: impl IntoIterator<Item = Source<'a>>,
    ) -> Result<Self> {
        let mut renderer = Renderer {
            engines: vec![(default.clone(), engine(default)?)],
            engine_of: HashMap::new(),
            file_templates: FileTemplates::NotYet,
            one_offs: Default::default(),
        };
        let mut groups: Vec<(Delimiters, Vec<(&str, &str)>)> = vec![(default.clone(), Vec::new())];
        for source in templates {
            match groups.iter_mut().find(|(d, _)| *d == source.delimiters) {
                Some((_, list)) => list.push((source.name, source.text)),
                None => groups.push((source.delimiters, vec![(source.name, source.text)])),
            }
        }
        for (delimiters, list) in groups {
            if renderer.engines.iter().all(|(d, _)| *d != delimiters) {
                renderer
                    .engines
                    .push((delimiters.clone(), engine(&delimiters)?));
            }
            if let Some(index) = renderer.engines.iter().position(|(d, _)| *d == delimiters) {
                for (name, _) in &list {
                    renderer.engine_of.insert((*name).to_string(), index);
                }
                let sources = list.clone();
                renderer.engines[index]
                    .1
                    .add_raw_templates(list)
                    .map_err(|e| {
                        // Tera reports an unclosed block at the end of input; the opening tag
                        // is what the author must find.
                        let failed = located(&e);
                        let unclosed = sources
                            .iter()
                            .filter(|(name, _)| failed.as_ref().is_some_and(|f| f.file == *name))
                            .find_map(|(name, text)| {
                                unclosed_block(text, &delimiters).map(|(line, col, message)| {
                                    Error::Located(Located::new(*name, (line, col), message))
                                })
                            });
                        unclosed.unwrap_or_else(|| template_error(&e))
                    })?;
            }
        }
        Ok(renderer)
    }

    /// Compiles the templated paths among `names` (blueprint-relative, e.g. `files/[[ x ]].yaml`)
    /// once, so rendering a path does not parse it again. One batch: Tera re-checks every
    /// template on each addition. If any path does not compile, none is kept, and
    /// `render_path` parses each where it is used and reports the error there.
    pub fn add_paths<'a>(&mut self, names: impl IntoIterator<Item = &'a str>) {
        let (delimiters, tera) = &mut self.engines[0];
        let paths: Vec<(String, &str)> = names
            .into_iter()
            .map(|name| (name, name.split_once('/').map_or(name, |(_, rest)| rest)))
            .filter(|(_, path)| is_template(delimiters, path) && !is_plain(path, delimiters))
            .map(|(name, path)| (path_template(name), path))
            .collect();
        let keys: Vec<String> = paths.iter().map(|(key, _)| key.clone()).collect();
        if tera.add_raw_templates(paths).is_ok() {
            self.engine_of.extend(keys.into_iter().map(|key| (key, 0)));
        }
    }

    /// Compiles once the one-off templates among `templates` and the conditions
    /// `conditions` (as `truth` renders them), so rendering one does not parse it again
    /// (parsing them once per environment was 5 % of a ten-environment `new`, BENCHMARKS.md
    /// round three e). One batch, as `add_paths`; if any does not compile, none is kept and
    /// each is parsed where it is used, which reports its error there.
    pub fn add_one_offs<'a>(
        &mut self,
        templates: impl IntoIterator<Item = &'a str>,
        conditions: impl IntoIterator<Item = &'a str>,
    ) {
        let conditions = conditions.into_iter().map(|c| self.condition(c));
        let sources: std::collections::BTreeSet<String> = templates
            .into_iter()
            .map(String::from)
            .chain(conditions)
            .filter(|source| is_template(&self.engines[0].0, source))
            .collect();
        let named = sources.iter().map(|s| (one_off_template(s), s.as_str()));
        if self.engines[0].1.add_raw_templates(named).is_ok() {
            self.one_offs.extend(sources);
        }
    }

    /// With the default delimiters and only `templates` (the unit tests' engine).
    #[cfg(test)]
    pub fn plain<'a>(templates: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let default = Delimiters::default();
        Self::new(
            &default,
            templates.into_iter().map(|(name, text)| Source {
                name,
                text,
                delimiters: default.clone(),
            }),
        )
    }

    pub fn render(&self, name: &str, context: &Json) -> Result<String> {
        self.render_in(name, &Scope::new(context))
    }

    /// Takes in the engines of `files` (`generate::file_templates`, every file template
    /// that needs Tera, compiled apart): its templates not already here render there from
    /// now on, and this renderer holds every file template.
    pub fn adopt_file_templates(&mut self, files: Renderer) {
        let offset = self.engines.len();
        for (name, index) in files.engine_of {
            self.engine_of.entry(name).or_insert(offset + index);
        }
        self.engines.extend(files.engines);
        self.file_templates = FileTemplates::Held;
    }

    /// Says its file templates are too many for one engine: compiled a chunk at a time.
    pub fn compile_file_templates_in_chunks(&mut self) {
        self.file_templates = FileTemplates::InChunks;
    }

    /// Where its file templates that need Tera are compiled.
    pub fn file_templates(&self) -> FileTemplates {
        self.file_templates
    }

    /// Whether `name` is one of its templates.
    pub fn has(&self, name: &str) -> bool {
        self.engine_of.contains_key(name)
    }

    /// Renders a registered template in a prepared scope.
    pub fn render_in(&self, name: &str, scope: &Scope) -> Result<String> {
        let index = *self
            .engine_of
            .get(name)
            .ok_or_else(|| Error::blueprint(format!("{name}: no such template")))?;
        let mut text = self.engines[index]
            .1
            .render(name, &scope.0)
            .map_err(|e| template_error(&e))?;
        // Rendering grows the buffer by doubling: a plan of 2,000 files held 3x its bytes.
        text.shrink_to_fit();
        Ok(text)
    }

    /// A one-off template (a default, a condition, a path), named for messages.
    pub fn render_str(&self, what: &str, source: &str, context: &Json) -> Result<String> {
        if !is_template(&self.engines[0].0, source) {
            return Ok(source.to_string());
        }
        self.render_str_in(what, source, &Scope::new(context))
    }

    /// `render_str` in a prepared scope.
    pub fn render_str_in(&self, what: &str, source: &str, scope: &Scope) -> Result<String> {
        let (delimiters, tera) = &self.engines[0];
        if !is_template(delimiters, source) {
            return Ok(source.to_string());
        }
        // Compiled once (`add_one_offs`); one that fails is rendered again below, which
        // reports its error as a one-off (its own text, not the registered name).
        if self.one_offs.contains(source)
            && let Ok(text) = tera.render(&one_off_template(source), &scope.0)
        {
            return Ok(text);
        }
        tera.render_str(source, &scope.0, false)
            .map_err(|e| match located(&e) {
                // A one-off has no file of its own: say which field it is and where in it.
                Some(at) => Error::blueprint(format!(
                    "{what} `{source}` does not render: column {}: {}",
                    at.column, at.message
                )),
                None => Error::blueprint(format!(
                    "{what} `{source}` does not render: {}",
                    flatten(&e)
                )),
            })
    }

    /// A path template (`files/[% if x %]dns.tf[% endif %].tera`): errors point into the
    /// file's own name, `name` being `prefix` + `path`. Uses the path compiled by
    /// `add_paths` when there is one, else parses it here.
    pub fn render_path(&self, prefix: &str, path: &str, scope: &Scope) -> Result<String> {
        let (delimiters, tera) = &self.engines[0];
        if !is_template(delimiters, path) {
            return Ok(path.to_string());
        }
        if let Some(rendered) = scope.render_plain(path, delimiters) {
            return Ok(rendered);
        }
        let name = format!("{prefix}{path}");
        let key = path_template(&name);
        let rendered = if self.engine_of.contains_key(&key) {
            tera.render(&key, &scope.0)
        } else {
            tera.render_str(path, &scope.0, false)
        };
        rendered.map_err(|e| match located(&e) {
            Some(at) => Error::Located(Located::new(
                name,
                (1, prefix.chars().count() + at.column),
                format!("in the file name: {}", at.message),
            )),
            None => Error::Located(Located::new(name, (1, 1), flatten(&e))),
        })
    }

    /// Evaluates a Tera expression as a condition.
    pub fn truth(&self, what: &str, expr: &str, context: &Json) -> Result<bool> {
        Ok(self.render_str(what, &self.condition(expr), context)? == "true")
    }

    /// `truth` in a prepared scope.
    pub fn truth_in(&self, what: &str, expr: &str, scope: &Scope) -> Result<bool> {
        Ok(self.render_str_in(what, &self.condition(expr), scope)? == "true")
    }

    /// Whether `text` has a tag of the default delimiters (else it renders as itself).
    pub fn is_template(&self, text: &str) -> bool {
        is_template(&self.engines[0].0, text)
    }

    /// The template `truth` renders for `expr`.
    fn condition(&self, expr: &str) -> String {
        let block = &self.engines[0].0.block;
        format!(
            "{} if {expr} {}true{} endif {}",
            block[0], block[1], block[0], block[1]
        )
    }

    /// The top-level variables each template reads (for `blueprint lint`).
    pub fn variables(&self, name: &str) -> Vec<String> {
        self.engines
            .iter()
            .find_map(|(_, t)| t.get_template_variables(name).ok())
            .map(|vars| vars.into_iter().map(String::from).collect())
            .unwrap_or_default()
    }
}

/// Reads the top-level variables of one-off templates (a default, a condition, a path),
/// reusing one engine: building an engine costs more than parsing a one-liner.
pub struct Scanner {
    tera: Tera,
}

impl Scanner {
    pub fn new(delimiters: &Delimiters) -> Result<Self> {
        Ok(Scanner {
            tera: engine(delimiters)?,
        })
    }

    /// The names `source` reads, or where it fails to parse (1-based line and column
    /// inside `source`, and why).
    pub fn variables(&mut self, source: &str) -> std::result::Result<Vec<String>, Located> {
        const NAME: &str = "one-off";
        self.tera
            .add_raw_template(NAME, source)
            .map_err(|e| located(&e).unwrap_or_else(|| Located::new(NAME, (1, 1), flatten(&e))))?;
        let mut names: Vec<String> = self
            .tera
            .get_template_variables(NAME)
            .map(|vars| vars.into_iter().map(String::from).collect())
            .unwrap_or_default();
        names.sort();
        Ok(names)
    }
}

/// Whether a string has anything for Tera to do (else it is used as it is).
fn is_template(delimiters: &Delimiters, text: &str) -> bool {
    text.contains(delimiters.variable[0].as_str()) || text.contains(delimiters.block[0].as_str())
}

fn engine(delimiters: &Delimiters) -> Result<Tera> {
    let mut tera = Tera::default();
    tera.set_delimiters(tera::Delimiters {
        block_start: delimiters.block[0].clone().into(),
        block_end: delimiters.block[1].clone().into(),
        variable_start: delimiters.variable[0].clone().into(),
        variable_end: delimiters.variable[1].clone().into(),
        comment_start: delimiters.comment[0].clone().into(),
        comment_end: delimiters.comment[1].clone().into(),
    })
    .map_err(|e| Error::blueprint(format!("delimiters: {e}")))?;
    tera.autoescape_on(Vec::<&'static str>::new());
    tera.register_filter("to_yaml", to_yaml);
    tera.register_filter("to_json", to_json);
    tera.register_filter("to_hcl", to_hcl);
    tera.register_filter("upper_snake", |s: &str, _: Kwargs, _: &State| {
        upper_snake(s)
    });
    // `aws_name(max=N)`: a name at most N long, unique by construction (`aws_name`).
    tera.register_filter("aws_name", |s: &str, kwargs: Kwargs, _: &State| {
        let max = kwargs.must_get::<usize>("max")?;
        aws_name(s, max).ok_or_else(|| {
            tera::Error::message(format!("aws_name: max={max} leaves no room for the hash"))
        })
    });
    // `is matching(pat=REGEX)`: Tera 2 has no regex test; checks and defaults need one.
    // Each is matched once: compiled as a question's pattern is (`crate::pattern`).
    tera.register_test("matching", |s: &str, kwargs: Kwargs, _: &State| {
        let pattern = kwargs.must_get::<&str>("pat")?;
        crate::pattern::is_match(pattern, s)
            .map_err(|e| tera::Error::message(format!("matching: bad pattern: {e}")))
    });
    Ok(tera)
}

/// A Tera error as a blueprint error: at its template's file, line and column when Tera
/// knows them (syntax and rendering errors).
pub fn template_error(err: &tera::Error) -> Error {
    match located(err) {
        Some(at) => Error::Located(at),
        None => Error::blueprint(flatten(err)),
    }
}

/// The place and message of a syntax or rendering error, from Tera's structured report.
/// Errors met inside a filter carry the filter's message as their source.
pub fn located(err: &tera::Error) -> Option<Located> {
    match err.kind() {
        tera::ErrorKind::SyntaxError(report) | tera::ErrorKind::RenderingError(report) => {
            let span = report.span();
            Some(Located::new(
                report.filename(),
                (span.start_line.max(1), span.start_col + 1),
                report
                    .message()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
            ))
        }
        _ => None,
    }
}

/// The innermost block tag of `text` that is never closed (`[% if x %]` without its
/// `[% endif %]`), as its line, column and a message naming the missing tag.
pub fn unclosed_block(text: &str, delimiters: &Delimiters) -> Option<(usize, usize, String)> {
    const OPENERS: &[&str] = &["if", "for", "macro", "filter", "block", "raw"];
    let [open, close] = &delimiters.block;
    let mut stack: Vec<(&str, usize, &str)> = Vec::new();
    let mut rest = 0;
    while let Some(start) = text[rest..].find(open.as_str()).map(|i| i + rest) {
        let inner_start = start + open.len();
        let Some(end) = text[inner_start..]
            .find(close.as_str())
            .map(|i| i + inner_start)
        else {
            break;
        };
        rest = end + close.len();
        let tag = text[inner_start..end].trim_matches(|c: char| c == '-' || c.is_whitespace());
        let word = tag.split_whitespace().next().unwrap_or("");
        let in_raw = stack.last().is_some_and(|(w, _, _)| *w == "raw");
        if in_raw && word != "endraw" {
            continue;
        }
        if OPENERS.contains(&word) {
            stack.push((word, start, &text[start..rest]));
        } else if let Some(opened) = word.strip_prefix("end")
            && stack.last().is_some_and(|(w, _, _)| *w == opened)
        {
            stack.pop();
        }
    }
    let (word, at, tag) = stack.pop()?;
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((
        line,
        col,
        format!("`{tag}` is never closed: add `{open} end{word} {close}` where its block ends"),
    ))
}

/// Tera's reports span lines (`error: MSG` / `--> FILE:LINE:COL` / the source line); an
/// error message reads better as one line: `FILE:LINE:COL: MSG`.
pub fn flatten(err: &tera::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        text.push('\n');
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    let mut location = None;
    let mut messages = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(at) = line.strip_prefix("--> ") {
            location.get_or_insert_with(|| at.to_string());
        } else if let Some(message) = line.strip_prefix("error: ") {
            messages.push(message.to_string());
        } else if !line.is_empty()
            && !line.starts_with('|')
            && !line.contains(" | ")
            && !line.starts_with("note:")
        {
            messages.push(line.to_string());
        }
    }
    let message = messages.join(": ");
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    match location {
        Some(at) => format!("{at}: {message}"),
        None => message,
    }
}

/// Tera hands a filter an undefined value silently (a misspelt field reads as undefined);
/// ours refuse it so a typo never ships as `null`.
fn json_of(value: &Value) -> TeraResult<Json> {
    if value.is_undefined() {
        return Err(tera::Error::message(
            "the value is undefined (a misspelt variable or field?); an optional field needs `x | default(value=...)` or `if x is defined`",
        ));
    }
    serde_json::to_value(value).map_err(|e| tera::Error::message(e.to_string()))
}

fn to_yaml(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    let text = crate::yaml::to_string(&json_of(&value)?)
        .map_err(|e| tera::Error::message(e.to_string()))?;
    Ok(quote_yaml11_booleans(text.trim_end()))
}

/// The YAML emitter (`yaml::to_string`) writes the strings `on`, `off`, `yes`, `no`, `y`,
/// `n` plain (YAML 1.2 reads them as strings, as Flux does), but YAML 1.1 tools (kubectl,
/// PyYAML, yamllint) read them as booleans: such a plain scalar is quoted. It writes real booleans as
/// `true`/`false`, so a plain one of these words is always a string. Lines inside a
/// block scalar are left alone.
fn quote_yaml11_booleans(text: &str) -> String {
    const WORDS: [&str; 18] = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF", "YeS", "oN",
    ];
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut block: Option<usize> = None;
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(depth) = block {
            if line.trim().is_empty() || indent(line) > depth {
                out.push(line.to_string());
                continue;
            }
            block = None;
        }
        let trimmed = line.trim_end();
        if trimmed.ends_with('|')
            || trimmed.ends_with("|-")
            || trimmed.ends_with("|+")
            || trimmed.ends_with('>')
            || trimmed.ends_with(">-")
        {
            block = Some(indent(line));
        }
        let split = trimmed.rfind(": ").map(|at| at + 2).or_else(|| {
            trimmed
                .trim_start()
                .starts_with("- ")
                .then(|| indent(line) + 2)
        });
        match split {
            Some(at) if WORDS.contains(&&trimmed[at..]) => {
                out.push(format!("{}'{}'", &trimmed[..at], &trimmed[at..]));
            }
            _ => out.push(line.to_string()),
        }
    }
    out.join("\n")
}

fn to_json(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    serde_json::to_string(&json_of(&value)?).map_err(|e| tera::Error::message(e.to_string()))
}

fn to_hcl(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    let mut out = String::new();
    write_hcl(&json_of(&value)?, 0, &mut out);
    Ok(out)
}

/// A Terraform literal. Strings keep `${...}` as interpolation; other `"` and `\` are escaped.
/// Written straight into `out`: only a map's single-line values are written apart first
/// (their width decides the alignment), not every nested value at every depth (the HCL of
/// the addons' values was a tenth of a ten-environment render, BENCHMARKS.md, round three e).
pub fn write_hcl(value: &Json, depth: usize, out: &mut String) {
    match value {
        Json::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for item in items {
                indent(depth + 1, out);
                write_hcl(item, depth + 1, out);
                out.push_str(",\n");
            }
            indent(depth, out);
            out.push(']');
        }
        Json::Object(map) if !map.is_empty() => write_hcl_map(map, depth, out),
        _ => out.push_str(&hcl_inline(value).unwrap_or_default()),
    }
}

/// `depth` levels of two spaces.
fn indent(depth: usize, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// The text of a value that `write_hcl` writes without nesting (a scalar, an empty list or
/// map); None for the others, which span lines.
fn hcl_inline(value: &Json) -> Option<String> {
    match value {
        Json::Null => Some("null".into()),
        Json::Bool(b) => Some(b.to_string()),
        Json::Number(n) => Some(n.to_string()),
        Json::String(s) => Some(hcl_string(s)),
        Json::Array(items) if items.is_empty() => Some("[]".into()),
        Json::Object(map) if map.is_empty() => Some("{}".into()),
        Json::Array(_) | Json::Object(_) => None,
    }
}

/// A non-empty map: as `terraform fmt` does, `=` aligned over each run of single-line
/// entries; an entry whose value spans lines stands alone.
fn write_hcl_map(map: &serde_json::Map<String, Json>, depth: usize, out: &mut String) {
    let entries: Vec<(std::borrow::Cow<str>, &Json, Option<String>)> = map
        .iter()
        .map(|(k, v)| {
            let key = match is_identifier(k) {
                true => std::borrow::Cow::Borrowed(k.as_str()),
                false => std::borrow::Cow::Owned(hcl_string(k)),
            };
            (key, v, hcl_inline(v))
        })
        .collect();
    let single_line = |i: usize| entries[i].2.as_ref().is_some_and(|t| !t.contains('\n'));
    out.push_str("{\n");
    let mut start = 0;
    while start < entries.len() {
        let mut end = start + 1;
        if single_line(start) {
            while end < entries.len() && single_line(end) {
                end += 1;
            }
        }
        let width = entries[start..end]
            .iter()
            .map(|(k, _, _)| k.chars().count())
            .max()
            .unwrap_or(0);
        for (key, value, inline) in &entries[start..end] {
            indent(depth + 1, out);
            out.push_str(key);
            for _ in key.chars().count()..width {
                out.push(' ');
            }
            out.push_str(" = ");
            match inline {
                Some(text) => out.push_str(text),
                None => write_hcl(value, depth + 1, out),
            }
            out.push('\n');
        }
        start = end;
    }
    indent(depth, out);
    out.push('}');
}

/// `external-dns` → `EXTERNAL_DNS`: a name as an environment-variable or map key.
/// The characters of the hash `aws_name` appends, with its `-`.
pub const AWS_NAME_HASH: usize = 7;

/// `name` when it fits in `max` characters; else its first `max - 7` characters (no
/// trailing `-`), `-` and the first 6 hex digits of its SHA-1. Two names that differ keep
/// differing once shortened (unlike a cut, which gives every long name with one beginning
/// the same result), and a name that fits stays as it was. None when `max` leaves no room.
pub fn aws_name(name: &str, max: usize) -> Option<String> {
    use sha1::{Digest, Sha1};
    if name.chars().count() <= max {
        return Some(name.to_string());
    }
    let keep = max.checked_sub(AWS_NAME_HASH).filter(|k| *k > 0)?;
    let head: String = name.chars().take(keep).collect();
    let digest: [u8; 20] = Sha1::digest(name.as_bytes()).into();
    let hex: String = digest[..3].iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("{}-{hex}", head.trim_end_matches('-')))
}

fn upper_snake(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn hcl_string(s: &str) -> String {
    let mut out = String::from("\"");
    let mut rest = s;
    while !rest.is_empty() {
        // Copy an interpolation `${ ... }` verbatim: its inside is an expression.
        if let Some(body) = rest.strip_prefix("${")
            && let Some(end) = body.find('}')
        {
            out.push_str("${");
            out.push_str(&body[..=end]);
            rest = &body[end + 1..];
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '%' if rest.starts_with("%{") => out.push_str("%%"),
            _ => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn unclosed_block_finds_the_innermost_open_tag() {
        let d = Delimiters::default();
        assert_eq!(unclosed_block("[% if a %]x[% endif %]", &d), None);
        assert_eq!(
            unclosed_block("[% for a in b %]\n[% if a %]x[% endif %]", &d),
            Some((
                1,
                1,
                "`[% for a in b %]` is never closed: add `[% endfor %]` where its block ends"
                    .into()
            ))
        );
        // A raw block hides the tags inside it.
        assert_eq!(unclosed_block("[% raw %][% if %][% endraw %]", &d), None);
        assert_eq!(
            unclosed_block("a\n  [%- if x -%]", &d).map(|(l, c, _)| (l, c)),
            Some((2, 3))
        );
    }
    #[test]
    fn yaml_1_1_boolean_words_are_quoted_outside_block_scalars() {
        let value = serde_json::json!({"a": "on", "b": true, "c": ["off", "x"], "d": "yes\non\n", "e": "onward"});
        let text =
            super::quote_yaml11_booleans(crate::yaml::to_string(&value).expect("yaml").trim_end());
        assert!(text.contains("a: 'on'"), "{text}");
        assert!(text.contains("b: true"), "{text}");
        assert!(text.contains("- 'off'"), "{text}");
        assert!(text.contains("e: onward"), "{text}");
        let back: serde_json::Value = crate::yaml::from_str(&text).expect("parses");
        assert_eq!(back, value);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn matching_tests_a_regex_and_names_a_bad_one() {
        let r = Renderer::plain([]).expect("an engine");
        let cidrs = "[% if x is matching(pat=\"^10\\\\.[0-9.]+/(8|1[6-9])$\") %]yes[% endif %]";
        for (x, expected) in [
            ("10.0.0.0/16", "yes"),
            ("10.0.0.0/12", ""),
            ("a10.0.0.0/8", ""),
        ] {
            let out = r
                .render_str("t", cidrs, &json!({ "x": x }))
                .expect("renders");
            assert_eq!(out, expected, "{x}");
        }
        let err = r
            .render_str(
                "t",
                "[% if x is matching(pat=\"(\") %]y[% endif %]",
                &json!({"x": "a"}),
            )
            .expect_err("a bad pattern");
        assert!(err.to_string().contains("matching: bad pattern"), "{err}");
    }

    #[test]
    fn aws_name_keeps_short_names_and_hashes_long_ones() {
        assert_eq!(aws_name("shop-prod", 38).as_deref(), Some("shop-prod"));
        let base = "a".repeat(37);
        let dev = aws_name(&format!("{base}-dev"), 38).expect("room for the hash");
        let prod = aws_name(&format!("{base}-prod"), 38).expect("room for the hash");
        assert_eq!(dev.len(), 38, "{dev}");
        assert!(prod.len() <= 38, "{prod}");
        assert_ne!(dev, prod, "a cut would give both the same name");
        assert_eq!(
            aws_name(&format!("{base}-dev"), 38).expect("room for the hash"),
            dev,
            "stable"
        );
        assert_eq!(aws_name("abcdefghij", 7), None);
    }

    #[test]
    fn aws_name_drops_a_dash_before_the_hash() {
        let name = aws_name("abcd-efgh-ijkl", 12).expect("room for the hash");
        assert!(name.starts_with("abcd-") && !name.contains("--"), "{name}");
        assert!(name.len() <= 12, "{name}");
    }

    #[test]
    fn upper_snake_makes_keys() {
        assert_eq!(upper_snake("external-dns"), "EXTERNAL_DNS");
    }

    #[test]
    fn hcl_keeps_interpolation_and_quotes_keys() {
        let mut out = String::new();
        write_hcl(
            &json!({"region": "${local.region}", "a.b/c": ["x\"y", 1, true]}),
            0,
            &mut out,
        );
        assert_eq!(
            out,
            "{\n  region = \"${local.region}\"\n  \"a.b/c\" = [\n    \"x\\\"y\",\n    1,\n    true,\n  ]\n}"
        );
    }

    /// `=` aligned over each run of single-line entries, at every depth; a value that spans
    /// lines (a non-empty list or map, or a string whose interpolation holds a newline)
    /// stands alone and ends the run.
    #[test]
    fn hcl_aligns_runs_of_single_line_entries_at_every_depth() {
        let mut out = String::new();
        let value = json!({
            "a": 1, "long_key": "x",
            "nested": {"b": [1, {"c": true, "ccc": null}], "dd": {}, "e": 2.5},
            "z": [], "s": "${a\nb}", "t": null, "uu": false
        });
        write_hcl(&value, 1, &mut out);
        assert_eq!(
            out,
            "{\n    a        = 1\n    long_key = \"x\"\n    nested = {\n      b = [\n        1,\n        {\n          c   = true\n          ccc = null\n        },\n      ]\n      dd = {}\n      e  = 2.5\n    }\n    z = []\n    s = \"${a\nb}\"\n    t  = null\n    uu = false\n  }"
        );
    }

    #[test]
    fn delimiters_leave_go_and_flux_syntax_alone() {
        let r = Renderer::plain([("t", "{{ .x }} ${VAR} ${{ y }} [[ name ]]")]).expect("parses");
        assert_eq!(
            r.render("t", &json!({"name": "n"})).expect("renders"),
            "{{ .x }} ${VAR} ${{ y }} n"
        );
    }

    #[test]
    fn undefined_values_are_errors_in_our_filters_too() {
        let r = Renderer::plain([("t", "a\n[[ tags.nope | to_json ]]\n[[ tags | to_hcl ]]")])
            .expect("parses");
        let err = r.render("t", &json!({"tags": {}})).expect_err("undefined");
        let Error::Located(at) = err else {
            panic!("not located: {err}")
        };
        assert_eq!((at.file.as_str(), at.line, at.column), ("t", 2, 16));
        assert!(
            at.message.starts_with("the value is undefined"),
            "{}",
            at.message
        );
    }

    #[test]
    fn a_path_error_points_into_the_file_name_compiled_or_not() {
        let path = "[% if x.y %]a[% endif %]";
        let plain = Renderer::plain([]).expect("engine");
        let mut compiled = Renderer::plain([]).expect("engine");
        compiled.add_paths([format!("files/{path}").as_str()]);
        assert!(
            compiled
                .engine_of
                .contains_key(&path_template(&format!("files/{path}")))
        );
        for r in [plain, compiled] {
            let err = r
                .render_path("files/", path, &Scope::default())
                .expect_err("undefined");
            assert_eq!(
                err.to_string(),
                "blueprint files/[% if x.y %]a[% endif %]:1:13: in the file name: Variable `x` is not defined."
            );
        }
    }

    #[test]
    fn undefined_variables_are_errors() {
        let r = Renderer::plain([("t", "[[ nope ]]")]).expect("parses");
        let err = r.render("t", &json!({})).expect_err("undefined");
        assert!(err.to_string().contains("nope"), "{err}");
    }

    /// One-offs compiled once render as parsed ones do, and fail with the same message (the
    /// one-off's own text, not the name it is compiled under); one that does not compile
    /// keeps none of the batch, and is reported where it is used.
    #[test]
    fn compiled_one_offs_render_and_fail_as_parsed_ones() {
        let one_offs = [
            "[[ a ]]-[[ b | default(value=1) ]]",
            "[[ a.missing | to_json ]]",
        ];
        let conditions = ["a == \"x\" and b is defined", "nope"];
        let parsed = Renderer::plain([]).expect("an engine");
        let mut compiled = Renderer::plain([]).expect("an engine");
        compiled.add_one_offs(one_offs, conditions);
        assert_eq!(compiled.one_offs.len(), 4, "{:?}", compiled.one_offs);
        for context in [json!({"a": "x", "b": 2}), json!({"a": "y"})] {
            for source in one_offs {
                let render = |r: &Renderer| {
                    r.render_str("w", source, &context)
                        .map_err(|e| e.to_string())
                };
                assert_eq!(render(&compiled), render(&parsed), "{source}");
            }
            for expr in conditions {
                let truth = |r: &Renderer| r.truth("c", expr, &context).map_err(|e| e.to_string());
                assert_eq!(truth(&compiled), truth(&parsed), "{expr}");
            }
        }
        let err = compiled
            .render_str("w", one_offs[1], &json!({"a": "x"}))
            .expect_err("undefined");
        assert!(
            err.to_string()
                .contains("`[[ a.missing | to_json ]]` does not render"),
            "{err}"
        );
        let mut broken = Renderer::plain([]).expect("an engine");
        broken.add_one_offs(["[[ a ]]", "[[ a "], []);
        assert!(broken.one_offs.is_empty());
        assert_eq!(
            broken
                .render_str("w", "[[ a ]]", &json!({"a": 1}))
                .ok()
                .as_deref(),
            Some("1")
        );
        assert!(broken.render_str("w", "[[ a ", &json!({})).is_err());
    }
}

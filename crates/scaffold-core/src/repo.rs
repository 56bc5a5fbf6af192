//! A repo made by `scaffold new`: its record, the blueprint it renders with and its
//! rendering, so `add-addon`, `remove-addon` and `update` share one model. Reads the repo
//! (record, files); writes nothing.
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::answers::{self, Answers, Sources};
use crate::blueprint::Blueprint;
use crate::edit::{self, Change};
use crate::error::{Error, Problem, Result};
use crate::generate::{self, Rendered};
use crate::lock::RepoLock;
use crate::plan::{Plan, RelPath};
use crate::pristine;
use crate::record::{self, Record};
use crate::render::Renderer;
use crate::transaction;
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
    /// The engine its blueprint's templates render with.
    pub fn renderer(&self) -> &Renderer {
        &self.renderer
    }

    /// The repo around `start`, with the blueprint `selector` names (default: the recorded
    /// one, by name), which must render it as it was last made: add-addon and remove-addon
    /// change one thing at a time, and a newer blueprint comes in through `scaffold update`.
    /// `secret_flags` are `--secret KEY=VALUE` pairs (secrets are never recorded; the
    /// environment's SCAFFOLD_SECRET_<KEY> serve too).
    pub fn open(
        start: &Path,
        lock: &RepoLock,
        selector: Option<&str>,
        secret_flags: &[(String, String)],
    ) -> Result<Self> {
        let found = Found::open(start, lock)?;
        let blueprint = load_blueprint(&found.record, selector)?;
        let made_with = &found.record.blueprint;
        let stored = found.stored_base()?;
        if blueprint.manifest.name != made_with.name
            || blueprint.manifest.version != made_with.version
        {
            return Err(Error::input(format!(
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
        let secrets = answers::secrets(&blueprint, secret_flags, crate::process_env::var)?;
        let (renderer, answers, rendered) = render_record(&blueprint, &found.record, secrets)?;
        let differ = stored
            .as_ref()
            .map(|base| differing(base, &rendered.plan))
            .unwrap_or_default();
        if !differ.is_empty() {
            return Err(Error::input(format!(
                "blueprint {} {} changed since this repo was last made from it ({} file(s) render differently, e.g. {}): run `scaffold update` first (it keeps your edits){}",
                made_with.name,
                made_with.version,
                differ.len(),
                differ.first().map(RelPath::as_str).unwrap_or_default(),
                secret_hint(&blueprint)
            )));
        }
        // Only after the base check: a blueprint changed in place is update's to say.
        if stored.is_none() {
            Record::check_drift(
                &found.recorded_digest()?,
                &rendered.digest,
                &secret_hint(&blueprint),
            )?;
        }
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

    /// The answers of `record` gathered again, `set` over them (a new environment's
    /// answers), with the secrets this repo was opened with.
    pub fn gather(&self, record: &Record, set: Vec<(String, String)>) -> Result<Answers> {
        let secrets = self
            .blueprint
            .manifest
            .questions
            .iter()
            .filter(|q| q.secret)
            .filter_map(|q| {
                let value = self.answers.values.get(&q.key)?;
                Some((q.key.clone(), answers::as_text(value)))
            });
        let sources = Sources {
            set: secrets.chain(set).collect(),
            ..Sources::default()
        };
        recorded_answers(&self.blueprint, &self.renderer, record, sources)
    }

    /// A manifest template (`what` names it in errors) rendered over `context`.
    pub fn render_text(&self, what: &str, template: &str, context: &Json) -> Result<String> {
        self.renderer.render_str(what, template, context)
    }

    /// The repo as `record` renders with `answers` (from `gather`).
    pub fn render_with(&self, answers: &Answers, record: &Record) -> Result<Rendered> {
        generate::render(&self.blueprint, &self.renderer, answers, record)
    }

    /// The writes and deletions that take the work tree to `next`, keeping user edits.
    pub fn changes_to(&self, next: &Rendered) -> Result<Vec<Change>> {
        let eol = crate::attributes::Eol::of(&self.root);
        // Scaffold's own files are replaced, never merged: read as the base holds them.
        edit::changes(&self.rendered.plan, &next.plan, |path| {
            if record::is_internal(path.as_str()) {
                return Ok(self.rendered.plan.files.get(path).cloned());
            }
            crate::attributes::read_canonical(&self.root, path, &eol)
        })
    }
}

/// The rendering a repo was last made from.
pub struct Base {
    pub plan: Plan,
    /// Read from `refs/scaffold/base` (else re-rendered from the recorded blueprint).
    pub stored: bool,
    /// The record the base holds, when the repo's record matches no stored base: the
    /// record was edited by hand since, and its edits are answers to apply.
    pub edited_from: Option<Record>,
}

/// A scaffold repo on disk: where it is and its record.
pub struct Found {
    pub root: PathBuf,
    pub record: Record,
    /// The record file's bytes, which identify its pristine base.
    pub record_bytes: Vec<u8>,
    /// Where its files are read.
    pub files: Files,
}

/// Where a command reads a repo's files: as `git add` would store them.
pub enum Files {
    /// The work tree, through the repo's line-ending conversions and filters.
    WorkTree(crate::attributes::Eol),
    /// One commit, never checked out (`update --branch`).
    Commit(crate::snapshot::CommitFiles),
}

impl Files {
    /// The file at `path` as git stores it; None where there is none.
    pub fn read_canonical(&self, root: &Path, path: &RelPath) -> Result<Option<Vec<u8>>> {
        match self {
            Files::WorkTree(eol) => crate::attributes::read_canonical(root, path, eol),
            Files::Commit(files) => files.read(path.as_str()),
        }
    }

    /// The file at `path` as it is (a work tree's bytes, unconverted).
    fn read_raw(&self, root: &Path, path: &str) -> Result<Option<Vec<u8>>> {
        match self {
            Files::WorkTree(_) => match std::fs::read(root.join(path)) {
                Ok(bytes) => Ok(Some(bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(Error::io_path("read", &root.join(path), e)),
            },
            Files::Commit(files) => files.read(path),
        }
    }

    /// The paths git tracks: the index's, or the commit's.
    pub fn tracked_paths(&self, root: &Path) -> Result<Vec<String>> {
        match self {
            Files::WorkTree(_) => crate::git::tracked_paths(root),
            Files::Commit(files) => Ok(files.paths().map(str::to_string).collect()),
        }
    }

    /// Whether they are a work tree's, where files git does not track may lie too.
    pub fn is_work_tree(&self) -> bool {
        matches!(self, Files::WorkTree(_))
    }
}

impl Found {
    /// The record as the pristine base stores it.
    fn record_file(&self) -> pristine::RecordFile<'_> {
        pristine::RecordFile {
            path: record::PATH,
            bytes: &self.record_bytes,
        }
    }

    /// The one way into a scaffold repo, for every command that reads or changes one: find
    /// its root, settle what an interrupted run left (roll it back or forward, and say so),
    /// refuse unresolved conflict markers, and only then read the record. Nothing reads the
    /// record or the work tree before this. `_lock` is the proof that this run holds the
    /// repository's lock (`lock::acquire`), taken before anything is read.
    pub fn open(start: &Path, _lock: &RepoLock) -> Result<Self> {
        let root = write::find_repo(start)?;
        open_repository(&root)?;
        if let Some(recovered) = transaction::settle(&root)? {
            crate::notes::note(recovered);
        }
        transaction::check_state(&root)?;
        let eol = crate::attributes::Eol::of(&root);
        Found::read(root, Files::WorkTree(eol))
    }

    /// The scaffold repo at `root` as one of its commits holds it, for a change made on a
    /// new branch from that commit: the work tree, its state and an interrupted run in it
    /// belong to the checkout, which the change leaves alone.
    pub fn open_commit(
        root: &Path,
        _lock: &RepoLock,
        files: crate::snapshot::CommitFiles,
    ) -> Result<Self> {
        open_repository(root)?;
        Found::read(root.to_path_buf(), Files::Commit(files))
    }

    /// Refuses unresolved conflict markers, then reads the record from `files`.
    fn read(root: PathBuf, files: Files) -> Result<Self> {
        check_markers(&root, &files)?;
        let record_path = RelPath::new(record::PATH).map_err(Error::blueprint)?;
        let record_bytes = files.read_canonical(&root, &record_path)?.ok_or_else(|| {
            let path = root.join(record::PATH);
            Error::io_path(
                "read",
                &path,
                std::io::Error::from(std::io::ErrorKind::NotFound),
            )
        })?;
        let text = String::from_utf8_lossy(&record_bytes);
        let record = Record::parse(&text)?;
        let (made_by, running) = (&record.scaffold_version, crate::generate::VERSION);
        if crate::version::tuple(made_by) > crate::version::tuple(running) {
            crate::notes::note(format!(
                "note: this repo was last written by scaffold {made_by}, newer than this scaffold {running}: what it renders may differ from what that one wrote; upgrade scaffold before changing the repo"
            ));
        }
        Ok(Found {
            root,
            record,
            record_bytes,
            files,
        })
    }

    /// What the repo says its record renders to, when no stored base holds the record: a
    /// record no stored base holds while the repo has one was edited or merged since; else
    /// `.scaffold/rendering` (or an older record's own `rendering:` line) says.
    pub fn recorded_digest(&self) -> Result<record::Recorded> {
        if pristine::tip(&self.root, record::PATH)?.is_some() {
            return Ok(record::Recorded::Other);
        }
        let found = match self.files.read_raw(&self.root, record::DIGESTS_PATH)? {
            Some(bytes) => {
                record::recorded_digest(&String::from_utf8_lossy(&bytes), &self.record_bytes)
            }
            None => record::Recorded::Unknown,
        };
        Ok(match (found, &self.record.rendering) {
            (record::Recorded::Unknown, Some(legacy)) => record::Recorded::Digest(legacy.clone()),
            (found, _) => found,
        })
    }

    /// The stored base this record was made from: from `refs/scaffold/base`, else fetched
    /// from `origin` (a plain clone leaves it behind; the fetch says so).
    pub fn stored_base(&self) -> Result<Option<Plan>> {
        if let Some(plan) = pristine::find(&self.root, self.record_file())? {
            return Ok(Some(plan));
        }
        let Some((plan, remote)) = pristine::fetch_matching(&self.root, self.record_file())? else {
            return Ok(None);
        };
        crate::notes::note(format!(
            "note: fetched the pristine base ({}) from `{remote}`: a plain `git clone` leaves it behind",
            pristine::BASE_REF
        ));
        Ok(Some(plan))
    }

    /// After a merge, a file a teammate's scaffold change wrote that the local base lacks
    /// (their addon, their environment): its base is the teammate's rendering when the
    /// file still holds exactly that (`origin`'s base, fetched by `stored_base`), so the
    /// merged record's rendering replaces it as any unedited file. Without this, the file
    /// would be one the user added, and any line the merged answers change in it (an addon
    /// the other teammate added that it reacts to) a conflict.
    fn add_teammates_files(&self, plan: &mut Plan) -> Result<()> {
        let Some(theirs) = pristine::remote_tip(&self.root, record::PATH)? else {
            return Ok(());
        };
        for (path, bytes) in theirs.files {
            if plan.files.contains_key(&path) || record::is_internal(path.as_str()) {
                continue;
            }
            if self.files.read_canonical(&self.root, &path)?.as_ref() == Some(&bytes) {
                plan.files.insert(path, bytes);
            }
        }
        Ok(())
    }

    /// What the repo was last made from: the stored pristine base (fetched if need be);
    /// the newest base when the record matches none (it was edited by hand since: the
    /// base says from what); or, for a repo with no base at all, a re-rendering of its
    /// record with the recorded blueprint, refused when it does not render what the record
    /// says it did (never a guess).
    pub fn base(&self, blueprint: &Blueprint) -> Result<Base> {
        if let Some(plan) = self.stored_base()? {
            return Ok(Base {
                plan,
                stored: true,
                edited_from: None,
            });
        }
        if let Some((mut plan, bytes)) = pristine::tip(&self.root, record::PATH)? {
            let tip = Record::parse(&String::from_utf8_lossy(&bytes))?;
            self.add_teammates_files(&mut plan)?;
            return Ok(Base {
                plan,
                stored: true,
                edited_from: Some(tip),
            });
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
        let Some(recorded) = recorded else {
            return Err(Error::input(format!(
                "this clone has no stored base ({}) and scaffold cannot find blueprint {} {} to re-render it: fetch the base with `{}` (push it from the repo that has it with `git push origin '{}'`), or run `scaffold update --blueprint DIR` once with blueprint {} {} to record it",
                pristine::BASE_REF,
                made_with.name,
                made_with.version,
                pristine::FETCH_HINT,
                PUSH_REFS,
                made_with.name,
                made_with.version
            )));
        };
        let rendered = render_record(
            recorded,
            &self.record,
            answers::secrets(recorded, &[], crate::process_env::var)?,
        )?
        .2;
        let recorded_digest = match self.recorded_digest()? {
            record::Recorded::Digest(digest) => Some(digest),
            record::Recorded::Other => Some(String::new()),
            record::Recorded::Unknown => None,
        };
        if let Some(digest) = recorded_digest
            && digest != rendered.digest
        {
            return Err(Error::refused(Problem::new(format!("this clone has no stored base ({}), and blueprint {} {} no longer renders the files this repo was made from (the blueprint was edited in place, or {} was edited by hand{}): scaffold will not guess which lines are yours. Fetch the base: `{}` (push it first from the repo that has it: `git push origin '{}'`), then run scaffold again",
                pristine::BASE_REF,
                made_with.name,
                made_with.version,
                record::PATH,
                secret_hint(recorded),
                pristine::FETCH_HINT,
                PUSH_REFS,)).fix("nothing was changed")));
        }
        // Scaffold's own files as the repo holds them (an older record's format, say): the
        // next commit writes them as this scaffold does.
        let mut plan = rendered.plan;
        for path in [record::PATH, record::DIGESTS_PATH, record::ATTRIBUTES_PATH] {
            let rel = RelPath::new(path).map_err(Error::blueprint)?;
            match path {
                record::PATH => plan.files.insert(rel, self.record_bytes.clone()),
                _ => match self.files.read_raw(&self.root, path).ok().flatten() {
                    Some(bytes) => plan.files.insert(rel, bytes),
                    None => plan.files.remove(&rel),
                },
            };
        }
        Ok(Base {
            plan,
            stored: false,
            edited_from: None,
        })
    }
}

/// Refuses what is not a repository scaffold can open.
fn open_repository(root: &Path) -> Result<()> {
    match git2::Repository::discover(root) {
        Ok(repo) => refuse_unsupported(root, &repo),
        Err(e) => Err(not_a_repository(root, &e)),
    }
}

/// Why a directory holding a record is not a repository scaffold can open: git's own
/// refusal where git would refuse too (another user's repository), a format scaffold's
/// git library cannot read (SHA-256), else no repository at all.
fn not_a_repository(root: &Path, e: &git2::Error) -> Error {
    let dir = root.display();
    if e.code() == git2::ErrorCode::Owner {
        return Error::repo_state(Problem::new(format!("`{dir}` is a git repository owned by another user, which git (and scaffold with it) refuses to work in (\"detected dubious ownership\")")).fix(format!("if you trust it, mark it safe as git advises: `git config --global --add safe.directory {dir}`, then run scaffold again; nothing was changed")));
    }
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap_or_default();
    let sha256 = config.lines().any(|line| {
        let line: String = line.split_whitespace().collect::<String>().to_lowercase();
        line == "objectformat=sha256"
    });
    if sha256 {
        return Error::repo_state(Problem::new(format!("`{dir}` is a SHA-256 git repository (extensions.objectFormat = sha256), which scaffold's git library (libgit2) cannot read")).fix("keep the platform repo in a SHA-1 repository (`git init --object-format=sha1`, git's default); nothing was changed"));
    }
    Error::repo_state(Problem::new(format!("`{dir}` has {} but is not a git repository: scaffold changes a repo by committing to it", record::PATH)).fix("restore its .git (or `git init && git add -A && git commit -m \"scaffold: import\"`), then run scaffold again"))
}

/// Refuses git features scaffold's git library would misread, naming each and git's own
/// way out: a split index (libgit2 reads only the shared part's absence as damage), and
/// a `working-tree-encoding` attribute (scaffold writes UTF-8 where git expects the
/// declared encoding, so git would read every file it wrote as changed).
fn refuse_unsupported(root: &Path, repo: &git2::Repository) -> Result<()> {
    // An index libgit2 cannot read beside a shared index: git's split index.
    let split = repo.index().is_err()
        && std::fs::read_dir(repo.path()).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("sharedindex."))
        });
    if split {
        return Err(Error::repo_state(Problem::new(format!("`{}` uses a split index (core.splitIndex, .git/sharedindex.*), which scaffold's git library (libgit2) cannot read", root.display())).fix("turn it off as git does: `git config core.splitIndex false && git update-index --no-split-index`, then run scaffold again; nothing was changed")));
    }
    for path in scaffold_paths(repo) {
        let value = repo
            .get_attr(
                Path::new(&path),
                "working-tree-encoding",
                git2::AttrCheckFlags::FILE_THEN_INDEX,
            )
            .ok()
            .flatten();
        if let Some(encoding) = value {
            return Err(Error::repo_state(Problem::new(format!("{path} has the working-tree-encoding={encoding} attribute, which scaffold does not apply: it writes UTF-8, and git would read the file as {encoding}")).fix("keep working-tree-encoding off the files scaffold writes (.gitattributes), then run scaffold again; nothing was changed")));
        }
    }
    Ok(())
}

/// The files scaffold writes: those of the stored base, else of HEAD.
fn scaffold_paths(repo: &git2::Repository) -> Vec<String> {
    let tree = repo
        .refname_to_id(pristine::BASE_REF)
        .and_then(|id| repo.find_commit(id))
        .or_else(|_| repo.head().and_then(|h| h.peel_to_commit()))
        .and_then(|c| c.tree());
    let mut paths = Vec::new();
    if let Ok(tree) = tree {
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                paths.push(format!("{dir}{name}"));
            }
            git2::TreeWalkResult::Ok
        });
    }
    paths
}

/// What shares the bases with a remote.
pub const PUSH_REFS: &str = "refs/scaffold/*";

/// For a message about a rendering that differs: with secret questions, a `--secret`
/// other than the one the repo was made with is a cause too.
pub fn secret_hint(blueprint: &Blueprint) -> String {
    let secrets: Vec<&str> = blueprint
        .manifest
        .questions
        .iter()
        .filter(|q| q.secret)
        .map(|q| q.key.as_str())
        .collect();
    if secrets.is_empty() {
        String::new()
    } else {
        format!(
            ", or a secret answer ({}) differs from the one this repo was made with: check --secret or SCAFFOLD_SECRET_*",
            secrets.join(", ")
        )
    }
}

/// Refuses a work tree with unresolved conflict markers (left by `update
/// --conflicts=markers`): every later merge would be computed against them.
fn check_markers(root: &Path, files: &Files) -> Result<()> {
    let paths: Vec<String> = match files {
        Files::Commit(files) => files.paths().map(str::to_string).collect(),
        Files::WorkTree(_) => head_paths(root)?,
    };
    let marked: Vec<String> = paths
        .into_iter()
        .filter_map(|path| {
            let text = files.read_raw(root, &path).ok().flatten()?;
            let line = has_markers(&text)?;
            Some(format!("{path}:{line}"))
        })
        .collect();
    if marked.is_empty() {
        return Ok(());
    }
    Err(Error::repo_state(Problem::new(format!("unresolved conflict markers in {}: resolve them (keep the lines you want, delete the `<<<<<<<`, `|||||||`, `=======` and `>>>>>>>` lines) and commit, then run scaffold again",
        marked.join(", "))).fix("nothing was changed")))
}

/// The paths of HEAD's tree (none before the first commit).
fn head_paths(root: &Path) -> Result<Vec<String>> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Ok(Vec::new());
    };
    let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) else {
        return Ok(Vec::new());
    };
    let mut paths = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob)
            && let Ok(name) = entry.name()
        {
            paths.push(format!("{dir}{name}"));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| Error::git("read HEAD's tree", root, e))?;
    Ok(paths)
}

/// The 1-based line of the first conflict marker block (`<<<<<<< ` … `>>>>>>> `), if any.
pub fn has_markers(text: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(text).ok()?;
    let mut open = None;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("<<<<<<< ") && open.is_none() {
            open = Some(n + 1);
        } else if line.starts_with(">>>>>>> ") && open.is_some() {
            return open;
        }
    }
    None
}

/// Paths whose contents differ between two renderings; scaffold's own files (the record
/// and its digest, which follow every other change) are not counted.
pub fn differing(a: &Plan, b: &Plan) -> Vec<RelPath> {
    let paths: std::collections::BTreeSet<&RelPath> =
        a.files.keys().chain(b.files.keys()).collect();
    paths
        .into_iter()
        .filter(|p| !record::is_internal(p.as_str()) && a.files.get(*p) != b.files.get(*p))
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
            Error::input(format!(
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
    let addons_key = blueprint.manifest.addons_answer();
    let chosen = record.chosen_addons(addons_key);
    let mut recorded = record.answers.clone();
    if recorded.contains_key(addons_key) {
        let listed = blueprint.catalog.optional_names();
        recorded.insert(
            addons_key.into(),
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
    // Charts added with --chart are chosen but not choices of the question: each
    // environment's recorded addons answer keeps only the listed ones, as the shared one.
    let listed = blueprint.catalog.optional_names();
    let mut environments = record.environments.clone();
    for own in environments.values_mut() {
        if let Some(Json::Array(names)) = own.get_mut(addons_key) {
            names.retain(|n| n.as_str().is_some_and(|n| listed.iter().any(|l| l == n)));
        }
    }
    let sources = Sources {
        recorded_environments: environments,
        ..sources
    };
    let mut answers = answers::gather_over(blueprint, renderer, sources, &recorded)?;
    answers.values.insert(
        addons_key.into(),
        Json::Array(chosen.into_iter().map(Json::String).collect()),
    );
    // And each environment's, with its charts added with --chart.
    for (name, own) in answers.environments.iter_mut() {
        if let Some(recorded) = record
            .environments
            .get(name)
            .and_then(|o| o.get(addons_key))
        {
            own.values.insert(addons_key.into(), recorded.clone());
        }
    }
    Ok(answers)
}

//! Line endings as git converts them for an existing repository: the `text`, `crlf` and
//! `eol` attributes (from every `.gitattributes`, `info/attributes`, `core.attributesFile`,
//! read through libgit2) with `core.autocrlf` and `core.eol`, decided as git's convert.c
//! does. scaffold's plans hold the canonical bytes (what a blob holds); `to_work_tree` gives
//! what `git checkout` would write, `stored_form` what `git add` would store, so an
//! autocrlf checkout compares and writes like git. A filter driver's `clean` command (LFS)
//! runs where git's `add` would run it (`to_blob`).
use std::borrow::Cow;
use std::path::Path;

use git2::{AttrCheckFlags, AttrValue, Repository};

use crate::error::{Error, Problem, Result};
use crate::tree::{Plan, RelPath};

/// What git does with one path's line endings (convert.c's `crlf_action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Binary,
    TextInput,
    TextCrlf,
    AutoInput,
    AutoCrlf,
}

/// The conversions of a repository.
pub struct Eol {
    repo: Option<Repository>,
    autocrlf: AutoCrlf,
    core_eol_crlf: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum AutoCrlf {
    False,
    True,
    Input,
}

impl Eol {
    /// The conversions of the repository at `root`; none outside one.
    pub fn of(root: &Path) -> Self {
        let repo = Repository::open(root).ok();
        let config = repo.as_ref().and_then(|r| r.config().ok());
        let get = |key: &str| {
            config
                .as_ref()
                .and_then(|c| c.get_string(key).ok())
                .map(|v| v.to_lowercase())
        };
        let autocrlf = match get("core.autocrlf").as_deref() {
            Some("input") => AutoCrlf::Input,
            Some("true" | "yes" | "on" | "1") => AutoCrlf::True,
            _ => AutoCrlf::False,
        };
        let core_eol_crlf = get("core.eol").as_deref() == Some("crlf");
        Eol {
            repo,
            autocrlf,
            core_eol_crlf,
        }
    }

    /// git's `text_eol_is_crlf`: the line ending `text` files get in the work tree.
    fn text_eol_is_crlf(&self) -> bool {
        match self.autocrlf {
            AutoCrlf::True => true,
            AutoCrlf::Input => false,
            AutoCrlf::False => self.core_eol_crlf,
        }
    }

    fn action(&self, path: &str) -> Action {
        let Some(repo) = &self.repo else {
            return Action::Binary;
        };
        let attr = |name| {
            repo.get_attr(Path::new(path), name, AttrCheckFlags::FILE_THEN_INDEX)
                .ok()
                .flatten()
        };
        #[derive(PartialEq)]
        enum Text {
            Set,
            Unset,
            Input,
            Auto,
            Undefined,
        }
        let read = |value: Option<&str>| match AttrValue::from_string(value) {
            AttrValue::True => Text::Set,
            AttrValue::False => Text::Unset,
            AttrValue::String("input") => Text::Input,
            AttrValue::String("auto") => Text::Auto,
            _ => Text::Undefined,
        };
        let mut text = read(attr("text"));
        if text == Text::Undefined {
            text = read(attr("crlf"));
        }
        if text == Text::Unset {
            return Action::Binary;
        }
        let eol = attr("eol");
        let by_text = |crlf: bool| {
            if crlf {
                Action::TextCrlf
            } else {
                Action::TextInput
            }
        };
        let by_auto = |crlf: bool| {
            if crlf {
                Action::AutoCrlf
            } else {
                Action::AutoInput
            }
        };
        match (text, eol) {
            (Text::Auto, Some("lf")) => Action::AutoInput,
            (Text::Auto, Some("crlf")) => Action::AutoCrlf,
            (_, Some("lf")) => Action::TextInput,
            (_, Some("crlf")) => Action::TextCrlf,
            (Text::Set, _) => by_text(self.text_eol_is_crlf()),
            (Text::Input, _) => Action::TextInput,
            (Text::Auto, _) => by_auto(self.text_eol_is_crlf()),
            (_, _) => match self.autocrlf {
                AutoCrlf::False => Action::Binary,
                AutoCrlf::True => Action::AutoCrlf,
                AutoCrlf::Input => Action::AutoInput,
            },
        }
    }

    /// The filter driver git would run on `path`: `filter=NAME` with `filter.NAME.clean`
    /// or `.process` configured (as `git lfs install` does).
    pub fn driver(&self, path: &str) -> Option<Driver> {
        let repo = self.repo.as_ref()?;
        let name = repo
            .get_attr(Path::new(path), "filter", AttrCheckFlags::FILE_THEN_INDEX)
            .ok()
            .flatten()?;
        let config = repo.config().ok()?;
        let get = |what: &str| config.get_string(&format!("filter.{name}.{what}")).ok();
        let (clean, process) = (get("clean"), get("process"));
        (clean.is_some() || process.is_some()).then(|| Driver {
            name: name.to_string(),
            clean,
            smudge: get("smudge"),
            required: config
                .get_bool(&format!("filter.{name}.required"))
                .unwrap_or(false),
        })
    }

    /// Refuses paths whose filter driver only speaks git's long-running process protocol
    /// (`filter.NAME.process` without `.clean`): scaffold runs `clean` commands only.
    pub fn check_drivers<'p>(&self, paths: impl IntoIterator<Item = &'p str>) -> Result<()> {
        for path in paths {
            if let Some(Driver {
                name, clean: None, ..
            }) = self.driver(path)
            {
                return Err(Error::refused(Problem::new(format!("`{path}` goes through the `{name}` filter, which has only `filter.{name}.process` configured")).fix(format!("scaffold runs a filter's `clean` command: configure `filter.{name}.clean` too, or take scaffold's files out of that rule (`{path} !filter` in .gitattributes), then run scaffold again (nothing was changed)"))));
            }
        }
        Ok(())
    }

    /// What git stores for the canonical `bytes` at `path` once they are in the work tree:
    /// `git add`'s clean filter (an LFS pointer, say), then its line endings, as git's
    /// convert.c orders them. `root` is the work tree the filter runs in.
    pub fn to_blob<'a>(&self, root: &Path, path: &str, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let Some(driver) = self.driver(path) else {
            return Ok(self.stored_form(path, bytes));
        };
        let work_tree = self.to_work_tree(path, bytes);
        match driver.run(driver.clean.as_deref(), "clean", root, path, &work_tree)? {
            Some(cleaned) => Ok(Cow::Owned(self.stored_form(path, &cleaned).into_owned())),
            None => Ok(self.stored_form(path, bytes)),
        }
    }

    /// Whether any filter driver is configured (`filter.NAME.clean` or `.process`): without
    /// one no path is filtered, decided without an attribute lookup per path.
    pub fn any_driver_configured(&self) -> bool {
        let Some(config) = self.repo.as_ref().and_then(|r| r.config().ok()) else {
            return false;
        };
        let Ok(mut entries) = config.entries(Some(r"^filter\..*\.(clean|process)$")) else {
            return false;
        };
        entries.next().is_some()
    }

    /// What `git checkout` then `git add` would make of the blob `bytes` at `path`: the
    /// canonical bytes of a blob `to_blob` stored (an LFS pointer smudged back to the file).
    /// A path without a smudge command is its blob, as git checks it out.
    pub fn checked_out<'a>(
        &self,
        root: &Path,
        path: &str,
        bytes: &'a [u8],
    ) -> Result<Cow<'a, [u8]>> {
        let Some(driver) = self.driver(path) else {
            return Ok(Cow::Borrowed(bytes));
        };
        let work_tree = self.to_work_tree(path, bytes);
        match driver.run(driver.smudge.as_deref(), "smudge", root, path, &work_tree)? {
            Some(smudged) => Ok(Cow::Owned(self.stored_form(path, &smudged).into_owned())),
            None => Ok(Cow::Borrowed(bytes)),
        }
    }

    /// What `git add` stores for `bytes` found at `path` in the work tree.
    pub fn stored_form<'a>(&self, path: &str, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let action = self.action(path);
        let stats = Stats::of(bytes);
        let auto = matches!(action, Action::AutoInput | Action::AutoCrlf);
        if action == Action::Binary || stats.crlf == 0 || (auto && stats.is_binary()) {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len());
        for (n, byte) in bytes.iter().enumerate() {
            if *byte == b'\r' && bytes.get(n + 1) == Some(&b'\n') {
                continue;
            }
            out.push(*byte);
        }
        Cow::Owned(out)
    }

    /// What `git checkout` writes at `path` for the canonical `bytes`.
    pub fn to_work_tree<'a>(&self, path: &str, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let action = self.action(path);
        if !matches!(action, Action::TextCrlf | Action::AutoCrlf) {
            return Cow::Borrowed(bytes);
        }
        let stats = Stats::of(bytes);
        if stats.lone_lf == 0
            || (action == Action::AutoCrlf
                && (stats.lone_cr > 0 || stats.crlf > 0 || stats.is_binary()))
        {
            return Cow::Borrowed(bytes);
        }
        let mut out = Vec::with_capacity(bytes.len() + stats.lone_lf);
        let mut previous = 0u8;
        for byte in bytes {
            if *byte == b'\n' && previous != b'\r' {
                out.push(b'\r');
            }
            out.push(*byte);
            previous = *byte;
        }
        Cow::Owned(out)
    }
}

/// A filter driver of `.gitattributes` (`filter=NAME`) and its configuration.
pub struct Driver {
    pub name: String,
    /// `filter.NAME.clean`: the command `git add` pipes a file through.
    pub clean: Option<String>,
    /// `filter.NAME.smudge`: the command `git checkout` pipes a blob through.
    pub smudge: Option<String>,
    /// `filter.NAME.required`: a failing filter is an error, not a pass-through.
    pub required: bool,
}

impl Driver {
    /// Runs the `clean` or `smudge` command as git does (`sh -c`, `%f` replaced by the
    /// quoted path, in the work tree's root, the file on stdin). None: no such command, or
    /// a filter that is not required failed (git takes the bytes as they are then).
    fn run(
        &self,
        command: Option<&str>,
        which: &str,
        root: &Path,
        path: &str,
        bytes: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        use std::io::Write as _;
        let Some(command) = command else {
            return Ok(None);
        };
        let quoted = format!("'{}'", path.replace('\'', "'\\''"));
        let command = command.replace("%f", &quoted);
        let failed = |why: String| -> Result<Option<Vec<u8>>> {
            if self.required {
                Err(Error::refused(Problem::new(format!("the `{}` filter (filter.{}.{which}, required) failed on `{path}`: {why}",
                    self.name, self.name)).fix("fix the filter (is its program installed?), then run scaffold again (nothing was changed)")))
            } else {
                Ok(None)
            }
        };
        // stdin is a file, not a pipe: a filter that exits without reading all of it must
        // not end scaffold with SIGPIPE.
        let mut input = match tempfile::tempfile() {
            Ok(file) => file,
            Err(e) => return failed(e.to_string()),
        };
        if let Err(e) = input
            .write_all(bytes)
            .and_then(|()| std::io::Seek::rewind(&mut input))
        {
            return failed(e.to_string());
        }
        let output = std::process::Command::new("sh")
            .args(["-c", &command])
            .current_dir(root)
            .stdin(input)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output();
        match output {
            Ok(out) if out.status.success() => Ok(Some(out.stdout)),
            Ok(out) => failed(format!(
                "{} ({})",
                String::from_utf8_lossy(&out.stderr).trim(),
                out.status
            )),
            Err(e) => failed(e.to_string()),
        }
    }
}

/// The files `new` writes for `plan` when line-ending settings apply (the plan's own
/// `.gitattributes`, `core.autocrlf`, `core.eol`, `core.attributesFile`): what git would
/// check out, evaluated in a scratch repository holding only the plan's attribute files.
/// Nothing to convert or filter is the common case, decided without the scratch repo (and
/// its attribute lookups, three to eight per file: 40 % of a 2,000-file `new`,
/// BENCHMARKS.md round three d): no such setting, and no attribute file of the plan that
/// names anything but attributes which leave line endings and filters alone (scaffold's
/// own `.scaffold/.gitattributes` sets `merge=union`). A file whose bytes git would store
/// differently (CRLF where an attribute says `text`) is a blueprint error: the repo would
/// be dirty from its first commit.
pub fn work_tree_for_new(plan: &Plan) -> Result<NewFiles> {
    let is_attributes = |path: &str| path == ".gitattributes" || path.ends_with("/.gitattributes");
    let configured = git2::Config::open_default().is_ok_and(|c| {
        ["core.autocrlf", "core.eol", "core.attributesFile"]
            .iter()
            .any(|key| c.get_string(key).is_ok())
    });
    let converting = plan
        .files
        .iter()
        .any(|(path, bytes)| is_attributes(path.as_str()) && may_convert(bytes));
    if !configured && !converting {
        return Ok(NewFiles::default());
    }
    let fail = |e: std::io::Error| Error::io("evaluate the blueprint's .gitattributes", e);
    let scratch = tempfile::TempDir::new().map_err(fail)?;
    Repository::init(scratch.path()).map_err(|e| Error::git("initialise", scratch.path(), e))?;
    for (path, bytes) in plan.files.iter().filter(|(p, _)| is_attributes(p.as_str())) {
        let full = scratch.path().join(path.as_str());
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&full, bytes).map_err(fail)?;
    }
    let eol = Eol::of(scratch.path());
    eol.check_drivers(plan.files.keys().map(|p| p.as_str()))?;
    let filtered: Vec<crate::tree::RelPath> = plan
        .files
        .keys()
        .filter(|p| eol.driver(p.as_str()).is_some())
        .cloned()
        .collect();
    let mut files = plan.files.clone();
    let mut converted = false;
    for (path, bytes) in files.iter_mut() {
        if let Cow::Owned(_) = eol.stored_form(path.as_str(), bytes) {
            return Err(Error::blueprint(format!(
                "{}: the rendered {} has CRLF line endings, but its attributes make git store it with LF (the new repo would be dirty): convert the blueprint file to LF",
                plan.sources.get(path).map_or(path.as_str(), String::as_str),
                path.as_str()
            )));
        }
        if let Cow::Owned(work_tree) = eol.to_work_tree(path.as_str(), bytes) {
            *bytes = work_tree;
            converted = true;
        }
    }
    Ok(NewFiles {
        work_tree: converted.then(|| Plan {
            files,
            executable: plan.executable.clone(),
            sources: plan.sources.clone(),
        }),
        filtered,
    })
}

/// Attributes that leave a file's bytes as they are between blob and work tree: what
/// an attribute file may name without any line-ending or filter lookup mattering (git's
/// gitattributes(5): `merge`, `diff`, `whitespace`, `export-*`, `delta`,
/// `conflict-marker-size`; `linguist-*` are GitHub's).
const BYTES_KEPT: &[&str] = &[
    "merge",
    "diff",
    "whitespace",
    "export-ignore",
    "export-subst",
    "delta",
    "conflict-marker-size",
];

/// Whether a `.gitattributes` text may change what git checks out or stores: any line that
/// names an attribute outside `BYTES_KEPT` (`text`, `eol`, `crlf`, `filter`, the `binary`
/// macro, one defined elsewhere), defines a macro (`[attr]`), or quotes its pattern (not
/// read here). Not UTF-8: may.
fn may_convert(text: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(text) else {
        return true;
    };
    text.lines().any(|line| {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            return false;
        }
        if line.starts_with('"') || line.starts_with("[attr]") {
            return true;
        }
        line.split_ascii_whitespace().skip(1).any(|attribute| {
            let name = attribute.trim_start_matches(['-', '!']);
            let name = name.split_once('=').map_or(name, |(name, _)| name);
            !(BYTES_KEPT.contains(&name) || name.starts_with("linguist-"))
        })
    })
}

/// What `new` writes and stores when attributes apply.
#[derive(Default)]
pub struct NewFiles {
    /// The files as git would check them out, when that differs from the plan's bytes.
    pub work_tree: Option<Plan>,
    /// Paths a filter driver's clean command turns into other blobs (LFS pointers).
    pub filtered: Vec<crate::tree::RelPath>,
}

/// The blobs `git add` would store for `plan` in the repository at `root` (its files
/// already written): each filtered path through its driver's clean command, run there so
/// the driver keeps what it must (git-lfs: the object under .git/lfs).
pub fn blobs_for_new(root: &Path, plan: &Plan, filtered: &[crate::tree::RelPath]) -> Result<Plan> {
    let eol = Eol::of(root);
    let mut files = plan.files.clone();
    for path in filtered {
        if let Some(bytes) = files.get_mut(path) {
            *bytes = eol.to_blob(root, path.as_str(), bytes)?.into_owned();
        }
    }
    Ok(Plan {
        files,
        executable: plan.executable.clone(),
        sources: plan.sources.clone(),
    })
}

/// convert.c's `text_stat`.
#[derive(Default)]
struct Stats {
    nul: usize,
    lone_cr: usize,
    lone_lf: usize,
    crlf: usize,
    printable: usize,
    nonprintable: usize,
}

impl Stats {
    fn of(bytes: &[u8]) -> Stats {
        let mut stats = Stats::default();
        for (n, byte) in bytes.iter().enumerate() {
            match byte {
                b'\r' if bytes.get(n + 1) == Some(&b'\n') => {
                    stats.crlf += 1;
                }
                b'\r' => stats.lone_cr += 1,
                b'\n' if n > 0 && bytes[n - 1] == b'\r' => {}
                b'\n' => stats.lone_lf += 1,
                127 => stats.nonprintable += 1,
                0 => {
                    stats.nul += 1;
                    stats.nonprintable += 1;
                }
                b'\x08' | b'\t' | b'\x1b' | b'\x0c' => stats.printable += 1,
                c if *c < 32 => stats.nonprintable += 1,
                _ => stats.printable += 1,
            }
        }
        stats
    }

    /// convert.c's `convert_is_binary`.
    fn is_binary(&self) -> bool {
        self.lone_cr > 0 || self.nul > 0 || (self.printable >> 7) < self.nonprintable
    }
}

/// Reads a repo file as git would store it (line endings converted back by `eol`); None
/// when it does not exist.
pub fn read_canonical(root: &Path, path: &RelPath, eol: &Eol) -> Result<Option<Vec<u8>>> {
    let full = root.join(path.as_str());
    let bytes = match std::fs::read(&full) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io_path("read", &full, e)),
    };
    Ok(Some(match eol.stored_form(path.as_str(), &bytes) {
        Cow::Borrowed(_) => bytes,
        Cow::Owned(converted) => converted,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_attributes_that_keep_bytes_skip_the_line_ending_lookups() {
        let keeps = |text: &str| !may_convert(text.as_bytes());
        // scaffold's own `.scaffold/.gitattributes` (scaffold_model::record::ATTRIBUTES).
        assert!(keeps(
            "# Written by scaffold: teammates' digests merge without a conflict (docs/update.md).\nrendering merge=union\n"
        ));
        assert!(keeps(
            "# comment\n\n*.lock -diff merge=binary\n*.md linguist-documentation\n"
        ));
        assert!(keeps(
            "docs/** export-ignore whitespace=trailing-space !delta\n"
        ));
        assert!(!keeps("*.sh text eol=lf\n"));
        assert!(!keeps("*.png binary\n"));
        assert!(!keeps("*.bat -crlf\n"));
        assert!(!keeps("*.bin filter=lfs diff=lfs merge=lfs -text\n"));
        assert!(!keeps("[attr]mine text\n"));
        assert!(!keeps("*.x mine\n"));
        assert!(!keeps("\"a b\" diff\n"));
        assert!(!keeps("*.y working-tree-encoding=UTF-16\n"));
        assert!(may_convert(b"\xff diff\n"));
    }

    #[test]
    fn a_plan_whose_attributes_keep_bytes_writes_its_own_bytes() {
        let mut plan = Plan::default();
        let path = |p: &str| RelPath::new(p).expect("path");
        plan.files
            .insert(path(".gitattributes"), b"*.lock -diff\n".to_vec());
        plan.files.insert(path("a.txt"), b"one\r\ntwo\n".to_vec());
        let new = work_tree_for_new(&plan).expect("no conversion");
        let autocrlf =
            git2::Config::open_default().is_ok_and(|c| c.get_string("core.autocrlf").is_ok());
        assert!(autocrlf || new.work_tree.is_none());
        assert!(new.filtered.is_empty());
        // The same file under `text` would be stored with LF: refused, as before.
        plan.files
            .insert(path(".gitattributes"), b"*.txt text\n".to_vec());
        assert!(work_tree_for_new(&plan).is_err());
    }

    fn repo_with(config: &[(&str, &str)], attributes: &str) -> (tempfile::TempDir, Eol) {
        let dir = tempfile::TempDir::new().expect("dir");
        let repo = Repository::init(dir.path()).expect("init");
        let mut cfg = repo.config().expect("config");
        for (key, value) in config {
            cfg.set_str(key, value).expect("set");
        }
        std::fs::write(dir.path().join(".gitattributes"), attributes).expect("attrs");
        let eol = Eol::of(dir.path());
        (dir, eol)
    }

    #[test]
    fn autocrlf_true_checks_out_crlf_and_stores_lf() {
        let (_dir, eol) = repo_with(&[("core.autocrlf", "true")], "");
        assert_eq!(&*eol.to_work_tree("a.yaml", b"a\nb\n"), b"a\r\nb\r\n");
        assert_eq!(&*eol.stored_form("a.yaml", b"a\r\nb\r\n"), b"a\nb\n");
        // Binary content is left alone both ways.
        assert_eq!(&*eol.to_work_tree("x.bin", b"a\0\nb\n"), b"a\0\nb\n");
    }

    #[test]
    fn attributes_win_over_autocrlf() {
        let (_dir, eol) = repo_with(
            &[("core.autocrlf", "true")],
            "*.sh text eol=lf\n*.bat eol=crlf\n*.png -text\n",
        );
        assert_eq!(&*eol.to_work_tree("run.sh", b"a\n"), b"a\n");
        assert_eq!(&*eol.stored_form("run.sh", b"a\r\n"), b"a\n");
        assert_eq!(&*eol.to_work_tree("run.bat", b"a\n"), b"a\r\n");
        assert_eq!(&*eol.stored_form("i.png", b"a\r\n"), b"a\r\n");
    }

    #[test]
    fn without_settings_nothing_changes() {
        let (_dir, eol) = repo_with(&[], "");
        assert_eq!(&*eol.to_work_tree("a", b"a\n"), b"a\n");
        assert_eq!(&*eol.stored_form("a", b"a\r\n"), b"a\r\n");
    }
}

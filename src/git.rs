//! git2 for `new` and the author: initialise the repository on `main` and commit the plan
//! in one commit, building blobs straight from the planned bytes (no re-reading of files).
//! Changes to an existing repo go through `transaction`, which uses the helpers here.
use std::io::Write;
use std::path::Path;

use git2::{IndexEntry, IndexTime, Oid, Repository, RepositoryInitOptions, Signature};

use crate::error::{Error, Result};
use crate::plan::Plan;

pub struct Author {
    pub name: String,
    pub email: String,
}

impl Author {
    /// Parses `Name <email>`.
    pub fn parse(text: &str) -> Result<Self> {
        let fail = || {
            Error::Input(format!(
                "--author `{text}`: use the form \"Name <email@example.org>\""
            ))
        };
        let (name, rest) = text.split_once('<').ok_or_else(fail)?;
        let email = rest.strip_suffix('>').ok_or_else(fail)?.trim();
        let name = name.trim();
        if name.is_empty() || !email.contains('@') {
            return Err(fail());
        }
        Ok(Author {
            name: name.into(),
            email: email.into(),
        })
    }

    /// user.name/user.email from git config (global, XDG, system), if both are set.
    pub fn from_git_config() -> Option<Self> {
        let config = git2::Config::open_default().ok()?;
        let name = config.get_string("user.name").ok()?;
        let email = config.get_string("user.email").ok()?;
        (!name.trim().is_empty() && !email.trim().is_empty()).then_some(Author { name, email })
    }
}

/// Initialises `dir` on `main` and commits the plan: blobs and index entries come from the
/// planned bytes, stat data from the files just staged (so `git status` needs no re-hash).
/// Every object goes to an in-memory pack written as one packfile: one file for the whole
/// commit instead of one loose object per blob (BENCHMARKS.md, `benches/commit_routes.rs`).
pub fn commit(dir: &Path, plan: &Plan, author: &Author, message: &str) -> Result<String> {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    let repo = Repository::init_opts(dir, &options).map_err(|e| failed("initialise", dir, e))?;
    let fail = |e| failed("commit", dir, e);
    let odb = repo.odb().map_err(fail)?;
    // Above the default backends' priorities, so every write lands in memory.
    let mempack = odb.add_new_mempack_backend(1000).map_err(fail)?;
    let mut index = repo.index().map_err(fail)?;
    for (path, contents) in &plan.files {
        // The entry's id is filled in from the buffer; the rest is the staged file's stat.
        let entry = entry_for(dir, path.as_str(), Oid::ZERO_SHA1, plan.mode_of(path))?;
        index.add_frombuffer(&entry, contents).map_err(fail)?;
    }
    let tree = repo
        .find_tree(index.write_tree().map_err(fail)?)
        .map_err(fail)?;
    let signature = signature(author)?;
    let oid = repo
        .commit(None, &signature, &signature, message, &tree, &[])
        .map_err(fail)?;
    let mut pack = git2::Buf::new();
    mempack.dump(&repo, &mut pack).map_err(fail)?;
    let mut writer = odb.packwriter().map_err(fail)?;
    writer
        .write_all(&pack)
        .map_err(|e| Error::io_path("write a pack in", dir, e))?;
    writer.commit().map_err(fail)?;
    mempack.reset().map_err(fail)?;
    // The branch moves only once its objects are on disk; the reflog says what `git commit` would.
    let summary = message.lines().next().unwrap_or_default();
    repo.reference(
        "refs/heads/main",
        oid,
        false,
        &format!("commit (initial): {summary}"),
    )
    .map_err(fail)?;
    index.write().map_err(fail)?;
    Ok(oid.to_string())
}

/// A branch name by git's own rules (`git check-ref-format --branch`), which libgit2's
/// check alone does not fully apply: a branch also may not start with `-`.
pub fn is_valid_branch(name: &str) -> bool {
    !name.starts_with('-') && git2::Branch::name_is_valid(name).unwrap_or(false)
}

/// A digest of a plan's paths and bytes (git's object hash over a canonical listing).
pub fn digest(plan: &Plan) -> String {
    let mut listing = Vec::new();
    for (path, contents) in &plan.files {
        listing.extend_from_slice(path.as_str().as_bytes());
        listing.push(0);
        listing.extend_from_slice(contents.len().to_string().as_bytes());
        listing.push(0);
        listing.extend_from_slice(contents);
    }
    Oid::hash_object(git2::ObjectType::Blob, &listing)
        .map(|oid| oid.to_string())
        .unwrap_or_default()
}

/// An index entry for `path` holding blob `id`, with the stat data of the file on disk.
pub fn entry_for(root: &Path, path: &str, id: Oid, mode: i32) -> Result<IndexEntry> {
    let full = root.join(path);
    let meta = std::fs::symlink_metadata(&full).map_err(|e| Error::io_path("inspect", &full, e))?;
    #[cfg(unix)]
    let (ctime, mtime, dev, ino, uid, gid) = {
        use std::os::unix::fs::MetadataExt;
        (
            IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
            IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
            meta.dev() as u32,
            meta.ino() as u32,
            meta.uid(),
            meta.gid(),
        )
    };
    #[cfg(not(unix))]
    let (ctime, mtime, dev, ino, uid, gid) =
        (IndexTime::new(0, 0), IndexTime::new(0, 0), 0, 0, 0, 0);
    Ok(IndexEntry {
        ctime,
        mtime,
        dev,
        ino,
        mode: mode as u32,
        uid,
        gid,
        file_size: meta.len() as u32,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    })
}

pub fn signature(author: &Author) -> Result<Signature<'static>> {
    Signature::now(&author.name, &author.email).map_err(|e| {
        Error::Input(format!(
            "--author `{} <{}>`: {}; use the form \"Name <email@example.org>\"",
            author.name,
            author.email,
            e.message()
        ))
    })
}

/// A git failure in `dir`, said with what scaffold was doing.
pub fn failed(op: &str, dir: &Path, source: git2::Error) -> Error {
    Error::Git {
        op: op.to_string(),
        path: dir.to_path_buf(),
        source,
    }
}

/// What the caller says on stderr when `resolve_author` fell back.
pub const FALLBACK_AUTHOR_NOTE: &str = "note: no --author and no git config user.name/user.email; committing as scaffold <scaffold@localhost>";

/// --author, else git config, else a fallback said on stderr by the caller.
pub fn resolve_author(flag: Option<&str>) -> Result<(Author, bool)> {
    if let Some(text) = flag {
        return Ok((Author::parse(text)?, false));
    }
    Ok(match Author::from_git_config() {
        Some(author) => (author, false),
        None => (
            Author {
                name: "scaffold".into(),
                email: "scaffold@localhost".into(),
            },
            true,
        ),
    })
}

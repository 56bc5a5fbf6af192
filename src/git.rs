//! git2 for `new` and the author: initialise the repository on `main` and commit the plan
//! in one commit, building blobs straight from the planned bytes (no re-reading of files).
//! Changes to an existing repo go through `transaction`, which uses the helpers here.
use std::path::Path;

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryInitOptions, Signature};

use crate::error::{Error, Result};
use crate::pack::PackBuilder;
use crate::plan::Plan;
use crate::write::Written;

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

/// Every blob of a plan, hashed and deflated into a pack: all `commit` needs of the files'
/// bytes. It touches no disk, so `new` builds it while the files are being written.
pub struct Blobs {
    pack: PackBuilder,
    ids: Vec<Oid>,
}

impl Blobs {
    pub fn of(plan: &Plan) -> Result<Blobs> {
        let mut pack = PackBuilder::new();
        let mut ids = Vec::with_capacity(plan.files.len());
        for (path, contents) in &plan.files {
            let id = Oid::hash_object(ObjectType::Blob, contents)
                .map_err(|e| failed("hash", Path::new(path.as_str()), e))?;
            pack.add(id, ObjectType::Blob, contents)?;
            ids.push(id);
        }
        Ok(Blobs { pack, ids })
    }
}

/// Initialises `dir` on `main`, commits the plan and records it as the pristine base
/// (`pristine::BASE_REF`; the same tree, since nothing was edited yet). The index takes
/// blob ids from `blobs` and stat data from the files `written` (so `git status` needs no
/// re-hash). Every object goes into one packfile written by `pack`: one file instead of a
/// loose object per blob, and no delta search (BENCHMARKS.md). Both refs move only once
/// the pack is on disk.
pub fn commit(
    dir: &Path,
    plan: &Plan,
    written: &Written,
    blobs: Blobs,
    author: &Author,
    message: &str,
) -> Result<String> {
    let files = plan.files.len();
    if written.stats().len() != files || blobs.ids.len() != files {
        return Err(Error::RepoState(format!(
            "`{}`: {} files staged and {} hashed for a plan of {files}; nothing was committed",
            dir.display(),
            written.stats().len(),
            blobs.ids.len(),
        )));
    }
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    let repo = Repository::init_opts(dir, &options).map_err(|e| failed("initialise", dir, e))?;
    let fail = |e| failed("commit", dir, e);
    // Trees and commits are built by libgit2 in an object store in memory, the repo's
    // only one while committing (so no write first looks for a copy on disk). The blobs
    // are in `blobs.pack`, where libgit2 cannot see them: its check that a tree's blobs
    // exist is off until the index and trees are written (tests run `git fsck --strict` on
    // the result).
    let odb = git2::Odb::new().map_err(fail)?;
    let mempack = odb.add_new_mempack_backend(1).map_err(fail)?;
    repo.set_odb(&odb).map_err(fail)?;
    let Blobs { mut pack, ids } = blobs;
    let mut index = repo.index().map_err(fail)?;
    let tree = {
        let _unchecked = UncheckedObjects::begin();
        for (((path, _), stat), id) in plan.files.iter().zip(written.stats()).zip(ids) {
            index
                .add(&entry_from(stat, path.as_str(), id, plan.mode_of(path)))
                .map_err(fail)?;
        }
        index.write_tree().map_err(fail)?
    };
    let tree = repo.find_tree(tree).map_err(fail)?;
    let signature = signature(author)?;
    let oid = repo
        .commit(None, &signature, &signature, message, &tree, &[])
        .map_err(fail)?;
    let base = crate::pristine::base_commit(&repo, None, &tree, None, message).map_err(fail)?;
    // Trees and commits are few and small: copied from memory into the pack.
    let mut in_memory = vec![oid, base];
    trees_under(&repo, &tree, &mut in_memory).map_err(fail)?;
    for id in in_memory {
        let object = odb.read(id).map_err(fail)?;
        pack.add(id, object.kind(), object.data())?;
    }
    pack.finish().write_to(&repo.path().join("objects"))?;
    // The branch moves only once its objects are on disk; the reflog says what `git commit` would.
    let summary = message.lines().next().unwrap_or_default();
    repo.reference(
        "refs/heads/main",
        oid,
        false,
        &format!("commit (initial): {summary}"),
    )
    .map_err(fail)?;
    repo.reference(crate::pristine::BASE_REF, base, false, "scaffold: base")
        .map_err(fail)?;
    mempack.reset().map_err(fail)?;
    index.write().map_err(fail)?;
    Ok(oid.to_string())
}

/// libgit2's check that objects a new object names exist, off while alive (it is a
/// process-wide setting) and back on when dropped, on every path out.
struct UncheckedObjects;

impl UncheckedObjects {
    fn begin() -> Self {
        git2::opts::strict_object_creation(false);
        UncheckedObjects
    }
}

impl Drop for UncheckedObjects {
    fn drop(&mut self) {
        git2::opts::strict_object_creation(true);
    }
}

/// `tree` and every tree below it.
fn trees_under(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    out: &mut Vec<Oid>,
) -> std::result::Result<(), git2::Error> {
    out.push(tree.id());
    for entry in tree.iter() {
        if entry.kind() == Some(ObjectType::Tree) {
            trees_under(repo, &repo.find_tree(entry.id())?, out)?;
        }
    }
    Ok(())
}

/// A branch name by git's own rules (`git check-ref-format --branch`), which libgit2's
/// check alone does not fully apply: a branch also may not start with `-`.
pub fn is_valid_branch(name: &str) -> bool {
    !name.starts_with('-') && git2::Branch::name_is_valid(name).unwrap_or(false)
}

/// A digest of a plan's paths and bytes: git's blob id of the canonical listing
/// `path\0len\0bytes…`, hashed as it streams by rather than copied into one buffer first
/// (records store this value, so it must not change).
pub fn digest(plan: &Plan) -> String {
    use sha1::{Digest, Sha1};
    let lengths: Vec<String> = plan.files.values().map(|c| c.len().to_string()).collect();
    let total: usize = plan
        .files
        .iter()
        .zip(&lengths)
        .map(|((path, contents), len)| path.as_str().len() + 1 + len.len() + 1 + contents.len())
        .sum();
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {total}\0").as_bytes());
    for ((path, contents), len) in plan.files.iter().zip(&lengths) {
        hasher.update(path.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(len.as_bytes());
        hasher.update([0]);
        hasher.update(contents);
    }
    crate::pack::hex(&hasher.finalize())
}

/// An index entry for `path` holding blob `id`, with the stat data of the file on disk.
pub fn entry_for(root: &Path, path: &str, id: Oid, mode: i32) -> Result<IndexEntry> {
    let full = root.join(path);
    let meta = std::fs::symlink_metadata(&full).map_err(|e| Error::io_path("inspect", &full, e))?;
    Ok(entry_from(&meta, path, id, mode))
}

/// An index entry for `path` holding blob `id`, with the stat data `meta`.
fn entry_from(meta: &std::fs::Metadata, path: &str, id: Oid, mode: i32) -> IndexEntry {
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
    IndexEntry {
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
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_the_blob_id_of_the_listing() {
        let plan = Plan::of_texts(&[("a/b.yaml", "one\n"), ("c.tf", ""), ("d/e/f", "x")]);
        let listing = b"a/b.yaml\x004\x00one\nc.tf\x000\x00d/e/f\x001\x00x";
        let expected = Oid::hash_object(ObjectType::Blob, listing).expect("hash");
        assert_eq!(digest(&plan), expected.to_string());
    }
}

//! The pristine base: the exact rendering a repo was last made from, kept in the repo itself
//! so that `update`, `add-addon` and drift detection never need the old blueprint.
//!
//! Every scaffold commit also writes a commit whose tree is the rendering (user edits not
//! included) under `refs/scaffold/base`, its parent the previous base. A commit rather
//! than a bare tree because every git host pushes and fetches commits, and the chain lets
//! a repo whose scaffold commit was reset or reverted find the base its record matches.
//! Custom refs do not travel with `git clone`: `git push origin 'refs/scaffold/*'` shares
//! them, `git fetch origin '+refs/scaffold/*:refs/scaffold/*'` brings them into a clone, and
//! `fetch_matching` does so by itself when a clone lacks the base its record needs.
//! git2 here and in `git` only.
use std::borrow::Cow;
use std::path::Path;

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository, Signature, TreeWalkResult};

use crate::error::{Error, Problem, Result};
use crate::identity::Signing;
use crate::tree::{Plan, RelPath};

/// The whole repository's base. Per-environment bases, when a repo holds several, would
/// live beside it as `refs/scaffold/envs/<env>`.
pub const BASE_REF: &str = "refs/scaffold/base";

/// How far back the chain is searched for the base a record matches.
const SEARCH_DEPTH: usize = 64;

/// The commands a user runs to share the base with a clone, for messages and docs. The
/// `+` lets the fetch replace a local base once the clone has made scaffold commits.
pub const FETCH_HINT: &str = "git fetch origin '+refs/scaffold/*:refs/scaffold/*'";

/// A scaffold repo's answers record as the base stores it: its path in the tree (the record
/// belongs to the model; the base only finds it) and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct RecordFile<'a> {
    pub path: &'a str,
    pub bytes: &'a [u8],
}

/// The newest stored base and its answers record at `record_path` (the base a hand-edited
/// record was edited from), if the repo has one.
pub fn tip(root: &Path, record_path: &str) -> Result<Option<(Plan, Vec<u8>)>> {
    tip_of(root, BASE_REF, record_path)
}

/// The newest base of `origin` last fetched (a teammate's, after a merge), if any.
pub fn remote_tip(root: &Path, record_path: &str) -> Result<Option<Plan>> {
    Ok(tip_of(root, REMOTE_REF, record_path)?.map(|(plan, _)| plan))
}

fn tip_of(root: &Path, refname: &str, record_path: &str) -> Result<Option<(Plan, Vec<u8>)>> {
    let repo = Repository::open(root).map_err(|e| failed("open", root, e))?;
    let fail = |e| failed("read the pristine base", root, e);
    let commit = match repo.refname_to_id(refname) {
        Ok(id) => repo.find_commit(id).map_err(fail)?,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(fail(e)),
    };
    let tree = commit.tree().map_err(fail)?;
    if tree.get_path(Path::new(record_path)).is_err() {
        return Ok(None);
    }
    let plan = read_tree(&repo, &tree, root, &Filters::of(root))?;
    let record = RelPath::new(record_path)
        .ok()
        .and_then(|path| plan.files.get(&path).cloned())
        .unwrap_or_default();
    Ok(Some((plan, record)))
}

/// The filter drivers (`filter.NAME.clean`, git-lfs) a base's blobs go through: stored as
/// `git add` would store them, so a pushed `refs/scaffold/*` carries LFS pointers, not the
/// files; read back as `git checkout` would give them. None configured (the common case):
/// the base holds the plan's bytes, and no path's attributes are looked up.
struct Filters(Option<crate::attributes::Eol>);

impl Filters {
    fn of(root: &Path) -> Self {
        let eol = crate::attributes::Eol::of(root);
        Filters(eol.any_driver_configured().then_some(eol))
    }

    /// The blob the base stores for the canonical `bytes` at `path`.
    fn to_blob<'a>(&self, root: &Path, path: &str, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        match &self.0 {
            Some(eol) if eol.driver(path).is_some() => eol.to_blob(root, path, bytes),
            _ => Ok(Cow::Borrowed(bytes)),
        }
    }

    /// The canonical bytes of the base's blob `bytes` at `path`: the file in the work tree
    /// when `git status` would call it unchanged from that blob (its clean form is the
    /// blob: no smudge, no LFS download, and a lossy filter pair reads back as written) or
    /// is the blob itself, else what `git checkout` makes of the blob.
    fn checked_out<'a>(&self, root: &Path, path: &str, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let Some(eol) = &self.0 else {
            return Ok(Cow::Borrowed(bytes));
        };
        if eol.driver(path).is_none() {
            return Ok(Cow::Borrowed(bytes));
        }
        let Ok(rel) = RelPath::new(path) else {
            return eol.checked_out(root, path, bytes);
        };
        // A base stored before the filter applied holds the file's own bytes.
        if let Some(file) = crate::attributes::read_canonical(root, &rel, eol)?
            && (file == bytes || *eol.to_blob(root, path, &file)? == *bytes)
        {
            return Ok(Cow::Owned(file));
        }
        eol.checked_out(root, path, bytes)
    }
}

/// Stores `plan` as the repo's new base; returns the base commit's id.
pub fn store(root: &Path, plan: &Plan, message: &str, by: &BaseBy<'_>) -> Result<String> {
    let repo = Repository::open(root).map_err(|e| failed("open", root, e))?;
    match prepare(&repo, root, plan, message, by)? {
        Some(next) => {
            publish(&repo, root, &next)?;
            Ok(next.new.to_string())
        }
        None => Ok(repo
            .refname_to_id(BASE_REF)
            .map_err(|e| failed("read the pristine base", root, e))?
            .to_string()),
    }
}

/// A base commit written but not yet published: `BASE_REF` moves from `old` to `new`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextBase {
    pub old: Option<Oid>,
    pub new: Oid,
}

/// Writes the objects of `plan` as the next base commit without moving `BASE_REF`, so a
/// transaction publishes it at its commit point; None when the base already holds `plan`.
/// A write the filesystem failed is tried again (`retrying_object_writes`).
pub fn prepare(
    repo: &Repository,
    root: &Path,
    plan: &Plan,
    message: &str,
    by: &BaseBy<'_>,
) -> Result<Option<NextBase>> {
    let filters = Filters::of(root);
    retrying_object_writes("base", root, || {
        prepare_once(repo, root, plan, message, by, &filters)
    })
}

/// Stores `bytes` as a blob, as git's `hash-object -w` does: an object the repository
/// holds already is only freshened (its file's time renewed, so a concurrent `git gc`
/// does not prune it), nothing written. (libgit2's `git_blob_create_from_buffer` opens a
/// temporary file for every blob before it knows whether the object exists: 300 file
/// creations for a base of 300 files, nearly all of them already stored.)
pub fn store_blob(odb: &git2::Odb<'_>, bytes: &[u8]) -> std::result::Result<Oid, git2::Error> {
    odb.write(ObjectType::Blob, bytes)
}

/// Runs `write`, which writes loose objects into the repository at `root`, again when
/// the filesystem failed it (an OS-class libgit2 error): a concurrent `git gc` (its
/// prune-packed and prune) removes an empty `objects/XX` directory between libgit2
/// creating it and linking or fsyncing an object there, and the next attempt creates it
/// again. Objects written before a failure stay (an attempt writes only what is missing),
/// so each attempt gets further; nothing but unreferenced objects is written before a
/// failure, so a retry changes nothing else. A filesystem that keeps failing (no space,
/// no permission) gives its error after about 1.5 s. `name` is the write's test seam
/// (`seams::test_object_write`).
pub fn retrying_object_writes<T>(
    name: &str,
    root: &Path,
    mut write: impl FnMut() -> Result<T>,
) -> Result<T> {
    // Measured beside `git gc` run in a loop: a base of a new addon's trees lost a
    // directory on up to 7 attempts in a row.
    const ATTEMPTS: usize = 32;
    let mut attempt = 1;
    loop {
        let result = crate::seams::test_object_write(name, attempt)
            .map_err(|e| failed("write objects", root, e))
            .and_then(|()| write());
        match result {
            Err(Error::Git { source, .. })
                if attempt < ATTEMPTS && source.class() == git2::ErrorClass::Os =>
            {
                // gc's prune is brief: a moment later the directory can be made again.
                let pause = (5u64 << attempt.min(4)).min(50);
                std::thread::sleep(std::time::Duration::from_millis(pause));
                attempt += 1;
            }
            result => return result,
        }
    }
}

fn prepare_once(
    repo: &Repository,
    root: &Path,
    plan: &Plan,
    message: &str,
    by: &BaseBy<'_>,
    filters: &Filters,
) -> Result<Option<NextBase>> {
    let fail = |e| failed("store the pristine base", root, e);
    let odb = repo.odb().map_err(fail)?;
    let mut index = git2::Index::new().map_err(fail)?;
    for (path, contents) in &plan.files {
        let contents = filters.to_blob(root, path.as_str(), contents)?;
        let entry = IndexEntry {
            ctime: IndexTime::new(0, 0),
            mtime: IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: plan.mode_of(path) as u32,
            uid: 0,
            gid: 0,
            file_size: u32::try_from(contents.len()).unwrap_or(u32::MAX),
            id: store_blob(&odb, &contents).map_err(fail)?,
            flags: 0,
            flags_extended: 0,
            path: path.as_str().as_bytes().to_vec(),
        };
        index.add(&entry).map_err(fail)?;
    }
    let tree = repo
        .find_tree(index.write_tree_to(repo).map_err(fail)?)
        .map_err(fail)?;
    let parent = match repo.refname_to_id(BASE_REF) {
        Ok(id) => Some(repo.find_commit(id).map_err(fail)?),
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    let theirs = unmerged_remote(repo, parent.as_ref().map(git2::Commit::id)).map_err(fail)?;
    if let Some(parent) = &parent
        && parent.tree_id() == tree.id()
        && theirs.is_none()
    {
        return Ok(None);
    }
    let parents: Vec<&git2::Commit<'_>> = parent.iter().chain(theirs.iter()).collect();
    let new = base_commit(repo, &tree, &parents, message, by)?;
    Ok(Some(NextBase {
        old: parent.map(|p| p.id()),
        new,
    }))
}

/// Runs `update`, which locks a ref, again while another process holds that lock, for up
/// to git's `core.filesRefLockTimeout` (100 ms by default): `git gc`'s pack-refs holds
/// every ref's lock for a moment, and `git commit` waits for it that long too.
pub fn waiting_for_ref_lock<T>(
    mut update: impl FnMut() -> std::result::Result<T, git2::Error>,
) -> std::result::Result<T, git2::Error> {
    let start = std::time::Instant::now();
    loop {
        match update() {
            Err(e)
                if e.code() == git2::ErrorCode::Locked
                    && start.elapsed() < std::time::Duration::from_millis(100) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            result => return result,
        }
    }
}

/// Moves `BASE_REF` to `next.new`, if it is still at `next.old` (or already there).
pub fn publish(repo: &Repository, root: &Path, next: &NextBase) -> Result<()> {
    move_ref(repo, root, next.old, Some(next.new))
}

/// Moves `BASE_REF` back from `next.new` to `next.old` (a rolled-back change); a ref that
/// is elsewhere is left alone.
pub fn unpublish(repo: &Repository, root: &Path, next: &NextBase) -> Result<()> {
    move_ref(repo, root, Some(next.new), next.old)
}

fn move_ref(repo: &Repository, root: &Path, from: Option<Oid>, to: Option<Oid>) -> Result<()> {
    let fail = |e| failed("move the pristine base", root, e);
    let current = match repo.refname_to_id(BASE_REF) {
        Ok(id) => Some(id),
        Err(e) if e.code() == git2::ErrorCode::NotFound => None,
        Err(e) => return Err(fail(e)),
    };
    if current == to || current != from {
        return Ok(());
    }
    match (current, to) {
        (_, Some(to)) => {
            waiting_for_ref_lock(|| repo.reference(BASE_REF, to, true, "scaffold: base"))
                .map_err(fail)?;
        }
        (Some(_), None) => {
            repo.find_reference(BASE_REF)
                .and_then(|mut r| r.delete())
                .map_err(fail)?;
        }
        (None, None) => {}
    }
    Ok(())
}

/// The remote's base last fetched (`REMOTE_REF`), when the local base `local` does not
/// contain it: a teammate's scaffold change merged into this branch. The next base
/// commit takes it as a second parent, so pushing `refs/scaffold/*` fast-forwards.
fn unmerged_remote(
    repo: &Repository,
    local: Option<Oid>,
) -> std::result::Result<Option<git2::Commit<'_>>, git2::Error> {
    let remote = match repo.refname_to_id(REMOTE_REF) {
        Ok(id) => id,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let Some(local) = local else {
        return Ok(None);
    };
    if remote == local || repo.graph_descendant_of(local, remote)? {
        return Ok(None);
    }
    repo.find_commit(remote).map(Some)
}

/// Who a base commit is by: the user, as on their own commits (a forge shows a signed
/// base as verified only when its committer is the key's owner).
pub struct BaseBy<'a> {
    pub author: Signature<'static>,
    pub committer: Signature<'static>,
    pub signing: Option<&'a Signing>,
}

/// A base commit of `tree` on top of `parents` (the previous base, and a teammate's
/// merged one), by the user and signed as the user's commits are.
pub fn base_commit(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    parents: &[&git2::Commit<'_>],
    message: &str,
    by: &BaseBy<'_>,
) -> Result<Oid> {
    let root = repo.path();
    let fail = |e| failed("store the pristine base", root, e);
    // Signed as the user's commits are (commit.gpgSign): a base pushed with
    // `refs/scaffold/*` is never the one unsigned commit of the repo.
    Signing::commit(
        by.signing,
        repo,
        &by.author,
        &by.committer,
        message,
        tree,
        parents,
        fail,
    )
}

/// The stored base whose answers record is `record` (the newest such), if any.
pub fn find(root: &Path, record: RecordFile<'_>) -> Result<Option<Plan>> {
    find_in(root, BASE_REF, record).map(|found| found.map(|(plan, _)| plan))
}

/// Where `fetch_matching` puts the remote's base: outside `refs/scaffold/` so that pushing
/// `refs/scaffold/*` never shares it, and so the local base stays until one matches. It
/// stays there: a base commit that does not contain it merges it (`unmerged_remote`).
const REMOTE_REF: &str = "refs/scaffold-remote/base";

/// The base matching `record` from the `origin` remote, when the local chain has
/// none (a plain clone has no base; a pulled branch has a newer one than the clone). It
/// becomes the local base; the remote's name is returned so the caller can say so.
pub fn fetch_matching(root: &Path, record: RecordFile<'_>) -> Result<Option<(Plan, String)>> {
    let repo = Repository::open(root).map_err(|e| failed("open", root, e))?;
    let found = if fetch_remote(&repo)? {
        find_in(root, REMOTE_REF, record)?
    } else {
        None
    };
    let result = match found {
        Some((plan, id)) => {
            repo.reference(BASE_REF, id, true, "scaffold: base fetched from origin")
                .map_err(|e| failed("store the fetched base", root, e))?;
            Some((plan, "origin".to_string()))
        }
        None => None,
    };
    Ok(result)
}

/// Brings `origin`'s base into `REMOTE_REF`; false without an `origin`, without a base
/// there, or offline (the local base serves then).
pub fn fetch_remote(repo: &Repository) -> Result<bool> {
    let Ok(mut remote) = repo.find_remote("origin") else {
        return Ok(false);
    };
    let refspec = format!("+{BASE_REF}:{REMOTE_REF}");
    // libgit2's fetch rewrites `.git/shallow` from what it negotiated, which drops the
    // clone's own boundary commits: the repo would then claim parents it never had (fsck:
    // "missing commit"). The base chain comes whole; the boundary must stay as it was.
    let shallow_file = repo.commondir().join("shallow");
    let shallow_before = std::fs::read(&shallow_file).ok();
    let fetched = remote.fetch(&[refspec.as_str()], None, None).is_ok();
    if let Some(before) = &shallow_before
        && std::fs::read(&shallow_file).ok().as_ref() != Some(before)
    {
        restore_shallow(&shallow_file, before)?;
    }
    Ok(fetched && repo.refname_to_id(REMOTE_REF).is_ok())
}

/// Whether `origin`'s base (fetched now) holds a teammate's scaffold change the local
/// base does not: the next base commit merges it, so `git push origin 'refs/scaffold/*'`
/// fast-forwards.
pub fn remote_unmerged(root: &Path) -> Result<bool> {
    let repo = Repository::open(root).map_err(|e| failed("open", root, e))?;
    if !fetch_remote(&repo)? {
        return Ok(false);
    }
    let local = repo.refname_to_id(BASE_REF).ok();
    let theirs =
        unmerged_remote(&repo, local).map_err(|e| failed("read the fetched base", root, e))?;
    Ok(theirs.is_some())
}

/// Writes `.git/shallow` back as it was before a fetch (by rename, as git replaces it).
fn restore_shallow(path: &Path, bytes: &[u8]) -> Result<()> {
    let temp = path.with_file_name("shallow.scaffold-tmp");
    std::fs::write(&temp, bytes).map_err(|e| Error::io_path("write", &temp, e))?;
    std::fs::rename(&temp, path).map_err(|e| Error::io_path("replace", path, e))
}

fn find_in(root: &Path, refname: &str, record: RecordFile<'_>) -> Result<Option<(Plan, Oid)>> {
    let repo = Repository::open(root).map_err(|e| failed("open", root, e))?;
    let fail = |e| failed("read the pristine base", root, e);
    let mut next = match repo.refname_to_id(refname) {
        Ok(id) => Some(repo.find_commit(id).map_err(fail)?),
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(fail(e)),
    };
    // The record as stored by a base written before filters applied to it, and since.
    let filters = Filters::of(root);
    let cleaned = filters.to_blob(root, record.path, record.bytes)?;
    let wanted = [
        Oid::hash_object(ObjectType::Blob, record.bytes).map_err(fail)?,
        Oid::hash_object(ObjectType::Blob, &cleaned).map_err(fail)?,
    ];
    // Newest first, through every parent: a merged base has a teammate's chain beside ours.
    let mut queue: std::collections::VecDeque<git2::Commit<'_>> = next.take().into_iter().collect();
    let mut seen = std::collections::HashSet::new();
    while let Some(commit) = queue.pop_front() {
        if seen.len() >= SEARCH_DEPTH || !seen.insert(commit.id()) {
            continue;
        }
        let tree = commit.tree().map_err(fail)?;
        let recorded = tree.get_path(Path::new(record.path)).ok().map(|e| e.id());
        if recorded.is_some_and(|id| wanted.contains(&id)) {
            return Ok(Some((
                read_tree(&repo, &tree, root, &filters)?,
                commit.id(),
            )));
        }
        queue.extend(commit.parents());
    }
    Ok(None)
}

fn read_tree(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    root: &Path,
    filters: &Filters,
) -> Result<Plan> {
    let mut entries = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(ObjectType::Blob)
            && let Ok(name) = entry.name()
        {
            entries.push((format!("{dir}{name}"), entry.id()));
        }
        TreeWalkResult::Ok
    })
    .map_err(|e| failed("read the pristine base", root, e))?;
    let mut plan = Plan::default();
    for (path, id) in entries {
        let blob = repo
            .find_blob(id)
            .map_err(|e| failed("read the pristine base", root, e))?;
        let path = RelPath::new(&path).map_err(|m| {
            Error::repo_state(Problem::new(format!("{BASE_REF} holds a path scaffold cannot write: {m}")).fix(format!("delete that ref (`git update-ref -d {BASE_REF}`) and run `scaffold update` to record it again")))
        })?;
        let contents = filters.checked_out(root, path.as_str(), blob.content())?;
        plan.add(path, contents.into_owned())?;
    }
    Ok(plan)
}

fn failed(op: &str, root: &Path, e: git2::Error) -> Error {
    Error::git(op, root, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_a_record_matches_is_found_down_the_chain() {
        let dir = tempfile::TempDir::new().expect("dir");
        Repository::init(dir.path()).expect("init");
        const RECORD: &str = ".scaffold/answers.yaml";
        let record = |bytes| RecordFile {
            path: RECORD,
            bytes,
        };
        let first = Plan::of_texts(&[(RECORD, "v: 1\n"), ("a/b.yaml", "one\n")]);
        let second = Plan::of_texts(&[(RECORD, "v: 2\n"), ("a/b.yaml", "two\n")]);
        assert!(find(dir.path(), record(b"v: 1\n")).expect("find").is_none());
        let me = Signature::now("Test", "test@example.org").expect("signature");
        let by = BaseBy {
            author: me.clone(),
            committer: me,
            signing: None,
        };
        let id = store(dir.path(), &first, "first", &by).expect("store");
        assert_eq!(store(dir.path(), &first, "again", &by).expect("store"), id);
        store(dir.path(), &second, "second", &by).expect("store");
        let found = find(dir.path(), record(b"v: 1\n"))
            .expect("find")
            .expect("base");
        assert_eq!(found.files, first.files);
        let found = find(dir.path(), record(b"v: 2\n"))
            .expect("find")
            .expect("base");
        assert_eq!(found.files, second.files);
        assert!(find(dir.path(), record(b"v: 3\n")).expect("find").is_none());
    }
}

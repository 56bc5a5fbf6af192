//! git2 for `new` and the author: initialise the repository on `main` and commit the plan
//! in one commit, building blobs straight from the planned bytes (no re-reading of files).
//! Changes to an existing repo go through `transaction`, which uses the helpers here.
use std::path::Path;

use git2::{IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryInitOptions, Signature};

use crate::durability::Fsync;
use crate::error::{Error, Problem, Result};
use crate::hooks::Hooks;
use crate::identity::Signing;
use crate::pack::PackBuilder;
use crate::tree::Plan;

/// Who a commit is by, and how it is signed: the author (`--author`, else git's), the
/// committer git would name, and `commit.gpgSign`'s signing (`identity` resolves them).
pub struct Author {
    pub name: String,
    pub email: String,
    /// The author date git gives (`GIT_AUTHOR_DATE`); None: now.
    pub when: Option<(i64, i32)>,
    /// The committer, when git names one; None: the author.
    pub committer: Option<crate::identity::Person>,
    pub signing: Option<Signing>,
}

impl Author {
    /// Parses `Name <email>`.
    pub fn parse(text: &str) -> Result<Self> {
        let fail = || {
            Error::input(format!(
                "--author `{text}`: use the form \"Name <email@example.org>\""
            ))
        };
        let (name, rest) = text.split_once('<').ok_or_else(fail)?;
        let email = rest.strip_suffix('>').ok_or_else(fail)?.trim();
        let name = name.trim();
        if name.is_empty() || !email.contains('@') {
            return Err(fail());
        }
        crate::identity::check_person(
            name,
            email,
            "--author",
            "use the form \"Name <email@example.org>\"",
        )?;
        Ok(Author::named(name, email))
    }

    fn named(name: &str, email: &str) -> Self {
        Author {
            name: name.into(),
            email: email.into(),
            when: None,
            committer: None,
            signing: None,
        }
    }

    fn person(&self) -> crate::identity::Person {
        crate::identity::Person {
            name: self.name.clone(),
            email: self.email.clone(),
            when: self.when,
        }
    }
}

/// How git would write a commit here: by whom (and signed how), and what of it is synced
/// to disk (`core.fsync`).
pub struct Committing {
    pub author: Author,
    pub fsync: Fsync,
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
            let id = Oid::from_bytes(&crate::tree::blob_digest(contents))
                .map_err(|e| Error::git("hash", Path::new(path.as_str()), e))?;
            pack.add(id, ObjectType::Blob, contents);
            ids.push(id);
        }
        Ok(Blobs { pack, ids })
    }
}

/// An empty repository in `dir` on `main` (or the one already there). Like `git init`, it
/// syncs nothing whatever `core.fsync` says: libgit2 writes HEAD and config as plain files,
/// and its refs backend, which takes libgit2's syncing option when it is made, is made only
/// when a ref is first read or written (libgit2 1.9, `repository.c`, `refdb_fs.c`), so a
/// commit that sets the option first has its refs synced as git would.
pub fn init(dir: &Path) -> Result<Repository> {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    Repository::init_opts(dir, &options).map_err(|e| Error::git("initialise", dir, e))
}

/// A directory name no plan can hold (`git_paths::segment_rule` refuses it: NTFS's short
/// name for `.git`), for a repository initialised aside.
const ASIDE: &str = "git~1";

/// A repository initialised in `ASIDE` of a directory, not yet where it belongs.
pub struct Aside {
    root: std::path::PathBuf,
}

/// `init` in `root/ASIDE`: `new` initialises its repository while git is asked about the
/// git directory it will have (`root/.git`), and git must not find a repository half made
/// there. `Aside::move_in` moves it there once git has answered.
pub fn init_aside(root: &Path) -> Result<Aside> {
    init(&root.join(ASIDE))?;
    Ok(Aside {
        root: root.to_path_buf(),
    })
}

impl Aside {
    /// The repository moved to `root/.git` (its config names no path: nothing else
    /// changes) and opened there.
    pub fn move_in(self) -> Result<Repository> {
        let aside = self.root.join(ASIDE);
        let git_dir = self.root.join(".git");
        std::fs::rename(aside.join(".git"), &git_dir)
            .map_err(|e| Error::io_path("move the new repository to", &git_dir, e))?;
        std::fs::remove_dir(&aside).map_err(|e| Error::io_path("remove", &aside, e))?;
        Repository::open_ext(
            &self.root,
            git2::RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&std::ffi::OsStr>(),
        )
        .map_err(|e| Error::git("open", &self.root, e))
    }
}

/// Commits the plan in `repo` (just made at `dir`: `init`, or `init_aside` and
/// `Aside::move_in`) and records it as the pristine base (`pristine::BASE_REF`; the same
/// tree, since nothing was edited yet). The index takes blob ids from `blobs` and stat data
/// from `stats`, the files as written (so `git status` needs no re-hash). Every object goes
/// into one packfile written by `pack`: one file instead of a loose object per blob, and no
/// delta search (BENCHMARKS.md). Both refs move only once the pack is on disk. `hooks` are
/// the repo's commit hooks (`Hooks::find`, asked once it exists): with hooks, the blobs,
/// trees and index go to disk first, for the hooks (git processes) to read, and the commit
/// follows in a second pack. A hook that rejects fails the commit before any ref moves. The
/// hooks come back for `post-commit`, which the caller runs once the repo is in place.
/// Synced to disk: what `core.fsync` has git sync (by default the pack and its idx; refs,
/// reflogs and the index when it names them).
#[allow(clippy::too_many_arguments)] // one commit's inputs, each from its own step
pub fn commit(
    repo: Repository,
    dir: &Path,
    plan: &Plan,
    stats: &[std::fs::Metadata],
    blobs: Blobs,
    committing: &Committing,
    message: &str,
    hooks: Option<Hooks>,
) -> Result<(String, Option<Hooks>)> {
    match hooks {
        None => {
            let first = write_first_commit(repo, dir, plan, blobs, committing, message)?;
            Ok((first.write_index(plan, stats, committing.fsync)?, None))
        }
        Some(hooks) => {
            let commit =
                commit_with_hooks(repo, dir, plan, stats, blobs, committing, message, &hooks)?;
            Ok((commit, Some(hooks)))
        }
    }
}

/// A new repository's first commit and its base, built from the plan alone (a tree names
/// blobs, not the files' stat data), on disk and on `main`: all but the index. `new` makes
/// it on its second thread while the files are written, so the pack's syncs wait beside
/// the files, not after them; `write_index` follows once they are written.
pub struct FirstCommit {
    repo: Repository,
    dir: std::path::PathBuf,
    ids: Vec<Oid>,
    tree: Oid,
    commit: Oid,
}

/// Writes the first commit of `repo` (just made at `dir` by `init_aside` and
/// `Aside::move_in`, with no commit hooks): its trees, commit and base, built by libgit2 in
/// an object store in memory (the repo's only one while committing, so no write first looks
/// for a copy on disk), go with `blobs` into one pack, synced as `core.fsync` says; then
/// `main` and the base ref move to them. The blobs are in `blobs.pack`, where libgit2
/// cannot see them: its check that a tree's blobs exist is off while the trees are built
/// (tests run `git fsck --strict` on the result). The refs move before the index is
/// written, unlike `git commit`: nothing of the staging directory is seen, or kept after a
/// crash, until it is complete and moved into place.
pub fn write_first_commit(
    repo: Repository,
    dir: &Path,
    plan: &Plan,
    blobs: Blobs,
    committing: &Committing,
    message: &str,
) -> Result<FirstCommit> {
    let Committing { author, fsync } = committing;
    check_counts(dir, plan.files.len(), &[("hashed", blobs.ids.len())])?;
    let _libgit2_fsync = Libgit2Fsync::set(fsync.libgit2_files());
    let fail = |e| Error::git("commit", dir, e);
    let odb = git2::Odb::new().map_err(fail)?;
    let mempack = odb.add_new_mempack_backend(1).map_err(fail)?;
    repo.set_odb(&odb).map_err(fail)?;
    let Blobs { pack, ids } = blobs;
    // An index of the plan in memory, for its trees only: the one git keeps needs the
    // files' stat data, which `write_index` adds once they are written.
    let mut index = git2::Index::new().map_err(fail)?;
    let tree = index_files(&mut index, &repo, plan, None, &ids).map_err(fail)?;
    let tree_object = repo.find_tree(tree).map_err(fail)?;
    // Trees and commits are few and small: copied from memory into the pack.
    let mut in_memory = Vec::new();
    trees_under(&repo, &tree_object, &mut in_memory).map_err(fail)?;
    let commit = write_commit(&repo, dir, author, message, &tree_object, &[])?;
    let base = crate::pristine::base_commit(&repo, &tree_object, &[], message, &base_by(author)?)?;
    in_memory.extend([commit, base]);
    packed(&repo, &odb, pack, &in_memory)?.write_to(&repo.path().join("objects"), *fsync)?;
    mempack.reset().map_err(fail)?;
    drop(tree_object);
    let summary = message.lines().next().unwrap_or_default();
    move_first_refs(&repo, dir, commit, base, summary)?;
    Ok(FirstCommit {
        repo,
        dir: dir.to_path_buf(),
        ids,
        tree,
        commit,
    })
}

impl FirstCommit {
    /// Writes the index of the files as written (`stats`, in plan order); returns the
    /// commit's id.
    pub fn write_index(
        self,
        plan: &Plan,
        stats: &[std::fs::Metadata],
        fsync: Fsync,
    ) -> Result<String> {
        let FirstCommit {
            repo,
            dir,
            ids,
            tree,
            commit,
        } = self;
        check_counts(
            &dir,
            plan.files.len(),
            &[("staged", stats.len()), ("hashed", ids.len())],
        )?;
        let _libgit2_fsync = Libgit2Fsync::set(fsync.libgit2_files());
        let fail = |e| Error::git("commit", &dir, e);
        let mut index = repo.index().map_err(fail)?;
        // The trees again, for the index's record of them (what `git commit` leaves too).
        let indexed = index_files(&mut index, &repo, plan, Some(stats), &ids).map_err(fail)?;
        if indexed != tree {
            return Err(Error::repo_state(
                Problem::new(format!(
                    "`{}`: the index's tree {indexed} is not the committed tree {tree}",
                    dir.display()
                ))
                .fix("nothing was committed; run the command again"),
            ));
        }
        write_index(&repo, &mut index, fsync)?;
        Ok(commit.to_string())
    }
}

/// Adds the plan's files (blob ids `ids`; stat data `stats` when written, in plan order;
/// callers check the counts) to `index` and writes the trees they make into `repo`'s
/// object store, where the blobs are not (they are in the commit's pack): the root tree's id.
fn index_files(
    index: &mut git2::Index,
    repo: &Repository,
    plan: &Plan,
    stats: Option<&[std::fs::Metadata]>,
    ids: &[Oid],
) -> std::result::Result<Oid, git2::Error> {
    let _unchecked = UncheckedObjects::begin();
    for (n, ((path, _), id)) in plan.files.iter().zip(ids).enumerate() {
        let stat = stats.and_then(|stats| stats.get(n));
        index.add(&entry_of(stat, path.as_str(), *id, plan.mode_of(path)))?;
    }
    index.write_tree_to(repo)
}

/// The first commit's refs, moved once its objects are on disk; the reflog says what `git
/// commit` would. libgit2 syncs them when `core.fsync` names refs (`Libgit2Fsync`).
fn move_first_refs(
    repo: &Repository,
    dir: &Path,
    commit: Oid,
    base: Oid,
    summary: &str,
) -> Result<()> {
    let fail = |e| Error::git("commit", dir, e);
    repo.reference(
        "refs/heads/main",
        commit,
        false,
        &format!("commit (initial): {summary}"),
    )
    .map_err(fail)?;
    repo.reference(crate::pristine::BASE_REF, base, false, "scaffold: base")
        .map_err(fail)?;
    Ok(())
}

/// Refuses a commit whose files and what was made of them (stat data, blob ids: each
/// count named by what made it) do not line up.
fn check_counts(dir: &Path, files: usize, counts: &[(&str, usize)]) -> Result<()> {
    if counts.iter().all(|(_, n)| *n == files) {
        return Ok(());
    }
    let made: Vec<String> = counts
        .iter()
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    Err(Error::repo_state(
        Problem::new(format!(
            "`{}`: {} for a plan of {files} files",
            dir.display(),
            made.join(" and ")
        ))
        .fix("nothing was committed"),
    ))
}

/// `commit` in a repo with commit hooks: the blobs, trees and index go to disk first, for
/// `pre-commit` to read, and the commit (with the message the hooks leave) follows in a
/// second pack.
#[allow(clippy::too_many_arguments)] // one commit's inputs, each from its own step
fn commit_with_hooks(
    repo: Repository,
    dir: &Path,
    plan: &Plan,
    stats: &[std::fs::Metadata],
    blobs: Blobs,
    committing: &Committing,
    message: &str,
    hooks: &Hooks,
) -> Result<String> {
    let Committing { author, fsync } = committing;
    let fsync = *fsync;
    check_counts(
        dir,
        plan.files.len(),
        &[("staged", stats.len()), ("hashed", blobs.ids.len())],
    )?;
    let _libgit2_fsync = Libgit2Fsync::set(fsync.libgit2_files());
    let fail = |e| Error::git("commit", dir, e);
    // Built in memory as in `write_first_commit`.
    let odb = git2::Odb::new().map_err(fail)?;
    let mempack = odb.add_new_mempack_backend(1).map_err(fail)?;
    repo.set_odb(&odb).map_err(fail)?;
    let Blobs { pack, ids } = blobs;
    let mut index = repo.index().map_err(fail)?;
    let tree = index_files(&mut index, &repo, plan, Some(stats), &ids).map_err(fail)?;
    let tree = repo.find_tree(tree).map_err(fail)?;
    let mut in_memory = Vec::new();
    trees_under(&repo, &tree, &mut in_memory).map_err(fail)?;
    write_pack(&repo, &odb, pack, &std::mem::take(&mut in_memory), fsync)?;
    index.write().map_err(fail)?;
    hooks.pre_commit(&repo.path().join("index"))?;
    let message = hooks.message(message)?;
    let oid = write_commit(&repo, dir, author, &message, &tree, &[])?;
    let base = crate::pristine::base_commit(&repo, &tree, &[], &message, &base_by(author)?)?;
    let finished = packed(&repo, &odb, PackBuilder::new(), &[oid, base])?;
    mempack.reset().map_err(fail)?;
    // The index is written while the pack goes to disk (its syncs wait on the disk, not
    // the CPU); `git commit` too writes the index before it moves the branch.
    let objects = repo.path().join("objects");
    let (packed, indexed) = scaffold_support::parallel::beside(
        || finished.write_to(&objects, fsync),
        || write_index(&repo, &mut index, fsync),
    );
    packed.and(indexed)?;
    let summary = message.lines().next().unwrap_or_default();
    move_first_refs(&repo, dir, oid, base, summary)?;
    Ok(oid.to_string())
}

/// Writes the index, and syncs it when `core.fsync` names it (libgit2 never does).
fn write_index(repo: &Repository, index: &mut git2::Index, fsync: Fsync) -> Result<()> {
    index
        .write()
        .map_err(|e| Error::git("commit", repo.path(), e))?;
    if fsync.index() {
        let path = repo.path().join("index");
        std::fs::File::open(&path)
            .and_then(|file| file.sync_all())
            .map_err(|e| Error::io_path("flush to disk", &path, e))?;
    }
    Ok(())
}

/// `pack` with the objects `in_memory` names (in libgit2's memory store `odb`) added,
/// finished: ready to be written.
fn packed(
    repo: &Repository,
    odb: &git2::Odb<'_>,
    mut pack: PackBuilder,
    in_memory: &[Oid],
) -> Result<crate::pack::Finished> {
    for id in in_memory {
        let object = odb
            .read(*id)
            .map_err(|e| Error::git("commit", repo.path(), e))?;
        pack.add(*id, object.kind(), object.data());
    }
    Ok(pack.finish())
}

/// Adds the objects `in_memory` names to `pack` and writes it into the repository.
fn write_pack(
    repo: &Repository,
    odb: &git2::Odb<'_>,
    pack: PackBuilder,
    in_memory: &[Oid],
    fsync: Fsync,
) -> Result<()> {
    packed(repo, odb, pack, in_memory)?.write_to(&repo.path().join("objects"), fsync)
}

/// Makes libgit2 flush every object, ref and index file it writes to disk before renaming
/// it into place, as git's `core.fsync` does: a ref never names an object a crash lost.
/// Call once, before any repository is opened.
#[allow(unsafe_code)] // git2 does not wrap GIT_OPT_ENABLE_FSYNC_GITDIR
pub fn enable_fsync() {
    // Initialises libgit2 (git2 does so on its first call); caching is on by default.
    git2::opts::enable_caching(true);
    set_libgit2_fsync(true);
    // `update` fetches origin's base on every run (a teammate's to merge): an unreachable
    // remote costs at most this, not the system's connect timeout of minutes; the run then
    // goes on with the local base.
    // SAFETY: as above, a process-wide option set before any thread uses libgit2.
    let _ = unsafe { git2::opts::set_server_connect_timeout_in_milliseconds(5_000) };
}

/// libgit2's syncing of the files it writes (refs, reflogs, loose objects), set for one commit
/// and back on (`enable_fsync`'s setting) when dropped, on every path out.
struct Libgit2Fsync;

impl Libgit2Fsync {
    fn set(on: bool) -> Self {
        set_libgit2_fsync(on);
        Libgit2Fsync
    }
}

impl Drop for Libgit2Fsync {
    fn drop(&mut self) {
        set_libgit2_fsync(true);
    }
}

#[allow(unsafe_code)] // git2 does not wrap GIT_OPT_ENABLE_FSYNC_GITDIR
fn set_libgit2_fsync(on: bool) {
    // SAFETY: a process-wide libgit2 option taking one int; `new` commits on one thread.
    unsafe {
        libgit2_sys::git_libgit2_opts(
            libgit2_sys::GIT_OPT_ENABLE_FSYNC_GITDIR as libc::c_int,
            libc::c_int::from(on),
        );
    }
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
/// The paths git's index of the repository at `root` tracks (`/`-separated).
pub fn tracked_paths(root: &Path) -> Result<Vec<String>> {
    let repo = Repository::open(root).map_err(|e| Error::git("open", root, e))?;
    let index = repo
        .index()
        .map_err(|e| Error::git("read the index", root, e))?;
    Ok(index
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .collect())
}

/// Re-reads the stat data of the index entries at the top of the work tree at `root`:
/// `new` in place renames them from the staging directory, which changes their ctime.
pub fn refresh_top_level_stat(root: &Path) -> Result<()> {
    let fail = |e| Error::git("update the index", root, e);
    // The index file itself: opening the repository would check its owner, which an
    // existing directory filled in place need not share.
    let mut index = git2::Index::open(&root.join(".git").join("index")).map_err(fail)?;
    let top: Vec<IndexEntry> = index.iter().filter(|e| !e.path.contains(&b'/')).collect();
    for entry in top {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        index
            .add(&entry_for(root, &path, entry.id, entry.mode as i32)?)
            .map_err(fail)?;
    }
    index.write().map_err(fail)
}

/// An index entry for `path` holding blob `id`, with the stat data of the file on disk.
pub fn entry_for(root: &Path, path: &str, id: Oid, mode: i32) -> Result<IndexEntry> {
    let full = root.join(path);
    let meta = std::fs::symlink_metadata(&full).map_err(|e| Error::io_path("inspect", &full, e))?;
    Ok(entry_of(Some(&meta), path, id, mode))
}

/// An index entry for `path` holding blob `id`, with the stat data `meta` (none: zeros, for
/// an index that only builds trees).
fn entry_of(meta: Option<&std::fs::Metadata>, path: &str, id: Oid, mode: i32) -> IndexEntry {
    let zero = IndexTime::new(0, 0);
    #[cfg(unix)]
    let (ctime, mtime, dev, ino, uid, gid, size) = match meta {
        Some(meta) => {
            use std::os::unix::fs::MetadataExt;
            (
                IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
                IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
                meta.dev() as u32,
                meta.ino() as u32,
                meta.uid(),
                meta.gid(),
                meta.len() as u32,
            )
        }
        None => (zero, zero, 0, 0, 0, 0, 0),
    };
    #[cfg(not(unix))]
    let (ctime, mtime, dev, ino, uid, gid, size) =
        (zero, zero, 0, 0, 0, 0, meta.map_or(0, |m| m.len() as u32));
    IndexEntry {
        ctime,
        mtime,
        dev,
        ino,
        mode: mode as u32,
        uid,
        gid,
        file_size: size,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

pub fn signature(author: &Author) -> Result<Signature<'static>> {
    signature_of(&author.person())
}

fn signature_of(person: &crate::identity::Person) -> Result<Signature<'static>> {
    person.signature().map_err(|e| {
        Error::input(
            Problem::new(format!(
                "--author `{} <{}>`: {}",
                person.name,
                person.email,
                e.message()
            ))
            .fix("use the form \"Name <email@example.org>\""),
        )
    })
}

/// The user as a base commit names them: `author`'s author, committer and signing.
pub fn base_by(author: &Author) -> Result<crate::pristine::BaseBy<'_>> {
    let by = signature(author)?;
    let committer = match &author.committer {
        Some(person) => signature_of(person)?,
        None => by.clone(),
    };
    Ok(crate::pristine::BaseBy {
        author: by,
        committer,
        signing: author.signing.as_ref(),
    })
}

/// Writes a commit object by `author` (its committer and signing too) without moving any
/// ref; signed through the configured program when `commit.gpgSign` asks for it.
pub fn write_commit(
    repo: &Repository,
    root: &Path,
    author: &Author,
    message: &str,
    tree: &git2::Tree<'_>,
    parents: &[&git2::Commit<'_>],
) -> Result<Oid> {
    let fail = |e| Error::git("commit", root, e);
    let by = signature(author)?;
    let committer = match &author.committer {
        Some(person) => signature_of(person)?,
        None => by.clone(),
    };
    let signing = author.signing.as_ref();
    Signing::commit(signing, repo, &by, &committer, message, tree, parents, fail)
}

/// The commit point of a change: writes the commit on top of `parent` and moves `branch`
/// to it only if the branch is still at `parent` (as `git commit` would, with its reflog).
pub fn commit_on(
    repo: &Repository,
    root: &Path,
    branch: &str,
    author: &Author,
    message: &str,
    tree: &git2::Tree<'_>,
    parent: &git2::Commit<'_>,
) -> Result<Oid> {
    let oid = crate::pristine::retrying_object_writes("commit", root, || {
        write_commit(repo, root, author, message, tree, &[parent])
    })?;
    let summary = message.lines().next().unwrap_or_default();
    crate::pristine::waiting_for_ref_lock(|| {
        repo.reference_matching(
            branch,
            oid,
            true,
            parent.id(),
            &format!("commit: {summary}"),
        )
    })
    .map_err(|e| Error::git("commit", root, e))?;
    Ok(oid)
}

/// The author, signing and syncing git would use for a commit in the repository at `place`.
pub fn resolve_committing(
    flag: Option<&str>,
    place: &crate::identity::Place,
) -> Result<Committing> {
    Ok(Committing {
        author: resolve_author(flag, place)?,
        fsync: place.fsync(),
    })
}

/// The author and committer git would write in the repository at `place` (`--author`
/// replacing the author), refused where git would refuse to commit; and the signing
/// `commit.gpgSign` asks for.
pub fn resolve_author(flag: Option<&str>, place: &crate::identity::Place) -> Result<Author> {
    let flag = flag.map(Author::parse).transpose()?;
    let resolved = crate::identity::resolve(
        place,
        flag.as_ref().map(|a| (a.name.as_str(), a.email.as_str())),
    )?;
    let mut author = match (resolved, flag) {
        (Some((author, committer)), _) => Author {
            name: author.name,
            email: author.email,
            when: author.when,
            committer: Some(committer),
            signing: None,
        },
        (None, Some(flag)) => flag,
        // As `git commit` refuses ("Author identity unknown"): never a made-up identity.
        (None, None) => return Err(Error::refused(Problem::new(
            "git does not know who you are (user.name and user.email are not both set, and git will not guess an address), so `git commit` would refuse this commit too",
        ).fix("set them with `git config --global user.name \"Your Name\"` and `git config --global user.email you@example.com` (or pass --author \"Name <email>\"), then run scaffold again; nothing was changed"))),
    };
    let committer = author.committer.clone().unwrap_or_else(|| author.person());
    author.signing = Signing::resolve(place, &committer)?;
    Ok(author)
}

#[cfg(test)]
mod tests {
    /// Until it moves in, the repository made aside leaves `root/.git` absent (git asked
    /// about it finds nothing); once moved, it is the repository of `root`, on `main`.
    #[test]
    fn a_repository_initialised_aside_moves_in_whole() {
        let dir = tempfile::TempDir::new().expect("dir");
        let root = dir.path();
        let aside = super::init_aside(root).expect("init aside");
        assert!(!root.join(".git").exists());
        assert!(root.join(super::ASIDE).join(".git").join("HEAD").is_file());
        let repo = aside.move_in().expect("move in");
        assert!(!root.join(super::ASIDE).exists());
        let git_dir = root.join(".git").canonicalize().expect("git dir");
        assert_eq!(repo.path().canonicalize().expect("path"), git_dir);
        let work_dir = repo
            .workdir()
            .expect("work tree")
            .canonicalize()
            .expect("workdir");
        assert_eq!(work_dir, root.canonicalize().expect("root"));
        assert_eq!(
            std::fs::read_to_string(git_dir.join("HEAD")).expect("HEAD"),
            "ref: refs/heads/main\n"
        );
        let config = std::fs::read_to_string(git_dir.join("config")).expect("config");
        assert!(!config.contains(super::ASIDE), "{config}");
        assert!(!repo.is_bare());
    }

    /// No plan can hold the directory a repository is made in aside.
    #[test]
    fn no_plan_path_can_be_the_aside_directory() {
        assert!(scaffold_support::git_paths::segment_rule(super::ASIDE).is_some());
    }
}

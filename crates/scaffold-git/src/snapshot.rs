//! One commit's files, read without a checkout: a blob holds what `git add` stored, which
//! is what reading the checked-out file back as git stores it gives. For a command that
//! writes its change as a commit on a new branch (`update --branch`), so no work tree is
//! written and read back per repo. It is used only where a checkout would add nothing;
//! `head_without_checkout` says when.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

use crate::error::{Error, Result};

/// The regular files of one commit, by path.
pub struct CommitFiles {
    root: PathBuf,
    repo: Repository,
    commit: Oid,
    blobs: BTreeMap<String, Oid>,
    /// A symbolic link or a submodule in the tree: read through a work tree, they are not
    /// their blobs.
    has_links: bool,
}

impl CommitFiles {
    /// The files of HEAD's commit in the repository at `root`.
    pub fn at_head(root: &Path) -> Result<Self> {
        let repo = Repository::open(root).map_err(|e| Error::git("open", root, e))?;
        let (commit, blobs, has_links) = head_blobs(&repo, root)?;
        Ok(CommitFiles {
            root: root.to_path_buf(),
            repo,
            commit,
            blobs,
            has_links,
        })
    }

    /// The commit these files are.
    pub fn commit(&self) -> Oid {
        self.commit
    }

    /// The bytes the commit holds at `path`; None where it holds no file.
    pub fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let Some(id) = self.blobs.get(path) else {
            return Ok(None);
        };
        let blob = self
            .repo
            .find_blob(*id)
            .map_err(|e| Error::git("read a file of HEAD", &self.root, e))?;
        Ok(Some(blob.content().to_vec()))
    }

    /// Every file's path, `/`-separated, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.blobs.keys().map(String::as_str)
    }
}

/// HEAD's commit, its regular files' blobs by path, and whether its tree holds anything else
/// than directories and regular files.
fn head_blobs(repo: &Repository, root: &Path) -> Result<(Oid, BTreeMap<String, Oid>, bool)> {
    let commit = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|e| Error::git("read HEAD", root, e))?;
    let tree = commit
        .tree()
        .map_err(|e| Error::git("read HEAD's tree", root, e))?;
    let mut blobs = BTreeMap::new();
    let mut has_links = false;
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        match (entry.kind(), entry.filemode()) {
            (Some(ObjectType::Blob), 0o100644 | 0o100755) => {
                if let Ok(name) = entry.name() {
                    blobs.insert(format!("{dir}{name}"), entry.id());
                }
            }
            (Some(ObjectType::Tree), _) => {}
            _ => has_links = true,
        }
        TreeWalkResult::Ok
    })
    .map_err(|e| Error::git("read HEAD's tree", root, e))?;
    Ok((commit.id(), blobs, has_links))
}

/// HEAD's files, when a commit made from them on a new branch needs no work tree: no
/// commit hook would run (git runs hooks in a work tree: with hooks, the caller checks
/// the branch out and commits there, as `git commit` would), no `.gitattributes` in the
/// checkout differs from HEAD's (line endings and filters are read from the checkout's
/// attributes), and the tree holds no symbolic link or submodule. Else None. `place` is
/// where git is asked for the hooks' directory (and, by the caller, for the identity).
pub fn head_without_checkout(
    root: &Path,
    place: &crate::identity::Place,
    verify_hooks: bool,
) -> Result<Option<CommitFiles>> {
    if crate::hooks::Hooks::find(root, place, verify_hooks).is_some() {
        return Ok(None);
    }
    let files = CommitFiles::at_head(root)?;
    if files.has_links || attributes_differ(&files.repo, root)? {
        return Ok(None);
    }
    Ok(Some(files))
}

/// Whether any `.gitattributes` in the checkout (work tree or index) differs from HEAD's,
/// or is untracked.
fn attributes_differ(repo: &Repository, root: &Path) -> Result<bool> {
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        // `*` crosses `/` in a pathspec: every `.gitattributes`, at any depth.
        .pathspec("*.gitattributes");
    let statuses = repo
        .statuses(Some(&mut options))
        .map_err(|e| Error::git("read the status of .gitattributes", root, e))?;
    Ok(statuses.iter().any(|entry| {
        entry.status() != git2::Status::CURRENT && entry.status() != git2::Status::IGNORED
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with one commit of `files` (path, bytes), and a `.git/hooks` without
    /// hooks.
    fn repo_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::TempDir::new().expect("dir");
        let repo = Repository::init(dir.path()).expect("init");
        let mut index = repo.index().expect("index");
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(&full, text).expect("write");
            index.add_path(Path::new(path)).expect("add");
        }
        index.write().expect("index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let me = git2::Signature::now("T", "t@example.org").expect("sig");
        repo.commit(Some("HEAD"), &me, &me, "one", &tree, &[])
            .expect("commit");
        let _ = std::fs::remove_dir_all(dir.path().join(".git/hooks"));
        dir
    }

    #[test]
    fn reads_head_s_files_not_the_work_tree_s() {
        let dir = repo_with(&[("a.txt", "one\n"), ("d/b.yaml", "b: 1\n")]);
        std::fs::write(dir.path().join("a.txt"), "edited\n").expect("edit");
        let files =
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .expect("no reason for a checkout");
        assert_eq!(files.read("a.txt").expect("a"), Some(b"one\n".to_vec()));
        assert_eq!(files.read("missing").expect("none"), None);
        assert_eq!(files.paths().collect::<Vec<_>>(), ["a.txt", "d/b.yaml"]);
    }

    #[test]
    fn a_commit_hook_asks_for_a_checkout() {
        let dir = repo_with(&[("a.txt", "one\n")]);
        let hooks = dir.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).expect("hooks");
        std::fs::write(hooks.join("pre-commit"), "#!/bin/sh\nexit 0\n").expect("hook");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            hooks.join("pre-commit"),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
        assert!(
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .is_none()
        );
    }

    #[test]
    fn attributes_that_differ_from_head_s_ask_for_a_checkout() {
        let dir = repo_with(&[("a.txt", "one\n"), ("d/.gitattributes", "*.txt text\n")]);
        assert!(
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .is_some()
        );
        std::fs::write(dir.path().join("d/.gitattributes"), "*.txt -text\n").expect("edit");
        assert!(
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .is_none()
        );
        std::fs::write(dir.path().join("d/.gitattributes"), "*.txt text\n").expect("restore");
        std::fs::write(dir.path().join(".gitattributes"), "* -text\n").expect("untracked");
        assert!(
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .is_none()
        );
    }

    #[test]
    fn a_symbolic_link_asks_for_a_checkout() {
        let dir = repo_with(&[("a.txt", "one\n")]);
        std::os::unix::fs::symlink("a.txt", dir.path().join("link")).expect("link");
        let repo = Repository::open(dir.path()).expect("open");
        let mut index = repo.index().expect("index");
        index.add_path(Path::new("link")).expect("add");
        index.write().expect("index");
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let head = repo.head().expect("head").peel_to_commit().expect("commit");
        let me = git2::Signature::now("T", "t@example.org").expect("sig");
        repo.commit(Some("HEAD"), &me, &me, "two", &tree, &[&head])
            .expect("commit");
        assert!(
            head_without_checkout(dir.path(), &crate::identity::Place::repo(dir.path()), true)
                .expect("read")
                .is_none()
        );
    }
}

//! git2 only here: initialise the repository on `main` and commit the plan in one commit,
//! building the index straight from the planned bytes (no re-reading of the files).
use std::path::Path;

use git2::{IndexEntry, IndexTime, Repository, RepositoryInitOptions, Signature};

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

/// Returns the new commit's id.
pub fn commit(dir: &Path, plan: &Plan, author: &Author, message: &str) -> Result<String> {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    let repo = Repository::init_opts(dir, &options)?;
    let mut index = repo.index()?;
    for (path, contents) in &plan.files {
        let entry = IndexEntry {
            ctime: IndexTime::new(0, 0),
            mtime: IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: if plan.executable.contains(path) {
                0o100755
            } else {
                0o100644
            },
            uid: 0,
            gid: 0,
            file_size: contents.len() as u32,
            id: git2::Oid::ZERO_SHA1,
            flags: 0,
            flags_extended: 0,
            path: path.as_str().as_bytes().to_vec(),
        };
        index.add_frombuffer(&entry, contents)?;
    }
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = Signature::now(&author.name, &author.email)?;
    let oid = repo.commit(Some("HEAD"), &signature, &signature, message, &tree, &[])?;
    // Refresh stat data so `git status` is clean without re-hashing every file.
    let mut index = repo.index()?;
    index.read(true)?;
    index.update_all(["*"].iter(), None)?;
    index.write()?;
    Ok(oid.to_string())
}

/// Paths among `paths` with uncommitted changes (modified, staged, or untracked).
pub fn dirty(root: &Path, paths: &[&str]) -> Result<Vec<String>> {
    let repo = Repository::open(root)?;
    let mut out = Vec::new();
    for path in paths {
        match repo.status_file(Path::new(path)) {
            Ok(status) if status.is_empty() || status == git2::Status::IGNORED => {}
            Ok(_) => out.push((*path).to_string()),
            Err(e) if e.code() == git2::ErrorCode::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// Commits exactly the changed paths on top of HEAD.
pub fn commit_changes(
    root: &Path,
    changes: &[crate::edit::Change],
    author: &Author,
    message: &str,
) -> Result<String> {
    let repo = Repository::open(root)?;
    let mut index = repo.index()?;
    for change in changes {
        let path = Path::new(change.path().as_str());
        match change {
            crate::edit::Change::Write { .. } => index.add_path(path)?,
            crate::edit::Change::Delete { .. } => index.remove_path(path)?,
        }
    }
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let parent = repo.head()?.peel_to_commit()?;
    let signature = Signature::now(&author.name, &author.email)?;
    let oid = repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &[&parent],
    )?;
    Ok(oid.to_string())
}

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

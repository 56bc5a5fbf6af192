//! The only place that writes the new repo: stage everything in a temporary directory
//! beside the target, let the caller finish it (commit), then rename it into place.
//! Any failure before the rename leaves nothing behind.
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::plan::Plan;

/// The target must not exist, or be an empty directory.
pub fn check_target(target: &Path) -> Result<()> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io_path("inspect", target, e)),
        Ok(meta) if meta.is_dir() => {
            let mut entries =
                fs::read_dir(target).map_err(|e| Error::io_path("read", target, e))?;
            if entries.next().is_none() {
                Ok(())
            } else {
                Err(Error::Refused(format!(
                    "`{}` exists and is not empty; choose a new directory (scaffold never overwrites or deletes files)",
                    target.display()
                )))
            }
        }
        Ok(_) => Err(Error::Refused(format!(
            "`{}` exists and is not a directory; choose a new directory",
            target.display()
        ))),
    }
}

pub struct Staged {
    dir: tempfile::TempDir,
    target: PathBuf,
}

impl Staged {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Moves the finished tree into place. An empty target directory is replaced.
    pub fn finish(self) -> Result<()> {
        check_target(&self.target)?;
        let staged = self.dir.keep();
        if let Err(e) = fs::rename(&staged, &self.target) {
            let _ = fs::remove_dir_all(&staged);
            return Err(Error::io_path(
                "move the new repository to",
                &self.target,
                e,
            ));
        }
        Ok(())
    }
}

pub fn stage(plan: &Plan, target: &Path) -> Result<Staged> {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::Input(format!(
            "`{}` does not exist; create the parent directory first",
            parent.display()
        )));
    }
    let dir = tempfile::Builder::new()
        .prefix(".scaffold-")
        .tempdir_in(&parent)
        .map_err(|e| Error::io_path("create a staging directory in", &parent, e))?;
    for (path, contents) in &plan.files {
        let full = dir.path().join(path.as_str());
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
        }
        fs::write(&full, contents).map_err(|e| Error::io_path("write", &full, e))?;
        if plan.executable.contains(path) {
            set_executable(&full)?;
        }
    }
    Ok(Staged {
        dir,
        target: target.to_path_buf(),
    })
}

/// Mode 755, as the plan says (and as the commit records it).
#[cfg(unix)]
fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| Error::io_path("make executable", path, e))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> Result<()> {
    Ok(())
}

/// Applies edits to an existing repo. Every new content is first written beside its
/// target, so a failure while preparing changes nothing; then each is renamed into place.
pub fn apply(root: &Path, changes: &[crate::edit::Change]) -> Result<()> {
    use crate::edit::Change;
    let mut prepared = Vec::new();
    for change in changes {
        if let Change::Write { path, contents, .. } = change {
            let full = root.join(path.as_str());
            let parent = full.parent().unwrap_or(root).to_path_buf();
            fs::create_dir_all(&parent).map_err(|e| Error::io_path("create", &parent, e))?;
            let mut temp = tempfile::Builder::new()
                .prefix(".scaffold-")
                .tempfile_in(&parent)
                .map_err(|e| Error::io_path("write into", &parent, e))?;
            std::io::Write::write_all(&mut temp, contents)
                .map_err(|e| Error::io_path("write", &full, e))?;
            prepared.push((temp, full));
        }
    }
    for (temp, full) in prepared {
        temp.persist(&full)
            .map_err(|e| Error::io_path("replace", &full, e.error))?;
    }
    for change in changes {
        if let Change::Delete { path, .. } = change {
            let full = root.join(path.as_str());
            fs::remove_file(&full).map_err(|e| Error::io_path("remove", &full, e))?;
            // Drop directories the deletion left empty (never the repo root).
            let mut dir = full.parent();
            while let Some(d) = dir {
                if d == root || fs::remove_dir(d).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
    }
    Ok(())
}

/// Reads a repo file; None when it does not exist.
pub fn read(root: &Path, path: &crate::plan::RelPath) -> Result<Option<Vec<u8>>> {
    let full = root.join(path.as_str());
    match fs::read(&full) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io_path("read", &full, e)),
    }
}

/// The repo made by `scaffold new` that contains `start`: the nearest directory above it
/// holding the answers record.
pub fn find_repo(start: &Path) -> Result<PathBuf> {
    let start = std::path::absolute(start).map_err(|e| Error::io_path("resolve", start, e))?;
    for dir in start.ancestors() {
        if dir.join(crate::record::PATH).is_file() {
            return Ok(dir.to_path_buf());
        }
    }
    Err(Error::Input(format!(
        "not inside a scaffold repo: no {} in `{}` or above; run this in a repo made by scaffold new",
        crate::record::PATH,
        start.display()
    )))
}

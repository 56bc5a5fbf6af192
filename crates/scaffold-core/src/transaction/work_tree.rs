//! The file and index operations a transaction and its recovery share.
use std::fs;
use std::path::Path;

use git2::Repository;

use crate::error::{Error, Result};
use crate::git;

pub(super) fn permissions(meta: &fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        0o644
    }
}

pub(super) fn set_mode(path: &Path, mode: u32) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
            .map_err(|e| Error::io_path("set permissions of", path, e))?;
    }
    let _ = (path, mode);
    Ok(())
}

/// Removes a file and the directories its removal left empty (never the root).
pub(super) fn remove_file(root: &Path, full: &Path) -> Result<()> {
    match fs::remove_file(full) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io_path("remove", full, e)),
    }
    let mut dir = full.parent();
    while let Some(d) = dir {
        if d == root || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Points the index entries of scaffold's paths at the committed blobs, with the stat data
/// of the files just written; every other entry stays as it was.
pub(super) fn update_index<'p>(
    repo: &Repository,
    root: &Path,
    paths: impl Iterator<Item = &'p str>,
) -> Result<()> {
    let fail = |e| Error::git("update the index", root, e);
    let head_tree = repo.head().and_then(|h| h.peel_to_tree()).map_err(fail)?;
    let mut index = repo.index().map_err(fail)?;
    for path in paths {
        match head_tree.get_path(Path::new(path)) {
            Ok(entry) => {
                let entry = git::entry_for(root, path, entry.id(), entry.filemode())?;
                index.add(&entry).map_err(fail)?;
            }
            Err(_) => {
                let _ = index.remove_path(Path::new(path));
            }
        }
    }
    index.write().map_err(fail)
}

//! A blueprint directory's files: each directory is listed and its files opened relative
//! to it (one name looked up per open, not the whole path), the directories of one depth
//! side by side on every core when there are enough of them. IO.
use std::path::Path;

use crate::error::{Error, Problem, Result};

/// One file of the tree: its slash path under the root, bytes, executable bit and blob id
/// (hashed for the layer digests while its bytes are in the cache).
pub(super) struct ReadFile {
    pub(super) rel: String,
    pub(super) bytes: Vec<u8>,
    pub(super) executable: bool,
    pub(super) id: String,
}

/// Every file under `root` (canonical), in the order of a walk that lists each directory
/// by name and enters a directory where it is listed (`Path`'s order of components). A
/// symlink is followed when it points to a file inside `root`, skipped when it points to a
/// directory, and refused when it points outside.
pub(super) fn read_tree(root: &Path) -> Result<Vec<ReadFile>> {
    let mut files = read_all(root)?;
    files.sort_unstable_by(|a, b| Path::new(&a.rel).cmp(Path::new(&b.rel)));
    Ok(files)
}

/// What one directory holds: its files read, its directories to list next.
#[cfg(unix)]
type Listed = (Vec<ReadFile>, Vec<String>);

/// Fewer directories than this at one depth are read on the calling thread: a thread
/// costs more than they do (it is made, and its stack and heap are handed back when it
/// ends: on a VM, each hand-back a TLB flush on every core; BENCHMARKS.md, round three g).
/// The files of one such directory are read on every core when there are this many.
#[cfg(unix)]
const PARALLEL_DIRS: usize = 16;
#[cfg(unix)]
const PARALLEL_FILES: usize = 64;

#[cfg(unix)]
fn read_all(root: &Path) -> Result<Vec<ReadFile>> {
    use rustix::fs::{Mode, OFlags};
    let fail = |e: rustix::io::Errno| Error::io_path("read", root, e.into());
    let root_fd = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(fail)?;
    let mut files = Vec::new();
    let mut depth = vec![String::new()];
    while !depth.is_empty() {
        let on_every_core = depth.len() >= PARALLEL_DIRS;
        let read = |rel: &String| read_dir(root, &root_fd, rel, !on_every_core);
        let listed: Vec<Result<Listed>> = match on_every_core {
            true => crate::parallel::map(&depth, read),
            false => depth.iter().map(read).collect(),
        };
        depth = Vec::new();
        for listed in listed {
            let (read, dirs) = listed?;
            files.extend(read);
            depth.extend(dirs);
        }
    }
    Ok(files)
}

/// A directory's entries by kind: regular files (name, path under the root), symlinks and
/// directories (paths under the root).
#[cfg(unix)]
#[derive(Default)]
struct Entries {
    regular: Vec<(std::ffi::CString, String)>,
    symlinks: Vec<String>,
    dirs: Vec<String>,
}

/// The directory `rel` of `root` (opened from `root_fd`): its files read (on every core
/// when `files_on_every_core` and there are enough), its directories.
#[cfg(unix)]
fn read_dir(
    root: &Path,
    root_fd: &rustix::fd::OwnedFd,
    rel: &str,
    files_on_every_core: bool,
) -> Result<Listed> {
    use rustix::fs::{Mode, OFlags};
    let full = root.join(rel);
    let fail = |e: rustix::io::Errno| Error::io_path("read", &full, e.into());
    let at = if rel.is_empty() { "." } else { rel };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let dir_fd = rustix::fs::openat(root_fd, at, flags, Mode::empty()).map_err(fail)?;
    let mut dir = rustix::fs::Dir::new(dir_fd).map_err(fail)?;
    let entries = list(&mut dir, rel).map_err(fail)?;
    let dir_fd = dir.fd().map_err(fail)?;
    let read = |(name, child): &(std::ffi::CString, String)| -> Result<ReadFile> {
        let path = root.join(child);
        let open = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(dir_fd, name.as_c_str(), open, Mode::empty())
            .map_err(|e| Error::io_path("read", &path, e.into()))?;
        let (bytes, executable) = read_open(std::fs::File::from(fd), &path)?;
        Ok(read_file(child.clone(), bytes, executable))
    };
    let mut files = match files_on_every_core && entries.regular.len() >= PARALLEL_FILES {
        true => crate::parallel::map(&entries.regular, read),
        false => entries.regular.iter().map(read).collect(),
    }
    .into_iter()
    .collect::<Result<Vec<_>>>()?;
    for child in entries.symlinks {
        if let Some((bytes, executable)) = read_symlink(root, &root.join(&child), &child)? {
            files.push(read_file(child, bytes, executable));
        }
    }
    Ok((files, entries.dirs))
}

/// `dir`'s entries (the directory `rel`), each by its kind (asked with a stat when the
/// listing does not say).
#[cfg(unix)]
fn list(dir: &mut rustix::fs::Dir, rel: &str) -> rustix::io::Result<Entries> {
    use rustix::fs::{AtFlags, FileType};
    let mut listed = Vec::new();
    for entry in dir.by_ref() {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            listed.push((name.to_owned(), entry.file_type()));
        }
    }
    let dir_fd = dir.fd()?;
    let mut entries = Entries::default();
    for (name, kind) in listed {
        let kind = match kind {
            FileType::Unknown => {
                let stat = rustix::fs::statat(dir_fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
                FileType::from_raw_mode(stat.st_mode)
            }
            known => known,
        };
        let name_text = String::from_utf8_lossy(name.to_bytes());
        let child = match rel.is_empty() {
            true => name_text.into_owned(),
            false => format!("{rel}/{name_text}"),
        };
        match kind {
            FileType::Directory => entries.dirs.push(child),
            FileType::RegularFile => entries.regular.push((name, child)),
            FileType::Symlink => entries.symlinks.push(child),
            _ => {}
        }
    }
    Ok(entries)
}

/// The walk of old on other systems: `walkdir` lists, every core reads.
#[cfg(not(unix))]
fn read_all(root: &Path) -> Result<Vec<ReadFile>> {
    let mut listed = Vec::new();
    for entry in walkdir::WalkDir::new(root) {
        let entry = entry.map_err(|e| Error::input(format!("cannot read blueprint: {e}")))?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .map_err(|e| Error::input(e.to_string()))?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if entry.path_is_symlink() || entry.file_type().is_file() {
            listed.push((rel, entry.path_is_symlink(), entry.into_path()));
        }
    }
    let read = crate::parallel::map(&listed, |(rel, symlink, path)| match symlink {
        true => read_symlink(root, path, rel),
        false => std::fs::File::open(path)
            .map_err(|e| Error::io_path("read", path, e))
            .and_then(|file| read_open(file, path))
            .map(Some),
    });
    let mut files = Vec::new();
    for ((rel, _, _), read) in listed.into_iter().zip(read) {
        if let Some((bytes, executable)) = read? {
            files.push(read_file(rel, bytes, executable));
        }
    }
    Ok(files)
}

fn read_file(rel: String, bytes: Vec<u8>, executable: bool) -> ReadFile {
    let id = crate::tree::blob_id(&bytes);
    ReadFile {
        rel,
        bytes,
        executable,
        id,
    }
}

/// A symlink's file: None when it points to a directory, an error when it points outside
/// the blueprint.
fn read_symlink(root: &Path, path: &Path, rel: &str) -> Result<Option<(Vec<u8>, bool)>> {
    let target = path
        .canonicalize()
        .map_err(|e| Error::io_path("follow the symlink", path, e))?;
    if !target.starts_with(root) {
        return Err(Error::blueprint(
            Problem::new(format!(
                "{}/{rel}: symlink points outside the blueprint ({})",
                root.display(),
                target.display()
            ))
            .fix("copy the file in instead"),
        ));
    }
    if !target.is_file() {
        return Ok(None);
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io_path("read", path, e))?;
    read_open(file, path).map(Some)
}

/// An open file's bytes and whether it is executable (one stat, one read).
fn read_open(mut file: std::fs::File, path: &Path) -> Result<(Vec<u8>, bool)> {
    use std::io::Read;
    let fail = |e| Error::io_path("read", path, e);
    let metadata = file.metadata().map_err(fail)?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(fail)?;
    Ok((bytes, is_executable(&metadata)))
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    mod on_unix {
        use super::super::{PARALLEL_FILES, read_tree};
        use std::os::unix::fs::{PermissionsExt, symlink};

        fn write(root: &std::path::Path, rel: &str, text: &str) {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }

        /// The order of a walk that enters each directory where it is listed by name (not the
        /// order of the paths as strings: `a/b` before `a-b/c` before `a.txt`), bytes and
        /// executable bits as on disk, a symlink to a file inside followed, one to a directory
        /// skipped.
        #[test]
        fn files_come_in_walk_order_with_their_bytes_and_modes() {
            let dir = tempfile::TempDir::new().expect("dir");
            let root = dir.path().canonicalize().expect("root");
            for rel in ["b", "a.txt", "a-b/c", "a/b", "a/deep/er/x.yaml"] {
                write(&root, rel, rel);
            }
            let script = root.join("a/b");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            symlink("a.txt", root.join("linked")).expect("file link");
            symlink("a", root.join("dir-link")).expect("dir link");
            let files = read_tree(&root).expect("read");
            let listed: Vec<(&str, &[u8], bool)> = files
                .iter()
                .map(|f| (f.rel.as_str(), f.bytes.as_slice(), f.executable))
                .collect();
            assert_eq!(
                listed,
                [
                    ("a/b", b"a/b".as_slice(), true),
                    ("a/deep/er/x.yaml", b"a/deep/er/x.yaml", false),
                    ("a-b/c", b"a-b/c", false),
                    ("a.txt", b"a.txt", false),
                    ("b", b"b", false),
                    ("linked", b"a.txt", false),
                ]
            );
            assert_eq!(files[0].id, crate::tree::blob_id(b"a/b"));
        }

        /// A directory with more files than one thread reads alone: every file, in order.
        #[test]
        fn a_directory_of_many_files_is_read_whole() {
            let dir = tempfile::TempDir::new().expect("dir");
            let root = dir.path().canonicalize().expect("root");
            let names: Vec<String> = (0..PARALLEL_FILES * 2)
                .map(|n| format!("flat/f{n:04}"))
                .collect();
            for name in &names {
                write(&root, name, name);
            }
            let files = read_tree(&root).expect("read");
            let read: Vec<(&str, &[u8])> = files
                .iter()
                .map(|f| (f.rel.as_str(), f.bytes.as_slice()))
                .collect();
            let expected: Vec<(&str, &[u8])> =
                names.iter().map(|n| (n.as_str(), n.as_bytes())).collect();
            assert_eq!(read, expected);
        }

        #[test]
        fn a_symlink_out_of_the_blueprint_is_refused() {
            let dir = tempfile::TempDir::new().expect("dir");
            let root = dir.path().join("bp");
            write(&root, "ok", "ok");
            write(dir.path(), "outside", "secret");
            symlink(dir.path().join("outside"), root.join("link")).expect("link");
            let root = root.canonicalize().expect("root");
            let error = read_tree(&root).err().expect("refused");
            assert!(
                error
                    .to_string()
                    .contains("symlink points outside the blueprint"),
                "{error}"
            );
        }
    }
}

//! The only place that writes a new repo: stage everything in a directory of its own,
//! let the caller finish it (commit), then move it into place. A target that does not exist
//! is staged beside it and renamed in one step; an existing empty directory (`.`, a mount
//! point) is staged inside itself and its entries are moved in, so the directory, its
//! permissions and its owner stay. A failure before the move leaves nothing behind; a staging
//! directory left by a SIGKILL carries its pid in its name, and the next run removes it.
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Problem, Result};
use crate::plan::Plan;
use crate::tree::RelPath;

const STAGING: &str = ".scaffold-new-";
/// Written in an in-place staging directory while its entries move into the target:
/// the names to take back out if the run dies half way.
const MOVING: &str = ".moving";
/// A staging directory older than this is stale even if its pid is alive (reused pid).
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The target must not exist, or be an empty directory.
pub fn check_target(target: &Path) -> Result<()> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(Error::input(
            Problem::new(format!(
                "`{}`: a part of this path is a file, not a directory",
                target.display()
            ))
            .fix("choose a path under a directory"),
        )),
        Err(e) => Err(Error::io_path("inspect", target, e)),
        Ok(meta) if meta.is_dir() => {
            if is_empty_dir(target)? {
                Ok(())
            } else {
                Err(Error::refused(Problem::new(format!("`{}` exists and is not empty",
                    target.display())).fix("choose a new or empty directory (scaffold never overwrites or deletes files)")))
            }
        }
        // The repo is staged beside the target and moved into place: a link would be
        // replaced, not written through. Its target is the directory the user meant.
        Ok(meta) if meta.file_type().is_symlink() => {
            Err(Error::refused(match fs::read_link(target) {
                Ok(to) => format!(
                    "`{}` is a symbolic link (to `{}`); scaffold writes a new repo into a real directory: pass the link's target instead",
                    target.display(),
                    to.display()
                ),
                Err(_) => format!(
                    "`{}` is a symbolic link; scaffold writes a new repo into a real directory: pass the directory it points to",
                    target.display()
                ),
            }))
        }
        Ok(_) => Err(Error::refused(
            Problem::new(format!(
                "`{}` exists and is not a directory",
                target.display()
            ))
            .fix("choose a new or empty directory"),
        )),
    }
}

fn is_empty_dir(dir: &Path) -> Result<bool> {
    let mut entries = fs::read_dir(dir).map_err(|e| Error::io_path("read", dir, e))?;
    Ok(entries.next().is_none())
}

pub struct Staged {
    dir: PathBuf,
    target: PathBuf,
    in_place: bool,
    finished: bool,
}

impl Staged {
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Moves the finished tree into place. A target that did not exist is the staging
    /// directory renamed: one `rename(2)`, atomic, so a crash leaves the repository's tree
    /// at the target or none of it (the staging directory, which the next run removes as
    /// stale); its objects were synced before, the files git does not sync were not. That rename is not synced, as git syncs no directory it renames into
    /// (`finalize_object_file`, object-file.c, v2.47.3) and, by default, no ref
    /// (`core.fsync`): a crash just after `new` returns may lose the new repository as it
    /// may lose a `git commit`, but never leaves it half moved. An existing directory is
    /// filled entry by entry (`move_entries_in`), and that move is synced: its list of
    /// moved names is what undoes a move a crash cut short.
    pub fn finish(mut self) -> Result<()> {
        if self.in_place {
            self.move_entries_in()?;
            self.finished = true;
            return crate::pack::sync_dir(&self.target)
                .map_err(|e| Error::io_path("flush to disk", &self.target, e));
        }
        if fs::symlink_metadata(&self.target).is_ok() {
            return Err(Error::refused(
                Problem::new(format!(
                    "`{}` appeared while scaffold ran",
                    self.target.display()
                ))
                .fix("nothing was written there"),
            ));
        }
        fs::rename(&self.dir, &self.target)
            .map_err(|e| Error::io_path("move the new repository to", &self.target, e))?;
        self.finished = true;
        Ok(())
    }

    /// Lists the entries, then renames each into the target (`.git` last, so a half-moved
    /// target is never a repository); on failure the moved ones are removed again. The
    /// list is synced before the first move: the next run undoes a move a crash cut short
    /// from it, so it must be whole.
    fn move_entries_in(&self) -> Result<()> {
        let mut names: Vec<String> = fs::read_dir(&self.dir)
            .map_err(|e| Error::io_path("read", &self.dir, e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort_by_key(|n| (n == ".git", n.clone()));
        let list = self.dir.join(MOVING);
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&list)?;
            file.write_all(names.join("\n").as_bytes())?;
            file.sync_all()
        };
        write().map_err(|e| Error::io_path("write", &list, e))?;
        for (n, name) in names.iter().enumerate() {
            let to = self.target.join(name);
            if let Err(e) = fs::rename(self.dir.join(name), &to) {
                for moved in &names[..n] {
                    remove_any(&self.target.join(moved));
                }
                return Err(Error::io_path("move into place", &to, e));
            }
            if n == 0 {
                crate::signals::test_seam("new-moving")?;
            }
        }
        fs::remove_file(&list).map_err(|e| Error::io_path("remove", &list, e))?;
        fs::remove_dir(&self.dir).map_err(|e| Error::io_path("remove", &self.dir, e))
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.finished {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

fn remove_any(path: &Path) {
    let _ = fs::remove_dir_all(path).or_else(|_| fs::remove_file(path));
}

/// Where `target` is staged: inside it when it is an existing (empty) directory, else beside it.
pub fn staging_parent(target: &Path) -> Result<(PathBuf, bool)> {
    if target.is_dir() {
        return Ok((target.to_path_buf(), true));
    }
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(Error::input(
            Problem::new(format!("`{}` does not exist", parent.display()))
                .fix("create the parent directory first"),
        ));
    }
    Ok((parent, false))
}

/// A fresh, empty staging directory for `target`, named after this process.
pub fn staging_dir(target: &Path) -> Result<Staged> {
    staging_name(target)?.create()
}

/// Where `target` will be staged, before anything is created: `new` asks git about the
/// repository to be (`git var -l`) while it renders.
pub struct StagingName {
    parent: PathBuf,
    dir: PathBuf,
    target: PathBuf,
    in_place: bool,
}

impl StagingName {
    /// The staging directory to be.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The directory the staging will be made in, which exists: the target's parent, or
    /// the target itself when it is an existing (empty) directory.
    pub fn parent(&self) -> &Path {
        &self.parent
    }

    pub fn in_place(&self) -> bool {
        self.in_place
    }

    /// The staging directory, created (empty).
    pub fn create(self) -> Result<Staged> {
        fs::create_dir(&self.dir)
            .map_err(|e| Error::io_path("create a staging directory in", &self.parent, e))?;
        Ok(Staged {
            dir: self.dir,
            target: self.target,
            in_place: self.in_place,
            finished: false,
        })
    }
}

/// The name of `target`'s staging directory, after this process (and the time, so two
/// runs of one pid never share one); nothing is created.
pub fn staging_name(target: &Path) -> Result<StagingName> {
    let (parent, in_place) = staging_parent(target)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let dir = parent.join(format!("{STAGING}{}-{nanos:08x}", std::process::id()));
    Ok(StagingName {
        parent,
        dir,
        target: target.to_path_buf(),
        in_place,
    })
}

/// The stat data of every file `fill` wrote, in plan order: what the git index records,
/// taken from the open file so nothing is looked up by path again.
pub struct Written(Vec<fs::Metadata>);

impl Written {
    pub fn stats(&self) -> &[fs::Metadata] {
        &self.0
    }
}

/// Files each worker of `fill` writes in a row: neighbours in the plan share a directory,
/// and two threads creating entries in one directory wait for each other.
const FILES_PER_TASK: usize = 32;

/// Writes the plan into `staged`: the directories first, each once, parents first (`made`
/// remembers every directory created; the staging starts empty, so no `mkdir` is tried
/// and refused on the way, as `create_dir_all` would); then the files, every one new, on
/// every core (a file's creation is mostly the kernel's, and ext4 creates files in
/// parallel: BENCHMARKS.md, round two, fifth step).
pub fn fill(staged: &Staged, plan: &Plan) -> Result<Written> {
    let mut made: HashSet<&str> = HashSet::new();
    for path in plan.files.keys() {
        if let Some((dir, _)) = path.as_str().rsplit_once('/')
            && !made.contains(dir)
        {
            let segments = dir.match_indices('/').map(|(at, _)| &dir[..at]);
            for d in segments.chain([dir]) {
                if made.insert(d) {
                    let full = staged.dir.join(d);
                    fs::create_dir(&full).map_err(|e| Error::io_path("create", &full, e))?;
                }
            }
        }
    }
    let files: Vec<(&RelPath, &Vec<u8>)> = plan.files.iter().collect();
    let tasks: Vec<&[(&RelPath, &Vec<u8>)]> = files.chunks(FILES_PER_TASK).collect();
    let written = crate::parallel::map(&tasks, |task| {
        task.iter()
            .map(|(path, contents)| {
                let full = staged.dir.join(path.as_str());
                write_new(&full, contents, plan.executable.contains(*path))
                    .map_err(|e| Error::io_path("write", &full, e))
            })
            .collect::<Result<Vec<_>>>()
    });
    let mut stats = Vec::with_capacity(plan.files.len());
    for task in written {
        stats.extend(task?);
    }
    Ok(Written(stats))
}

/// A new file of `contents` at `full`, and its metadata once written (for the index).
fn write_new(full: &Path, contents: &[u8], executable: bool) -> std::io::Result<fs::Metadata> {
    let mut file = fs::File::create_new(full)?;
    file.write_all(contents)?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o755))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    file.metadata()
}

/// A staged copy of `plan`, for callers that do not commit it.
pub fn stage(plan: &Plan, target: &Path) -> Result<Staged> {
    let staged = staging_dir(target)?;
    fill(&staged, plan)?;
    Ok(staged)
}

/// Removes staging directories that interrupted runs left beside or inside `target` (their
/// process is gone, or they are over a day old), with what they had moved into `target`.
/// Returns a note per directory removed.
pub fn remove_stale(target: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok((parent, _)) = staging_parent(target) else {
        return notes;
    };
    let mut places = vec![parent];
    if target.is_dir() && !places.contains(&target.to_path_buf()) {
        places.push(target.to_path_buf());
    }
    for place in places {
        let Ok(entries) = fs::read_dir(&place) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(STAGING)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                continue;
            };
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_AFTER);
            if pid == std::process::id() || (crate::lock::process_alive(pid) && !old) {
                continue;
            }
            if let Ok(list) = fs::read_to_string(entry.path().join(MOVING)) {
                for moved in list.lines().filter(|l| !l.is_empty() && !l.contains('/')) {
                    remove_any(&place.join(moved));
                }
            }
            if fs::remove_dir_all(entry.path()).is_ok() {
                notes.push(format!(
                    "note: removed `{}`, left by an interrupted scaffold run (pid {pid})",
                    entry.path().display()
                ));
            }
        }
    }
    notes
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
    Err(Error::input(
        Problem::new(format!(
            "not inside a scaffold repo: no {} in `{}` or above",
            crate::record::PATH,
            start.display()
        ))
        .fix("run this in a repo made by scaffold new"),
    ))
}

//! One scaffold operation per repository at a time. Every command that reads or changes a
//! repo takes `scaffold.lock` in the repository's git directory (the common one, shared by
//! linked worktrees, where `refs/scaffold/base` lives) before it reads anything, and holds
//! it until it returns. The file is created with O_EXCL, as git creates its own `*.lock`
//! files, and holds the holder's pid and command, so a second run says who holds it. A
//! lock whose process is gone (a SIGKILL) is removed by the next run; removal goes through
//! a second O_EXCL file (`scaffold.lock.break`) so that two runs never both remove one lock
//! and then each take a new one.
//!
//! `new` into an existing empty directory has no git directory yet: it holds an exclusive
//! `flock` on the directory itself, which the kernel releases when the process ends.
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, Problem, Result};

/// The lock file's name, in the git directory.
pub const FILE: &str = "scaffold.lock";
const BREAK: &str = "scaffold.lock.break";
/// A lock file still empty after this long was left by a run killed between creating and
/// writing it.
const EMPTY_STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// The lock this process holds, for the signal thread to remove before it exits.
static HELD: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Held while alive; the lock file is removed on drop.
pub struct RepoLock {
    path: Option<PathBuf>,
    #[cfg(unix)]
    _dir: Option<fs::File>,
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            let _ = fs::remove_file(&path);
            *held = None;
        }
    }
}

/// Removes the lock this process holds; the signal thread calls it before `exit`.
pub fn release_held() {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = held.take() {
        let _ = fs::remove_file(path);
    }
}

/// Takes the lock of the git repository containing `dir`, for `command` (said to a second
/// run). Not inside a git repository: nothing to lock (the command says what is wrong).
pub fn acquire(dir: &Path, command: &str) -> Result<RepoLock> {
    take(dir, command, false)
}

/// As `acquire`, for a command that only reads (`check`): a git directory it may not
/// write (a read-only mount, another user's checkout) is read without the lock.
pub fn acquire_to_read(dir: &Path, command: &str) -> Result<RepoLock> {
    take(dir, command, true)
}

fn take(dir: &Path, command: &str, read_only: bool) -> Result<RepoLock> {
    let Some(git_dir) = common_git_dir(dir) else {
        return Ok(RepoLock::none());
    };
    let path = git_dir.join(FILE);
    let holder = format!("{} {command}\n", std::process::id());
    // A few rounds: each one either takes the lock, refuses, or removes a dead holder's.
    for _ in 0..8 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
                file.write_all(holder.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| {
                        let _ = fs::remove_file(&path);
                        Error::io_path("write", &path, e)
                    })?;
                *held = Some(path.clone());
                drop(held);
                let lock = RepoLock {
                    path: Some(path),
                    #[cfg(unix)]
                    _dir: None,
                };
                check_not_sparse(dir)?;
                return Ok(lock);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e)
                if read_only
                    && (e.kind() == std::io::ErrorKind::PermissionDenied
                        || e.raw_os_error() == Some(libc::EROFS)) =>
            {
                return Ok(RepoLock::none());
            }
            Err(e) => return Err(Error::io_path("create the lock", &path, e)),
        }
        match read_holder(&path) {
            Holder::Gone => continue,
            Holder::Alive { pid, command } => return Err(busy(&path, pid, &command)),
            Holder::Starting => std::thread::sleep(std::time::Duration::from_millis(20)),
            Holder::Dead { text } => {
                break_stale(&git_dir, &path, &text)?;
            }
        }
    }
    Err(Error::repo_state(
        Problem::new(format!(
            "cannot take `{}`: other scaffold runs keep taking it",
            path.display()
        ))
        .fix("wait for them, then run scaffold again"),
    ))
}

/// An exclusive lock on an existing directory that `new` fills in place, so a second `new`
/// into it is refused instead of racing the first.
#[allow(unsafe_code)] // flock(2): std has no advisory lock on a directory
pub fn acquire_dir(dir: &Path) -> Result<RepoLock> {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let Ok(file) = fs::File::open(dir) else {
            return Ok(RepoLock::none());
        };
        // SAFETY: flock on a descriptor this function owns.
        let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !taken {
            return Err(Error::repo_state(
                Problem::new(format!(
                    "another scaffold new is writing into `{}`",
                    dir.display()
                ))
                .fix("wait for it to finish (nothing was written)"),
            ));
        }
        Ok(RepoLock {
            path: None,
            _dir: Some(file),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(RepoLock::none())
    }
}

impl RepoLock {
    fn none() -> Self {
        RepoLock {
            path: None,
            #[cfg(unix)]
            _dir: None,
        }
    }
}

fn busy(path: &Path, pid: u32, command: &str) -> Error {
    let what = format!("another scaffold run (pid {pid}, `{command}`) is using this repository");
    let fix = format!(
        "wait for it to finish, then run scaffold again (if no scaffold is running, remove `{}`)",
        path.display()
    );
    Error::repo_state(Problem::new(what).fix(fix))
}

enum Holder {
    Gone,
    /// Just created, not yet written.
    Starting,
    Alive {
        pid: u32,
        command: String,
    },
    Dead {
        text: String,
    },
}

fn read_holder(path: &Path) -> Holder {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Holder::Gone,
        // Unreadable: treat as held, the message names the file.
        Err(_) => {
            return Holder::Alive {
                pid: 0,
                command: "unknown".into(),
            };
        }
    };
    let parsed = text
        .trim_end()
        .split_once(' ')
        .and_then(|(pid, command)| Some((pid.parse::<u32>().ok()?, command.to_string())));
    match parsed {
        Some((pid, command)) if pid == std::process::id() || process_alive(pid) => {
            Holder::Alive { pid, command }
        }
        Some(_) => Holder::Dead { text },
        None => {
            let old = fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > EMPTY_STALE_AFTER);
            if old {
                Holder::Dead { text }
            } else {
                Holder::Starting
            }
        }
    }
}

/// Removes `path` if it still holds `text` (a dead holder's), under the break file so
/// only one run removes it.
fn break_stale(git_dir: &Path, path: &Path, text: &str) -> Result<()> {
    let breaker = git_dir.join(BREAK);
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&breaker)
    {
        Ok(mut file) => {
            let _ = file.write_all(format!("{}\n", std::process::id()).as_bytes());
            if fs::read_to_string(path).is_ok_and(|now| now == text) {
                let _ = fs::remove_file(path);
                crate::notes::note(format!(
                    "note: removed `{}`, left by a scaffold run that is gone ({})",
                    path.display(),
                    text.trim_end()
                ));
            }
            let _ = fs::remove_file(&breaker);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Another run is removing it, or one died doing so (its pid is gone).
            let dead = fs::read_to_string(&breaker)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
                .is_some_and(|pid| !process_alive(pid));
            if dead {
                let _ = fs::remove_file(&breaker);
            } else {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        Err(e) => return Err(Error::io_path("create", &breaker, e)),
    }
    Ok(())
}

/// The git directory shared by every worktree of the repository containing `dir`.
fn common_git_dir(dir: &Path) -> Option<PathBuf> {
    let repo = git2::Repository::discover(dir).ok()?;
    Some(repo.commondir().to_path_buf())
}

/// A sparse checkout lacks files scaffold must read and write (the answers record among
/// them): refused with the commands around it, before anything is read.
pub fn check_not_sparse(dir: &Path) -> Result<()> {
    let Ok(repo) = git2::Repository::discover(dir) else {
        return Ok(());
    };
    let sparse = repo
        .config()
        .and_then(|c| c.get_bool("core.sparseCheckout"))
        .unwrap_or(false);
    if sparse {
        return Err(Error::repo_state(Problem::new(format!("`{}` is a sparse checkout, and scaffold reads and writes files outside it",
            repo.workdir().unwrap_or(repo.path()).display())).fix("run `git sparse-checkout disable`, run scaffold, then `git sparse-checkout reapply` (nothing was changed)")));
    }
    Ok(())
}

/// Whether a process with this id exists (it may belong to another user).
#[allow(unsafe_code)] // kill(pid, 0): an existence probe
pub fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        let result = unsafe { libc::kill(pid, 0) };
        result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_a_dead_ones_lock_is_taken_over() {
        let dir = tempfile::TempDir::new().expect("dir");
        git2::Repository::init(dir.path()).expect("init");
        let lock = acquire(dir.path(), "add-addon x").expect("first");
        let path = dir.path().join(".git").join(FILE);
        let text = fs::read_to_string(&path).expect("lock file");
        assert_eq!(text, format!("{} add-addon x\n", std::process::id()));
        // Same pid counts as alive: a nested take is refused, never shared.
        let second = acquire(dir.path(), "update");
        assert!(matches!(second, Err(Error::RepoState(m)) if m.what.contains("add-addon x")));
        drop(lock);
        assert!(!path.exists(), "released on drop");
        // A pid that cannot exist (above the kernel's pid_max) is a dead holder.
        fs::write(&path, "4194305 update\n").expect("stale");
        let lock = acquire(dir.path(), "update").expect("stale lock recovered");
        assert!(
            fs::read_to_string(&path)
                .expect("lock")
                .starts_with(&std::process::id().to_string())
        );
        drop(lock);
    }

    #[test]
    fn outside_a_repository_there_is_nothing_to_lock() {
        let dir = tempfile::TempDir::new().expect("dir");
        let lock = acquire(dir.path(), "check").expect("no repo");
        assert!(lock.path.is_none());
    }
}

//! git's commit hooks, run as `git commit` runs them on scaffold's commits: `pre-commit` on
//! the index about to be committed (`GIT_INDEX_FILE`), `prepare-commit-msg` and
//! `commit-msg` on the message file (`.git/COMMIT_EDITMSG`, which they may rewrite), and
//! `post-commit` once the commit is made (its exit status ignored, as git ignores it).
//! `--no-verify` skips `pre-commit` and `commit-msg`, as git's does. A hook that rejects
//! the commit fails the change before its commit point, so the transaction rolls back (and
//! `new`, whose first commit runs them in its staging directory, writes nothing).
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Problem, Result};

/// The hooks of one repository, for one commit.
pub struct Hooks {
    dir: PathBuf,
    root: PathBuf,
    git_dir: PathBuf,
    /// False under `--no-verify`.
    verify: bool,
}

impl Hooks {
    /// The hooks directory git would use for the repo at `root` (`core.hooksPath`
    /// honoured; `place` is where the commit's identity was asked); None when it holds
    /// none of the commit hooks.
    pub fn find(root: &Path, place: &crate::identity::Place, verify: bool) -> Option<Self> {
        let repo = git2::Repository::open(root).ok()?;
        Self::find_in(&repo, root, place, verify)
    }

    /// `find` for `repo`, the repository at `root`, open already (`new`'s, just made).
    pub fn find_in(
        repo: &git2::Repository,
        root: &Path,
        place: &crate::identity::Place,
        verify: bool,
    ) -> Option<Self> {
        let git_dir = repo.path().to_path_buf();
        let dir = crate::identity::hooks_dir_of(repo, root, place)?;
        let hooks = Hooks {
            dir,
            root: root.to_path_buf(),
            git_dir,
            verify,
        };
        let any = [
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
        ]
        .iter()
        .any(|name| hooks.path(name).is_some());
        any.then_some(hooks)
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        let path = self.dir.join(name);
        crate::identity::is_executable(&path).then_some(path)
    }

    /// `pre-commit`, with `index` (the index of the commit's tree) as git's index.
    pub fn pre_commit(&self, index: &Path) -> Result<()> {
        if !self.verify {
            return Ok(());
        }
        self.run("pre-commit", &[], Some(index), true)
    }

    /// `prepare-commit-msg` then `commit-msg` over `message`; the message they leave.
    pub fn message(&self, message: &str) -> Result<String> {
        let file = self.git_dir.join("COMMIT_EDITMSG");
        let file_arg = file.to_string_lossy().into_owned();
        std::fs::write(&file, message).map_err(|e| Error::io_path("write", &file, e))?;
        self.run("prepare-commit-msg", &[&file_arg, "message"], None, true)?;
        if self.verify {
            self.run("commit-msg", &[&file_arg], None, true)?;
        }
        let edited =
            std::fs::read_to_string(&file).map_err(|e| Error::io_path("read", &file, e))?;
        // As git's default cleanup: comment lines and trailing blank lines go.
        let kept: Vec<&str> = edited.lines().filter(|l| !l.starts_with('#')).collect();
        let text = kept.join("\n").trim_end().to_string();
        if text.trim().is_empty() {
            return Err(Error::refused(
                Problem::new("the commit-msg hooks left an empty commit message")
                    .fix("nothing was changed: fix the hook, or pass --no-verify"),
            ));
        }
        Ok(format!("{text}\n"))
    }

    /// `post-commit`: its output is shown, its exit status ignored (as git does).
    pub fn post_commit(&self) {
        let _ = self.run("post-commit", &[], None, false);
    }

    /// These hooks for the same repository once it is at `root` (`new` moves its
    /// repository into place after the commit, before `post-commit`).
    pub fn moved_to(self, root: &Path) -> Self {
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.into());
        let (from, root) = (absolute(&self.root), absolute(root));
        let git_dir = root.join(".git");
        let dir = match absolute(&self.dir).strip_prefix(&from) {
            Ok(inside) => root.join(inside),
            Err(_) => self.dir,
        };
        Hooks {
            dir,
            root: root.to_path_buf(),
            git_dir,
            verify: self.verify,
        }
    }

    #[allow(clippy::print_stderr)] // what a hook says is the user's to read, as under `git commit`
    fn run(&self, name: &str, args: &[&str], index: Option<&Path>, may_reject: bool) -> Result<()> {
        let Some(path) = self.path(name) else {
            return Ok(());
        };
        let mut command = Command::new(&path);
        command
            .args(args)
            .current_dir(&self.root)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_EDITOR", ":");
        if let Some(index) = index {
            command.env("GIT_INDEX_FILE", index);
        }
        let output = command
            .output()
            .map_err(|e| Error::io_path("run the hook", &path, e))?;
        // What the hook says is the user's to read, as under `git commit` (on stderr:
        // stdout carries scaffold's results).
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if !said.trim().is_empty() {
            eprint!("{said}");
        }
        if output.status.success() || !may_reject {
            return Ok(());
        }
        let last = said
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let code = output
            .status
            .code()
            .map_or_else(|| "a signal".to_string(), |c| format!("exit {c}"));
        Err(Error::refused(
            Problem::new(format!(
                "the {name} hook rejected the commit ({code}){}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {}", last.trim())
                }
            ))
            .fix(format!(
                "nothing was changed: fix what it reports and run scaffold again, or pass --no-verify to skip {name} as `git commit --no-verify` does"
            )),
        ))
    }
}

//! A hermetic way to run the real binary: a temporary HOME with its own git config, no
//! GIT_* variables from the caller, and helpers to read the result.
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use tempfile::TempDir;

pub struct Env {
    pub home: TempDir,
    pub work: TempDir,
}

impl Drop for Env {
    /// Every repository a passing test leaves under its work directory is checked as git
    /// checks what it receives ([`assert_git_accepts`]): whatever a test made scaffold do,
    /// git must accept the result.
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        for repo in repositories(self.work.path(), 3) {
            let committed = Command::new("git")
                .args(["rev-parse", "--verify", "-q", "HEAD"])
                .current_dir(&repo)
                .env("HOME", self.home.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .is_ok_and(|o| o.status.success());
            if committed {
                assert_git_accepts(self, &repo);
            }
        }
    }
}

/// The git work trees under `dir`, `depth` levels down at most (not inside one another).
fn repositories(dir: &Path, depth: usize) -> Vec<PathBuf> {
    if dir.join(".git").exists() {
        return vec![dir.to_path_buf()];
    }
    if depth == 0 {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            found.extend(repositories(&path, depth - 1));
        }
    }
    found
}

impl Env {
    /// With `user.name`/`user.email` set in the temporary HOME's git config.
    pub fn new() -> Self {
        let env = Self::without_git_identity();
        std::fs::write(
            env.home.path().join(".gitconfig"),
            "[user]\n\tname = Test Author\n\temail = test@example.org\n",
        )
        .expect("write gitconfig");
        env
    }

    pub fn without_git_identity() -> Self {
        Env {
            home: TempDir::new().expect("home"),
            work: TempDir::new().expect("work"),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.work.path().join(rel)
    }

    /// A tmpfs of `size` (e.g. `256k`) mounted at `rel`, for real full-disk cases; None
    /// where this machine does not allow mounting (see [`missing`]: CI, root on a machine
    /// that mounts, fails instead). Unmounted on drop, so a failed assertion does not leave
    /// it mounted.
    pub fn tmpfs(&self, rel: &str, size: &str) -> Option<Mount> {
        let dir = self.path(rel);
        std::fs::create_dir(&dir).expect("mkdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            missing("the right to mount a tmpfs (root)");
        }
        mounted.then_some(Mount(dir))
    }

    pub fn scaffold(&self) -> Command {
        let mut cmd = Command::cargo_bin("scaffold").expect("binary");
        cmd.current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_CACHE_HOME", self.home.path().join(".cache"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .env_remove("GIT_COMMITTER_NAME")
            .env_remove("GIT_COMMITTER_EMAIL")
            .env_remove("EMAIL");
        cmd
    }

    /// Runs `git ARGS` in `dir` with the same hermetic environment; returns stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf8")
    }

    /// Everything in the work directory, to prove a failed run wrote nothing.
    pub fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = walkdir::WalkDir::new(self.work.path())
            .min_depth(1)
            .into_iter()
            .map(|e| {
                e.expect("walk")
                    .path()
                    .strip_prefix(self.work.path())
                    .expect("prefix")
                    .display()
                    .to_string()
            })
            .collect();
        names.sort();
        names
    }
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Whether `tool` is on PATH. A test that needs a tool asks this first and returns when it
/// is false; [`missing`] decides whether that may happen.
pub fn require_tool(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        missing(tool);
    }
    found
}

/// A tool or ability a test needs is missing. Under CI (`CI=true`, as CI runs .ci/run)
/// that fails the test: CI has every tool asked for this way (the machine's image, or
/// .ci/run installs it), so a missing one is a broken CI, never a pass. Elsewhere the test
/// says on stderr that it did not run and returns (Rust cannot mark a test ignored at run
/// time). A tool CI cannot have is `#[ignore = "needs ..."]` instead.
pub fn missing(what: &str) {
    if in_ci() {
        panic!("needs {what}, which CI must have (see .ci/run)");
    }
    eprintln!("NOT RUN: needs {what} (CI=true fails here instead)");
}

/// Whether the tests run under CI (`CI=true` or `CI=1`, as .ci/run sets it): the one place
/// that decides whether a missing tool fails a test or only skips it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

pub fn answers(dir: &Path) -> serde_norway::Value {
    let text = std::fs::read_to_string(dir.join(".scaffold/answers.yaml")).expect("answers.yaml");
    serde_norway::from_str(&text).expect("answers parse")
}

/// A recorded answer: a shared one, else the one environment's own (a repo of several
/// environments has no single answer for a per-environment key: Null).
pub fn answer(dir: &Path, key: &str) -> serde_norway::Value {
    let record = answers(dir);
    let shared = &record["answers"][key];
    if !shared.is_null() {
        return shared.clone();
    }
    match record["environments"].as_mapping() {
        Some(envs) if envs.len() == 1 => envs
            .values()
            .next()
            .map(|own| own[key].clone())
            .unwrap_or_default(),
        _ => serde_norway::Value::Null,
    }
}

/// A mount made by a test, unmounted when dropped.
pub struct Mount(pub PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A chart outside the catalog, as an app: `add-addon NAME --chart podinfo ...`.
pub fn podinfo_app(name: &str) -> Vec<&str> {
    vec![
        "add-addon",
        name,
        "--chart",
        "podinfo",
        "--repo",
        "oci://ghcr.io/stefanprodan/charts",
        "--version",
        "6.14.1",
        "--layer",
        "apps",
    ]
}

/// What git itself says of a repo scaffold committed to: `git fsck --strict` finds
/// nothing, every pack passes `git verify-pack`, and a bare remote that checks every
/// object it receives (`receive.fsckObjects`) accepts a push of every ref.
pub fn assert_git_accepts(env: &Env, dir: &Path) {
    env.git(dir, &["fsck", "--strict", "--no-progress"]);
    let common = PathBuf::from(
        env.git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        )
        .trim(),
    );
    if let Ok(entries) = std::fs::read_dir(common.join("objects/pack")) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "idx") {
                env.git(dir, &["verify-pack", path.to_str().expect("utf8")]);
            }
        }
    }
    // A shallow clone lacks the history a fresh remote needs: its objects are checked above.
    if env
        .git(dir, &["rev-parse", "--is-shallow-repository"])
        .trim()
        == "true"
    {
        return;
    }
    let remote = TempDir::new().expect("remote");
    env.git(remote.path(), &["init", "-q", "--bare"]);
    env.git(remote.path(), &["config", "receive.fsckObjects", "true"]);
    env.git(
        dir,
        &[
            "push",
            "-q",
            // The objects are what is checked: no pre-push hook (git-lfs would upload).
            "--no-verify",
            remote.path().to_str().expect("utf8"),
            "refs/heads/*:refs/heads/*",
            "refs/scaffold/*:refs/scaffold/*",
        ],
    );
}

/// Accepts interactive `new`'s review (the summary, then "Write this platform repo?"),
/// returning what the terminal showed up to the question.
pub fn accept_review(p: &mut rexpect::session::PtySession) -> String {
    let seen = p
        .exp_string("Write this platform repo?")
        .expect("the review before writing");
    // The confirm switches the terminal to raw mode once drawn; keys sent before are lost.
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send("y").expect("yes");
    p.flush().expect("flush");
    seen
}

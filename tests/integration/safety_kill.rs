//! The kill harness: `new`, `add-addon`, `remove-addon`, `update` and `env add`/`env remove` and `promote` stopped by SIGKILL,
//! SIGINT or SIGTERM at moments spread evenly over a whole run (measured first), and after
//! every run the invariant: the repo is at the old commit with a clean tree and its old
//! base, or at the new one with a clean tree and the base of that commit; a target of
//! `new` is absent/empty or a complete repo; whatever a SIGKILL left is removed by the next
//! run, which says so. Exit codes are counted: 130 only when nothing changed, 0 only when
//! the change is complete (a signal after the commit point lets the run finish).
//! 50 + 50 + 50 + 54 = 204 runs really interrupted (still running when signalled) in all.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::safety_git::new_repo;
use crate::support::{Env, run};

/// How an interrupted run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// It had finished before the signal was sent.
    Before(Option<i32>),
    /// Its exit code after the signal (None: the signal killed it).
    Signalled(Option<i32>),
}

impl Ended {
    fn code(self) -> Option<i32> {
        match self {
            Ended::Before(code) | Ended::Signalled(code) => code,
        }
    }
}

/// Figures of one harness, printed at the end (`--nocapture` shows them).
#[derive(Default, Debug)]
struct Tally {
    interrupted: u32,
    exit_0: u32,
    exit_130: u32,
    killed: u32,
    changed_with_130: u32,
}

impl Tally {
    fn count(&mut self, ended: Ended, changed: bool) {
        if let Ended::Signalled(code) = ended {
            self.interrupted += 1;
            match code {
                Some(0) => self.exit_0 += 1,
                Some(130) => self.exit_130 += 1,
                _ => self.killed += 1,
            }
            if code == Some(130) && changed {
                self.changed_with_130 += 1;
            }
        }
    }
}

/// Runs `cmd`, sends `signal` after `delay`, and says how it ended.
#[allow(unsafe_code)] // kill(2) on our own child
fn interrupt(cmd: &mut Command, signal: i32, delay: Duration) -> Ended {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    std::thread::sleep(delay);
    let running = child.try_wait().expect("wait").is_none();
    if running {
        let pid = libc::pid_t::try_from(child.id()).expect("pid");
        // SAFETY: signalling our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, signal) };
    }
    let code = child.wait().expect("wait").code();
    if running {
        Ended::Signalled(code)
    } else {
        Ended::Before(code)
    }
}

fn elapsed(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed()
}

/// The `i`-th of `n` moments spread over `span` (a second round falls between the first
/// round's); SIGKILL, SIGINT and SIGTERM in turn.
fn moment(i: u32, n: u32, span: Duration) -> (i32, Duration) {
    let signal = [libc::SIGKILL, libc::SIGINT, libc::SIGTERM][i as usize % 3];
    let at = f64::from(i % n) + 0.5 * f64::from(i / n % 2);
    (signal, span.mul_f64(at / f64::from(n)))
}

/// Runs are repeated until this many were really interrupted (still running when the
/// signal came), up to four times as many attempts.
fn attempts(interrupted: u32) -> impl Iterator<Item = u32> {
    0..interrupted * 4
}

/// The span the moments spread over, after a run that finished before its signal: the
/// first run was measured on a busier machine than now (the suite runs tests side by
/// side), so later moments fall earlier.
fn shorter(span: Duration) -> Duration {
    span.mul_f64(0.8).max(Duration::from_millis(2))
}

fn staging_left(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(".scaffold-new-")
            })
        })
        .unwrap_or(false)
}

/// A target of `new` after an interrupted run: absent or empty, or a complete, clean repo.
fn assert_new_target(env: &Env, target: &Path, files: usize, what: &str) {
    let entries: Vec<String> = std::fs::read_dir(target)
        .map(|e| {
            e.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with(".scaffold-new-"))
                .collect()
        })
        .unwrap_or_default();
    if entries.is_empty() {
        return;
    }
    assert_eq!(env.git(target, &["status", "--porcelain"]), "", "{what}");
    assert_eq!(
        env.git(target, &["ls-files"]).lines().count(),
        files,
        "{what}"
    );
}

#[test]
fn new_interrupted_anywhere_leaves_nothing_or_a_complete_repo() {
    let env = Env::new();
    let files = {
        let span = elapsed(env.scaffold().args(["new", "probe", "--defaults"]));
        let count = env.git(&env.path("probe"), &["ls-files"]).lines().count();
        (span, count)
    };
    let (mut span, count) = files;
    let runs = 50;
    let mut tally = Tally::default();
    for i in attempts(runs) {
        if tally.interrupted == runs {
            break;
        }
        let (signal, delay) = moment(i, runs, span.mul_f64(0.9));
        // Half the runs create a directory, half fill an existing empty one in place.
        let in_place = i % 4 >= 2;
        let name = format!("t{i}");
        let target = env.path(&name);
        let mut cmd = env.scaffold();
        if in_place {
            std::fs::create_dir(&target).expect("mkdir");
            cmd.current_dir(&target).args(["new", ".", "--defaults"]);
        } else {
            cmd.args(["new", &name, "--defaults"]);
        }
        let ended = interrupt(&mut cmd, signal, delay);
        let what = format!("run {i} (signal {signal}, {delay:?}, in place {in_place}, {ended:?})");
        let created = target.join(".git").exists();
        tally.count(ended, created);
        if !matches!(ended, Ended::Signalled(_)) {
            span = shorter(span);
        }
        match ended.code() {
            Some(130) => assert!(!created, "{what}: exit 130 after the repo was created"),
            Some(0) => assert!(created, "{what}: exit 0 without a repo"),
            _ => {}
        }
        let place = if in_place {
            target.clone()
        } else {
            env.path("")
        };
        if signal == libc::SIGINT {
            assert!(
                !staging_left(&place),
                "{what}: SIGINT left a staging directory"
            );
        }
        // A SIGKILL between two renames of the in-place move leaves the entries moved so far
        // (never `.git`, moved last) beside the staging directory's list of them; the next
        // run takes them back out, checked below.
        let half_moved = in_place
            && signal == libc::SIGKILL
            && !target.join(".git").exists()
            && staging_left(&place);
        if !half_moved {
            assert_new_target(&env, &target, count, &what);
        }
        // The next run removes what a SIGKILL left, and says so.
        let left = staging_left(&place);
        if !left {
            continue;
        }
        let next = run(env.scaffold().current_dir(&place).args([
            "new",
            "next",
            "--defaults",
            "--dry-run",
        ]));
        assert_eq!(next.code, 0, "{what}: {}", next.stderr);
        assert!(
            next.stderr.contains("note: removed `"),
            "{what}: {}",
            next.stderr
        );
        assert!(!staging_left(&place), "{what}: stale staging not removed");
        assert_new_target(&env, &target, count, &what);
    }
    eprintln!("kill harness, new: {tally:?}");
    assert_eq!(tally.changed_with_130, 0, "{tally:?}");
    assert_eq!(tally.interrupted, runs, "{tally:?}");
}

/// The tree of HEAD and of the pristine base.
fn trees(env: &Env, dir: &Path) -> (String, String) {
    let tree = |rev: &str| env.git(dir, &["rev-parse", rev]).trim().to_string();
    (tree("HEAD^{tree}"), tree("refs/scaffold/base^{tree}"))
}

/// Interrupts `runs` runs that toggle the repo between two states, `forth` taking it from
/// the first to the second and `back` returning; every run must leave the repo, its index
/// and its base in one of the two, and exit 130 only when it is where it started.
fn harness(repo: &str, forth: &[&str], back: &[&str], runs: u32) {
    let env = Env::new();
    let dir = new_repo(&env, repo);
    harness_on(env, dir, forth, back, runs);
}

/// `harness` on the repo `dir` already made in `env`.
fn harness_on(env: Env, dir: std::path::PathBuf, forth: &[&str], back: &[&str], runs: u32) {
    let first = trees(&env, &dir);
    let edit = |args: &[&str]| {
        let mut cmd = env.scaffold();
        cmd.current_dir(&dir)
            .args(args)
            .env("SCAFFOLD_TEST_STEP_DELAY_MS", "10");
        cmd
    };
    let mut span = elapsed(&mut edit(forth));
    let second = trees(&env, &dir);
    assert_ne!(first, second, "{forth:?} changes nothing");
    elapsed(&mut edit(back));
    let mut tally = Tally::default();
    for i in attempts(runs) {
        if tally.interrupted == runs {
            break;
        }
        let (signal, delay) = moment(i, runs, span.mul_f64(0.9));
        let before = trees(&env, &dir);
        let args = if before == second { back } else { forth };
        let ended = interrupt(&mut edit(args), signal, delay);
        let what = format!("run {i} {args:?} (signal {signal}, {delay:?}, {ended:?})");
        let journal = dir.join(".git/scaffold-transaction").exists();
        if journal {
            assert_eq!(
                signal,
                libc::SIGKILL,
                "{what}: SIGINT/SIGTERM left a journal"
            );
            // Any later run settles the repo before reading it.
            let out = run(env
                .scaffold()
                .current_dir(&dir)
                .args(["update", "--dry-run"]));
            assert!(out.code == 0 || out.code == 2, "{what}: {}", out.stderr);
            assert!(out.stderr.contains("note: "), "{what}: {}", out.stderr);
            assert!(!dir.join(".git/scaffold-transaction").exists(), "{what}");
        }
        let after = trees(&env, &dir);
        assert!(
            after == first || after == second,
            "{what}: HEAD and base are not both at one of the two states: {after:?}"
        );
        tally.count(ended, after != before);
        if !matches!(ended, Ended::Signalled(_)) {
            span = shorter(span);
        }
        match ended.code() {
            Some(130) => assert_eq!(after, before, "{what}: exit 130 after the commit"),
            Some(0) => assert_ne!(after, before, "{what}: exit 0 without the change"),
            _ => {}
        }
        assert_eq!(
            env.git(&dir, &["status", "--porcelain", "-uall"]),
            "",
            "{what}"
        );
    }
    eprintln!("kill harness, {forth:?}: {tally:?}");
    assert_eq!(tally.changed_with_130, 0, "{tally:?}");
    assert_eq!(tally.interrupted, runs, "{tally:?}");
}

#[test]
fn add_addon_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    harness(
        "repo",
        &["add-addon", "istio-base"],
        &["remove-addon", "istio-base"],
        50,
    );
}

#[test]
fn remove_addon_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    harness(
        "repo",
        &["add-addon", "velero"],
        &["remove-addon", "velero"],
        50,
    );
}

#[test]
fn update_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    harness(
        "repo",
        &["update", "--set", "node_max=11"],
        &["update", "--set", "node_max=10"],
        54,
    );
}

#[test]
fn env_add_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    let env = Env::new();
    let dir = crate::environments::repo(&env, "repo", &["environments=dev,prod"]);
    harness_on(
        env,
        dir,
        &["env", "add", "qa", "--from", "prod"],
        &["env", "remove", "qa", "--force"],
        40,
    );
}

#[test]
fn promote_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    let env = Env::new();
    let dir = crate::environments::repo(&env, "repo", &["environments=dev,prod"]);
    for (target, version) in [("dev", "1.1.0"), ("prod", "1.0.0")] {
        let out = run(env.scaffold().current_dir(&dir).args([
            "add-addon",
            "alpha",
            "--env",
            target,
            "--version",
            version,
        ]));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    harness_on(
        env,
        dir,
        &["promote", "--from", "dev", "--to", "prod"],
        &["add-addon", "alpha", "--env", "prod", "--version", "1.0.0"],
        40,
    );
}

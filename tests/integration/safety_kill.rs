//! The kill harness: `new`, `add-addon` and `remove-addon` stopped by SIGKILL, SIGINT or SIGTERM at
//! moments spread evenly over a whole run (measured first), and after every run the
//! invariant: the repo is at the old commit with a clean tree or at the new one with a
//! clean tree, a target of `new` is absent/empty or a complete repo, and whatever a SIGKILL
//! left is removed by the next run, which says so.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::safety_git::new_repo;
use crate::support::{Env, run};

/// Runs `cmd`, sends `signal` after `delay`, and returns whether it was still running then.
#[allow(unsafe_code)] // kill(2) on our own child
fn interrupt(cmd: &mut Command, signal: i32, delay: Duration) -> bool {
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
    child.wait().expect("wait");
    running
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

/// The `i`-th of `n` moments spread over `span`; SIGKILL, SIGINT and SIGTERM in turn.
fn moment(i: u32, n: u32, span: Duration) -> (i32, Duration) {
    let signal = [libc::SIGKILL, libc::SIGINT, libc::SIGTERM][i as usize % 3];
    (signal, span.mul_f64(f64::from(i) / f64::from(n)))
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
    let (span, count) = files;
    let runs = 36;
    for i in 0..runs {
        let (signal, delay) = moment(i, runs, span.mul_f64(1.1));
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
        interrupt(&mut cmd, signal, delay);
        let what = format!("run {i} (signal {signal}, {delay:?}, in place {in_place})");
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
        assert_new_target(&env, &target, count, &what);
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
}

/// Tree ids of the repo without and with the addon.
fn trees(env: &Env, dir: &Path) -> String {
    env.git(dir, &["rev-parse", "HEAD^{tree}"])
        .trim()
        .to_string()
}

fn harness_edit(addon: &str, runs: u32) {
    let env = Env::new();
    let dir = new_repo(&env, "repo");
    let without = trees(&env, &dir);
    let add = ["add-addon", addon];
    let remove = ["remove-addon", addon];
    let edit = |args: &[&str]| {
        let mut cmd = env.scaffold();
        cmd.current_dir(&dir)
            .args(args)
            .env("SCAFFOLD_TEST_STEP_DELAY_MS", "10");
        cmd
    };
    let span = elapsed(&mut edit(&add));
    let with = trees(&env, &dir);
    elapsed(&mut edit(&remove));
    for i in 0..runs {
        let (signal, delay) = moment(i, runs, span.mul_f64(1.1));
        let present = trees(&env, &dir) == with;
        let args = if present { remove } else { add };
        interrupt(&mut edit(&args), signal, delay);
        let what = format!("run {i} {args:?} (signal {signal}, {delay:?})");
        let journal = dir.join(".git/scaffold-transaction").exists();
        if journal {
            assert_eq!(
                signal,
                libc::SIGKILL,
                "{what}: SIGINT/SIGTERM left a journal"
            );
            // Any later run settles the repo before reading it.
            let out =
                run(env
                    .scaffold()
                    .current_dir(&dir)
                    .args(["remove-addon", addon, "--dry-run"]));
            assert!(out.code == 0 || out.code == 2, "{what}: {}", out.stderr);
            assert!(out.stderr.contains("note: "), "{what}: {}", out.stderr);
            assert!(!dir.join(".git/scaffold-transaction").exists(), "{what}");
        }
        let tree = trees(&env, &dir);
        assert!(tree == with || tree == without, "{what}: HEAD is neither");
        assert_eq!(
            env.git(&dir, &["status", "--porcelain", "-uall"]),
            "",
            "{what}"
        );
    }
}

#[test]
fn add_addon_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    harness_edit("istio-base", 34);
}

#[test]
fn remove_addon_interrupted_anywhere_is_at_the_old_or_the_new_commit() {
    harness_edit("velero", 34);
}

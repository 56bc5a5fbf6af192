//! Issue 23, a good git citizen: one operation per repository at a time, identity and
//! signing as git resolves them, hooks, and git's own checks on every commit.
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::{Env, Output, assert_git_accepts, run};

fn new_repo(env: &Env, name: &str) -> PathBuf {
    let out = run(env
        .scaffold()
        .args(["new", name, "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

fn spawn(env: &Env, dir: &Path, args: &[&str], delay_ms: u32) -> Child {
    env.scaffold()
        .current_dir(dir)
        .args(args)
        .env("SCAFFOLD_TEST_STEP_DELAY_MS", delay_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().expect("wait");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The answers record as committed on HEAD.
fn committed_record(env: &Env, dir: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&env.git(dir, &["show", "HEAD:.scaffold/answers.yaml"])).expect("yaml")
}

fn has_addon(record: &serde_yaml::Value, addon: &str) -> bool {
    record["answers"]["addons"]
        .as_sequence()
        .is_some_and(|list| list.iter().any(|a| a.as_str() == Some(addon)))
}

/// A run refused because another holds the lock: exit 3 and the lock's one-line message.
fn refused_by_lock(out: &Output) -> bool {
    out.code == 3 && out.stderr.contains("another scaffold run (pid ")
}

#[test]
fn concurrent_add_addon_and_update_never_lose_a_change_or_break_the_index() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let pairs = 50;
    let (mut both, mut refused) = (0, 0);
    for n in 0..pairs {
        let record = committed_record(&env, &dir);
        let addon_cmd = if has_addon(&record, "velero") {
            "remove-addon"
        } else {
            "add-addon"
        };
        let node_max = format!("node_max={}", 10 + n);
        // Every fifth pair slows one run, so the two overlap for certain.
        let delay = if n % 5 == 0 { 30 } else { 0 };
        let a = spawn(&env, &dir, &[addon_cmd, "velero"], delay);
        let b = spawn(&env, &dir, &["update", "--set", &node_max], 0);
        let (a, b) = (finish(a), finish(b));
        for (what, out) in [(addon_cmd, &a), ("update", &b)] {
            assert!(
                out.code == 0 || refused_by_lock(out),
                "pair {n}: {what} exited {}: {}",
                out.code,
                out.stderr
            );
        }
        let after = committed_record(&env, &dir);
        if a.code == 0 {
            assert_eq!(
                has_addon(&after, "velero"),
                addon_cmd == "add-addon",
                "pair {n}: {addon_cmd} exited 0 but HEAD does not show it (lost update)"
            );
        }
        if b.code == 0 {
            assert_eq!(
                after["answers"]["node_max"].as_u64(),
                Some(10 + n),
                "pair {n}: update exited 0 but HEAD does not show it (lost update)"
            );
        }
        match (a.code, b.code) {
            (0, 0) => both += 1,
            _ => refused += 1,
        }
        // The index and work tree are HEAD's: nothing staged, nothing modified.
        assert_eq!(
            env.git(&dir, &["status", "--porcelain"]),
            "",
            "pair {n}: index or work tree left behind HEAD"
        );
        assert!(!dir.join(".git/scaffold.lock").exists(), "pair {n}: lock left");
    }
    eprintln!("{pairs} pairs: {both} both committed in turn, {refused} with one refused by the lock");
    assert_git_accepts(&env, &dir);
}

#[test]
fn a_second_run_is_refused_while_the_lock_is_held_and_a_dead_holders_lock_is_recovered() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let lock = dir.join(".git/scaffold.lock");
    // A live holder: this test process.
    std::fs::write(&lock, format!("{} add-addon velero\n", std::process::id())).expect("lock");
    let out = run(env.scaffold().current_dir(&dir).args(["add-addon", "velero"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "error: another scaffold run (pid {}, `add-addon velero`) is using this repository; wait for it to finish, then run scaffold again (if no scaffold is running, remove `{}`)\n",
            std::process::id(),
            std::fs::canonicalize(&lock).expect("abs").display()
        )
    );
    assert_eq!(env.git(&dir, &["log", "--format=%s"]).lines().count(), 1);
    // A dead holder: a process that has exited.
    let gone = Command::new("true").spawn().expect("true");
    let pid = gone.id();
    let _ = gone.wait_with_output();
    std::fs::write(&lock, format!("{pid} update\n")).expect("lock");
    let out = run(env.scaffold().current_dir(&dir).args(["add-addon", "velero"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("left by a scaffold run that is gone"), "{}", out.stderr);
    assert!(!lock.exists());
    assert_git_accepts(&env, &dir);
}

#[test]
fn two_in_place_news_into_one_directory_never_mix() {
    for n in 0..10 {
        let env = Env::new();
        let dir = env.path("here");
        std::fs::create_dir(&dir).expect("mkdir");
        let args = ["new", ".", "--defaults", "--set", "name=platform"];
        let a = spawn(&env, &dir, &args, if n % 2 == 0 { 5 } else { 0 });
        let b = spawn(&env, &dir, &args, 0);
        let (a, b) = (finish(a), finish(b));
        let winners = [&a, &b].iter().filter(|o| o.code == 0).count();
        assert_eq!(winners, 1, "run {n}: {}\n{}", a.stderr, b.stderr);
        for out in [&a, &b].into_iter().filter(|o| o.code != 0) {
            assert_eq!(out.code, 3, "run {n}: {}", out.stderr);
        }
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "", "run {n}");
        assert_git_accepts(&env, &dir);
    }
}

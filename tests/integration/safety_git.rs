//! add-addon/remove-addon inside a repository in any git state: refused untouched while a
//! merge, rebase, cherry-pick, revert or bisect is in progress, on a detached HEAD, under a
//! lock, with foreign staged changes; rolled back exactly on an IO fault or a signal;
//! recovered on the next run after a SIGKILL.
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, Output, run};

pub fn new_repo(env: &Env, name: &str) -> PathBuf {
    let out = run(env
        .scaffold()
        .args(["new", name, "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

pub fn in_repo(env: &Env, dir: &Path, args: &[&str]) -> Output {
    run(env.scaffold().current_dir(dir).args(args))
}

/// `git ARGS` that may fail (a conflicting merge); returns whether it succeeded.
fn git_may_fail(env: &Env, dir: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", env.home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs")
        .status
        .success()
}

/// Everything that must not change: HEAD, the status, every file's bytes (`.git` included,
/// except objects a refused run may have stored and the logs).
pub fn snapshot(env: &Env, dir: &Path) -> Vec<(String, Vec<u8>)> {
    // GIT_OPTIONAL_LOCKS=0: `git status` must not refresh (rewrite) the index it inspects.
    let status = Command::new("git")
        .args(["status", "--porcelain", "-uall"])
        .current_dir(dir)
        .env("HOME", env.home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .expect("git status");
    let mut out = vec![
        (
            "HEAD".into(),
            env.git(dir, &["rev-parse", "HEAD"]).into_bytes(),
        ),
        ("status".into(), status.stdout),
    ];
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.expect("walk");
        let rel = entry
            .path()
            .strip_prefix(dir)
            .expect("prefix")
            .display()
            .to_string();
        if rel.starts_with(".git/objects") || rel.starts_with(".git/logs") {
            continue;
        }
        let bytes = if entry.file_type().is_file() {
            std::fs::read(entry.path()).expect("read")
        } else {
            Vec::new()
        };
        out.push((rel, bytes));
    }
    out
}

/// Fails naming the first difference.
pub fn assert_same(before: &[(String, Vec<u8>)], after: &[(String, Vec<u8>)], what: &str) {
    let names = |s: &[(String, Vec<u8>)]| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(before), names(after), "{what}: files differ");
    for ((name, a), (_, b)) in before.iter().zip(after) {
        assert!(
            a == b,
            "{what}: {name} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(b)
        );
    }
}

/// Exactly one stderr line, `error: …`, with every fragment, and the exit code.
pub fn assert_one_line(out: &Output, code: i32, fragments: &[&str], what: &str) {
    assert_eq!(out.code, code, "{what}: {}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: not one line: {}", out.stderr);
    assert!(lines[0].starts_with("error: "), "{what}: {}", lines[0]);
    for fragment in fragments {
        assert!(
            lines[0].contains(fragment),
            "{what}: {:?} lacks {fragment:?}",
            lines[0]
        );
    }
}

fn commit_edit(env: &Env, dir: &Path, text: &str) {
    std::fs::write(dir.join("README.md"), text).expect("write");
    env.git(dir, &["commit", "-qam", text]);
}

/// A second branch whose README conflicts with main's.
fn diverge(env: &Env, dir: &Path) {
    env.git(dir, &["branch", "other"]);
    commit_edit(env, dir, "main's readme\n");
    env.git(dir, &["switch", "-q", "other"]);
    commit_edit(env, dir, "other's readme\n");
    env.git(dir, &["switch", "-q", "main"]);
}

fn assert_refused(env: &Env, dir: &Path, expected: &[&str]) {
    let before = snapshot(env, dir);
    for args in [
        &["add-addon", "istio-base"][..],
        &["remove-addon", "reloader"],
    ] {
        let out = in_repo(env, dir, args);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        for part in expected {
            assert!(out.stderr.contains(part), "{args:?}: {}", out.stderr);
        }
        assert_same(&before, &snapshot(env, dir), &format!("{args:?}"));
    }
}

#[test]
fn operations_in_progress_are_refused_with_the_command_that_ends_them() {
    let env = Env::new();
    // A clean merge stopped before its commit: MERGE_HEAD and staged content.
    let dir = new_repo(&env, "merge");
    env.git(&dir, &["branch", "side"]);
    env.git(&dir, &["switch", "-q", "side"]);
    std::fs::write(dir.join("side.txt"), "side\n").expect("write");
    env.git(&dir, &["add", "side.txt"]);
    env.git(&dir, &["commit", "-qm", "side"]);
    env.git(&dir, &["switch", "-q", "main"]);
    commit_edit(&env, &dir, "main\n");
    env.git(&dir, &["merge", "--no-commit", "--no-ff", "side"]);
    assert_refused(&env, &dir, &["a merge in progress", "git merge --abort"]);

    let dir = new_repo(&env, "conflict");
    diverge(&env, &dir);
    assert!(!git_may_fail(&env, &dir, &["merge", "other"]));
    assert_refused(&env, &dir, &["a merge in progress", "git merge --abort"]);

    let dir = new_repo(&env, "pick");
    diverge(&env, &dir);
    assert!(!git_may_fail(&env, &dir, &["cherry-pick", "other"]));
    assert_refused(
        &env,
        &dir,
        &["a cherry-pick in progress", "git cherry-pick --abort"],
    );

    let dir = new_repo(&env, "rebase");
    diverge(&env, &dir);
    assert!(!git_may_fail(&env, &dir, &["rebase", "other"]));
    assert_refused(&env, &dir, &["a rebase in progress", "git rebase --abort"]);

    let dir = new_repo(&env, "revert");
    commit_edit(&env, &dir, "second\n");
    env.git(&dir, &["revert", "--no-commit", "HEAD"]);
    assert_refused(&env, &dir, &["a revert in progress", "git revert --abort"]);

    let dir = new_repo(&env, "bisect");
    commit_edit(&env, &dir, "second\n");
    env.git(&dir, &["bisect", "start", "HEAD", "HEAD~1"]);
    assert_refused(&env, &dir, &["git bisect reset"]);
}

#[test]
fn detached_head_lock_and_foreign_staged_changes_are_refused() {
    let env = Env::new();
    let dir = new_repo(&env, "detached");
    env.git(&dir, &["switch", "-q", "--detach", "HEAD"]);
    assert_refused(&env, &dir, &["HEAD is detached", "git switch main"]);

    let dir = new_repo(&env, "locked");
    std::fs::write(dir.join(".git/index.lock"), "").expect("lock");
    assert_refused(&env, &dir, &["index.lock", "rm "]);

    let dir = new_repo(&env, "staged");
    std::fs::write(dir.join("notes.txt"), "mine\n").expect("write");
    env.git(&dir, &["add", "notes.txt"]);
    assert_refused(
        &env,
        &dir,
        &[
            "staged changes that are not scaffold's: notes.txt",
            "git restore --staged notes.txt",
        ],
    );
    // Once unstaged, the untracked file stays out of scaffold's commit.
    env.git(&dir, &["restore", "--staged", "notes.txt"]);
    let out = in_repo(&env, &dir, &["add-addon", "istio-base"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "?? notes.txt\n");
    let committed = env.git(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    assert!(!committed.contains("notes.txt"), "{committed}");
}

#[test]
fn a_fault_at_any_step_restores_the_work_tree_and_index_exactly() {
    let env = Env::new();
    let dir = new_repo(&env, "faults");
    for step in [
        "journal",
        "before-write",
        "write",
        "before-commit",
        "after-commit",
    ] {
        for args in [
            &["add-addon", "istio-base"][..],
            &["remove-addon", "reloader"],
        ] {
            let before = snapshot(&env, &dir);
            let out = run(env
                .scaffold()
                .current_dir(&dir)
                .args(args)
                .env("SCAFFOLD_TEST_FAIL_AT", step));
            assert_eq!(out.code, 4, "{step} {args:?}: {}", out.stderr);
            assert!(
                out.stderr.contains("No space left on device"),
                "{}",
                out.stderr
            );
            assert_same(&before, &snapshot(&env, &dir), &format!("{step} {args:?}"));
        }
    }
    // And nothing stops the next run.
    let out = in_repo(&env, &dir, &["add-addon", "istio-base"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn a_sigkill_mid_change_is_rolled_back_or_finished_by_the_next_run() {
    let env = Env::new();
    for (step, finished) in [
        ("write", false),
        ("before-commit", false),
        ("after-commit", true),
    ] {
        let dir = new_repo(&env, step);
        let before = snapshot(&env, &dir);
        let killed = run(env
            .scaffold()
            .current_dir(&dir)
            .args(["add-addon", "istio-base"])
            .env("SCAFFOLD_TEST_KILL_AT", step));
        assert_eq!(killed.code, -1, "{step}: {}", killed.stderr);
        assert!(dir.join(".git/scaffold-transaction").exists(), "{step}");
        // Any later run settles the repo first, even a dry run.
        let out = in_repo(&env, &dir, &["remove-addon", "reloader", "--dry-run"]);
        assert_eq!(out.code, 0, "{step}: {}", out.stderr);
        assert!(!dir.join(".git/scaffold-transaction").exists(), "{step}");
        let subject = env.git(&dir, &["log", "-1", "--format=%s"]);
        if finished {
            assert!(
                out.stderr.contains("finished a scaffold run"),
                "{}",
                out.stderr
            );
            assert!(
                subject.starts_with("scaffold: add addon istio-base"),
                "{subject}"
            );
        } else {
            assert!(
                out.stderr.contains("rolled back a scaffold run"),
                "{}",
                out.stderr
            );
            assert_same(&before, &snapshot(&env, &dir), step);
        }
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "", "{step}");
    }
}

#[test]
fn a_git_failure_at_the_commit_point_says_why_and_how_and_rolls_back() {
    let env = Env::new();
    let dir = new_repo(&env, "reflock");
    let before = snapshot(&env, &dir);
    // A stale lock on the branch is found before anything is read or written (issue 29:
    // it used to surface only at the commit point).
    std::fs::write(dir.join(".git/refs/heads/main.lock"), "").expect("lock");
    let out = in_repo(&env, &dir, &["add-addon", "istio-base"]);
    assert_one_line(
        &out,
        3,
        &[
            "refs/heads/main.lock` exists",
            "if no git is running remove it",
        ],
        "ref lock",
    );
    std::fs::remove_file(dir.join(".git/refs/heads/main.lock")).expect("unlock");
    let mut after = snapshot(&env, &dir);
    after.retain(|(name, _)| name != ".git/refs/heads/main.lock");
    assert_same(&before, &after, "after a stale lock");
    // A failure after HEAD and the base moved rolls both back, with the files and index.
    for step in ["after-commit", "after-base"] {
        let out = run(env
            .scaffold()
            .current_dir(&dir)
            .args(["add-addon", "istio-base"])
            .env("SCAFFOLD_TEST_FAIL_AT", step));
        assert_eq!(out.code, 4, "{step}: {}", out.stderr);
        assert_same(&before, &snapshot(&env, &dir), step);
    }
}

#[test]
fn a_bug_is_one_line_and_rolled_back() {
    let env = Env::new();
    let dir = new_repo(&env, "panic");
    let before = snapshot(&env, &dir);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "istio-base"])
        .env("SCAFFOLD_TEST_PANIC_AT", "write"));
    assert_one_line(&out, 70, &["error: internal error in scaffold"], "panic");
    assert!(!dir.join(".git/scaffold-transaction").exists());
    assert_same(&before, &snapshot(&env, &dir), "after a panic");
}

/// add-addon on a real full disk (a small tmpfs, where mounting is allowed): the restore
/// needs no free space, so the repo is exactly as it was.
#[test]
fn a_real_full_disk_mid_change_restores_the_repo() {
    let env = Env::new();
    let Some(mount) = env.tmpfs("small", "8m") else {
        return;
    };
    let small = mount.0.clone();
    let out = run(env
        .scaffold()
        .current_dir(&small)
        .args(["new", "repo", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = small.join("repo");
    let before = snapshot(&env, &dir);
    // Fill the disk up to a few kilobytes.
    let filler = small.join("filler");
    let mut file = std::fs::File::create(&filler).expect("filler");
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut file, &block).is_ok() {}
    drop(file);
    let result = std::fs::OpenOptions::new()
        .append(true)
        .open(&filler)
        .map(|f| {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            f.set_len(len.saturating_sub(24 * 1024))
        });
    assert!(result.is_ok());
    let out = in_repo(&env, &dir, &["add-addon", "kube-prometheus-stack"]);
    let after = snapshot(&env, &dir);
    drop(mount);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("No space left on device"),
        "{}",
        out.stderr
    );
    assert_same(&before, &after, "full disk");
}

/// Takes the immutable attribute off again, whatever the test's outcome, so the temporary
/// directory can be removed.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn a_file_scaffold_cannot_write_is_named_with_its_cause_and_leaves_no_journal() {
    let env = Env::new();
    let dir = new_repo(&env, "immutable");
    let readme = dir.join("envs/prod/README.md");
    // Root writes any file but an immutable one (chattr +i: ext4, xfs, btrfs).
    let made = Command::new("chattr").arg("+i").arg(&readme).status();
    if !made.is_ok_and(|s| s.success()) {
        crate::support::missing("chattr +i (root, on a filesystem with file attributes)");
        return;
    }
    let guard = Immutable(readme.clone());
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 4, "{}", out.stderr);
    // The cause, once, with its fix: not a "cannot restore" that hides it.
    assert!(
        out.stderr
            .contains("envs/prod/README.md`: Operation not permitted")
            && out.stderr.contains("an immutable file needs `chattr -i`")
            && !out.stderr.contains("cannot restore"),
        "{}",
        out.stderr
    );
    assert!(
        !dir.join(".git/scaffold-transaction").exists(),
        "journal left"
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    // Once the cause is fixed the same command goes through: nothing blocks it.
    drop(guard);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

//! `new` into an existing empty directory keeps the directory; a non-empty one is refused
//! untouched; staging left by a SIGKILL is removed by the next run, which says so; IO faults.
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::support::{Env, run};

fn staging(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".scaffold-new-"))
        .collect()
}

#[test]
fn new_dot_and_an_absolute_empty_directory_are_filled_in_place() {
    let env = Env::new();
    for (name, arg) in [("dot", "."), ("abs", "")] {
        let dir = env.path(name);
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o2750)).expect("chmod");
        // Running as root: an owner other than root must survive too.
        let _ = std::os::unix::fs::chown(&dir, Some(4242), Some(4243));
        let before = std::fs::metadata(&dir).expect("stat");
        let arg = if arg.is_empty() {
            dir.display().to_string()
        } else {
            arg.to_string()
        };
        let out = run(env
            .scaffold()
            .current_dir(&dir)
            .args(["new", &arg, "--defaults"]));
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let after = std::fs::metadata(&dir).expect("stat");
        assert_eq!(
            before.ino(),
            after.ino(),
            "{name}: the directory was replaced"
        );
        assert_eq!(before.mode(), after.mode(), "{name}: permissions changed");
        assert_eq!((before.uid(), before.gid()), (after.uid(), after.gid()));
        let status = ["-c", "safe.directory=*", "status", "--porcelain"];
        assert_eq!(env.git(&dir, &status), "");
        assert!(staging(&dir).is_empty());
        // The platform is named after the directory, not `.`.
        assert!(
            std::fs::read_to_string(dir.join(".scaffold/answers.yaml"))
                .expect("answers")
                .contains(&format!("name: {name}")),
            "{name}"
        );
    }
}

#[test]
fn a_non_empty_directory_is_refused_untouched() {
    let env = Env::new();
    let dir = env.path("full");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(dir.join("keep.txt"), "mine\n").expect("write");
    let before = env.listing();
    for arg in [".".to_string(), dir.display().to_string()] {
        let out = run(env
            .scaffold()
            .current_dir(&dir)
            .args(["new", &arg, "--defaults"]));
        assert_eq!(out.code, 3, "{}", out.stderr);
        assert!(
            out.stderr.contains("exists and is not empty"),
            "{}",
            out.stderr
        );
        assert_eq!(env.listing(), before);
    }
}

#[test]
fn staging_left_by_a_sigkill_is_removed_by_the_next_run() {
    let env = Env::new();
    // Killed while staging beside a new directory, and while moving into an empty one.
    for (step, in_place) in [
        ("new-written", false),
        ("new-committed", false),
        ("new-moving", true),
    ] {
        let target = env.path(step);
        let mut cmd = env.scaffold();
        if in_place {
            std::fs::create_dir(&target).expect("mkdir");
            cmd.current_dir(&target).args(["new", ".", "--defaults"]);
        } else {
            cmd.args(["new", step, "--defaults"]);
        }
        let killed = run(cmd.env("SCAFFOLD_TEST_KILL_AT", step));
        assert_eq!(killed.code, -1, "{step}: {}", killed.stderr);
        let place = if in_place {
            target.clone()
        } else {
            env.path("")
        };
        let left = staging(&place);
        assert_eq!(left.len(), 1, "{step}: {left:?}");
        let mut again = env.scaffold();
        if in_place {
            again.current_dir(&target).args(["new", ".", "--defaults"]);
        } else {
            again.args(["new", step, "--defaults"]);
        }
        let out = run(&mut again);
        assert_eq!(out.code, 0, "{step}: {}", out.stderr);
        assert!(
            out.stderr.contains("note: removed `") && out.stderr.contains(&left[0]),
            "{step}: {}",
            out.stderr
        );
        assert!(staging(&place).is_empty(), "{step}");
        assert_eq!(env.git(&target, &["status", "--porcelain"]), "", "{step}");
    }
}

#[test]
fn a_live_runs_staging_is_left_alone() {
    let env = Env::new();
    // pid 1 is always alive: its staging belongs to a running process.
    let live = env.path(".scaffold-new-1-00000000");
    std::fs::create_dir(&live).expect("mkdir");
    let out = run(env.scaffold().args(["new", "x", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(live.exists());
    assert!(!out.stderr.contains("note: removed"), "{}", out.stderr);
}

#[test]
fn io_faults_are_reported_with_the_path_and_write_nothing() {
    let env = Env::new();
    // A missing parent.
    let out = run(env.scaffold().args(["new", "no/such/dir", "--defaults"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr.trim(),
        "error: `no/such` does not exist; create the parent directory first"
    );
    // A file where the parent directory should be.
    std::fs::write(env.path("afile"), "x").expect("write");
    let before = env.listing();
    let out = run(env.scaffold().args(["new", "afile/repo", "--defaults"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr.trim(),
        "error: `afile/repo`: a part of this path is a file, not a directory; choose a path under a directory"
    );
    // A file where the target should be.
    let out = run(env.scaffold().args(["new", "afile", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("`afile` exists and is not a directory"));
    assert_eq!(env.listing(), before);
}

/// Root bypasses permission bits, so a read-only parent is made with a read-only bind
/// mount (CI, root on a machine that mounts, must manage it); a non-root run uses plain
/// permissions.
#[test]
fn a_read_only_or_forbidden_parent_is_an_io_error_naming_it() {
    let env = Env::new();
    let parent = env.path("ro");
    std::fs::create_dir(&parent).expect("mkdir");
    std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let probe = parent.join(".probe");
    if std::fs::create_dir(&probe).is_ok() {
        // Root: mode bits do not stop it. Try a read-only filesystem instead.
        let _ = std::fs::remove_dir(&probe);
        let ro = std::process::Command::new("mount")
            .args(["--bind", "-o", "ro"])
            .arg(&parent)
            .arg(&parent)
            .status();
        if !ro.is_ok_and(|s| s.success()) {
            crate::support::missing("the right to bind-mount (root in a container without it)");
            return;
        }
    }
    let out = run(env.scaffold().args(["new", "ro/repo", "--defaults"]));
    let _ = std::process::Command::new("umount").arg(&parent).status();
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("cannot create a staging directory in `ro`"),
        "{}",
        out.stderr
    );
    assert!(!parent.join("repo").exists());
}

#[test]
fn a_full_disk_while_committing_leaves_nothing() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "full", "--defaults"])
        .env("SCAFFOLD_TEST_FAIL_AT", "new-written"));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr.contains("No space left on device"),
        "{}",
        out.stderr
    );
    assert!(env.listing().is_empty(), "{:?}", env.listing());
}

/// A real full disk where the machine allows mounting a small tmpfs (root in a container
/// with mount rights); the injected fault above covers the rest.
#[test]
fn a_real_full_disk_leaves_nothing_behind() {
    let env = Env::new();
    let Some(mount) = env.tmpfs("small", "256k") else {
        return;
    };
    let small = mount.0.clone();
    let out = run(env.scaffold().args(["new", "small/repo", "--defaults"]));
    let leftover: Vec<String> = std::fs::read_dir(&small)
        .expect("read")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    drop(mount);
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("No space left on device"),
        "{}",
        out.stderr
    );
    assert!(leftover.is_empty(), "{leftover:?}");
}

/// The publish protocol, as the kernel sees it (strace): the commit's pack and idx are
/// synced before either is renamed into place (pack first, as git does), and both before
/// the repository is moved into place. Beside: the move is one rename, not synced (git
/// syncs no directory; a crash leaves the whole repo or the staging the next run
/// removes). In place, the list of entries to move, which the next run reads to undo a
/// half-done move, is synced before the first move, and the moves after the last.
#[test]
fn new_syncs_its_commit_then_moves_it_into_place() {
    if !crate::support::require_tool("strace") {
        return;
    }
    let env = Env::new();
    std::fs::create_dir(env.path("here")).expect("mkdir");
    let work = env.path("").canonicalize().expect("work dir");
    for (case, target, cwd, landed) in [
        ("beside", "r", "", work.clone()),
        ("in place", ".", "here", work.join("here")),
    ] {
        let log = env.home.path().join("strace.log");
        let scaffold = env.scaffold();
        let mut cmd = std::process::Command::new("strace");
        cmd.args(["-f", "-qq", "-y", "-o"])
            .arg(&log)
            .args([
                "-e",
                "trace=fsync,fdatasync,rename,renameat,renameat2",
                "--",
            ])
            .arg(scaffold.get_program())
            .args(["new", target, "--defaults"])
            .current_dir(env.path(cwd));
        for (key, value) in scaffold.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        let out = run(&mut cmd);
        assert_eq!(out.code, 0, "{case}: {}", out.stderr);
        // "PID call(...) = result": the call and its result.
        let calls: Vec<String> =
            completed_calls(&std::fs::read_to_string(&log).expect("strace log"))
                .into_iter()
                .map(|(_, call)| call)
                .collect();
        let synced = |c: &str, what: &str| {
            (c.starts_with("fsync(") || c.starts_with("fdatasync("))
                && c.contains(what)
                && c.ends_with("= 0")
        };
        // A rename from the staging to a path outside it (libgit2 renames inside it too).
        let out_of_staging = |c: &str| {
            let quoted: Vec<&str> = c.split('"').skip(1).step_by(2).collect();
            c.starts_with("rename")
                && quoted.len() == 2
                && quoted[0].contains(".scaffold-new-")
                && !quoted[1].contains(".scaffold-new-")
        };
        let first_move = calls
            .iter()
            .position(|c| out_of_staging(c))
            .expect("a move out of the staging");
        let last_move = calls
            .iter()
            .rposition(|c| out_of_staging(c))
            .expect("a move");
        let pack_synced = calls.iter().position(|c| synced(c, "/.git/objects/pack/"));
        assert!(
            pack_synced.is_some_and(|n| n < first_move),
            "{case}: the pack is not synced before the repo is moved into place"
        );
        let renamed = |extension: &str| {
            calls.iter().position(|c| {
                c.starts_with("rename") && c.contains(&format!(".{extension}.tmp\", \""))
            })
        };
        let (pack_renamed, idx_renamed) = (renamed("pack"), renamed("idx"));
        let idx_synced = calls.iter().position(|c| synced(c, ".idx.tmp>"));
        assert!(
            pack_renamed.is_some_and(|p| idx_renamed.is_some_and(|i| p < i))
                && [pack_synced, idx_synced]
                    .iter()
                    .all(|s| s.is_some_and(|s| pack_renamed.is_some_and(|p| s < p))),
            "{case}: the pack and idx are not both synced before the pack, then the idx, is renamed: {calls:#?}"
        );
        let landed = format!("<{}>)", landed.display());
        let move_synced = calls[last_move + 1..].iter().any(|c| synced(c, &landed));
        assert_eq!(
            move_synced,
            case == "in place",
            "{case}: the move into {landed} is synced only when entries are moved in: {calls:#?}"
        );
        if case == "beside" {
            assert_eq!(first_move, last_move, "{case}: one rename moves the repo");
        }
        if case == "in place" {
            let listed = calls.iter().position(|c| synced(c, "/.moving>"));
            assert!(
                listed.is_some_and(|n| n < first_move),
                "{case}: the list of entries to move is not synced before the first move"
            );
        }
        std::fs::remove_file(&log).expect("rm log");
    }
    assert!(env.path("r/.git").is_dir() && env.path("here/.git").is_dir());
}

/// `new` asks git who commits (`git var -l`, for the git directory the repo will have)
/// before it renders, so git answers while the repo is rendered. The staging directory is
/// made just before (git resolves the directory holding the git directory it is given),
/// the repository is initialised aside in it meanwhile and moved to its `.git` only once
/// git has exited (git never reads a repository half made), and a refusal then removes
/// the staging: nothing is left behind.
#[test]
fn new_asks_git_before_it_renders_and_a_refusal_then_leaves_nothing() {
    if !crate::support::require_tool("strace") {
        return;
    }
    let env = Env::new();
    let log = env.home.path().join("strace.log");
    let scaffold = env.scaffold();
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-qq", "-o"])
        .arg(&log)
        .args(["-e", "trace=execve,mkdir,rename", "--"])
        .arg(scaffold.get_program())
        .args(["new", "r", "--defaults"])
        .current_dir(env.path(""));
    for (key, value) in scaffold.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let log_text = std::fs::read_to_string(&log).expect("strace log");
    let calls = completed_calls(&log_text);
    assert!(
        calls.iter().any(|(_, c)| {
            c.starts_with("execve(") && c.contains(r#""var", "-l""#) && c.ends_with("= 0")
        }),
        "git var -l did not run: {calls:#?}"
    );
    // In the order the calls began: git's exec returns in the child after the parent,
    // which `spawn` lets go once the exec is under way, has gone on.
    let began = |call: &str, with: &str| {
        log_text.lines().position(|l| {
            l.split_once(' ')
                .is_some_and(|(_, c)| c.trim_start().starts_with(call))
                && l.contains(with)
        })
    };
    let (asked, staged) = (
        began("execve(", r#""var", "-l""#),
        began("mkdir(", ".scaffold-new-"),
    );
    assert!(
        staged.is_some_and(|s| asked.is_some_and(|a| s < a)),
        "the staging is not made before git var -l is started: {log_text}"
    );
    let git_pid = asked
        .and_then(|a| log_text.lines().nth(a)?.split_once(' '))
        .map(|(pid, _)| pid);
    // `-qq` leaves out exit lines; the parent's SIGCHLD says when git exited.
    let git_exited = git_pid.and_then(|pid| {
        log_text
            .lines()
            .position(|l| l.contains(&format!("CLD_EXITED, si_pid={pid},")))
    });
    let moved_in = began("rename(", "/git~1/.git\"");
    assert!(
        git_exited.is_some_and(|e| moved_in.is_some_and(|m| e < m)),
        "the repository is not moved to .git after git var -l has exited: {log_text}"
    );

    let out = run(env.scaffold().current_dir(env.path("")).args([
        "new",
        "refused",
        "--defaults",
        "--set",
        "no_such_answer=1",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no_such_answer"), "{}", out.stderr);
    assert!(!env.path("refused").exists());
    assert!(
        staging(&env.path("")).is_empty(),
        "a staging directory was left"
    );
}

/// A signal while `new` renders, after its second thread made the staging directory and
/// the repository in it: the staging is removed, nothing is created, the run exits 130.
#[test]
fn a_signal_while_new_renders_removes_the_staging_made_meanwhile() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .current_dir(env.path(""))
        .env("SCAFFOLD_TEST_SIGNAL_AT", "new-rendered")
        .args(["new", "r", "--defaults"]));
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(out.stderr.contains("interrupted"), "{}", out.stderr);
    assert!(!env.path("r").exists());
    assert!(
        staging(&env.path("")).is_empty(),
        "a staging directory was left"
    );
}

/// `new` syncs what `git commit` would (`core.fsync`, git 2.47): by default the pack and
/// its idx, never a ref or the index; with `core.fsync=reference,index` those too.
#[test]
fn new_syncs_refs_and_the_index_only_when_core_fsync_asks() {
    if !crate::support::require_tool("strace") {
        return;
    }
    let env = Env::new();
    for (case, fsync) in [("default", None), ("asked", Some("reference,index"))] {
        let log = env.home.path().join("strace.log");
        let scaffold = env.scaffold();
        let mut cmd = std::process::Command::new("strace");
        cmd.args(["-f", "-qq", "-y", "-o"])
            .arg(&log)
            .args(["-e", "trace=fsync,fdatasync", "--"])
            .arg(scaffold.get_program())
            .args(["new", case, "--defaults"])
            .current_dir(env.path(""));
        for (key, value) in scaffold.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        if let Some(fsync) = fsync {
            cmd.env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "core.fsync")
                .env("GIT_CONFIG_VALUE_0", fsync);
        }
        let out = run(&mut cmd);
        assert_eq!(out.code, 0, "{case}: {}", out.stderr);
        let log_text = std::fs::read_to_string(&log).expect("strace log");
        let calls = completed_calls(&log_text);
        let synced = |what: &str| {
            calls
                .iter()
                .any(|(_, l)| l.contains("fsync(") && l.contains(what) && l.ends_with("= 0"))
        };
        assert!(
            synced(".pack.tmp>") && synced(".idx.tmp>"),
            "{case}: {log_text}"
        );
        let refs_and_index = synced("/.git/refs/heads/main") && synced("/.git/index");
        assert_eq!(refs_and_index, fsync.is_some(), "{case}: {log_text}");
        if fsync.is_none() {
            assert!(
                !synced("/.git/refs/") && !synced("/.git/logs/"),
                "{log_text}"
            );
        }
        std::fs::remove_file(&log).expect("rm log");
    }
}

/// strace's lines (`strace -f`, "PID call(...) = result") as (pid, whole call), in the order
/// the calls returned: a call another thread interrupted is logged as "call(... <unfinished
/// ...>" and, when it returns, "<... name resumed>...) = result"; the two are joined.
fn completed_calls(log: &str) -> Vec<(String, String)> {
    let mut pending: std::collections::HashMap<String, String> = Default::default();
    let mut calls = Vec::new();
    for line in log.lines() {
        let (pid, call) = line.split_once(' ').unwrap_or(("", line));
        let call = call.trim();
        if let Some(start) = call.strip_suffix("<unfinished ...>") {
            pending.insert(pid.to_string(), start.trim_end().to_string());
        } else if let Some(rest) = call.strip_prefix("<... ") {
            let rest = rest.split_once("resumed>").map_or(rest, |(_, rest)| rest);
            let start = pending.remove(pid).unwrap_or_default();
            calls.push((pid.to_string(), format!("{start}{rest}")));
        } else {
            calls.push((pid.to_string(), call.to_string()));
        }
    }
    calls
}

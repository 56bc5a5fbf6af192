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
fn committed_record(env: &Env, dir: &Path) -> serde_norway::Value {
    serde_norway::from_str(&env.git(dir, &["show", "HEAD:.scaffold/answers.yaml"])).expect("yaml")
}

fn has_addon(record: &serde_norway::Value, addon: &str) -> bool {
    record["environments"]["prod"]["addons"]
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
                after["environments"]["prod"]["node_max"].as_u64(),
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
        assert!(
            !dir.join(".git/scaffold.lock").exists(),
            "pair {n}: lock left"
        );
    }
    eprintln!(
        "{pairs} pairs: {both} both committed in turn, {refused} with one refused by the lock"
    );
    assert_git_accepts(&env, &dir);
}

#[test]
fn object_writes_a_concurrent_gc_prune_breaks_are_retried() {
    // The race made certain: each of the change's object writes (its blobs and trees, the
    // base, the commit) loses its `objects/XX` directory several times, as under a
    // concurrent `git gc`, and the run still succeeds.
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"])
        .env("SCAFFOLD_TEST_LOST_OBJECT_DIR", "tree:7,base:7,commit:7"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(has_addon(&committed_record(&env, &dir), "velero"));
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);
    // `update` recording the base alone retries too.
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["update", "--set", "node_max=12"])
        .env("SCAFFOLD_TEST_LOST_OBJECT_DIR", "tree:2,base:2,commit:2"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A filesystem that keeps failing is not a race: the run fails with the OS cause and
    // changes nothing.
    let before = head(&env, &dir, "%H");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["remove-addon", "velero"])
        .env("SCAFFOLD_TEST_LOST_OBJECT_DIR", "commit:32"));
    assert_eq!(out.code, 4, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: git: cannot write objects in `")
            && out
                .stderr
                .contains("check the permissions and free space of the repository")
            && !out.stderr.contains(" in in "),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env, &dir, "%H"), before);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert!(!dir.join(".git/scaffold-transaction").exists());
}

#[test]
fn concurrent_gc_never_fails_a_run() {
    // The review's repro, every round: a `git gc` started with each scaffold run (its
    // prune-packed removes the `objects/XX` directories it empties, the race above). Every
    // run succeeds (or is refused, exit 3, when gc holds the branch's lock longer than git
    // itself would wait); none fails, and the repo stays whole.
    let env = Env::new();
    let dir = new_repo(&env, "p");
    for n in 0..16 {
        let command = if n % 2 == 0 {
            "add-addon"
        } else {
            "remove-addon"
        };
        let gc = Command::new("git")
            .args(["gc", "--quiet"])
            .current_dir(&dir)
            .env("HOME", env.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stderr(Stdio::null())
            .spawn()
            .expect("git gc");
        let out = finish(spawn(&env, &dir, &[command, "velero"], 0));
        finish(gc);
        let ref_locked = out.code == 3
            && out
                .stderr
                .contains("another git command is moving the branch");
        assert!(
            out.code == 0 || ref_locked,
            "round {n}: {command} exited {}: {}",
            out.code,
            out.stderr
        );
    }
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);
}

#[test]
fn a_second_run_is_refused_while_the_lock_is_held_and_a_dead_holders_lock_is_recovered() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let lock = dir.join(".git/scaffold.lock");
    // A live holder: this test process.
    std::fs::write(&lock, format!("{} add-addon velero\n", std::process::id())).expect("lock");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
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
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("left by a scaffold run that is gone"),
        "{}",
        out.stderr
    );
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

fn in_repo(env: &Env, dir: &Path, args: &[&str]) -> Output {
    run(env.scaffold().current_dir(dir).args(args))
}

fn head(env: &Env, dir: &Path, format: &str) -> String {
    env.git(dir, &["log", "-1", &format!("--format={format}")])
        .trim()
        .to_string()
}

fn append_global_config(env: &Env, text: &str) {
    let path = env.home.path().join(".gitconfig");
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    std::fs::write(&path, before + text).expect("gitconfig");
}

#[test]
fn identity_comes_from_git_include_if_repo_config_and_the_environment() {
    let env = Env::new();
    let work_config = env.home.path().join("work.gitconfig");
    std::fs::write(
        &work_config,
        "[user]\n\tname = Work Person\n\temail = work@example.org\n",
    )
    .expect("work config");
    append_global_config(
        &env,
        &format!(
            "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n",
            env.work.path().display(),
            work_config.display()
        ),
    );
    let dir = new_repo(&env, "p");
    assert_eq!(
        head(&env, &dir, "%an <%ae>|%cn <%ce>"),
        "Work Person <work@example.org>|Work Person <work@example.org>"
    );
    // Repo-local config wins over the included one.
    env.git(&dir, &["config", "user.name", "Local Name"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env, &dir, "%an <%ae>"),
        "Local Name <work@example.org>"
    );
    // The variables win over config, dates included.
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["remove-addon", "velero"])
        .env("GIT_AUTHOR_NAME", "Env Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.org")
        .env("GIT_AUTHOR_DATE", "2005-04-07T22:13:13 +0200")
        .env("GIT_COMMITTER_NAME", "Env Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.org"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env, &dir, "%an <%ae> %ai|%cn <%ce>"),
        "Env Author <author@example.org> 2005-04-07 22:13:13 +0200|Env Committer <committer@example.org>"
    );
    // --author sets the author only, as `git commit --author` does.
    let out = in_repo(
        &env,
        &dir,
        &["add-addon", "velero", "--author", "Ops <ops@example.org>"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env, &dir, "%an <%ae>|%cn <%ce>"),
        "Ops <ops@example.org>|Local Name <work@example.org>"
    );
    assert_git_accepts(&env, &dir);
}

#[test]
fn names_git_would_reject_are_refused_or_cleaned_as_git_does() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "--author",
        "Evil\nName <e@example.org>",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: --author `Evil\\nName <e@example.org>`: a name and email must be non-empty and hold no newline, `<` or `>` (git rejects such a commit); use the form \"Name <email@example.org>\"\n"
    );
    assert!(!env.path("p").exists());
    // A newline in git config: git itself drops it from the ident, and so does scaffold.
    append_global_config(&env, "[user]\n\tname = \"Two\\nLines\"\n");
    let dir = new_repo(&env, "q");
    assert_eq!(head(&env, &dir, "%an"), "TwoLines");
    assert_git_accepts(&env, &dir);
}

/// An ssh signing key and git config that signs every commit with it and trusts it.
fn ssh_signing(env: &Env) -> Option<PathBuf> {
    let key = env.home.path().join("signing_key");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "test", "-f"])
        .arg(&key)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        crate::support::missing("ssh-keygen");
        return None;
    }
    let public = std::fs::read_to_string(key.with_extension("pub")).expect("pub");
    let allowed = env.home.path().join("allowed_signers");
    std::fs::write(&allowed, format!("test@example.org {public}")).expect("allowed");
    append_global_config(
        env,
        &format!(
            "[commit]\n\tgpgSign = true\n[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tallowedSignersFile = {}\n[user]\n\tsigningkey = {}\n",
            allowed.display(),
            key.display()
        ),
    );
    Some(key)
}

#[test]
fn commit_gpg_sign_signs_with_ssh_and_git_verifies_it() {
    let env = Env::new();
    if ssh_signing(&env).is_none() {
        return;
    }
    let dir = new_repo(&env, "p");
    env.git(&dir, &["verify-commit", "HEAD"]);
    assert_eq!(head(&env, &dir, "%G?"), "G");
    // The pristine base, pushed with refs/scaffold/*, is signed as well.
    env.git(&dir, &["verify-commit", "refs/scaffold/base"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.git(&dir, &["verify-commit", "HEAD"]);
    env.git(&dir, &["verify-commit", "refs/scaffold/base"]);
    assert_eq!(head(&env, &dir, "%G?"), "G");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);
    // A base recorded without a commit (conflicts left as markers for the user) too.
    let pool = dir.join("environments/prod/infrastructure/karpenter/node-pool.yaml");
    let text = std::fs::read_to_string(&pool).expect("pool");
    std::fs::write(&pool, text.replace("nodes: \"10\"", "nodes: \"11\"")).expect("edit");
    env.git(&dir, &["commit", "-qam", "eleven nodes"]);
    let base = env.git(&dir, &["rev-parse", "refs/scaffold/base"]);
    let out = in_repo(
        &env,
        &dir,
        &["update", "--set", "node_max=20", "--conflicts=markers"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_ne!(env.git(&dir, &["rev-parse", "refs/scaffold/base"]), base);
    env.git(&dir, &["verify-commit", "refs/scaffold/base"]);
}

#[test]
fn a_commit_that_cannot_be_signed_is_refused_never_made_unsigned() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let before = head(&env, &dir, "%H");
    append_global_config(
        &env,
        "[commit]\n\tgpgSign = true\n[gpg]\n\tformat = ssh\n[user]\n\tsigningkey = /nonexistent/key\n",
    );
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "error: commit.gpgSign is true and `ssh-keygen` could not sign the commit ("
        ) && out.stderr.contains("`git commit --amend --no-edit -S`"),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env, &dir, "%H"), before);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    // `new` refuses too, and leaves nothing.
    let out = run(env.scaffold().args(["new", "q", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(!env.path("q").exists());
}

#[test]
fn commit_hooks_run_as_git_commit_runs_them() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let hooks = dir.join(".git/hooks");
    // pre-commit sees the commit's content in its index, as under `git commit`.
    write_hook(
        &hooks,
        "#!/bin/sh\ngit diff --cached --name-only > \"$(git rev-parse --git-dir)/hook-saw\"\n",
    );
    write_named_hook(
        &hooks,
        "commit-msg",
        "#!/bin/sh\nprintf '\\nReviewed-by: hook\\n' >> \"$1\"\n",
    );
    write_named_hook(
        &hooks,
        "post-commit",
        "#!/bin/sh\ngit rev-parse HEAD > \"$(git rev-parse --git-dir)/post-ran\"\nexit 1\n",
    );
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let saw = std::fs::read_to_string(dir.join(".git/hook-saw")).expect("pre-commit ran");
    assert!(
        saw.contains("infrastructure/addons/velero/release.yaml"),
        "{saw}"
    );
    assert!(
        head(&env, &dir, "%B").contains("Reviewed-by: hook"),
        "commit-msg's edit is the message"
    );
    let sha = head(&env, &dir, "%H");
    assert_eq!(
        std::fs::read_to_string(dir.join(".git/post-ran"))
            .expect("post-commit ran")
            .trim(),
        sha
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    // A rejecting pre-commit rolls the change back, with the hook's message.
    write_hook(
        &hooks,
        "#!/bin/sh\necho 'secret found in release.yaml' >&2\nexit 1\n",
    );
    let out = in_repo(&env, &dir, &["remove-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the pre-commit hook rejected the commit (exit 1): secret found in release.yaml"
        ) && out.stderr.contains("--no-verify"),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env, &dir, "%H"), sha);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert!(!dir.join(".git/scaffold-transaction").exists());
    // --no-verify skips it, as git's does.
    let out = in_repo(&env, &dir, &["remove-addon", "velero", "--no-verify"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_ne!(head(&env, &dir, "%H"), sha);
}

#[test]
fn new_runs_the_commit_hooks_git_commit_would_on_its_first_commit() {
    // Hooks from init.templateDir, copied into the new repo as `git init` copies them.
    let env = Env::new();
    let template = env.home.path().join("template");
    let hooks = template.join("hooks");
    write_hook(
        &hooks,
        "#!/bin/sh\ngit diff --cached --name-only > \"$(git rev-parse --git-dir)/hook-saw\"\n",
    );
    write_named_hook(
        &hooks,
        "prepare-commit-msg",
        "#!/bin/sh\necho \"$2\" > \"$(git rev-parse --git-dir)/prepare-source\"\n",
    );
    write_named_hook(
        &hooks,
        "commit-msg",
        "#!/bin/sh\nprintf '\\nReviewed-by: hook\\n' >> \"$1\"\n",
    );
    write_named_hook(
        &hooks,
        "post-commit",
        "#!/bin/sh\n{ git rev-parse HEAD; pwd -P; } > \"$(git rev-parse --git-dir)/post-ran\"\nexit 1\n",
    );
    append_global_config(
        &env,
        &format!("[init]\n\ttemplateDir = {}\n", template.display()),
    );
    let out = run(env.scaffold().args(["new", "t", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("t");
    let saw = std::fs::read_to_string(dir.join(".git/hook-saw")).expect("pre-commit ran");
    assert!(saw.contains(".scaffold/answers.yaml"), "{saw}");
    let source = std::fs::read_to_string(dir.join(".git/prepare-source")).expect("ran");
    assert_eq!(source.trim(), "message");
    assert!(head(&env, &dir, "%B").contains("Reviewed-by: hook"));
    // post-commit runs once the repo is in place, and its failure is ignored, as git does.
    let post = std::fs::read_to_string(dir.join(".git/post-ran")).expect("post-commit ran");
    let canonical = dir.canonicalize().expect("canonical");
    assert_eq!(
        post,
        format!("{}\n{}\n", head(&env, &dir, "%H"), canonical.display())
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);

    // A global core.hooksPath wins over the template; a rejecting pre-commit leaves
    // nothing: no directory, no staging beside it, and an empty directory stays empty.
    let global = env.home.path().join("global-hooks");
    write_hook(
        &global,
        "#!/bin/sh\necho 'secret found in terraform.tfvars' >&2\nexit 1\n",
    );
    write_named_hook(
        &global,
        "post-commit",
        "#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/global-post-ran\"\n",
    );
    append_global_config(
        &env,
        &format!("[core]\n\thooksPath = {}\n", global.display()),
    );
    let entries_before = std::fs::read_dir(env.path(".")).expect("list").count();
    let out = run(env.scaffold().args(["new", "r", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the pre-commit hook rejected the commit (exit 1): secret found in terraform.tfvars"
        ) && out.stderr.contains("--no-verify"),
        "{}",
        out.stderr
    );
    assert!(!env.path("r").exists());
    assert_eq!(
        std::fs::read_dir(env.path(".")).expect("list").count(),
        entries_before,
        "no staging directory left"
    );
    std::fs::create_dir(env.path("empty")).expect("mkdir");
    let out = run(env.scaffold().args(["new", "empty", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        std::fs::read_dir(env.path("empty")).expect("list").count(),
        0
    );
    // --no-verify skips pre-commit (and commit-msg); post-commit still runs.
    let out = run(env
        .scaffold()
        .args(["new", "empty", "--defaults", "--no-verify"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("empty/.git/global-post-ran").exists());
    assert!(!env.path("empty/.git/hook-saw").exists());
    assert_eq!(env.git(&env.path("empty"), &["status", "--porcelain"]), "");
}

/// An executable hook `name` of `script` in `dir`.
fn write_named_hook(dir: &Path, name: &str, script: &str) {
    std::fs::create_dir_all(dir).expect("hooks dir");
    let hook = dir.join(name);
    std::fs::write(&hook, script).expect("hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// An executable `pre-commit` of `script` in `dir`.
fn write_hook(dir: &Path, script: &str) {
    std::fs::create_dir_all(dir).expect("hooks dir");
    let hook = dir.join("pre-commit");
    std::fs::write(&hook, script).expect("hook");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// `new` asks git one `git var -l` for its config and idents; what that cannot settle
/// exactly (core.hooksPath, an ident git guesses) is asked as before.
#[test]
fn new_reads_identity_config_and_hooks_from_every_place_git_would() {
    // core.hooksPath in the global config: the hook there is named.
    let env = Env::new();
    let hooks = env.home.path().join("global-hooks");
    append_global_config(
        &env,
        &format!("[core]\n\thooksPath = {}\n", hooks.display()),
    );
    write_hook(
        &hooks,
        "#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/global-hook-ran\"\n",
    );
    let out = run(env.scaffold().args(["new", "h", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        env.path("h/.git/global-hook-ran").exists(),
        "{}",
        out.stderr
    );
    // Config from GIT_CONFIG_* (as `git -c` passes it) wins over the files.
    let out = run(env
        .scaffold()
        .args(["new", "c", "--defaults"])
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "user.name")
        .env("GIT_CONFIG_VALUE_0", "Command Line"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env, &env.path("c"), "%an|%cn"),
        "Command Line|Command Line"
    );

    // No user.email: git takes $EMAIL (its strict ident accepts it), so does scaffold.
    let bare = Env::without_git_identity();
    append_global_config(&bare, "[user]\n\tname = Only Name\n");
    let out = run(bare
        .scaffold()
        .args(["new", "e", "--defaults"])
        .env("EMAIL", "mail@example.org"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&bare, &bare.path("e"), "%an <%ae>|%cn <%ce>"),
        "Only Name <mail@example.org>|Only Name <mail@example.org>"
    );
    // Without it, git guesses an address from the host and refuses it: so does scaffold,
    // naming user.email and the command that sets it.
    let out = run(bare.scaffold().args(["new", "f", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("git config --global user.email you@example.com"),
        "{}",
        out.stderr
    );
    assert!(!bare.path("f").exists());
}

#[test]
fn a_symlink_scaffold_must_change_is_refused_not_replaced() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    std::fs::rename(
        dir.join("envs/prod/README.md"),
        dir.join("envs/prod/README.real"),
    )
    .expect("mv");
    std::os::unix::fs::symlink("README.real", dir.join("envs/prod/README.md")).expect("ln");
    env.git(&dir, &["add", "-A"]);
    env.git(&dir, &["commit", "-qm", "readme as a link"]);
    let before = std::fs::read(dir.join("envs/prod/README.real")).expect("read");
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: `envs/prod/README.md` is a symbolic link, and scaffold must change `envs/prod/README.md`; scaffold writes regular files and never replaces a link: replace the link with a regular file or directory and commit, then run scaffold again (nothing was changed)\n"
    );
    assert!(
        std::fs::symlink_metadata(dir.join("envs/prod/README.md"))
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read(dir.join("envs/prod/README.real")).expect("read"),
        before
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn in_place_new_leaves_index_stat_data_that_matches_the_files() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    let dir = env.path("here");
    std::fs::create_dir(&dir).expect("mkdir");
    let out = run(env.scaffold().current_dir(&dir).args([
        "new",
        ".",
        "--defaults",
        "--set",
        "name=platform",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let index = git2::Repository::open(&dir)
        .expect("open")
        .index()
        .expect("index");
    let mut checked = 0;
    for entry in index.iter() {
        let path = String::from_utf8(entry.path.clone()).expect("utf8");
        let meta = std::fs::symlink_metadata(dir.join(&path)).expect("stat");
        assert_eq!(
            (
                entry.ctime.seconds(),
                entry.ctime.nanoseconds(),
                entry.ino,
                entry.file_size
            ),
            (
                meta.ctime() as i32,
                meta.ctime_nsec() as u32,
                meta.ino() as u32,
                meta.size() as u32
            ),
            "{path}"
        );
        checked += 1;
    }
    assert!(checked > 10);
    assert_git_accepts(&env, &dir);
}

/// A one-question blueprint with `files`, for the path rules.
fn blueprint_with(env: &Env, files: &[(&str, &str)]) -> PathBuf {
    let dir = env.path("bp");
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in [
        ("blueprint.yaml", "name: t\nversion: 0.1.0\nquestions:\n  - key: name\n    prompt: Name\n    type: string\n    default: x\n"),
        ("tests/defaults.yaml", "{}\n"),
        ("files/a.txt", "a\n"),
    ]
    .iter()
    .chain(files)
    {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("dirs");
        std::fs::write(full, text).expect("file");
    }
    dir
}

#[test]
fn paths_and_special_files_git_rejects_are_refused_at_lint_and_by_new() {
    let long_line = format!("*.txt {}\n", "x".repeat(2100));
    let cases: [(&str, &str, &str); 5] = [
        (
            "files/.g\u{200c}it/config",
            "x\n",
            "`.g\\u{200c}it` is .git as Windows (NTFS) or macOS (HFS+) reads it",
        ),
        (
            "files/.git. /config",
            "x\n",
            "`.git. ` is .git as Windows (NTFS) or macOS (HFS+) reads it",
        ),
        (
            "files/GIT~1/config",
            "x\n",
            "`GIT~1` is .git as Windows (NTFS) or macOS (HFS+) reads it",
        ),
        (
            "files/.gitmodules",
            "[submodule \"a\"]\n\tpath = a\n\turl = --upload-pack=touch /tmp/pwned\n",
            ".gitmodules line 3: url `--upload-pack=touch /tmp/pwned` looks like a command-line option (fsck: gitmodulesUrl)",
        ),
        (
            "files/.gitattributes",
            &long_line,
            ".gitattributes line 1 is longer than 2048 bytes (git ignores it; fsck: gitattributesLineLength)",
        ),
    ];
    for (path, text, rule) in cases {
        let env = Env::new();
        let bp = blueprint_with(&env, &[(path, text)]);
        let out = run(env.scaffold().args(["blueprint", "lint"]).arg(&bp));
        assert_eq!(out.code, 1, "{path}: {}", out.stderr);
        assert!(out.stdout.contains(rule), "{path}: {}", out.stdout);
        let out = run(env
            .scaffold()
            .args(["new", "out", "--defaults", "--blueprint"])
            .arg(&bp));
        assert_eq!(out.code, 5, "{path}: {}", out.stderr);
        assert!(out.stderr.contains(rule), "{path}: {}", out.stderr);
        assert!(!env.path("out").exists(), "{path}");
    }
}

#[test]
fn a_sparse_checkout_is_refused_with_the_commands_around_it() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    env.git(&dir, &["sparse-checkout", "set", "clusters"]);
    for args in [
        &["add-addon", "velero"][..],
        &["update"],
        &["remove-addon", "x"],
    ] {
        let out = in_repo(&env, &dir, args);
        assert_eq!(out.code, 3, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("is a sparse checkout, and scaffold reads and writes files outside it; run `git sparse-checkout disable`, run scaffold, then `git sparse-checkout reapply` (nothing was changed)"),
            "{args:?}: {}",
            out.stderr
        );
    }
    env.git(&dir, &["sparse-checkout", "disable"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_git_accepts(&env, &dir);
}

#[test]
fn a_linked_worktree_is_changed_on_its_own_branch_and_shares_the_lock() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let linked = env.path("linked");
    env.git(
        &dir,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().expect("utf8"),
        ],
    );
    let out = in_repo(&env, &linked, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.git(&dir, &["log", "-1", "--format=%s", "feature"])
            .trim(),
        "scaffold: add addon velero 12.1.0"
    );
    assert_eq!(env.git(&dir, &["rev-list", "--count", "main"]).trim(), "1");
    assert_eq!(env.git(&linked, &["status", "--porcelain"]), "");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    // The lock lives in the common git directory: a run in the main worktree sees it.
    std::fs::write(
        dir.join(".git/scaffold.lock"),
        format!("{} add-addon istio\n", std::process::id()),
    )
    .expect("lock");
    let out = in_repo(&env, &linked, &["remove-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    std::fs::remove_file(dir.join(".git/scaffold.lock")).expect("unlock");
    let out = in_repo(&env, &linked, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_git_accepts(&env, &linked);
}

#[test]
fn a_shallow_clone_is_changed_from_its_rendered_base() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    let out = in_repo(&env, &dir, &["add-addon", "istio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shallow = env.path("shallow");
    env.git(
        env.work.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", dir.display()),
            shallow.to_str().expect("utf8"),
        ],
    );
    assert_eq!(
        env.git(&shallow, &["rev-parse", "--is-shallow-repository"])
            .trim(),
        "true"
    );
    let out = in_repo(&env, &shallow, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&shallow, &["status", "--porcelain"]), "");
    // The same change as in the full repo.
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.git(&shallow, &["rev-parse", "HEAD^{tree}"]),
        env.git(&dir, &["rev-parse", "HEAD^{tree}"])
    );
    env.git(&shallow, &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn an_autocrlf_checkout_is_changed_like_git_would() {
    let env = Env::new();
    let dir = new_repo(&env, "p");
    env.git(&dir, &["config", "core.autocrlf", "true"]);
    // Check every file out again as Git for Windows would: CRLF.
    for path in env.git(&dir, &["ls-files"]).lines() {
        std::fs::remove_file(dir.join(path)).expect("rm");
    }
    env.git(&dir, &["checkout", "--", "."]);
    let readme = std::fs::read(dir.join("README.md")).expect("read");
    assert!(readme.windows(2).any(|w| w == b"\r\n"), "checked out CRLF");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    for args in [
        &["add-addon", "velero"][..],
        &["update", "--set", "node_max=7"],
        &["remove-addon", "velero"],
    ] {
        let out = in_repo(&env, &dir, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "", "{args:?}");
        // Blobs hold LF, the work tree CRLF, as git itself would have them.
        let blob = env.git(&dir, &["show", "HEAD:.scaffold/answers.yaml"]);
        assert!(!blob.contains('\r'), "{args:?}");
        let file = std::fs::read(dir.join(".scaffold/answers.yaml")).expect("read");
        assert!(file.windows(2).any(|w| w == b"\r\n"), "{args:?}");
    }
    // A fresh checkout is byte for byte what scaffold left.
    let before: Vec<(String, Vec<u8>)> = env
        .git(&dir, &["ls-files"])
        .lines()
        .map(|p| (p.to_string(), std::fs::read(dir.join(p)).expect("read")))
        .collect();
    for (path, _) in &before {
        std::fs::remove_file(dir.join(path)).expect("rm");
    }
    env.git(&dir, &["checkout", "--", "."]);
    for (path, bytes) in &before {
        assert_eq!(
            &std::fs::read(dir.join(path)).expect("read"),
            bytes,
            "{path}"
        );
    }
    assert_git_accepts(&env, &dir);
}

#[test]
fn new_writes_what_git_would_check_out_under_the_repos_attributes() {
    // core.autocrlf=true (Git for Windows' default): CRLF files, LF blobs, a clean status.
    let env = Env::new();
    append_global_config(&env, "[core]\n\tautocrlf = true\n");
    let dir = new_repo(&env, "p");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let readme = std::fs::read(dir.join("README.md")).expect("read");
    assert!(readme.windows(2).any(|w| w == b"\r\n"));
    assert!(!env.git(&dir, &["show", "HEAD:README.md"]).contains('\r'));
    let clone = env.path("clone");
    env.git(
        env.work.path(),
        &[
            "clone",
            "-q",
            dir.to_str().expect("utf8"),
            clone.to_str().expect("utf8"),
        ],
    );
    assert_eq!(
        std::fs::read(clone.join("README.md")).expect("read"),
        readme
    );
    assert_git_accepts(&env, &dir);

    // The blueprint's own .gitattributes: eol=crlf files are written CRLF.
    let env = Env::new();
    let bp = blueprint_with(
        &env,
        &[
            ("files/.gitattributes", "*.bat text eol=crlf\n"),
            ("files/run.bat", "echo one\necho two\n"),
        ],
    );
    let out = run(env
        .scaffold()
        .args(["new", "out", "--defaults", "--blueprint"])
        .arg(&bp));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out_dir = env.path("out");
    assert_eq!(
        std::fs::read(out_dir.join("run.bat")).expect("read"),
        b"echo one\r\necho two\r\n"
    );
    assert_eq!(env.git(&out_dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &out_dir);

    // CRLF bytes where an attribute says text: git would store other bytes, so refused.
    let env = Env::new();
    let bp = blueprint_with(
        &env,
        &[
            ("files/.gitattributes", "*.txt text eol=lf\n"),
            ("files/b.txt", "one\r\ntwo\r\n"),
        ],
    );
    let out = run(env
        .scaffold()
        .args(["new", "out", "--defaults", "--blueprint"])
        .arg(&bp));
    assert_eq!(out.code, 5, "{}", out.stderr);
    // Found by the lint `new` runs first, at the blueprint file.
    assert!(
        out.stderr.starts_with(
            "files/b.txt:1:1: error: the rendered b.txt has CRLF line endings, but its attributes make git store it with LF (the new repo would be dirty): convert the blueprint file to LF\nerror: blueprint "
        ),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
    // `blueprint lint` says the same.
    let out = run(env.scaffold().args(["blueprint", "lint"]).arg(&bp));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("files/b.txt:1:1: error: the rendered b.txt has CRLF line endings"),
        "{}",
        out.stdout
    );
}

#[test]
fn files_routed_through_a_clean_filter_are_stored_as_git_add_would_store_them() {
    // A filter that upper-cases on the way in and lower-cases on the way out: what scaffold
    // commits must be what `git add` makes of the file, so the repo stays clean.
    let env = Env::new();
    append_global_config(
        &env,
        "[filter \"upper\"]\n\tclean = tr a-z A-Z\n\tsmudge = tr A-Z a-z\n",
    );
    let dir = new_repo(&env, "p");
    std::fs::write(
        dir.join(".gitattributes"),
        "envs/prod/README.md filter=upper\n",
    )
    .expect("attrs");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "route the README through upper"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stored = env.git(&dir, &["show", "HEAD:envs/prod/README.md"]);
    assert!(
        stored.contains("VELERO") && !stored.contains("velero"),
        "{stored}"
    );
    assert!(
        std::fs::read_to_string(dir.join("envs/prod/README.md"))
            .expect("read")
            .contains("velero")
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);
    // The base stores what `git add` stores too, so pushing refs/scaffold/* carries no
    // bytes the filter keeps out of the branch.
    assert_eq!(
        env.git(
            &dir,
            &["rev-parse", "refs/scaffold/base:envs/prod/README.md"]
        ),
        env.git(&dir, &["rev-parse", "HEAD:envs/prod/README.md"])
    );
    // The repo stays workable: the next change merges against the base, not the filtered
    // blob (the README, unchanged since, is what the base's blob stands for).
    let out = in_repo(&env, &dir, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert!(
        !std::fs::read_to_string(dir.join("envs/prod/README.md"))
            .expect("read")
            .contains("velero")
    );
    assert_eq!(
        env.git(
            &dir,
            &["rev-parse", "refs/scaffold/base:envs/prod/README.md"]
        ),
        env.git(&dir, &["rev-parse", "HEAD:envs/prod/README.md"])
    );

    // A required filter that fails stops the run with its cause; nothing changes.
    append_global_config(
        &env,
        "[filter \"broken\"]\n\tclean = \"echo broken >&2; exit 3\"\n\trequired = true\n",
    );
    // In info/attributes: git itself runs the filter on any add or commit once the rule is in
    // a tracked .gitattributes.
    std::fs::create_dir_all(dir.join(".git/info")).expect("info");
    std::fs::write(
        dir.join(".git/info/attributes"),
        "README.md filter=broken\n",
    )
    .expect("attrs");
    let before = head(&env, &dir, "%H");
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "the `broken` filter (filter.broken.clean, required) failed on `envs/prod/README.md`: broken"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env, &dir, "%H"), before);
}

#[test]
fn the_base_stores_filtered_files_as_git_add_does_and_merges_a_hand_edit_through_them() {
    // rot13 both ways: a filter pair that round-trips, as git-lfs does, without git-lfs.
    let env = Env::new();
    append_global_config(
        &env,
        "[filter \"rot13\"]\n\tclean = tr a-zA-Z n-za-mN-ZA-M\n\tsmudge = tr a-zA-Z n-za-mN-ZA-M\n",
    );
    let dir = new_repo(&env, "p");
    std::fs::write(dir.join(".gitattributes"), "*.md filter=rot13\n").expect("attrs");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "markdown through rot13"]);
    env.git(&dir, &["add", "--renormalize", "."]);
    env.git(&dir, &["commit", "-qm", "renormalize"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let readme = "envs/prod/README.md";
    let blob = |rev: &str| env.git(&dir, &["rev-parse", &format!("{rev}:{readme}")]);
    assert_eq!(blob("refs/scaffold/base"), blob("HEAD"));
    let stored = env.git(&dir, &["show", &format!("refs/scaffold/base:{readme}")]);
    assert!(
        stored.contains("iryreb") && !stored.contains("velero"),
        "{stored}"
    );
    // A hand edit: the file no longer stands for the base's blob, which is smudged back.
    let path = dir.join(readme);
    let edited = format!(
        "{}\nhand-written note\n",
        std::fs::read_to_string(&path).expect("read")
    );
    std::fs::write(&path, edited).expect("edit");
    env.git(&dir, &["commit", "-qam", "a note"]);
    let out = in_repo(&env, &dir, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let after = std::fs::read_to_string(&path).expect("read");
    assert!(
        after.contains("hand-written note") && !after.contains("velero"),
        "{after}"
    );
    assert!(
        env.git(&dir, &["show", &format!("HEAD:{readme}")])
            .contains("unaq-jevggra"),
        "HEAD stores the clean form"
    );
    // The base is the rendering alone, in its clean form: no velero, no note.
    let stored = env.git(&dir, &["show", &format!("refs/scaffold/base:{readme}")]);
    assert!(
        !stored.contains("iryreb") && !stored.contains("unaq-jevggra"),
        "{stored}"
    );
    assert_git_accepts(&env, &dir);
}

#[test]
fn git_lfs_stores_pointers_and_objects_for_scaffolds_files() {
    if !crate::support::require_tool("git-lfs") {
        return;
    }
    let env = Env::new();
    let dir = new_repo(&env, "p");
    env.git(&dir, &["lfs", "install", "--local"]);
    std::fs::write(
        dir.join(".gitattributes"),
        "README.md filter=lfs diff=lfs merge=lfs -text\n",
    )
    .expect("attrs");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "README in LFS"]);
    env.git(&dir, &["add", "--renormalize", "."]);
    env.git(&dir, &["commit", "-qm", "renormalize"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pointer = env.git(&dir, &["show", "HEAD:README.md"]);
    assert!(
        pointer.starts_with("version https://git-lfs.github.com/spec/v1\noid sha256:"),
        "{pointer}"
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let fsck = env.git(&dir, &["lfs", "fsck"]);
    assert!(fsck.contains("Git LFS fsck OK"), "{fsck}");
    // The base holds the pointer too: pushing refs/scaffold/* never goes around LFS.
    assert_eq!(
        env.git(&dir, &["show", "refs/scaffold/base:README.md"]),
        pointer
    );
    // And reads back as the file: the next change merges against the README's text.
    let out = in_repo(&env, &dir, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("read");
    assert!(!readme.starts_with("version https://git-lfs"), "{readme}");
    let base = env.git(&dir, &["show", "refs/scaffold/base:README.md"]);
    assert!(
        base.starts_with("version https://git-lfs.github.com/spec/v1\n"),
        "{base}"
    );
    assert_eq!(base, env.git(&dir, &["show", "HEAD:README.md"]));
    let out = in_repo(&env, &dir, &["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

#[test]
fn a_process_only_driver_is_refused() {
    // A driver with only `.process` (git's long-running protocol, which scaffold does not
    // speak) is refused before anything changes.
    let env = Env::new();
    append_global_config(&env, "[filter \"proc\"]\n\tprocess = some-daemon\n");
    let dir = new_repo(&env, "p");
    std::fs::write(dir.join(".gitattributes"), "*.yaml filter=proc\n").expect("attrs");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "route yaml through proc"]);
    let before = head(&env, &dir, "%H");
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("which has only `filter.proc.process` configured; scaffold runs a filter's `clean` command"),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env, &dir, "%H"), before);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn new_runs_a_blueprints_filter_driver_in_the_repo_it_makes() {
    // The blueprint's own .gitattributes routes a.txt through a driver: the first commit
    // holds what `git add` stores, and so does the base; the file is what you wrote.
    let env = Env::new();
    append_global_config(
        &env,
        "[filter \"upper\"]\n\tclean = tr a-z A-Z\n\tsmudge = tr A-Z a-z\n",
    );
    let bp = blueprint_with(&env, &[("files/.gitattributes", "*.txt filter=upper\n")]);
    let out = run(env
        .scaffold()
        .args(["new", "out", "--defaults", "--blueprint"])
        .arg(&bp));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("out");
    assert_eq!(env.git(&dir, &["show", "HEAD:a.txt"]), "A\n");
    assert_eq!(env.git(&dir, &["show", "refs/scaffold/base:a.txt"]), "A\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).expect("read"),
        "a\n"
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_git_accepts(&env, &dir);
    let out = in_repo(
        &env,
        &dir,
        &["update", "--blueprint", bp.to_str().expect("utf8")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

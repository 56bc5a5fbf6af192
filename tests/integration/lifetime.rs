//! A repo over its whole life (issue 29): teammates' plain clones of a bare remote (the base
//! fetched, or refused with commands that work), a team blueprint edited in place or
//! moved, a diverged base, secrets never answered by a default, a hand-edited record,
//! conflict markers and half-applied runs found first, and signals after the commit point.
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Env, Output, run};
use crate::update::team_blueprint;

const TEAM_DOC: &str = "docs/team.md";

/// A team blueprint on a search path, a repo made from it, pushed (branch, and the base
/// when `push_base`) to a bare remote `remote.git` reached through a file:// URL.
struct Team {
    env: Env,
    bps: tempfile::TempDir,
    origin: PathBuf,
    url: String,
}

impl Team {
    fn new(push_base: bool) -> Self {
        let env = Env::new();
        let bps = tempfile::TempDir::new().expect("bps");
        team_blueprint(bps.path(), "0.1.0");
        let team = Team {
            origin: env.path("origin"),
            url: format!("file://{}", env.path("remote.git").display()),
            env,
            bps,
        };
        let out = team.scaffold(
            &team.env.path(""),
            &["new", "origin", "--defaults", "--blueprint", "team"],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        let branch = team.git(&team.origin, &["symbolic-ref", "--short", "HEAD"]);
        team.env.git(
            &team.env.path(""),
            &["init", "-q", "--bare", "-b", branch.trim(), "remote.git"],
        );
        team.env
            .git(&team.origin, &["remote", "add", "origin", &team.url]);
        team.env
            .git(&team.origin, &["push", "-q", "origin", "HEAD"]);
        if push_base {
            team.env
                .git(&team.origin, &["push", "-q", "origin", "refs/scaffold/*"]);
        }
        team
    }

    fn scaffold(&self, dir: &Path, args: &[&str]) -> Output {
        run(self
            .env
            .scaffold()
            .current_dir(dir)
            .env("SCAFFOLD_BLUEPRINT_PATH", self.bps.path())
            .args(args))
    }

    /// A teammate's plain `git clone` of the remote.
    fn clone_as(&self, name: &str) -> PathBuf {
        self.env
            .git(&self.env.path(""), &["clone", "-q", &self.url, name]);
        self.env.path(name)
    }

    /// Edits the team blueprint in place: same version, one more line in docs/team.md.
    fn edit_blueprint_in_place(&self) {
        let template = self.bps.path().join("team/files/docs/team.md.tera");
        let text = fs::read_to_string(&template).expect("template");
        fs::write(
            &template,
            text.replace("owner: platform\n", "owner: platform\nslack: #platform\n"),
        )
        .expect("write");
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.env.git(dir, args)
    }

    fn head(&self, dir: &Path) -> String {
        self.git(dir, &["rev-parse", "HEAD"])
    }

    /// Edits a file as the user and commits it.
    fn user_edit(&self, dir: &Path, path: &str, from: &str, to: &str) {
        let text = fs::read_to_string(dir.join(path)).expect("read");
        assert!(text.contains(from), "{path}: no `{from}`");
        fs::write(dir.join(path), text.replace(from, to)).expect("write");
        self.git(dir, &["commit", "-qam", &format!("edit {path}")]);
    }
}

/// The command between the backticks after `after` in `text`.
fn quoted_after<'t>(text: &'t str, after: &str) -> &'t str {
    let rest = &text[text
        .find(after)
        .unwrap_or_else(|| panic!("no `{after}` in {text}"))
        + after.len()..];
    let start = rest.find('`').expect("opening backtick") + 1;
    let end = start + rest[start..].find('`').expect("closing backtick");
    &rest[start..end]
}

/// Runs a command a message suggests, as a shell would.
fn sh(env: &Env, dir: &Path, command: &str) {
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("HOME", env.home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("sh");
    assert!(
        out.status.success(),
        "`{command}`: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_plain_clone_fetches_the_base_and_applies_a_blueprint_edited_in_place() {
    let team = Team::new(true);
    let clone = team.clone_as("mate");
    team.user_edit(&clone, TEAM_DOC, "keep: this\n", "keep: this (mine)\n");
    team.edit_blueprint_in_place();
    let out = team.scaffold(&clone, &["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("note: fetched the pristine base"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("already up to date"), "{}", out.stdout);
    let doc = fs::read_to_string(clone.join(TEAM_DOC)).expect("doc");
    assert!(doc.contains("slack: #platform\n"), "{doc}");
    assert!(doc.contains("keep: this (mine)\n"), "{doc}");
    // The base now matches the commit, and add-addon no longer points back at update.
    let out = team.scaffold(&clone, &["add-addon", "metrics-server"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The documented push shares both; the documented fetch (with its `+`) works in a
    // clone that has made scaffold commits of its own.
    team.git(&clone, &["push", "-q", "origin", "HEAD", "refs/scaffold/*"]);
    sh(
        &team.env,
        &team.origin,
        "git fetch -q origin '+refs/scaffold/*:refs/scaffold/*'",
    );
}

#[test]
fn a_clone_without_any_base_is_refused_with_commands_that_work() {
    let team = Team::new(false);
    let clone = team.clone_as("mate");
    team.edit_blueprint_in_place();
    let head = team.head(&clone);
    let out = team.scaffold(&clone, &["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("scaffold will not guess which lines are yours"),
        "{}",
        out.stderr
    );
    assert_eq!(team.head(&clone), head, "a refused update committed");
    assert_eq!(
        team.git(&clone, &["for-each-ref", "refs/scaffold"]),
        "",
        "a refused update recorded a base"
    );
    // add-addon does not send the user round in circles either.
    let out = team.scaffold(&clone, &["add-addon", "velero"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    // The two commands the message names, run as given, make the update work.
    let message = team.scaffold(&clone, &["update"]).stderr;
    sh(
        &team.env,
        &team.origin,
        quoted_after(&message, "push it first from the repo that has it: "),
    );
    sh(
        &team.env,
        &clone,
        quoted_after(&message, "Fetch the base: "),
    );
    let out = team.scaffold(&clone, &["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = fs::read_to_string(clone.join(TEAM_DOC)).expect("doc");
    assert!(doc.contains("slack: #platform\n"), "{doc}");
}

#[test]
fn a_clone_without_a_base_of_an_unchanged_blueprint_re_renders_it_exactly() {
    let team = Team::new(false);
    let clone = team.clone_as("mate");
    let out = team.scaffold(&clone, &["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("nothing to"), "{}", out.stdout);
    assert_eq!(
        team.git(&clone, &["rev-parse", "refs/scaffold/base^{tree}"]),
        team.git(&clone, &["rev-parse", "HEAD^{tree}"])
    );
}

#[test]
fn a_moved_blueprint_updates_from_the_stored_base_or_names_both_fixes() {
    let team = Team::new(false);
    let clone = team.clone_as("mate");
    // The blueprint moves: the search path no longer finds it by name.
    let moved = team.env.path("moved");
    fs::rename(team.bps.path().join("team"), &moved).expect("move");
    let out = team.scaffold(&clone, &["update"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("pass --blueprint DIR"),
        "{}",
        out.stderr
    );
    let out = team.scaffold(
        &clone,
        &["update", "--blueprint", moved.to_str().expect("utf8")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // With the base stored (the origin repo), the moved blueprint edited in place updates.
    let template = moved.join("files/docs/team.md.tera");
    let text = fs::read_to_string(&template).expect("template");
    fs::write(
        &template,
        text.replace("owner: platform\n", "owner: platform\nslack: #moved\n"),
    )
    .expect("write");
    let out = team.scaffold(
        &team.origin,
        &["update", "--blueprint", moved.to_str().expect("utf8")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = fs::read_to_string(team.origin.join(TEAM_DOC)).expect("doc");
    assert!(doc.contains("slack: #moved\n"), "{doc}");
}

#[test]
fn a_diverged_base_is_replaced_by_the_remote_one_the_record_matches() {
    let team = Team::new(true);
    let a = team.clone_as("a");
    let b = team.clone_as("b");
    // b has a base of its own (fetched by its first scaffold run).
    let out = team.scaffold(&b, &["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = team.scaffold(&a, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    team.git(&a, &["push", "-q", "origin", "HEAD", "refs/scaffold/*"]);
    // b pulls the branch only: its record now matches a base it does not have.
    team.git(&b, &["pull", "-q", "--ff-only"]);
    let out = team.scaffold(&b, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("note: fetched the pristine base"),
        "{}",
        out.stderr
    );
    assert_eq!(
        team.git(&b, &["rev-parse", "refs/scaffold/base^{tree}"]),
        team.git(&b, &["rev-parse", "HEAD^{tree}"])
    );
    team.git(&b, &["push", "-q", "origin", "HEAD", "refs/scaffold/*"]);
}

/// The tiny secret blueprint with a default for its secret question.
fn secret_blueprint_with_default(env: &Env) -> PathBuf {
    let dir = env.path("secret-bp");
    fs::create_dir_all(dir.join("files")).expect("mkdir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secret-blueprint");
    let manifest = fs::read_to_string(fixture.join("blueprint.yaml")).expect("manifest");
    fs::write(
        dir.join("blueprint.yaml"),
        manifest.replace(
            "    secret: true\n",
            "    secret: true\n    default: defaulttoken1\n",
        ),
    )
    .expect("manifest");
    fs::copy(
        fixture.join("files/config.txt.tera"),
        dir.join("files/config.txt.tera"),
    )
    .expect("template");
    dir
}

/// `sec`, made from the secret-with-a-default blueprint with the real secret; returns the
/// blueprint's path and the repo.
fn new_secret_repo(env: &Env) -> (String, std::path::PathBuf) {
    let bp = secret_blueprint_with_default(env);
    let bp = bp.to_str().expect("utf8").to_string();
    let out = run(env.scaffold().args([
        "new",
        "sec",
        "--defaults",
        "--blueprint",
        &bp,
        "--secret",
        "token=realtoken99",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    (bp, env.path("sec"))
}

#[test]
fn a_secret_with_a_default_is_never_answered_by_it_on_a_re_render() {
    let env = Env::new();
    let (bp, dir) = new_secret_repo(&env);
    let bp = bp.as_str();
    let config = fs::read(dir.join("config.txt")).expect("config");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["update", "--blueprint", bp]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("missing secret answer `token`"),
        "{}",
        out.stderr
    );
    assert_eq!(fs::read(dir.join("config.txt")).expect("config"), config);
    let out = run(env.scaffold().current_dir(&dir).args([
        "update",
        "--blueprint",
        bp,
        "--secret",
        "token=realtoken99",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

#[test]
fn a_wrong_secret_in_add_addon_says_a_secret_may_differ() {
    let env = Env::new();
    let (bp, dir) = new_secret_repo(&env);
    let bp = bp.as_str();
    // add-addon has nothing to add in this blueprint, but opening the repo checks the
    // rendering first: a wrong secret renders differently.
    let out = run(env.scaffold().current_dir(&dir).args([
        "add-addon",
        "velero",
        "--blueprint",
        bp,
        "--secret",
        "token=wrongtoken99",
    ]));
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("a secret answer (token) differs from the one this repo was made with"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_hand_edited_record_is_applied_by_update_without_conflict() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let record = dir.join(".scaffold/answers.yaml");
    let text = fs::read_to_string(&record).expect("record");
    assert!(text.contains("node_max: 10\n"), "{text}");
    fs::write(&record, text.replace("node_max: 10\n", "node_max: 12\n")).expect("write");
    env.git(&dir, &["commit", "-qam", "more nodes"]);
    let scaffold = |args: &[&str]| run(env.scaffold().current_dir(&dir).args(args));
    let out = scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("`scaffold update` applies your edits"),
        "{}",
        out.stderr
    );
    let out = scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("edited by hand"), "{}", out.stderr);
    assert!(!out.stdout.contains("nothing to"), "{}", out.stdout);
    let pool =
        fs::read_to_string(dir.join("environments/prod/infrastructure/karpenter/node-pool.yaml"))
            .expect("pool");
    assert!(pool.contains("nodes: \"12\""), "{pool}");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert!(
        env.git(&dir, &["log", "-1", "--format=%B"])
            .contains("- node_max: 10 → 12")
    );
    // The next commands agree the repo is settled.
    let out = scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    let out = scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // An invalid hand edit is refused like a bad --values answer, naming the key.
    let text = fs::read_to_string(&record).expect("record");
    fs::write(&record, text.replace("node_max: 12\n", "node_max: 0\n")).expect("write");
    env.git(&dir, &["commit", "-qam", "no nodes"]);
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = scaffold(&["update"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("node_max"), "{}", out.stderr);
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
}

#[test]
fn update_names_unresolved_conflict_markers_before_anything_else() {
    let team = Team::new(true);
    let dir = &team.origin;
    team.user_edit(dir, TEAM_DOC, "review: weekly\n", "review: daily\n");
    team_blueprint(team.bps.path(), "0.2.0");
    let out = team.scaffold(dir, &["update", "--conflicts=markers"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = team.scaffold(dir, &["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("unresolved conflict markers in docs/team.md:"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("up to date"), "{}", out.stdout);
    let out = team.scaffold(dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
}

#[test]
fn quiet_settles_a_killed_run_without_a_note() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .env("SCAFFOLD_TEST_KILL_AT", "write")
        .args(["add-addon", "velero"]));
    assert_ne!(out.code, 0);
    assert!(dir.join(".git/scaffold-transaction").exists());
    // -q keeps results and errors only: the stale lock and the rollback are not said.
    let out = run(env.scaffold().current_dir(&dir).args(["update", "-q"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stderr, "", "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    assert!(!dir.join(".git/scaffold-transaction").exists());
}

#[test]
fn update_settles_a_killed_run_before_it_reads_the_repo() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .env("SCAFFOLD_TEST_KILL_AT", "write")
        .args(["add-addon", "velero"]));
    assert_ne!(out.code, 0);
    assert!(dir.join(".git/scaffold-transaction").exists());
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The killed run's lock goes first (it is taken before anything is read), then its
    // journal is settled, before update reads the repo.
    let notes: Vec<&str> = out.stderr.lines().collect();
    assert!(
        notes.len() >= 2
            && notes[0].starts_with("note: removed `")
            && notes[0].contains("left by a scaffold run that is gone")
            && notes[1].starts_with("note: rolled back a scaffold run that was interrupted"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(env.git(&dir, &["status", "--porcelain", "-uall"]), "");
    assert!(!dir.join(".git/scaffold-transaction").exists());
    let leftovers: Vec<String> = fs::read_dir(dir.join(".git"))
        .expect("git dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scaffold-transaction"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A signal at `step`: after the commit point the run finishes and exits 0; before it,
/// 130 and nothing changed.
fn signal_at(step: &str) -> (Output, bool) {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .env("SCAFFOLD_TEST_SIGNAL_AT", step)
        .args(["add-addon", "velero"]));
    assert_eq!(env.git(&dir, &["status", "--porcelain", "-uall"]), "");
    assert_eq!(
        env.git(&dir, &["rev-parse", "refs/scaffold/base^{tree}"]),
        env.git(&dir, &["rev-parse", "HEAD^{tree}"])
    );
    let changed = env.git(&dir, &["rev-parse", "HEAD"]) != head;
    (out, changed)
}

#[test]
fn a_signal_after_the_commit_point_exits_0_and_says_committed() {
    for step in ["after-commit", "after-base"] {
        let (out, changed) = signal_at(step);
        assert_eq!(out.code, 0, "{step}: {}", out.stderr);
        assert!(changed, "{step}");
        assert!(
            out.stderr
                .contains("interrupted after the change was committed; it is complete"),
            "{step}: {}",
            out.stderr
        );
    }
    let (out, changed) = signal_at("before-commit");
    assert_eq!(out.code, 130, "{}", out.stderr);
    assert!(!changed);
}

#[test]
fn a_signal_after_new_created_the_repo_exits_0() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .env("SCAFFOLD_TEST_SIGNAL_AT", "new-committed")
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("p/.git").exists());
    assert!(
        out.stderr
            .contains("interrupted after the change was committed"),
        "{}",
        out.stderr
    );
}

#[test]
fn remove_addon_run_again_after_success_is_a_no_op_as_add_addon_is() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let scaffold = |args: &[&str]| run(env.scaffold().current_dir(&dir).args(args));
    for args in [["add-addon", "velero"], ["remove-addon", "velero"]] {
        let out = scaffold(&args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let head = env.git(&dir, &["rev-parse", "HEAD"]);
        let again = scaffold(&args);
        assert_eq!(again.code, 0, "{args:?} again: {}", again.stderr);
        assert!(again.stdout.contains("nothing to do"), "{}", again.stdout);
        assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    }
}

#[test]
fn a_stale_branch_lock_is_found_before_anything_is_read() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let branch = env.git(&dir, &["symbolic-ref", "HEAD"]);
    let lock = dir.join(".git").join(format!("{}.lock", branch.trim()));
    fs::write(&lock, "").expect("lock");
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero", "--dry-run"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("another git command is moving the branch"),
        "{}",
        out.stderr
    );
    // The command it names works.
    sh(&env, &dir, &format!("rm {}", lock.display()));
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_record_without_a_git_repository_says_so() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    fs::remove_dir_all(dir.join(".git")).expect("rm .git");
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a git repository"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn a_newline_inside_a_set_value_keeps_the_error_on_one_line() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "p", "--defaults", "--set", "name=bad\nname"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn new_inside_another_repository_says_it_nests_one() {
    let env = Env::new();
    let outer = env.path("outer");
    fs::create_dir(&outer).expect("mkdir");
    env.git(&outer, &["init", "-q"]);
    let out = run(env.scaffold().current_dir(&outer).args([
        "new",
        "sub",
        "--defaults",
        "--set",
        "name=platform",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("is inside the git repository"),
        "{}",
        out.stderr
    );
    let out = run(env
        .scaffold()
        .args(["new", "alone", "--defaults", "--set", "name=platform"]));
    assert!(
        !out.stderr.contains("is inside the git repository"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_answers_record_given_as_values_makes_the_same_repo() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "a", "--defaults", "--set", "name=platform"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let record = env.path("a/.scaffold/answers.yaml");
    let out = run(env
        .scaffold()
        .args(["new", "b", "--defaults", "--values"])
        .arg(&record));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("is an answers record"),
        "{}",
        out.stderr
    );
    let tree = |dir: &str| env.git(&env.path(dir), &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(tree("a"), tree("b"));
}

#[test]
fn an_always_installed_addon_and_a_bad_directory_name_are_explained() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "k",
        "--defaults",
        "--set",
        "name=platform",
        "--set",
        "addons=karpenter",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("`karpenter` is always installed"),
        "{}",
        out.stderr
    );
    let out = run(env.scaffold().args(["new", "Bad_Dir", "--defaults"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("pass --set name=…"), "{}", out.stderr);
}

//! Issue 42: a team's repo. Two plain clones of a bare remote make scaffold changes, merge
//! them with `git pull` (no conflict), every scaffold command works after the merge, and
//! `refs/scaffold/*` pushes without force; a real conflict is one line of YAML; an update
//! that drops an environment is guarded as `env remove` is.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, Output, run};

/// A three-environment repo pushed (branch and base) to `remote.git`, and two clones.
struct Team {
    env: Env,
    url: String,
}

impl Team {
    fn new() -> Self {
        let env = Env::new();
        let out = run(env.scaffold().args([
            "new",
            "origin",
            "--defaults",
            "--set",
            "environments=dev,staging,prod",
        ]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let origin = env.path("origin");
        let branch = env.git(&origin, &["symbolic-ref", "--short", "HEAD"]);
        env.git(
            &env.path(""),
            &["init", "-q", "--bare", "-b", branch.trim(), "remote.git"],
        );
        let url = format!("file://{}", env.path("remote.git").display());
        env.git(&origin, &["remote", "add", "origin", &url]);
        env.git(
            &origin,
            &["push", "-q", "origin", "HEAD", "refs/scaffold/*"],
        );
        Team { env, url }
    }

    fn clone_as(&self, name: &str) -> PathBuf {
        self.env
            .git(&self.env.path(""), &["clone", "-q", &self.url, name]);
        let dir = self.env.path(name);
        // A plain clone, as a teammate makes it; the base comes with the first scaffold run.
        self.env.git(&dir, &["config", "pull.rebase", "false"]);
        dir
    }

    fn scaffold(&self, dir: &Path, args: &[&str]) -> Output {
        let out = run(self.env.scaffold().current_dir(dir).args(args));
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.env.git(dir, args)
    }

    /// `git ARGS` whose failure is the result.
    fn git_status(&self, dir: &Path, args: &[&str]) -> (bool, String) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("HOME", self.env.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    fn push(&self, dir: &Path) {
        let (ok, text) = self.git_status(dir, &["push", "origin", "HEAD", "refs/scaffold/*"]);
        assert!(ok, "push without force was refused: {text}");
    }

    /// `git pull` (a merge), which must not conflict.
    fn pull(&self, dir: &Path) {
        let (ok, text) = self.git_status(dir, &["pull", "--no-edit", "origin"]);
        assert!(ok, "git pull conflicted: {text}");
    }
}

fn read(dir: &Path, path: &str) -> String {
    fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs one pair of independent scaffold changes through the whole team flow: alice's is
/// pushed, bob's is local, bob pulls (a merge without conflict), every scaffold command
/// works, bob pushes `refs/scaffold/*` without force and alice pulls it back.
fn merge_flow(alice_args: &[&str], bob_args: &[&str], check: impl Fn(&Path)) {
    let team = Team::new();
    let alice = team.clone_as("alice");
    let bob = team.clone_as("bob");
    team.scaffold(&alice, alice_args);
    team.push(&alice);
    team.scaffold(&bob, bob_args);
    team.pull(&bob);
    check(&bob);
    let out = team.scaffold(&bob, &["update"]);
    assert!(
        out.stderr
            .contains("changed since scaffold last recorded it"),
        "{}",
        out.stderr
    );
    assert_eq!(team.git(&bob, &["status", "--porcelain"]), "");
    check(&bob);
    // Settled: every command works, the next update is a no-op.
    let out = team.scaffold(&bob, &["update"]);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    team.scaffold(&bob, &["add-addon", "metrics-server", "--env", "dev"]);
    team.scaffold(&bob, &["check"]);
    team.push(&bob);
    // Alice gets it all back with a fast-forward, and her next run needs nothing else.
    team.pull(&alice);
    let out = team.scaffold(&alice, &["update"]);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    check(&alice);
}

const DEV_POOL: &str = "environments/dev/infrastructure/karpenter/node-pool.yaml";
const PROD_POOL: &str = "environments/prod/infrastructure/karpenter/node-pool.yaml";

#[test]
fn answers_of_two_environments_merge_without_conflict() {
    merge_flow(
        &["update", "--set", "dev.node_max=21"],
        &["update", "--set", "prod.node_max=31"],
        |dir| {
            assert!(read(dir, DEV_POOL).contains("nodes: \"21\""));
            assert!(read(dir, PROD_POOL).contains("nodes: \"31\""));
        },
    );
}

#[test]
fn a_new_environment_and_an_answer_merge_without_conflict() {
    merge_flow(
        &["env", "add", "qa", "--from", "dev"],
        &["update", "--set", "prod.node_max=30"],
        |dir| {
            assert!(dir.join("environments/qa").is_dir());
            assert!(read(dir, PROD_POOL).contains("nodes: \"30\""));
        },
    );
}

/// The renovate.json rule that enables `component` in `env` (the first environment that
/// runs it), and whether renovate.json is JSON with the group rules of every catalog addon.
fn renovate_enables(dir: &Path, component: &str, env: &str) -> bool {
    let config: serde_json::Value =
        serde_json::from_str(&read(dir, "renovate.json")).expect("renovate.json is JSON");
    let rules = config["packageRules"].as_array().expect("packageRules");
    for group in ["Velero and its AWS plugin", "Prometheus operator and CRDs"] {
        assert!(rules.iter().any(|r| r["groupName"] == group), "{group}");
    }
    let wanted = format!("environments/{env}/**/{component}/**");
    rules
        .iter()
        .filter(|r| r["enabled"] == true)
        .any(|r| r["matchFileNames"][0] == wanted.as_str())
}

#[test]
fn addons_of_two_environments_merge_without_conflict() {
    // renovate.json holds a rule for every catalog addon (sorted, each in its own lines):
    // an add-addon changes only its own addon's line, so git merges the two.
    merge_flow(
        &["add-addon", "velero", "--env", "dev"],
        &["add-addon", "kube-prometheus-stack", "--env", "prod"],
        |dir| {
            assert!(
                dir.join("environments/dev/infrastructure/addons/velero")
                    .is_dir()
            );
            assert!(
                dir.join("environments/prod/infrastructure/addons/kube-prometheus-stack")
                    .is_dir()
            );
            assert!(renovate_enables(dir, "velero", "dev"));
            assert!(renovate_enables(dir, "kube-prometheus-stack", "prod"));
        },
    );
}

#[test]
fn two_addons_added_to_one_later_environment_merge_without_conflict() {
    // Both addons run first in staging: both renovate.json rules move there, each on its
    // own line.
    merge_flow(
        &["add-addon", "velero", "--env", "staging"],
        &["add-addon", "kube-prometheus-stack", "--env", "staging"],
        |dir| {
            assert!(renovate_enables(dir, "velero", "staging"));
            assert!(
                renovate_enables(dir, "kube-prometheus-stack", "staging")
                    && renovate_enables(dir, "prometheus-operator-crds", "staging")
            );
        },
    );
}

#[test]
fn both_changing_one_answer_is_one_yaml_conflict_resolved_by_update() {
    let team = Team::new();
    let alice = team.clone_as("alice");
    let bob = team.clone_as("bob");
    team.scaffold(&alice, &["update", "--set", "prod.node_max=20"]);
    team.push(&alice);
    team.scaffold(&bob, &["update", "--set", "prod.node_max=40"]);
    let (ok, _) = team.git_status(&bob, &["pull", "--no-edit", "origin"]);
    assert!(!ok, "both changed prod.node_max: git must ask");
    // The only conflicts: the answer in the record, and the files it renders.
    let record = read(&bob, ".scaffold/answers.yaml");
    assert!(record.contains("<<<<<<<"), "{record}");
    assert!(record.contains("node_max: 40") && record.contains("node_max: 20"));
    assert!(!record.contains("rendering:"), "{record}");
    // The person keeps one value in the YAML, takes either side's files, and commits.
    let kept: String = {
        let mut out = String::new();
        let mut skipping = false;
        for line in record.lines() {
            if line.starts_with("<<<<<<<") {
                continue;
            } else if line.starts_with("=======") {
                skipping = true;
            } else if line.starts_with(">>>>>>>") {
                skipping = false;
            } else if !skipping {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    };
    fs::write(bob.join(".scaffold/answers.yaml"), kept).expect("write");
    team.git(&bob, &["checkout", "--ours", "--", "environments"]);
    team.git(&bob, &["add", "-A"]);
    team.git(&bob, &["commit", "-qm", "merge: prod.node_max 40"]);
    let out = team.scaffold(&bob, &["update"]);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
    assert!(read(&bob, PROD_POOL).contains("nodes: \"40\""));
    team.scaffold(&bob, &["add-addon", "velero", "--env", "dev"]);
    team.push(&bob);
}

#[test]
fn a_record_with_the_old_rendering_line_is_read_and_rewritten() {
    let team = Team::new();
    let dir = team.env.path("origin");
    // A record as scaffold wrote it before issue 42: its digest inside, no digest file.
    let record = read(&dir, ".scaffold/answers.yaml");
    let digests = read(&dir, ".scaffold/rendering");
    let digest = digests
        .lines()
        .find(|l| !l.starts_with('#'))
        .and_then(|l| l.split_once(' '))
        .map(|(_, d)| d.to_string())
        .expect("digest line");
    fs::write(
        dir.join(".scaffold/answers.yaml"),
        format!("{record}rendering: {digest}\n"),
    )
    .expect("write");
    fs::remove_file(dir.join(".scaffold/rendering")).expect("rm");
    fs::remove_file(dir.join(".scaffold/.gitattributes")).expect("rm");
    team.git(&dir, &["commit", "-qam", "an older record"]);
    team.git(&dir, &["update-ref", "-d", "refs/scaffold/base"]);
    let out = team.scaffold(&dir, &["update"]);
    assert!(!out.stdout.contains("already up to date"), "{}", out.stdout);
    assert!(!read(&dir, ".scaffold/answers.yaml").contains("rendering:"));
    assert!(read(&dir, ".scaffold/rendering").contains(&digest));
    assert_eq!(team.git(&dir, &["status", "--porcelain"]), "");
    team.scaffold(&dir, &["add-addon", "velero", "--env", "dev"]);
}

#[test]
fn update_that_drops_an_environment_is_refused_as_env_remove_guards_it() {
    let team = Team::new();
    let dir = team.env.path("origin");
    let head = team.git(&dir, &["rev-parse", "HEAD"]);
    let out = run(team.env.scaffold().current_dir(&dir).args([
        "update",
        "--set",
        "environments=dev,prod",
    ]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the answers drop environment staging, which deletes its files")
            && out.stderr.contains("`scaffold env remove staging`"),
        "{}",
        out.stderr
    );
    assert_eq!(team.git(&dir, &["rev-parse", "HEAD"]), head);
    assert!(dir.join("environments/staging").is_dir());
}

#[test]
fn a_secret_that_changes_what_the_record_renders_is_named() {
    let env = Env::new();
    let bp = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secret-blueprint");
    let bp = bp.to_str().expect("utf8");
    let out = run(env.scaffold().args([
        "new",
        "sec",
        "--defaults",
        "--blueprint",
        bp,
        "--secret",
        "token=realtoken99",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("sec");
    let update = |name: &str, token: &str| {
        run(env.scaffold().current_dir(&dir).args([
            "update",
            "--blueprint",
            bp,
            "--set",
            &format!("name={name}"),
            "--secret",
            &format!("token={token}"),
        ]))
    };
    // The same secret: only the answer is named.
    let out = update("other", "realtoken99");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("secret answer"), "{}", out.stderr);
    assert!(!out.stdout.contains("secret token"), "{}", out.stdout);
    // A different one (a typo, or a rotation): named in the summary, the warning and the
    // commit message.
    let out = update("third", "wrongtoken");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("(name, secret token)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("warning: secret answer token changes what the recorded answers render (1 file(s), e.g. config.txt)"),
        "{}",
        out.stderr
    );
    let message = env.git(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("(name, secret token)") && message.contains("Secrets:\n- token: changed"),
        "{message}"
    );
    assert!(!message.contains("wrongtoken"), "{message}");
}

#[test]
fn new_values_takes_every_environments_answers_from_a_record() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "v3",
        "--defaults",
        "--set",
        "environments=dev,prod",
        "--set",
        "dev.region=us-east-1",
        "--set",
        "dev.zones=us-east-1a,us-east-1b",
        "--set",
        "prod.node_max=7",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let record = env.path("v3/.scaffold/answers.yaml");
    let out = run(env.scaffold().args([
        "new",
        "v3b",
        "--defaults",
        "--values",
        record.to_str().expect("utf8"),
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("using its `answers` and each environment's"),
        "{}",
        out.stderr
    );
    let copy = read(&env.path("v3b"), ".scaffold/answers.yaml");
    let original = read(&env.path("v3"), ".scaffold/answers.yaml");
    // Only the names differ (`name` defaults to the directory, and what derives from it).
    let strip = |text: &str| text.replace("v3b", "v3");
    assert_eq!(strip(&copy), original);
}

#[test]
fn base_commits_carry_the_users_identity() {
    let team = Team::new();
    let dir = team.env.path("origin");
    team.scaffold(&dir, &["update", "--set", "dev.node_max=12"]);
    for rev in ["refs/scaffold/base", "refs/scaffold/base~1"] {
        assert_eq!(
            team.git(&dir, &["log", "-1", "--format=%an <%ae>|%cn <%ce>", rev])
                .trim(),
            "Test Author <test@example.org>|Test Author <test@example.org>",
            "{rev}"
        );
    }
}

#[test]
fn remove_addon_in_an_environment_without_it_names_where_it_runs() {
    let team = Team::new();
    let dir = team.env.path("origin");
    team.scaffold(&dir, &["add-addon", "velero", "--env", "dev"]);
    let head = team.git(&dir, &["rev-parse", "HEAD"]);
    let out = team.scaffold(&dir, &["remove-addon", "velero", "--env", "prod"]);
    assert!(
        out.stdout
            .contains("velero is not in prod (it runs in dev); nothing to do"),
        "{}",
        out.stdout
    );
    assert_eq!(team.git(&dir, &["rev-parse", "HEAD"]), head);
}

/// A repo made by `new`, with `.git` replaced by `git init ARGS` and one commit of the files.
fn reinit(env: &Env, args: &[&str]) -> PathBuf {
    let out = run(env.scaffold().args(["new", "p", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    fs::remove_dir_all(dir.join(".git")).expect("rm .git");
    let mut init = vec!["init", "-q"];
    init.extend_from_slice(args);
    env.git(&dir, &init);
    env.git(&dir, &["add", "-A"]);
    env.git(&dir, &["commit", "-qm", "import"]);
    dir
}

#[test]
fn a_sha256_repository_is_refused_by_name() {
    let env = Env::new();
    let dir = reinit(&env, &["--object-format=sha256"]);
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is a SHA-256 git repository (extensions.objectFormat = sha256)")
            && out.stderr.contains("git init --object-format=sha1"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("git init && git add -A"),
        "{}",
        out.stderr
    );
    // (The harness's own check pushes every repo left behind to a SHA-1 remote.)
    fs::remove_dir_all(dir.join(".git")).expect("rm .git");
}

#[test]
fn a_repository_owned_by_another_user_names_safe_directory() {
    let env = Env::new();
    let dir = reinit(&env, &[]);
    // Only root can give the repository away; run as anyone else this proves nothing.
    if std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).is_err() {
        eprintln!("NOT RUN: needs root, to give a repository to another user");
        return;
    }
    std::os::unix::fs::chown(dir.join(".git"), Some(65534), Some(65534)).expect("chown");
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("is a git repository owned by another user")
            && out.stderr.contains(&format!(
                "git config --global --add safe.directory {}",
                dir.display()
            )),
        "{}",
        out.stderr
    );
    std::os::unix::fs::chown(&dir, Some(0), Some(0)).expect("chown back");
    std::os::unix::fs::chown(dir.join(".git"), Some(0), Some(0)).expect("chown back");
}

#[test]
fn a_split_index_is_refused_with_gits_way_out() {
    let env = Env::new();
    let dir = reinit(&env, &[]);
    env.git(&dir, &["update-index", "--split-index"]);
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("uses a split index (core.splitIndex")
            && out.stderr.contains("git update-index --no-split-index"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    // The command it names makes scaffold work again.
    env.git(&dir, &["config", "core.splitIndex", "false"]);
    env.git(&dir, &["update-index", "--no-split-index"]);
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_working_tree_encoding_on_a_file_scaffold_writes_is_named() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "p", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    // On files scaffold never writes: no matter.
    fs::write(
        dir.join(".gitattributes"),
        "*.ps1 working-tree-encoding=UTF-16LE\n",
    )
    .expect("write");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "attributes"]);
    let out = run(env.scaffold().current_dir(&dir).args(["update"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // On its README: named, file and encoding.
    fs::write(
        dir.join(".gitattributes"),
        "README.md working-tree-encoding=UTF-16LE\n",
    )
    .expect("write");
    env.git(&dir, &["add", ".gitattributes"]);
    env.git(&dir, &["commit", "-qm", "attributes"]);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("README.md has the working-tree-encoding=UTF-16LE attribute, which scaffold does not apply"),
        "{}",
        out.stderr
    );
}

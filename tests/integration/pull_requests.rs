//! Working in pull requests: `scaffold diff` names exactly what each environment's cluster
//! applies differently, held to `kubectl kustomize` on both revisions.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use crate::support::{Env, require_tool, run};

const ENVIRONMENTS: [&str; 3] = ["dev", "staging", "prod"];

/// (kind, namespace, name) → object, of everything `kubectl kustomize` builds from each
/// kustomization directory under the environment's own trees of `dir`.
fn kustomize_objects(
    dir: &Path,
    env: &str,
) -> BTreeMap<(String, String, String), serde_norway::Value> {
    let mut objects = BTreeMap::new();
    for root in ["clusters", "environments", "apps"] {
        let top = dir.join(root).join(env);
        for entry in walkdir::WalkDir::new(&top).into_iter().flatten() {
            if entry.file_name() != "kustomization.yaml" {
                continue;
            }
            let built = Command::new("kubectl")
                .args(["kustomize", "--load-restrictor=LoadRestrictionsNone"])
                .arg(entry.path().parent().expect("dir"))
                .output()
                .expect("kubectl kustomize");
            assert!(
                built.status.success(),
                "{}",
                String::from_utf8_lossy(&built.stderr)
            );
            let text = String::from_utf8(built.stdout).expect("utf-8");
            for doc in text.split("\n---\n") {
                let Ok(value) = serde_norway::from_str::<serde_norway::Value>(doc) else {
                    continue;
                };
                let s = |path: &[&str]| {
                    path.iter()
                        .try_fold(&value, |v, k| v.get(k))
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string()
                };
                let key = (
                    s(&["kind"]),
                    s(&["metadata", "namespace"]),
                    s(&["metadata", "name"]),
                );
                objects.insert(key, value.clone());
            }
        }
    }
    objects
}

fn changed_keys(
    before: &BTreeMap<(String, String, String), serde_norway::Value>,
    after: &BTreeMap<(String, String, String), serde_norway::Value>,
) -> BTreeSet<(String, String, String)> {
    before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}

#[test]
fn a_chart_bumped_in_dev_changes_exactly_dev_s_objects_as_kustomize_builds_them() {
    if !require_tool("kubectl") {
        return;
    }
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "--set",
        "environments=dev,staging,prod",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let before: Vec<_> = ENVIRONMENTS
        .iter()
        .map(|e| kustomize_objects(&dir, e))
        .collect();

    // The pull request: a branch that bumps reloader in dev's overlay.
    env.git(&dir, &["switch", "-q", "-c", "bump-reloader"]);
    let overlay = dir.join("environments/dev/infrastructure/addons/reloader/release.yaml");
    let text = std::fs::read_to_string(&overlay).expect("overlay");
    let bumped = text.replacen("version: \"2.", "version: \"9.", 1);
    assert_ne!(text, bumped, "the overlay pins reloader's chart version");
    std::fs::write(&overlay, bumped).expect("write");
    env.git(&dir, &["commit", "-qam", "Bump reloader in dev"]);
    let after: Vec<_> = ENVIRONMENTS
        .iter()
        .map(|e| kustomize_objects(&dir, e))
        .collect();

    let out = run(env.scaffold().args(["diff", "--json", "--repo"]).arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let diff: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(diff["head"], "work tree");
    for (i, name) in ENVIRONMENTS.iter().enumerate() {
        let report = diff["environments"]
            .as_array()
            .expect("environments")
            .iter()
            .find(|e| e["name"] == *name)
            .unwrap_or_else(|| panic!("{name} in {diff}"));
        let ours: BTreeSet<(String, String, String)> = report["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .map(|o| {
                let s = |k: &str| o[k].as_str().unwrap_or("").to_string();
                (s("kind"), s("namespace"), s("name"))
            })
            .collect();
        assert_eq!(
            ours,
            changed_keys(&before[i], &after[i]),
            "{name}: scaffold diff against kubectl kustomize"
        );
        assert!(report["inputs"].as_array().expect("inputs").is_empty());
    }
    let dev = &diff["environments"].as_array().expect("envs")[0];
    assert_eq!(dev["name"], "dev");
    assert_eq!(dev["objects"][0]["change"], "changed");
    let highlight = dev["objects"][0]["highlights"][0]
        .as_str()
        .expect("highlight");
    assert!(
        highlight.starts_with("chart reloader 2.") && highlight.contains("→ 9."),
        "{highlight}"
    );

    // The same two revisions named, as Markdown; and --exit-code.
    let out = run(env
        .scaffold()
        .args([
            "diff",
            "main",
            "HEAD",
            "--format",
            "markdown",
            "--exit-code",
            "--repo",
        ])
        .arg(&dir));
    assert_eq!(out.code, 1, "--exit-code with changes: {}", out.stderr);
    assert!(
        out.stdout
            .contains("<summary><b>dev</b>: 1 changed</summary>"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("<b>prod</b>"),
        "an unchanged environment has no section"
    );
    let out = run(env
        .scaffold()
        .args(["diff", "HEAD", "HEAD", "--exit-code", "--repo"])
        .arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("prod: no changes"), "{}", out.stdout);

    let out = run(env
        .scaffold()
        .args(["diff", "no-such-rev", "--repo"])
        .arg(&dir));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("`no-such-rev` names no commit"),
        "{}",
        out.stderr
    );
}

/// `update REPO… --branch NAME`: each repo's update is a commit on a new branch, the
/// checked-out branch and work tree untouched; a repo with conflicts or nothing to do gets
/// no branch; an existing branch is refused, so a second run changes nothing.
#[test]
fn update_onto_branches_leaves_each_checkout_untouched_and_reports_per_repo() {
    let env = Env::new();
    for name in ["a", "b", "c", "d"] {
        let out = run(env.scaffold().args(["new", name, "--defaults", "-q"]));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let pool = "environments/prod/infrastructure/karpenter/node-pool.yaml";
    // b: a hand edit on the line the new answer changes (a conflict).
    let edited = std::fs::read_to_string(env.path("b").join(pool))
        .expect("pool")
        .replace("nodes: \"10\"", "nodes: \"12\"");
    std::fs::write(env.path("b").join(pool), edited).expect("edit");
    env.git(&env.path("b"), &["commit", "-qam", "twelve nodes"]);
    // c: the branch exists already.
    env.git(&env.path("c"), &["branch", "node-max-20"]);
    // d: already at the answer.
    let out =
        run(env
            .scaffold()
            .current_dir(env.path("d"))
            .args(["update", "--set", "node_max=20"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let heads: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|r| env.git(&env.path(r), &["rev-parse", "HEAD"]))
        .collect();

    let out = run(env.scaffold().args([
        "update",
        "a",
        "b",
        "c",
        "d",
        "--branch",
        "node-max-20",
        "--set",
        "node_max=20",
        "--json",
    ]));
    assert_eq!(
        out.code, 3,
        "the worst: c's refusal\n{}{}",
        out.stdout, out.stderr
    );
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("one json document");
    let outcomes: Vec<&str> = document["repos"]
        .as_array()
        .expect("repos")
        .iter()
        .map(|r| r["outcome"].as_str().expect("outcome"))
        .collect();
    assert_eq!(outcomes, ["changed", "conflicts", "refused", "up_to_date"]);
    assert_eq!(document["summary"]["changed"], 1);
    assert_eq!(document["repos"][1]["files"][0], pool);
    assert!(
        document["repos"][2]["error"]
            .as_str()
            .expect("error")
            .contains("branch node-max-20 already exists")
    );

    // a: the branch has the update on top of HEAD; the checkout is as it was.
    let a = env.path("a");
    let commit = document["repos"][0]["commit"].as_str().expect("commit");
    assert_eq!(env.git(&a, &["rev-parse", "node-max-20"]).trim(), commit);
    assert_eq!(env.git(&a, &["rev-parse", "node-max-20^"]), heads[0]);
    assert_eq!(env.git(&a, &["rev-parse", "HEAD"]), heads[0]);
    assert_eq!(env.git(&a, &["branch", "--show-current"]).trim(), "main");
    assert_eq!(env.git(&a, &["status", "--porcelain"]), "");
    assert!(
        std::fs::read_to_string(a.join(pool))
            .expect("pool")
            .contains("nodes: \"10\"")
    );
    let on_branch = env.git(&a, &["show", &format!("node-max-20:{pool}")]);
    assert!(on_branch.contains("nodes: \"20\""), "{on_branch}");
    assert_eq!(
        env.git(&a, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    // b and d got no branch; c's branch is where it was.
    for repo in ["b", "d"] {
        let branches = env.git(&env.path(repo), &["branch", "--list", "node-max-20"]);
        assert_eq!(branches, "", "{repo}");
    }
    assert_eq!(
        env.git(&env.path("c"), &["rev-parse", "node-max-20"]),
        heads[2]
    );

    // A second run: a's branch exists now, so it is refused and nothing moves.
    let out = run(env.scaffold().args([
        "update",
        "a",
        "--branch",
        "node-max-20",
        "--set",
        "node_max=20",
    ]));
    assert_eq!(out.code, 3, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("refused: branch node-max-20 already exists"),
        "{}",
        out.stdout
    );
    assert_eq!(env.git(&a, &["rev-parse", "node-max-20"]).trim(), commit);

    let out = run(env
        .scaffold()
        .args(["update", "a", "--branch", "x", "--dry-run"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(env
        .scaffold()
        .args(["update", "a", "--branch", "bad..name"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--branch `bad..name`"),
        "{}",
        out.stderr
    );
}

/// `update --branch` commits from HEAD's tree without a checkout where no hook asks for
/// one; with a commit hook it checks the branch out and commits there, as `git commit`
/// would. Both make the same tree and the same pristine base from the same repo, leave the
/// checkout (HEAD, index, work tree) as it was, and leave no work tree behind.
#[test]
fn update_onto_a_branch_without_a_checkout_commits_what_a_checkout_would() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "plain",
        "--defaults",
        "--values",
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/blueprints/default/tests/three-environments.yaml"
        ),
        "-q",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (plain, hooked) = (env.path("plain"), env.path("hooked"));
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&plain)
        .arg(&hooked)
        .status()
        .expect("cp");
    assert!(copied.success());
    // A post-commit hook that leaves a mark: only a commit made in a work tree runs it.
    let hook = hooked.join(".git/hooks/post-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\ntouch \"$(git rev-parse --git-common-dir)/hook-ran\"\n",
    )
    .expect("hook");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // An edit in plain's work tree the branch must not see (it starts from HEAD).
    std::fs::write(plain.join("README.md"), "not committed\n").expect("edit");
    let index_before = std::fs::read(plain.join(".git/index")).expect("index");

    let out = run(env.scaffold().args([
        "update",
        "plain",
        "hooked",
        "--branch",
        "max-20",
        "--set",
        "node_max=20",
        "--json",
    ]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(document["summary"]["changed"], 2, "{document}");
    let tree = |dir: &Path, rev: &str| env.git(dir, &["rev-parse", &format!("{rev}^{{tree}}")]);
    assert_eq!(tree(&plain, "max-20"), tree(&hooked, "max-20"));
    assert_eq!(
        tree(&plain, "refs/scaffold/base"),
        tree(&hooked, "refs/scaffold/base")
    );
    assert_eq!(
        env.git(&plain, &["log", "-1", "--format=%P %an %s%n%b", "max-20"]),
        env.git(&hooked, &["log", "-1", "--format=%P %an %s%n%b", "max-20"])
    );
    assert!(
        hooked.join(".git/hook-ran").exists(),
        "the hook ran in a work tree"
    );
    assert!(!plain.join(".git/hook-ran").exists());
    // plain's checkout: its edit kept, its index untouched, no work tree made.
    assert_eq!(
        std::fs::read_to_string(plain.join("README.md")).expect("readme"),
        "not committed\n"
    );
    assert_eq!(
        std::fs::read(plain.join(".git/index")).expect("index"),
        index_before
    );
    assert_eq!(
        env.git(&plain, &["status", "--porcelain"]),
        " M README.md\n"
    );
    for dir in [&plain, &hooked] {
        let listed = env.git(dir, &["worktree", "list", "--porcelain"]);
        assert_eq!(listed.matches("worktree ").count(), 1, "{listed}");
        let pool = "environments/prod/infrastructure/karpenter/node-pool.yaml";
        let on_branch = env.git(dir, &["show", &format!("max-20:{pool}")]);
        assert!(on_branch.contains("nodes: \"20\""), "{on_branch}");
    }
}

/// `promote … --branch NAME`: the promotion is a commit on a new branch; the checkout is
/// untouched; a refused promotion makes no branch; an existing branch is refused.
#[test]
fn promote_onto_a_branch_leaves_the_checkout_untouched() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,prod",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let overlay = "environments/dev/infrastructure/addons/reloader/release.yaml";
    let text = std::fs::read_to_string(dir.join(overlay)).expect("overlay");
    std::fs::write(
        dir.join(overlay),
        text.replacen("version: \"2.", "version: \"9.", 1),
    )
    .expect("bump");
    env.git(&dir, &["commit", "-qam", "Bump reloader in dev"]);
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let promote = |branch: &str| {
        run(env.scaffold().current_dir(&dir).args([
            "promote", "--from", "dev", "--to", "prod", "reloader", "--branch", branch,
        ]))
    };
    let out = promote("promote/reloader");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("on branch promote/reloader"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_eq!(env.git(&dir, &["rev-parse", "promote/reloader^"]), head);
    let prod = "environments/prod/infrastructure/addons/reloader/release.yaml";
    assert!(
        !std::fs::read_to_string(dir.join(prod))
            .expect("prod")
            .contains("version: \"9.")
    );
    let promoted = env.git(&dir, &["show", &format!("promote/reloader:{prod}")]);
    assert!(
        promoted.contains("version: \"9.") || promoted.contains("version: 9."),
        "{promoted}"
    );
    // The same name again: refused, nothing moves.
    let tip = env.git(&dir, &["rev-parse", "promote/reloader"]);
    let out = promote("promote/reloader");
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("branch promote/reloader already exists"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["rev-parse", "promote/reloader"]), tip);
    // A promotion that is refused leaves no branch behind.
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["promote", "--from", "prod", "--to", "prod", "--branch", "x"]));
    assert_ne!(out.code, 0, "from and to the same environment is refused");
    assert_eq!(
        env.git(&dir, &["branch", "--list", "x"]),
        "",
        "a refused promote leaves no branch"
    );
}

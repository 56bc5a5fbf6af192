//! add-addon / remove-addon: one rendering path with `new`, exact undo, dependencies,
//! idempotency, custom charts, user edits kept, and every refusal.
use std::path::Path;

use crate::support::{Env, Output, answer, podinfo_app, run};

fn new_repo(env: &Env, name: &str, addons: &str) -> std::path::PathBuf {
    let out = run(env
        .scaffold()
        .args(["new", name, "--defaults", "--set", "name=platform", "--set"])
        .arg(format!("addons={addons}")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    crate::support::assert_git_accepts(env, &env.path(name));
    env.path(name)
}

fn in_repo(env: &Env, dir: &Path, args: &[&str]) -> Output {
    run(env.scaffold().current_dir(dir).args(args))
}

/// Every tracked file and its bytes (git's own checks pass on the repo first).
fn tree(env: &Env, dir: &Path) -> Vec<(String, Vec<u8>)> {
    crate::support::assert_git_accepts(env, dir);
    env.git(dir, &["ls-files"])
        .lines()
        .map(|p| (p.to_string(), std::fs::read(dir.join(p)).expect("read")))
        .collect()
}

#[test]
fn new_with_addons_equals_new_then_add_addon() {
    let env = Env::new();
    let direct = new_repo(&env, "direct", "velero,istio");
    let grown = new_repo(&env, "grown", "");
    for addon in ["velero", "istio"] {
        let out = in_repo(&env, &grown, &["add-addon", addon]);
        assert_eq!(out.code, 0, "{addon}: {}", out.stderr);
    }
    let (a, b) = (tree(&env, &direct), tree(&env, &grown));
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for ((path, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{path} differs:\n{}\n---\n{}",
            String::from_utf8_lossy(x),
            String::from_utf8_lossy(y)
        );
    }
    assert_eq!(
        env.git(&grown, &["log", "--format=%s"])
            .lines()
            .collect::<Vec<_>>(),
        [
            "scaffold: add addon istio 1.30.3",
            "scaffold: add addon velero 12.1.0",
            "scaffold: new platform from blueprint default 0.5.0",
        ]
    );
}

#[test]
fn add_then_remove_restores_the_tree_byte_for_byte() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "metrics-server");
    let before = tree(&env, &dir);
    let out = in_repo(&env, &dir, &["add-addon", "istio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("adding istio-base too (needed by istio)"),
        "{}",
        out.stdout
    );
    assert!(
        dir.join("infrastructure/addons/istio-base/release.yaml")
            .is_file()
    );
    assert!(
        dir.join("infrastructure/addons/istio/release.yaml")
            .is_file()
    );
    let out = in_repo(&env, &dir, &["remove-addon", "istio"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tree(&env, &dir), before);
    assert!(
        !dir.join("infrastructure/addons/istio").exists(),
        "empty directories are removed too"
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_eq!(env.git(&dir, &["diff", "HEAD~2", "--stat"]), "");
    assert_eq!(
        env.git(&dir, &["log", "-1", "--format=%s"]).trim(),
        "scaffold: remove addon istio 1.30.3"
    );
}

#[test]
fn user_comments_and_list_entries_survive_add_and_remove() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "metrics-server,reloader");
    let list = dir.join("environments/prod/infrastructure/crds/kustomization.yaml");
    let original = std::fs::read_to_string(&list).expect("read");
    let edited = format!(
        "# Team note: keep our own manifests last.\n{original}  - zz-team-extras/ # ours\n"
    );
    std::fs::write(&list, &edited).expect("write");
    env.git(&dir, &["commit", "-qam", "team edits"]);

    let out = in_repo(&env, &dir, &["add-addon", "prometheus-operator-crds"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after_add = std::fs::read_to_string(&list).expect("read");
    assert!(
        after_add.starts_with("# Team note: keep our own manifests last.\n"),
        "{after_add}"
    );
    assert!(
        after_add.contains("  - prometheus-operator-crds/\n"),
        "{after_add}"
    );
    assert!(
        after_add.contains("  - zz-team-extras/ # ours\n"),
        "{after_add}"
    );

    let out = in_repo(&env, &dir, &["remove-addon", "prometheus-operator-crds"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&list).expect("read"), edited);
}

#[test]
fn adding_what_is_there_is_a_no_op_and_another_version_is_an_error() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "reloader");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, &dir, &["add-addon", "reloader"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim(),
        "reloader 2.2.16 is already in this repo; nothing to do"
    );
    let out = in_repo(
        &env,
        &dir,
        &["add-addon", "karpenter", "--version", "1.14.1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    let out = in_repo(&env, &dir, &["add-addon", "reloader", "--version", "2.0.0"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim(),
        "error: --version: reloader is already in this repo at 2.2.16; changing versions belongs to a later update command"
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
}

#[test]
fn catalog_overrides_and_custom_charts() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "");
    let out = in_repo(
        &env,
        &dir,
        &[
            "add-addon",
            "reloader",
            "--version",
            "2.2.15",
            "--namespace",
            "ops",
            "--helm-set",
            "reloader.deployment.replicas=2",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let release = std::fs::read_to_string(
        dir.join("environments/prod/infrastructure/addons/reloader/release.yaml"),
    )
    .expect("release");
    assert!(
        release.contains("version: \"2.2.15\"")
            && release.contains("namespace: ops")
            && release.contains("replicas: 2"),
        "{release}"
    );

    let out = in_repo(&env, &dir, &podinfo_app("web"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let source = std::fs::read_to_string(dir.join("apps/base/web/source.yaml")).expect("source");
    assert!(
        source.contains("kind: OCIRepository")
            && source.contains("url: oci://ghcr.io/stefanprodan/charts/podinfo"),
        "{source}"
    );
    let release = std::fs::read_to_string(dir.join("apps/base/web/release.yaml")).expect("release");
    assert!(release.contains("chartRef:"), "{release}");
    assert!(
        std::fs::read_to_string(dir.join("apps/prod/kustomization.yaml"))
            .expect("k")
            .contains("  - web/\n")
    );

    let out = in_repo(
        &env,
        &dir,
        &[
            "add-addon",
            "cache",
            "--chart",
            "redis",
            "--repo",
            "https://charts.example.org/stable",
            "--version",
            "21.2.5",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let source = std::fs::read_to_string(dir.join("infrastructure/addons/cache/source.yaml"))
        .expect("source");
    assert!(
        source.contains("kind: HelmRepository")
            && source.contains("url: https://charts.example.org/stable"),
        "{source}"
    );
    let chosen: Vec<String> = serde_norway::from_value(answer(&dir, "addons")).expect("addons");
    assert_eq!(chosen, ["reloader", "web", "cache"]);

    let out = in_repo(&env, &dir, &["remove-addon", "web"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!dir.join("apps/prod/web").exists());
}

#[test]
fn dry_run_prints_the_diff_and_writes_nothing() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "");
    let before = tree(&env, &dir);
    let out = in_repo(&env, &dir, &["add-addon", "metrics-server", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("+++ b/infrastructure/addons/metrics-server/release.yaml"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("+    - name: addon-metrics-server"),
        "{}",
        out.stdout
    );
    assert_eq!(tree(&env, &dir), before);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn works_from_a_subdirectory_and_says_so_outside_a_repo() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "");
    let out = in_repo(
        &env,
        &dir.join("envs/prod/2-kops"),
        &["add-addon", "reloader"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(env.scaffold().args(["add-addon", "reloader"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: not inside a scaffold repo: no .scaffold/answers.yaml in"),
        "{}",
        out.stderr
    );
}

#[test]
fn refusals_name_the_problem_and_change_nothing() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "istio");
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["add-addon", "vlero"],
            2,
            "error: unknown addon `vlero` (did you mean velero?)",
        ),
        (
            &["add-addon", "Bad_Name"],
            2,
            "error: NAME: `Bad_Name` is not a DNS-1123 label",
        ),
        (
            &["add-addon", "velero", "--version", "latest"],
            2,
            "error: --version: `latest` is not an exact version",
        ),
        (
            &["add-addon", "velero", "--namespace", "Backups"],
            2,
            "error: --namespace: `Backups` is not a DNS-1123 label",
        ),
        (
            &[
                "add-addon",
                "x",
                "--chart",
                "x",
                "--repo",
                "ftp://charts",
                "--version",
                "1.0.0",
            ],
            2,
            "error: --repo: `ftp://charts` is not an https:// or oci:// URL",
        ),
        (
            &[
                "add-addon",
                "x",
                "--chart",
                "x",
                "--repo",
                "https://charts.example.org",
                "--version",
                "1.0.0",
                "--layer",
                "aps",
            ],
            2,
            "error: --layer: `aps` is not a layer of the blueprint (did you mean `apps`?); its layers: addons, apps, crds, karpenter, load-balancer",
        ),
        (
            &[
                "add-addon",
                "velero",
                "--chart",
                "velero",
                "--repo",
                "https://x.example.org",
                "--version",
                "1.0.0",
            ],
            2,
            "error: velero is a catalog addon",
        ),
        (
            &["remove-addon", "istio-base"],
            2,
            "error: istio-base was added as a dependency",
        ),
        (
            &["remove-addon", "karpenter"],
            2,
            "error: karpenter is part of every repo",
        ),
        (
            &["remove-addon", "my-chart"],
            2,
            "error: my-chart is not in this repo",
        ),
    ];
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    for (args, code, expected) in cases {
        let out = in_repo(&env, &dir, args);
        assert_eq!(out.code, *code, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(expected),
            "{args:?}\n  got:  {}\n  want: {expected}",
            out.stderr.trim()
        );
        assert_eq!(out.stderr.trim().lines().count(), 1, "{args:?}");
        assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head, "{args:?}");
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "", "{args:?}");
    }

    // A dependency chosen explicitly cannot go while its dependant stays.
    let dir = new_repo(&env, "q", "istio-base,istio");
    let out = in_repo(&env, &dir, &["remove-addon", "istio-base"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim(),
        "error: istio-base is needed by istio; remove it first"
    );
}

/// The work-tree status is read for scaffold's own paths only: an uncommitted file where
/// scaffold would write is refused even when it holds exactly scaffold's bytes (it would
/// otherwise stay out of the commit), and a file anywhere else (even in an untracked
/// directory) is not scaffold's business and stays out of its commit.
#[test]
fn an_untracked_file_in_the_way_is_refused_and_others_are_left_alone() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "");
    let twin = new_repo(&env, "twin", "");
    assert_eq!(in_repo(&env, &twin, &["add-addon", "velero"]).code, 0);
    let file = "envs/prod/1-prerequisites/addon-velero.tf";
    std::fs::copy(twin.join(file), dir.join(file)).expect("copy");
    std::fs::create_dir_all(dir.join("notes/drafts")).expect("mkdir");
    std::fs::write(dir.join("notes/drafts/todo.md"), "mine\n").expect("write");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("uncommitted changes in {file}")),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("notes/drafts"), "{}", out.stderr);
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);

    let out = in_repo(&env, &dir, &["add-addon", "velero", "--allow-dirty"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.git(&dir, &["status", "--porcelain"]),
        "?? notes/\n",
        "scaffold's file is committed; the other untracked file stays untracked"
    );
}

#[test]
fn uncommitted_changes_in_a_file_to_edit_are_refused_unless_allowed() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "");
    let list = dir.join("clusters/prod/50-apps.yaml");
    let edited = format!("# wip\n{}", std::fs::read_to_string(&list).expect("read"));
    std::fs::write(&list, &edited).expect("write");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, &dir, &["add-addon", "reloader"]);
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stderr.trim(),
        "error: uncommitted changes in clusters/prod/50-apps.yaml: commit or stash them first (`git stash`), or pass --allow-dirty to commit them together with scaffold's change"
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    assert!(!dir.join("infrastructure/addons/reloader").exists());
    assert_eq!(std::fs::read_to_string(&list).expect("read"), edited);

    let out = in_repo(&env, &dir, &["add-addon", "reloader", "--allow-dirty"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "--allow-dirty: committing your uncommitted edits in clusters/prod/50-apps.yaml"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let merged = std::fs::read_to_string(&list).expect("read");
    assert!(
        merged.starts_with("# wip\n") && merged.contains("    - name: addon-reloader\n"),
        "{merged}"
    );
}

#[test]
fn an_edited_addon_file_is_not_deleted() {
    let env = Env::new();
    let dir = new_repo(&env, "p", "reloader");
    let release = dir.join("infrastructure/addons/reloader/release.yaml");
    std::fs::write(&release, "# tuned by hand\n").expect("write");
    env.git(&dir, &["commit", "-qam", "tune"]);
    let out = in_repo(&env, &dir, &["remove-addon", "reloader"]);
    assert_eq!(out.code, 3);
    assert!(
        out.stderr.starts_with(
            "error: infrastructure/addons/reloader/release.yaml:1: was edited since scaffold wrote it and would be removed; undo or move your edits first; nothing was changed\n  scaffold wrote (base):\n    | # HelmRelease of the addon reloader"
        ) && out.stderr.contains("\n  yours (now on disk):\n    | # tuned by hand\n  scaffold would write (new):\n    (nothing)\n"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(&release).expect("kept"),
        "# tuned by hand\n"
    );
}

#[test]
fn list_addons_shows_the_catalog() {
    let env = Env::new();
    let out = run(env.scaffold().args(["list", "addons"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let velero = out
        .stdout
        .lines()
        .find(|l| l.starts_with("velero "))
        .expect("velero row");
    assert!(
        velero.contains("12.1.0") && velero.contains("AWS (IRSA)"),
        "{velero}"
    );
    let out = run(env.scaffold().args(["list", "addons", "--json"]));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).expect("json");
    assert!(
        rows.iter()
            .any(|r| r["name"] == "karpenter" && r["always"] == true)
    );
    assert!(
        rows.iter()
            .any(|r| r["name"] == "istio" && r["depends_on"][0] == "istio-base")
    );
}

/// An addon an environment already runs, added there again with nothing of its own
/// (no version, no values): nothing to do, and no commit (it made an empty one, "in :").
#[test]
fn adding_an_addon_an_environment_already_runs_commits_nothing() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "twice",
        "--defaults",
        "--set",
        "environments=dev,prod",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("twice");
    let out = in_repo(&env, &dir, &["add-addon", "velero", "--env", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero", "--env", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("velero") && out.stdout.contains("already runs in prod; nothing to do"),
        "{}",
        out.stdout
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head, "no commit");
}

//! Several environments in one repo (issue 26): a blueprint that names its environments
//! answer renders its `environment` trees once per environment, with each environment's
//! own answers and addons, and records them per environment.
use std::path::{Path, PathBuf};

use crate::support::{Env, answers, run};

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, text).expect("write");
}

fn entry(name: &str, default: bool) -> String {
    format!(
        "name: {name}\ndescription: {name}.\nlayer: addons\nalways: false\ndefault: {default}\nnamespace: {name}\ncreate_namespace: true\nrequires: []\ndepends_on: []\nchart:\n  name: {name}\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: {name}\n    url: https://charts.example.org/{name}\ncrds:\n  policy: CreateReplace\n  provides: []\n  uses: []\nvalues: {{}}\nbridge_values: {{}}\nrelease_depends_on: []\nconfigs: []\n"
    )
}

/// A blueprint with a tree of each scope and per-environment region, cluster name and
/// addons.
fn blueprint(env: &Env) -> PathBuf {
    blueprint_with(env, "")
}

/// The blueprint with more questions at the end of its list.
fn blueprint_with(env: &Env, more_questions: &str) -> PathBuf {
    let root = env.path("envs-blueprint");
    write(
        &root,
        "blueprint.yaml",
        &(r#"name: envs
version: 0.1.0
environments_answer: environments
environment_teardown: "kops delete cluster --name [[ cluster_name ]] --yes"
trees:
  - {dir: files, scope: repo}
  - {dir: env-files, scope: environment}
  - {dir: addon-files, scope: addon}
  - {dir: addon-env-files, scope: addon-environment}
layers:
  addons: infrastructure
questions:
  - key: name
    prompt: Platform name
    type: string
    default: "[[ target_dir_name ]]"
  - key: environments
    prompt: Environments
    type: list
    default: prod
  - key: environment
    prompt: Environment
    type: string
    per_environment: true
    default: "[[ environments | first ]]"
  - key: region
    prompt: Region
    type: string
    per_environment: true
    default: eu-west-1
  - key: cluster_name
    prompt: Cluster name
    type: string
    per_environment: true
    default: "[[ environment ]].[[ name ]].example.com"
  - key: addons
    prompt: Addons
    type: multi-choice
    choices_from: catalog
    per_environment: true
    default: "[[ default_addons ]]"
"#
        .to_string()
            + more_questions),
    );
    write(
        &root,
        "files/README.md.tera",
        "[[ name ]]: [[ environments | join(sep=\",\") ]]\n",
    );
    write(
        &root,
        "env-files/clusters/[[ environment ]]/cluster.yaml.tera",
        "name: [[ cluster_name ]]\nregion: [[ region ]]\naddons: [[ addon_names | join(sep=\",\") ]]\n",
    );
    write(
        &root,
        "addon-files/[[ addon.dir ]]/[[ addon.name ]]/release.yaml.tera",
        "chart: [[ addon.name ]]\n",
    );
    write(
        &root,
        "addon-env-files/environments/[[ environment ]]/[[ addon.name ]].yaml.tera",
        "[[ addon.name ]] in [[ environment ]] ([[ region ]])\n",
    );
    write(
        &root,
        "addon-env-files/environments/[[ environment ]]/[[ addon.name ]]-release.yaml.tera",
        "version: [[ addon.chart.version ]]\nvalues: [[ addon.values | to_json ]]\n",
    );
    write(&root, "addons/alpha.yaml", &entry("alpha", true));
    write(&root, "addons/beta.yaml", &entry("beta", false));
    root
}

fn new(env: &Env, dir: &str, set: &[&str]) -> crate::support::Output {
    let bp = blueprint(env);
    let mut cmd = env.scaffold();
    cmd.args(["new", dir, "--defaults", "-q", "--blueprint"])
        .arg(&bp);
    for s in set {
        cmd.args(["--set", s]);
    }
    run(&mut cmd)
}

/// A repo made from the environments blueprint with `set`, for other areas' tests.
pub fn repo(env: &Env, dir: &str, set: &[&str]) -> PathBuf {
    let out = new(env, dir, set);
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(dir)
}

fn read(env: &Env, path: &str) -> String {
    std::fs::read_to_string(env.path(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn each_environment_renders_its_own_answers_and_addons() {
    let env = Env::new();
    let out = new(
        &env,
        "p",
        &[
            "environments=dev,staging,prod",
            "region=us-east-1",
            "prod.region=eu-central-1",
            "dev.addons=alpha,beta",
            "prod.addons=beta",
            "staging.addons=",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(read(&env, "p/README.md"), "p: dev,staging,prod\n");
    assert_eq!(
        read(&env, "p/clusters/dev/cluster.yaml"),
        "name: dev.p.example.com\nregion: us-east-1\naddons: alpha,beta\n"
    );
    assert_eq!(
        read(&env, "p/clusters/staging/cluster.yaml"),
        "name: staging.p.example.com\nregion: us-east-1\naddons: \n"
    );
    assert_eq!(
        read(&env, "p/clusters/prod/cluster.yaml"),
        "name: prod.p.example.com\nregion: eu-central-1\naddons: beta\n"
    );
    // Per-addon trees: once for every addon some environment runs.
    assert_eq!(
        read(&env, "p/infrastructure/alpha/release.yaml"),
        "chart: alpha\n"
    );
    assert_eq!(
        read(&env, "p/infrastructure/beta/release.yaml"),
        "chart: beta\n"
    );
    // Per addon and environment: only where the environment runs it.
    assert_eq!(
        read(&env, "p/environments/prod/beta.yaml"),
        "beta in prod (eu-central-1)\n"
    );
    assert!(env.path("p/environments/dev/alpha.yaml").exists());
    assert!(!env.path("p/environments/prod/alpha.yaml").exists());
    assert!(!env.path("p/environments/staging").exists());
    // The record: shared answers once, each environment's own under its name.
    let record = answers(&env.path("p"));
    assert_eq!(record["answers"]["environments"][2], "prod");
    assert!(record["answers"].get("region").is_none(), "{record:?}");
    assert_eq!(record["environments"]["prod"]["region"], "eu-central-1");
    assert_eq!(record["environments"]["dev"]["region"], "us-east-1");
    assert_eq!(record["environments"]["dev"]["addons"][1], "beta");
    assert_eq!(record["environments"]["staging"]["environment"], "staging");
}

#[test]
fn one_environment_stays_the_default() {
    let env = Env::new();
    let out = new(&env, "solo", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&env, "solo/clusters/prod/cluster.yaml"),
        "name: prod.solo.example.com\nregion: eu-west-1\naddons: alpha\n"
    );
}

#[test]
fn answers_for_one_environment_are_checked() {
    let env = Env::new();
    for (set, says) in [
        (
            &["environments=dev,prod", "qa.region=x"][..],
            "`qa` is not an environment of this repo (environments: dev, prod)",
        ),
        (
            &["environments=dev,prod", "prod.name=x"][..],
            "`name` is shared by every environment; set it without `prod.`",
        ),
        (
            &["environments=dev,prod", "prod.regoin=x"][..],
            "`regoin` is not a question of the blueprint (did you mean `region`?)",
        ),
        (
            &["environments=dev,prod", "prod.addons=gamma"][..],
            "environment `prod`:",
        ),
        (
            &["environments=dev,region"][..],
            "`region` is the name of a question",
        ),
        // Environments are answered on every core; the first refused in the list's order
        // (not the alphabet's, nor the first to finish) is the one named.
        (
            &[
                "environments=dev,staging,prod",
                "prod.addons=gamma",
                "staging.addons=delta",
            ][..],
            "environment `staging`:",
        ),
    ] {
        let out = new(&env, "refused", set);
        assert_eq!(out.code, 2, "{set:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{set:?}: {}", out.stderr);
        assert!(!env.path("refused").exists(), "{set:?}");
    }
}

fn in_repo(env: &Env, dir: &str, args: &[&str]) -> crate::support::Output {
    run(env.scaffold().current_dir(env.path(dir)).args(args))
}

#[test]
fn addons_are_added_and_removed_per_environment() {
    let env = Env::new();
    let out = new(&env, "p", &["environments=dev,prod", "prod.addons=beta"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let head = |env: &Env| env.git(&env.path("p"), &["log", "-1", "--format=%s"]);

    let out = in_repo(&env, "p", &["add-addon", "alpha", "--env", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(head(&env).trim(), "scaffold: add addon alpha 1.0.0 in prod");
    assert!(env.path("p/environments/prod/alpha.yaml").exists());
    assert_eq!(
        read(&env, "p/clusters/prod/cluster.yaml"),
        "name: prod.p.example.com\nregion: eu-west-1\naddons: alpha,beta\n"
    );

    let out = in_repo(&env, "p", &["remove-addon", "beta", "--env", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env).trim(),
        "scaffold: remove addon beta 1.0.0 in prod"
    );
    // No environment runs beta now: its base goes too.
    assert!(!env.path("p/environments/prod/beta.yaml").exists());
    assert!(!env.path("p/infrastructure/beta").exists());

    // Without --env: every environment that lacks it.
    let out = in_repo(&env, "p", &["add-addon", "beta"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env).trim(),
        "scaffold: add addon beta 1.0.0 in dev, prod"
    );
    assert!(env.path("p/environments/dev/beta.yaml").exists());
    assert!(env.path("p/environments/prod/beta.yaml").exists());
    let out = in_repo(&env, "p", &["add-addon", "beta"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("already in this repo"),
        "{}",
        out.stdout
    );

    let before = head(&env);
    let out = in_repo(&env, "p", &["add-addon", "alpha", "--env", "qa"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--env qa: not an environment of this repo; its environments: dev, prod"),
        "{}",
        out.stderr
    );
    assert_eq!(head(&env), before);
    assert_eq!(env.git(&env.path("p"), &["status", "--porcelain"]), "");
    let out = in_repo(&env, "p", &["update", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

#[test]
fn an_unknown_environment_is_refused_with_the_repos_own() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "one", "--defaults", "-q", "--set", "dns_zone="]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let head = env.git(&env.path("one"), &["rev-parse", "HEAD"]);
    let out = in_repo(&env, "one", &["add-addon", "velero", "--env", "prd"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "--env prd: not an environment of this repo (did you mean `prod`?); its environments: prod"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&env.path("one"), &["rev-parse", "HEAD"]), head);
}

#[test]
fn env_add_copies_answers_but_not_names_and_env_remove_refuses_first() {
    let env = Env::new();
    let out = new(
        &env,
        "p",
        &["environments=prod", "region=us-east-1", "prod.addons=beta"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let head = |env: &Env| env.git(&env.path("p"), &["log", "-1", "--format=%s"]);

    let out = in_repo(&env, "p", &["env", "add", "staging", "--from", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env).trim(),
        "scaffold: add environment staging from prod"
    );
    // Its addons and region come from prod; its cluster name is its own.
    assert_eq!(
        read(&env, "p/clusters/staging/cluster.yaml"),
        "name: staging.p.example.com\nregion: us-east-1\naddons: beta\n"
    );
    assert_eq!(read(&env, "p/README.md"), "p: prod,staging\n");

    let out = in_repo(
        &env,
        "p",
        &["env", "add", "dev", "--set", "region=ap-south-1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&env, "p/clusters/dev/cluster.yaml"),
        "name: dev.p.example.com\nregion: ap-south-1\naddons: alpha\n"
    );
    let record = answers(&env.path("p"));
    assert_eq!(record["environments"]["dev"]["region"], "ap-south-1");

    let before = head(&env);
    for (args, code, says) in [
        (
            &["env", "add", "prod"][..],
            2,
            "prod is an environment of this repo already",
        ),
        (
            &["env", "add", "qa", "--from", "prd"][..],
            2,
            "--from prd: not an environment of this repo (did you mean `prod`?)",
        ),
        (
            &["env", "remove", "staging"][..],
            3,
            "tear those down first: kops delete cluster --name staging.p.example.com --yes, then run `scaffold env remove staging --force`",
        ),
    ] {
        let out = in_repo(&env, "p", args);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
        assert_eq!(head(&env), before, "{args:?}");
        assert_eq!(env.git(&env.path("p"), &["status", "--porcelain"]), "");
    }

    let out = in_repo(&env, "p", &["env", "remove", "staging", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(head(&env).trim(), "scaffold: remove environment staging");
    assert!(!env.path("p/clusters/staging").exists());
    assert!(!env.path("p/environments/staging").exists());
    assert_eq!(read(&env, "p/README.md"), "p: prod,dev\n");
    let record = answers(&env.path("p"));
    assert!(record["environments"].get("staging").is_none());
    let out = in_repo(&env, "p", &["update", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

#[test]
fn promote_moves_versions_and_values_as_one_commit() {
    let env = Env::new();
    let dir = repo(&env, "p", &["environments=dev,prod", "addons=alpha,beta"]);
    let head = |env: &Env| env.git(&env.path("p"), &["log", "-1", "--format=%B"]);
    let promote = |args: &[&str]| {
        let mut all = vec!["promote", "--from", "dev", "--to", "prod"];
        all.extend_from_slice(args);
        in_repo(&env, "p", &all)
    };

    let out = promote(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("nothing to do"), "{}", out.stdout);

    // dev moves ahead: a new version of alpha and a value of beta, in dev only.
    for args in [
        &["add-addon", "alpha", "--env", "dev", "--version", "1.1.0"][..],
        &[
            "add-addon",
            "beta",
            "--env",
            "dev",
            "--helm-set",
            "replicas=2",
        ][..],
    ] {
        let out = in_repo(&env, "p", args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    assert_eq!(
        read(&env, "p/environments/dev/alpha-release.yaml"),
        "version: 1.1.0\nvalues: {}\n"
    );
    assert_eq!(
        read(&env, "p/environments/prod/alpha-release.yaml"),
        "version: 1.0.0\nvalues: {}\n"
    );
    assert_eq!(
        read(&env, "p/environments/dev/beta-release.yaml"),
        "version: 1.0.0\nvalues: {\"replicas\":2}\n"
    );

    // One addon named: only it moves.
    let out = promote(&["alpha"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env).trim(),
        "scaffold: promote dev → prod\n\n- alpha 1.0.0 → 1.1.0"
    );
    assert_eq!(
        read(&env, "p/environments/prod/alpha-release.yaml"),
        "version: 1.1.0\nvalues: {}\n"
    );
    assert_eq!(
        read(&env, "p/environments/prod/beta-release.yaml"),
        "version: 1.0.0\nvalues: {}\n"
    );

    // The rest.
    let out = promote(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        head(&env).trim(),
        "scaffold: promote dev → prod\n\n- beta values moved: replicas"
    );
    assert_eq!(
        read(&env, "p/environments/prod/beta-release.yaml"),
        "version: 1.0.0\nvalues: {\"replicas\":2}\n"
    );
    let before = head(&env);
    let out = promote(&[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("nothing to do"), "{}", out.stdout);
    assert_eq!(head(&env), before);

    // A copy starts where its source is: beta's values come along.
    let out = in_repo(&env, "p", &["env", "add", "qa", "--from", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&env, "p/environments/qa/beta-release.yaml"),
        "version: 1.0.0\nvalues: {\"replicas\":2}\n"
    );
    let out = in_repo(&env, "p", &["env", "remove", "qa", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        answers(&env.path("p"))["environment_addon_settings"]
            .get("qa")
            .is_none()
    );

    let out = promote(&["--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(report["command"], "promote");
    assert_eq!(report["addon"], "alpha,beta");
    assert_eq!(report["changes"], serde_json::json!([]));
    assert_eq!(report["commit"], serde_json::Value::Null);

    let out = promote(&["gamma"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("gamma is not in dev"), "{}", out.stderr);
    let out = in_repo(&env, "p", &["promote", "--from", "dev", "--to", "qa"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--from/--to qa: not an environment of this repo"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let out = in_repo(&env, "p", &["update", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("already up to date"), "{}", out.stdout);
}

#[test]
fn update_changes_one_environment_and_names_it() {
    let env = Env::new();
    let dir = repo(&env, "p", &["environments=dev,prod"]);
    let out = in_repo(&env, "p", &["update", "--set", "prod.region=us-east-1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("(prod.region)"), "{}", out.stdout);
    let message = env.git(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("- prod.region: eu-west-1 → us-east-1"),
        "{message}"
    );
    assert_eq!(
        read(&env, "p/clusters/prod/cluster.yaml"),
        "name: prod.p.example.com\nregion: us-east-1\naddons: alpha\n"
    );
    let changed = env.git(&dir, &["show", "--name-only", "--format=", "HEAD"]);
    let mut changed: Vec<&str> = changed.lines().collect();
    changed.sort();
    assert_eq!(
        changed,
        [
            ".scaffold/answers.yaml",
            ".scaffold/rendering",
            "clusters/prod/cluster.yaml",
            "environments/prod/alpha.yaml"
        ]
    );
}

#[test]
fn a_per_environment_answer_without_default_is_given_per_environment() {
    let env = Env::new();
    let bp = blueprint_with(
        &env,
        "  - key: owner\n    prompt: Owner\n    type: string\n    per_environment: true\n",
    );
    let new = |dir: &str, set: &[&str]| {
        let mut cmd = env.scaffold();
        cmd.args(["new", dir, "--defaults", "-q", "--blueprint"])
            .arg(&bp);
        for s in set {
            cmd.args(["--set", s]);
        }
        run(&mut cmd)
    };
    let out = new("p", &["environments=dev,prod", "dev.owner=ann"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("environment `prod`: missing answer `owner`"),
        "{}",
        out.stderr
    );
    let out = new(
        "p",
        &["environments=dev,prod", "dev.owner=ann", "prod.owner=bob"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let record = answers(&env.path("p"));
    assert_eq!(record["environments"]["dev"]["owner"], "ann");
    assert_eq!(record["environments"]["prod"]["owner"], "bob");
    assert!(record["answers"].get("owner").is_none(), "{record:?}");
}

#[test]
fn lint_warns_of_an_environment_file_whose_path_does_not_name_it() {
    let env = Env::new();
    let bp = blueprint(&env);
    write(&bp, "env-files/shared.txt", "same everywhere\n");
    let out = run(env.scaffold().args(["blueprint", "lint"]).arg(&bp));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("env-files/shared.txt:1:1: warning: renders once per environment to a path that does not name `environment`"),
        "{said}"
    );
    let out = new(&env, "p", &["environments=dev,prod"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("renders `shared.txt`, which `env-files/shared.txt` renders too"),
        "{}",
        out.stderr
    );
}

/// Environments render on every core, each into a plan of its own; a blueprint that fails
/// still reports the error a serial run meets first: `dev`'s file clashes with the repo's
/// before `staging`'s template fails (lint renders `prod` alone, which meets neither).
#[test]
fn the_first_failing_environment_is_reported_when_a_later_one_fails_too() {
    let env = Env::new();
    let bp = blueprint(&env);
    write(&bp, "files/clusters/dev/cluster.yaml", "the repo's own\n");
    write(
        &bp,
        "env-files/notes-[[ environment ]].txt.tera",
        "[% if environment == \"staging\" %][[ region.misspelt | to_json ]][% endif %]notes\n",
    );
    let out = new(&env, "p", &["environments=dev,staging"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "renders `clusters/dev/cluster.yaml`, which `files/clusters/dev/cluster.yaml` renders too"
        ),
        "{}",
        out.stderr
    );
    assert!(!env.path("p").exists());
    // Alone, staging's template is what fails.
    let out = new(&env, "q", &["environments=staging"]);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.contains("the value is undefined"),
        "{}",
        out.stderr
    );
}

/// A repo made by default 0.2.1 (one environment, roots at the top) moves to the
/// environments layout through `update`: hand edits and the user's own files follow their
/// directory, the environment keeps its name (so its state and cluster stay), what git does
/// not track is named, and `env add` and `check` work on the result.
#[test]
fn a_single_environment_repo_migrates_through_update() {
    let env = Env::new();
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/old-blueprints/default-0.2.1"
    );
    let out = run(env
        .scaffold()
        .args(["new", "old", "--defaults", "-q", "--blueprint", old]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("old");
    let append = |path: &str, text: &str| {
        let mut was = std::fs::read_to_string(dir.join(path)).expect(path);
        was.push_str(text);
        std::fs::write(dir.join(path), was).expect(path);
    };
    append("1-prerequisites/main.tf", "# mine\n");
    append(
        "infrastructure/karpenter/node-pool.yaml",
        "# tuned by hand\n",
    );
    write(
        &dir,
        "1-prerequisites/extra.tf",
        "locals {\n  extra = true\n}\n",
    );
    env.git(&dir, &["add", "-A"]);
    env.git(&dir, &["commit", "-qm", "hand edits"]);
    write(&dir, "1-prerequisites/.terraform/terraform.tfstate", "{}\n");

    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["update", "--blueprint", "default"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("1-prerequisites/: .terraform git does not track stay there"),
        "{}",
        out.stderr
    );
    let read = |path: &str| std::fs::read_to_string(dir.join(path)).expect(path);
    assert!(read("envs/prod/1-prerequisites/main.tf").ends_with("# mine\n"));
    assert_eq!(
        read("envs/prod/1-prerequisites/extra.tf"),
        "locals {\n  extra = true\n}\n"
    );
    assert!(
        read("environments/prod/infrastructure/karpenter/node-pool.yaml")
            .ends_with("# tuned by hand\n")
    );
    for gone in [
        "1-prerequisites/main.tf",
        "1-prerequisites/extra.tf",
        "2-kops/values.yaml",
        "infrastructure/karpenter/node-pool.yaml",
    ] {
        assert!(!dir.join(gone).exists(), "{gone} is still there");
    }
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let message = env.git(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.contains("scaffold: update default 0.2.1 → 0.5.0")
            && message.contains("- moved 1-prerequisites/ → envs/prod/1-prerequisites/"),
        "{message}"
    );
    let record = crate::support::answers(&dir);
    assert_eq!(record["answers"]["environments"][0], "prod");
    assert_eq!(
        record["environments"]["prod"]["cluster_name"],
        "prod.old.example.com"
    );
    // The state key in the environment's own bucket is the one the repo always had.
    assert!(
        read("envs/prod/1-prerequisites/versions.tf")
            .contains("key          = \"1-prerequisites/terraform.tfstate\"")
    );
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);

    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["env", "add", "dev", "--from", "prod", "-q"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(dir.join("envs/dev/2-kops/values.yaml").is_file());
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// In a default repo of dev and prod, what dev's overlay holds now (a chart version and a
/// value Renovate or a hand edit changed in the file, not in the record) is what `promote`
/// moves to prod, as one commit that says so; then there is nothing left to promote.
#[test]
fn promote_moves_what_the_overlay_file_holds_now() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,prod",
        "--set",
        "addons=metrics-server",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let dev = "environments/dev/infrastructure/addons/metrics-server/release.yaml";
    let prod = "environments/prod/infrastructure/addons/metrics-server/release.yaml";
    let text = std::fs::read_to_string(dir.join(dev)).expect("dev overlay");
    let bumped = text
        .replace("version: \"3.13.1\"", "version: \"3.13.2\"")
        .replace("  replicas: 2\n", "  replicas: 3\n");
    assert_ne!(bumped, text);
    std::fs::write(dir.join(dev), bumped).expect("write");
    env.git(
        &dir,
        &[
            "commit",
            "-qam",
            "chore(deps): update metrics-server to 3.13.2",
        ],
    );

    let out = in_repo(&env, "p", &["promote", "--from", "dev", "--to", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let message = env.git(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("scaffold: promote dev → prod")
            && message.contains("- metrics-server 3.13.1 → 3.13.2")
            && message.contains("- metrics-server values moved: replicas"),
        "{message}"
    );
    let promoted = std::fs::read_to_string(dir.join(prod)).expect("prod overlay");
    assert!(
        promoted.contains("version: \"3.13.2\"") && promoted.contains("  replicas: 3\n"),
        "{promoted}"
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let out = in_repo(&env, "p", &["promote", "--from", "dev", "--to", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("nothing to do"), "{}", out.stdout);
}

/// Two environments may not share a cluster name or a DNS zone in the default blueprint
/// (`distinct`); a zone given for all is refused at the second environment, naming both.
#[test]
fn two_environments_may_not_share_a_dns_zone() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,prod",
        "--set",
        "dns_zone=platform.example.org",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: prod.dns_zone: `platform.example.org` is dev's too; each environment needs its own dns_zone (--set prod.dns_zone=…)\n"
    );
    assert!(!env.path("p").exists());
    // Gossip clusters (no zone) are fine, and get names of their own.
    let out = run(env.scaffold().args([
        "new",
        "g",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,prod",
        "--set",
        "dns_zone=",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// In a default repo, `env remove` refuses in one line that says what to tear down, in
/// order, with that environment's paths and cluster; `--force` removes its files and the
/// rest still checks.
#[test]
fn env_remove_in_a_default_repo_names_the_teardown_in_one_line() {
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
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = in_repo(&env, "p", &["env", "remove", "dev"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    for step in [
        "in cluster k8s.dev.p.example.com",
        "`make -C envs/dev/3-bridge destroy`",
        "`make -C envs/dev/2-kops destroy cluster-destroy-yes`",
        "`make -C envs/dev/1-prerequisites state-local`",
        "then run `scaffold env remove dev --force`",
    ] {
        assert!(out.stderr.contains(step), "{step}: {}", out.stderr);
    }
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
    let out = in_repo(&env, "p", &["env", "remove", "dev", "--force", "-q"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for gone in ["envs/dev", "clusters/dev", "environments/dev", "apps/dev"] {
        assert!(!dir.join(gone).exists(), "{gone}");
    }
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Issue 40: default 0.3.0 rendered the first environment's values into files every
/// environment shares: in a `prod,dev` repo running authentik and metrics-server only in
/// dev, authentik's ExternalSecret read `<name>/prod/platform/authentik` (prod's secret,
/// which dev's store may not read) and istio's Gateway took an HPA in prod, which runs no
/// metrics-server. `update` to 0.5.0 takes each environment's value from its own
/// cluster-vars, and `check` (which finds the old key) passes. Today's lint refuses 0.3.0
/// for `new`, so the repo is made with 0.2.1 and updated to 0.3.0 first, as users did.
#[test]
fn shared_files_carry_no_environment_value_after_update_from_0_3_0() {
    let env = Env::new();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/old-blueprints/");
    let (v021, v030) = (
        format!("{root}default-0.2.1"),
        format!("{root}default-0.3.0"),
    );
    let out = run(env
        .scaffold()
        .args(["new", "two", "--defaults", "-q", "--set", "addons=istio"])
        .args(["--blueprint", &v021]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("two");
    let scaffold = |args: &[&str]| {
        let out = run(env.scaffold().current_dir(&dir).args(args));
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    };
    scaffold(&["update", "--blueprint", &v030]);
    scaffold(&[
        "env",
        "add",
        "dev",
        "--from",
        "prod",
        "-q",
        "--blueprint",
        &v030,
    ]);
    for addon in ["authentik", "metrics-server"] {
        scaffold(&["add-addon", addon, "--env", "dev", "--blueprint", &v030]);
    }
    let read = |path: &str| std::fs::read_to_string(dir.join(path)).expect(path);
    let secret = "infrastructure/addons-config/authentik/configs.yaml";
    let gateway = "infrastructure/addons-config/istio/configs.yaml";
    // What 0.3.0 wrote: prod's name in dev's secret key, dev's HPA for prod's Gateway.
    assert!(read(secret).contains("key: two/prod/platform/authentik"));
    assert!(read(gateway).contains("horizontalPodAutoscaler"));
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("[environment.secret-key] (dev)"),
        "{}",
        out.stdout
    );

    scaffold(&["update", "--blueprint", "default"]);
    assert!(
        read(secret).contains("key: ${PLATFORM_SECRETS_PREFIX}/authentik"),
        "{}",
        read(secret)
    );
    assert!(read(gateway).contains("name: platform-gateway-${ISTIO_GATEWAY_SCALING}"));
    let vars = |name: &str| read(&format!("envs/{name}/3-bridge/cluster-vars.tf"));
    assert!(vars("prod").contains("PLATFORM_SECRETS_PREFIX    = \"two/prod/platform\""));
    assert!(vars("dev").contains("PLATFORM_SECRETS_PREFIX    = \"two/dev/platform\""));
    assert!(vars("dev").contains("ISTIO_GATEWAY_SCALING      = \"autoscaled\""));
    assert!(vars("prod").contains("ISTIO_GATEWAY_SCALING      = \"fixed\""));
    assert!(vars("dev").contains("PLATFORM_SECRET_NAMESPACES = \"authentik\""));
    assert!(vars("prod").contains("PLATFORM_SECRET_NAMESPACES = \"\""));
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Issue 40: every AWS name of the default blueprint stays each environment's own for
/// platform names of 37 to 40 characters (a 38-character cut gave every environment the
/// same buckets, a 30-character one the same EventBridge rules), and within AWS's limits.
#[test]
fn aws_names_stay_distinct_and_within_limits_at_every_long_platform_name() {
    let env = Env::new();
    for length in 37..=40 {
        let name = format!("p{}", "x".repeat(length - 1));
        let dir = format!("long{length}");
        let out = run(env.scaffold().args([
            "new",
            &dir,
            "--defaults",
            "-q",
            "--set",
            &format!("name={name}"),
            "--set",
            "environments=dev,devx,prod",
            "--set",
            "dns_zone=",
        ]));
        assert_eq!(out.code, 0, "{length}: {}", out.stderr);
        let mut seen = std::collections::BTreeMap::new();
        for environment in ["dev", "devx", "prod"] {
            let tfvars = read(
                &env,
                &format!("{dir}/envs/{environment}/1-prerequisites/terraform.tfvars"),
            );
            let value = |key: &str| {
                tfvars
                    .lines()
                    .find_map(|l| l.strip_prefix(key)?.trim_start().strip_prefix("= "))
                    .map(|v| v.trim_matches('"').to_string())
                    .unwrap_or_else(|| panic!("{key} in {tfvars}"))
            };
            let (prefix, bucket) = (value("name_prefix"), value("bucket_prefix"));
            // The longest names built on them: a 63-character bucket and a 64-character
            // EventBridge rule and IAM role.
            assert!(bucket.len() + "-kops-state-".len() + 12 <= 63, "{bucket}");
            assert!(
                prefix.len() + "-karpenter-rebalance".len() <= 64,
                "{prefix}"
            );
            assert!(prefix.len() + "-vpc-flow-logs".len() <= 64, "{prefix}");
            for (what, value) in [("prefix", prefix), ("bucket", bucket)] {
                if let Some(first) = seen.insert((what, value.clone()), environment) {
                    panic!("{length}: {first} and {environment} share the {what} {value}");
                }
            }
        }
    }
}

/// A blueprint whose declared AWS names two environments share, or that exceed their
/// limit, is refused with both environments and the resource named, nothing written.
#[test]
fn aws_names_that_collide_or_run_long_are_refused() {
    let env = Env::new();
    let bp = blueprint(&env);
    let manifest = bp.join("blueprint.yaml");
    let base = std::fs::read_to_string(&manifest).expect("manifest");
    let with_names = |names: &str| {
        std::fs::write(&manifest, format!("{base}aws_names:\n{names}")).expect("write");
    };
    with_names(
        "  - {key: bucket, resource: S3 bucket, value: \"[[ name ]]-state\", max_length: 63}\n",
    );
    let out = run(env
        .scaffold()
        .args(["new", "shared", "--defaults", "-q", "--blueprint"])
        .arg(&bp)
        .args(["--set", "environments=dev,prod"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: environments `dev` and `prod` both name their S3 bucket `shared-state`; rename `prod` so its AWS names differ from `dev`'s\n"
    );
    assert!(!env.path("shared").exists());

    with_names(
        "  - {key: role, resource: IAM role, value: \"[[ name ]]-[[ environment ]]-role\", max_length: 20}\n",
    );
    let out = run(env
        .scaffold()
        .args(["new", "toolong", "--defaults", "-q", "--blueprint"])
        .arg(&bp)
        .args(["--set", "environments=dev,production"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("environment `production`: IAM role `toolong-production-role` has 23 characters; AWS takes 1 to 20"),
        "{}",
        out.stderr
    );
    assert!(!env.path("toolong").exists());

    // Templates read the computed names.
    with_names(
        "  - {key: role, resource: IAM role, value: \"[[ (name ~ '-' ~ environment) | aws_name(max=12) ]]\", max_length: 12}\n",
    );
    write(
        &bp,
        "env-files/clusters/[[ environment ]]/names.txt.tera",
        "[[ aws_names.role ]]\n",
    );
    let out = run(env
        .scaffold()
        .args(["new", "hashed", "--defaults", "-q", "--blueprint"])
        .arg(&bp)
        .args(["--set", "environments=staging,prod"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        read(&env, "hashed/clusters/prod/names.txt"),
        "hashed-prod\n"
    );
    let staging = read(&env, "hashed/clusters/staging/names.txt");
    assert!(
        staging.starts_with("hashe-") && staging.trim().len() == 12,
        "{staging}"
    );
}

/// Issue 40, the layout's smaller items: each environment gets its own default VPC range
/// (an environment added later too), the ignore files name envs/<environment>/, and a
/// zone inside another environment's zone is refused.
#[test]
fn default_repo_environments_get_own_ranges_ignores_and_unnested_zones() {
    let env = Env::new();
    let default_new = |dir: &str, set: &[&str]| {
        let mut cmd = env.scaffold();
        cmd.args(["new", dir, "--defaults", "-q"]);
        for s in set {
            cmd.args(["--set", s]);
        }
        run(&mut cmd)
    };
    let out = default_new("r", &["environments=dev,staging,prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cidr = |e: &str| {
        read(
            &env,
            &format!("r/envs/{e}/1-prerequisites/terraform.tfvars"),
        )
        .lines()
        .find(|l| l.starts_with("vpc_cidr"))
        .map(str::to_string)
        .unwrap_or_default()
    };
    assert_eq!(cidr("dev"), "vpc_cidr = \"10.0.0.0/16\"");
    assert_eq!(cidr("staging"), "vpc_cidr = \"10.1.0.0/16\"");
    assert_eq!(cidr("prod"), "vpc_cidr = \"10.2.0.0/16\"");
    let out = in_repo(&env, "r", &["env", "add", "qa", "--from", "dev"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(cidr("qa"), "vpc_cidr = \"10.3.0.0/16\"");

    // What the Makefiles write at run time stays out of git, in every environment.
    let repo = env.path("r");
    let written = [
        "envs/dev/2-kops/tf-outputs.json",
        "envs/prod/2-kops/cluster.yaml",
        "envs/prod/2-kops/cluster.live.yaml",
        "envs/qa/2-kops/kops-tf/kubernetes.tf",
        "envs/staging/2-kops/kubeconfig",
    ];
    for path in written {
        let full = repo.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(&full, "x").expect("write");
    }
    let status = env.git(&repo, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status.trim(), "", "not ignored");
    let sourceignore = read(&env, "r/.sourceignore");
    assert!(
        sourceignore.lines().any(|l| l == "/envs/"),
        "{sourceignore}"
    );

    // A zone inside another environment's: warned, with what to do (nothing delegates it).
    // (Without -q: a warning is a note.)
    let out = run(env.scaffold().args([
        "new",
        "nested",
        "--defaults",
        "--set",
        "environments=dev,prod",
        "--set",
        "prod.dns_zone=example.org",
        "--set",
        "dev.dns_zone=dev.example.org",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("dev.dns_zone: `dev.example.org` lies inside prod's `example.org`: nothing delegates it, so add dev's NS records to `example.org` by hand, and tear dev down before prod"),
        "{}",
        out.stderr
    );
}

/// Issue 40: two environments in one existing VPC are refused with the reason (the
/// subnet tags they need are not per cluster), by `new` and by `env add --from`.
#[test]
fn two_environments_may_not_share_an_existing_vpc() {
    let env = Env::new();
    let existing = [
        "vpc_mode=existing",
        "vpc_id=vpc-0123456789abcdef0",
        "zones=eu-west-1a",
        "private_subnet_ids=eu-west-1a=subnet-01234567",
        "utility_subnet_ids=eu-west-1a=subnet-01234568",
        "nat_gateway_ids=eu-west-1a=nat-01234567",
        "dns_zone=",
    ];
    let mut cmd = env.scaffold();
    cmd.args([
        "new",
        "two",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,prod",
    ]);
    for s in existing {
        cmd.args(["--set", s]);
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "error: prod.vpc_id: `vpc-0123456789abcdef0` is dev's too: the subnet tags"
        ) && out
            .stderr
            .contains("one environment's teardown would strip them"),
        "{}",
        out.stderr
    );
    let mut cmd = env.scaffold();
    cmd.args([
        "new",
        "one",
        "--defaults",
        "-q",
        "--set",
        "environments=staging",
    ]);
    for s in existing {
        cmd.args(["--set", s]);
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // (A one-environment gossip repo's cluster name is not the default once there are
    // two, so it is given.)
    let out = in_repo(
        &env,
        "one",
        &[
            "env",
            "add",
            "prod",
            "--from",
            "staging",
            "--set",
            "cluster_name=one-prod.k8s.local",
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("prod.vpc_id: `vpc-0123456789abcdef0` is staging's too"),
        "{}",
        out.stderr
    );
    assert!(!env.path("one/envs/prod").exists());
}

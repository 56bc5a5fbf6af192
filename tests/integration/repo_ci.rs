//! The generated repo keeps itself healthy: its GitHub workflow runs `make validate`
//! with actions pinned to upstream commits, its Makefile checks what CI checks, and its
//! Renovate config is valid and finds every version it is meant to update.
use std::path::Path;
use std::process::Command;

use crate::support::{Env, require_tool, run};

/// Actions the workflow may use: the commit of each release tag, read from the upstream
/// repositories (docs/platform-design.md, "Generated CI").
const ACTIONS: &[(&str, &str, &str)] = &[
    (
        "actions/checkout",
        "3d3c42e5aac5ba805825da76410c181273ba90b1",
        "v7.0.1",
    ),
    (
        "hashicorp/setup-terraform",
        "dfe3c3f87815947d99a8997f908cb6525fc44e9e",
        "v4.0.1",
    ),
    (
        "github/codeql-action/upload-sarif",
        "8aad20d150bbac5944a9f9d289da16a4b0d87c1e",
        "v4.36.2",
    ),
    (
        "actions/upload-artifact",
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "v7.0.0",
    ),
    (
        "actions/download-artifact",
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "v8.0.1",
    ),
];

fn repo(env: &Env, name: &str, addons: &str) -> std::path::PathBuf {
    let out = run(env
        .scaffold()
        .args(["new", name, "--defaults", "--set"])
        .arg(format!("addons={addons}")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

/// Where the tests' repos say scaffold is released (the `scaffold_home` answer).
const SCAFFOLD_HOME: &str = "https://github.com/acme/scaffold";

/// A repo that knows scaffold's home: Renovate proposes its releases and the
/// scaffold-update workflow is generated.
fn repo_with_home(env: &Env, name: &str) -> std::path::PathBuf {
    let out = run(env
        .scaffold()
        .args([
            "new",
            name,
            "--defaults",
            "--set",
            "addons=reloader",
            "--set",
        ])
        .arg(format!("scaffold_home={SCAFFOLD_HOME}")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

fn all_addons(env: &Env) -> String {
    let out = run(env.scaffold().args(["list", "addons", "--json"]));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).expect("json");
    rows.iter()
        .filter(|r| r["always"] == false)
        .filter_map(|r| r["name"].as_str().map(String::from))
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn workflow_runs_make_validate_with_pinned_actions_and_no_secrets() {
    let env = Env::new();
    let dir = repo(&env, "w", "reloader");
    let text =
        std::fs::read_to_string(dir.join(".github/workflows/validate.yml")).expect("workflow");
    let workflow: serde_norway::Value = serde_norway::from_str(&text).expect("workflow is YAML");
    assert!(
        workflow["on"].get("pull_request").is_some(),
        "runs on pull requests"
    );
    assert_eq!(workflow["permissions"]["contents"], "read");
    assert!(
        !text.contains("secrets."),
        "the workflow must need no secrets"
    );

    let steps = workflow["jobs"]["validate"]["steps"]
        .as_sequence()
        .expect("steps");
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(runs.contains(&"make validate"), "{runs:?}");
    assert!(
        !text.contains("pull_request_target"),
        "a pull request's code never runs with a writing token"
    );
    let jobs = workflow["jobs"].as_mapping().expect("jobs");
    for (name, job) in jobs {
        let name = name.as_str().expect("job name");
        // Only the job that posts the diff may write pull requests, and it runs no
        // code of the pull request (no checkout).
        let writes_prs = job["permissions"]["pull-requests"] == "write";
        assert_eq!(
            writes_prs,
            name == "comment",
            "{name}: pull-requests permission"
        );
        let steps = job["steps"].as_sequence().expect("steps");
        if writes_prs {
            assert!(
                steps.iter().all(|s| s["uses"]
                    .as_str()
                    .is_none_or(|u| !u.starts_with("actions/checkout"))),
                "{name} checks nothing out"
            );
        }
        assert_pinned_actions(&text, steps);
    }
    assert!(
        jobs.contains_key("diff") && jobs.contains_key("comment"),
        "the pull-request diff jobs"
    );
}

/// Every action a workflow's steps use is one of [`ACTIONS`], at its commit, with its tag
/// as the comment.
fn assert_pinned_actions(text: &str, steps: &[serde_norway::Value]) {
    for action in steps.iter().filter_map(|s| s["uses"].as_str()) {
        let (action_name, commit) = action.split_once('@').expect("pinned");
        let (_, pinned, tag) = ACTIONS
            .iter()
            .find(|(known, _, _)| *known == action_name)
            .unwrap_or_else(|| panic!("{action_name} is not a recorded action"));
        assert_eq!(
            commit, *pinned,
            "{action_name} is pinned to its {tag} commit"
        );
        assert!(
            text.contains(&format!("uses: {action} # {tag}\n")),
            "{action_name}: the tag comment must say {tag}"
        );
    }
}

/// The scaffold-update workflow exists only where the repo names scaffold's home; only
/// its `push` job may write, and that job runs nothing of the pull request: git alone
/// reads what `prepare` (read-only) made.
#[test]
fn scaffold_update_workflow_writes_only_from_a_job_that_runs_no_pull_request_code() {
    let env = Env::new();
    let homeless = repo(&env, "homeless", "reloader");
    assert!(
        !homeless
            .join(".github/workflows/scaffold-update.yml")
            .exists(),
        "no scaffold_home, no upgrade workflow"
    );
    let dir = repo_with_home(&env, "u");
    let text = std::fs::read_to_string(dir.join(".github/workflows/scaffold-update.yml"))
        .expect("workflow");
    let workflow: serde_norway::Value = serde_norway::from_str(&text).expect("YAML");
    for trigger in ["pull_request", "schedule", "workflow_dispatch"] {
        assert!(workflow["on"].get(trigger).is_some(), "runs on {trigger}");
    }
    assert_eq!(workflow["on"]["pull_request"]["paths"][0], "Makefile");
    assert!(!text.contains("pull_request_target"));
    assert_eq!(
        workflow["permissions"],
        serde_norway::Value::Mapping(Default::default()),
        "nothing granted workflow-wide"
    );
    let jobs = workflow["jobs"].as_mapping().expect("jobs");
    for (name, job) in jobs {
        let name = name.as_str().expect("job name");
        let writes = job["permissions"]["contents"] == "write";
        assert_eq!(writes, name == "push", "{name}: contents permission");
        let steps = job["steps"].as_sequence().expect("steps");
        assert_pinned_actions(&text, steps);
        for step in steps {
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout"))
            {
                assert_eq!(step["with"]["persist-credentials"], false, "{name}");
            }
            let script = step["run"].as_str().unwrap_or_default();
            assert!(
                !script.contains("${{"),
                "{name}: expressions go through env"
            );
            if writes {
                for code in ["make ", "scaffold update --", ".tools/"] {
                    assert!(!script.contains(code), "{name} runs {code}");
                }
            }
        }
    }
}

/// The `run` script of the step `step` of job `job` in a generated workflow.
fn step_script(workflow: &serde_norway::Value, job: &str, step: &str) -> String {
    workflow["jobs"][job]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .find(|s| s["name"] == step)
        .and_then(|s| s["run"].as_str())
        .unwrap_or_else(|| panic!("{job}: no step {step}"))
        .to_string()
}

/// Runs a workflow step's script as GitHub's runner does (`bash -eo pipefail`), with the
/// test's hermetic git configuration and the step's `env`.
fn run_step(env: &Env, dir: &Path, script: &str, vars: &[(&str, &Path)]) -> crate::support::Output {
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("HOME", env.home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GITHUB_REPOSITORY", "acme/platform")
        .env("GH_TOKEN", "read-only")
        .env("TOKEN", "writer");
    for (name, value) in vars {
        cmd.env(name, value);
    }
    run(&mut cmd)
}

/// One pull request through the workflow's `prepare` and `push` scripts: a branch of
/// `origin` whose commit `edit` makes, `scaffold update` run there (a stand-in for the
/// new release: the real binary, with an answer changed as a newer blueprint would change
/// the rendering), its bundle fetched into a fresh shallow clone and pushed. Returns the
/// runner's temporary directory (`update/`: the bundle, update.json, conflicts.txt).
fn update_pull_request(
    env: &Env,
    workflow: &serde_norway::Value,
    branch: &str,
    edit: impl Fn(&Path),
) -> std::path::PathBuf {
    let case = branch.replace('/', "-");
    let checkout = env.path(&format!("pr-{case}"));
    env.git(
        env.work.path(),
        &["clone", "-q", "--branch", "main", "origin.git", &case],
    );
    std::fs::rename(env.path(&case), &checkout).expect("rename");
    env.git(&checkout, &["checkout", "-q", "-b", branch]);
    edit(&checkout);
    env.git(
        &checkout,
        &["commit", "-q", "-am", "Update scaffold to 9.9.9"],
    );
    env.git(&checkout, &["push", "-q", "origin", branch]);

    let tools = checkout.join(".tools/bin");
    std::fs::create_dir_all(&tools).expect("mkdir");
    std::fs::write(
        tools.join("scaffold"),
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" --set scaffold_home={SCAFFOLD_HOME}-next\n",
            env!("CARGO_BIN_EXE_scaffold")
        ),
    )
    .expect("write");
    Command::new("chmod")
        .arg("+x")
        .arg(tools.join("scaffold"))
        .status()
        .expect("chmod");
    let runner = env.path(&format!("runner-{case}"));
    std::fs::create_dir(&runner).expect("mkdir");
    let vars: &[(&str, &Path)] = &[("RUNNER_TEMP", &runner), ("BRANCH", Path::new(branch))];
    for step in ["Fetch refs/scaffold/base", "scaffold update"] {
        let out = run_step(
            env,
            &checkout,
            &step_script(workflow, "prepare", step),
            vars,
        );
        assert_eq!(out.code, 0, "{step}: {}{}", out.stdout, out.stderr);
    }
    push_update(env, workflow, branch, &runner, "push")
        .unwrap_or_else(|stderr| panic!("push: {stderr}"));
    runner
}

/// The `push` job's script in a fresh clone of the branch as `origin` has it now.
fn push_update(
    env: &Env,
    workflow: &serde_norway::Value,
    branch: &str,
    runner: &Path,
    clone: &str,
) -> Result<(), String> {
    let origin = format!("file://{}", env.path("origin.git").display());
    let name = format!("{clone}-{}", branch.replace('/', "-"));
    env.git(
        env.work.path(),
        &[
            "clone", "-q", "--depth", "1", "--branch", branch, &origin, &name,
        ],
    );
    let script = step_script(workflow, "push", "Push the update commit");
    let vars: &[(&str, &Path)] = &[("RUNNER_TEMP", runner), ("BRANCH", Path::new(branch))];
    let out = run_step(env, &env.path(&name), &script, vars);
    (out.code == 0).then_some(()).ok_or(out.stderr)
}

/// Upgrades as pull requests, end to end through the generated workflow's own scripts:
/// the update commit lands on the pull request's branch with the pristine base; a
/// conflict is committed as the conflict file and listed; a stale bundle is refused.
#[test]
fn scaffold_update_workflow_commits_the_update_and_its_conflicts_onto_the_branch() {
    if !require_tool("jq") || !require_tool("bash") {
        return;
    }
    let env = Env::new();
    let dir = repo_with_home(&env, "platform");
    let text = std::fs::read_to_string(dir.join(".github/workflows/scaffold-update.yml"))
        .expect("workflow");
    let workflow: serde_norway::Value = serde_norway::from_str(&text).expect("YAML");
    env.git(env.work.path(), &["init", "-q", "--bare", "origin.git"]);
    env.git(&dir, &["remote", "add", "origin", "../origin.git"]);
    env.git(
        &dir,
        &[
            "push",
            "-q",
            "origin",
            "HEAD:refs/heads/main",
            "refs/scaffold/*",
        ],
    );
    let origin = env.path("origin.git");
    let at = |rev: &str| env.git(&origin, &["rev-parse", rev]).trim().to_string();

    // Renovate's change: the pin moves.
    let renovate = |checkout: &Path| {
        let makefile = checkout.join("Makefile");
        let text = std::fs::read_to_string(&makefile).expect("Makefile");
        let pin = format!("SCAFFOLD_VERSION    := {}\n", env!("CARGO_PKG_VERSION"));
        assert!(text.contains(&pin), "the pin");
        std::fs::write(
            &makefile,
            text.replace(&pin, "SCAFFOLD_VERSION    := 9.9.9\n"),
        )
        .expect("write");
    };
    let pr_head = |branch: &str| at(&format!("refs/heads/{branch}"));
    // The branch also edits the line the update changes: committed with markers, listed.
    let edited = |checkout: &Path| {
        renovate(checkout);
        let makefile = checkout.join("Makefile");
        let text = std::fs::read_to_string(&makefile).expect("Makefile");
        let fork = text.replace(
            &format!("?= {SCAFFOLD_HOME}\n"),
            "?= https://github.com/acme/scaffold-fork\n",
        );
        std::fs::write(&makefile, fork).expect("write");
    };
    let before = at("refs/scaffold/base");
    let runner = update_pull_request(&env, &workflow, "renovate/scaffold-edited", edited);
    let conflicts = std::fs::read_to_string(runner.join("update/conflicts.txt")).expect("list");
    assert_eq!(conflicts, "Makefile\n");
    let head = pr_head("renovate/scaffold-edited");
    let makefile = env.git(&origin, &["show", &format!("{head}:Makefile")]);
    assert!(
        makefile.contains("<<<<<<< "),
        "the conflict is in the commit"
    );
    let moved = at("refs/scaffold/base");
    assert_ne!(moved, before, "the base moved with it");
    assert!(
        env.git(&origin, &["show", &format!("{moved}:Makefile")])
            .contains("-next"),
        "origin's pristine base is the new rendering"
    );

    // The same bundle again: the branch is no longer where it was made.
    let stale = push_update(
        &env,
        &workflow,
        "renovate/scaffold-edited",
        &runner,
        "again",
    );
    assert!(stale.is_err(), "a stale update must not be pushed");
    assert_eq!(
        pr_head("renovate/scaffold-edited"),
        head,
        "the branch did not move"
    );

    // Renovate's change alone: the update applies cleanly on top.
    let runner = update_pull_request(&env, &workflow, "renovate/scaffold", renovate);
    let head = pr_head("renovate/scaffold");
    let subject = env.git(&origin, &["log", "-1", "--format=%s", &head]);
    assert!(subject.starts_with("scaffold: update"), "{subject}");
    let makefile = env.git(&origin, &["show", &format!("{head}:Makefile")]);
    assert!(
        makefile.contains("SCAFFOLD_VERSION    := 9.9.9\n"),
        "Renovate's pin kept"
    );
    assert!(
        makefile.contains(&format!("?= {SCAFFOLD_HOME}-next\n")),
        "the update"
    );
    let conflicts = std::fs::read_to_string(runner.join("update/conflicts.txt")).expect("list");
    assert_eq!(conflicts, "", "no conflicts");
    // The conflicting branch recorded this rendering already: the base stays.
    assert_eq!(
        at("refs/scaffold/base"),
        moved,
        "the same rendering, the same base"
    );
}

#[test]
fn makefile_targets_build_every_flux_path_and_check_terraform_format() {
    let env = Env::new();
    let dir = repo(&env, "m", &all_addons(&env));
    let make = |args: &[&str]| {
        let out = Command::new("make")
            .args(args)
            .current_dir(&dir)
            .env_remove("TF_CLI_CONFIG_FILE")
            .output()
            .expect("make runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, plan, stderr) = make(&["-n", "validate"]);
    assert!(ok, "make -n validate: {stderr}");
    for step in [
        "fmt -check",
        "init -backend=false",
        "validate -no-color",
        "kubeconform",
    ] {
        assert!(plan.contains(step), "make validate lacks `{step}`");
    }
    let (ok, terraform_version, _) = make(&["--no-print-directory", "terraform-version"]);
    assert!(ok && terraform_version.trim().split('.').count() == 3);

    if require_tool("terraform") {
        let (ok, out, stderr) = make(&["validate-fmt"]);
        assert!(ok, "terraform fmt -check: {out}{stderr}");
    }
    if require_tool("kubectl") {
        // kubectl's kustomize builds every path; a stand-in kubeconform reads the output.
        let stand_in = env.path("kubeconform");
        std::fs::write(
            &stand_in,
            "#!/bin/sh\nfor a; do last=$a; done\n[ \"$last\" = - ] && cat > /dev/null\nexit 0\n",
        )
        .expect("write");
        Command::new("chmod")
            .arg("+x")
            .arg(&stand_in)
            .status()
            .expect("chmod");
        let (ok, out, stderr) = make(&[
            "validate-flux",
            "KUSTOMIZE_BUILD=kubectl kustomize",
            &format!("KUBECONFORM={}", stand_in.display()),
        ]);
        assert!(ok, "validate-flux: {out}{stderr}");
        let built = out
            .lines()
            .filter(|l| l.starts_with("kustomize build "))
            .count();
        assert_eq!(built, kustomization_dirs(&dir), "{out}");
    }
}

fn kustomization_dirs(dir: &Path) -> usize {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() == "kustomization.yaml")
        .count()
}

#[test]
fn renovate_config_finds_every_pinned_version_and_passes_its_validator() {
    let env = Env::new();
    let dir = repo_with_home(&env, "r");
    let text = std::fs::read_to_string(dir.join("renovate.json")).expect("renovate.json");
    let config: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    for manager in ["flux", "helm-values", "terraform"] {
        assert!(
            config[manager]["managerFilePatterns"].is_array(),
            "{manager} has no managerFilePatterns"
        );
    }
    let files: Vec<String> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file() && !e.path().starts_with(dir.join(".git")))
        .map(|e| {
            e.path()
                .strip_prefix(&dir)
                .expect("inside")
                .display()
                .to_string()
        })
        .collect();
    for manager in config["customManagers"]
        .as_array()
        .expect("custom managers")
    {
        let description = manager["description"].as_str().unwrap_or_default();
        // managerFilePatterns: a regex between slashes (else a glob; none here).
        let patterns: Vec<regex::Regex> = manager["managerFilePatterns"]
            .as_array()
            .expect("managerFilePatterns")
            .iter()
            .map(|p| {
                let text = p.as_str().expect("text");
                let inner = text.strip_prefix('/').and_then(|t| t.strip_suffix('/'));
                regex::Regex::new(inner.expect("a /regex/")).expect("regex")
            })
            .collect();
        let matching: Vec<&String> = files
            .iter()
            .filter(|f| patterns.iter().any(|p| p.is_match(f)))
            .collect();
        assert!(!matching.is_empty(), "{description}: matches no file");
        let found = manager["matchStrings"]
            .as_array()
            .expect("matchStrings")
            .iter()
            .map(|m| regex::Regex::new(m.as_str().expect("text")).expect("regex"))
            .any(|re| {
                matching
                    .iter()
                    .any(|f| re.is_match(&std::fs::read_to_string(dir.join(f)).expect("read")))
            });
        assert!(found, "{description}: finds no version in {matching:?}");
    }

    // scaffold's own pin: from scaffold_home's releases, and only where the repo names it.
    let scaffold = config["customManagers"]
        .as_array()
        .expect("custom managers")
        .iter()
        .find(|m| m["depNameTemplate"] == "acme/scaffold")
        .expect("a manager for scaffold's releases");
    assert_eq!(scaffold["datasourceTemplate"], "github-releases");
    assert_eq!(scaffold["registryUrlTemplate"], "https://github.com");
    let pin = regex::Regex::new(scaffold["matchStrings"][0].as_str().expect("text")).expect("re");
    let makefile = std::fs::read_to_string(dir.join("Makefile")).expect("Makefile");
    assert_eq!(
        &pin.captures(&makefile).expect("the pin")["currentValue"],
        env!("CARGO_PKG_VERSION")
    );
    let homeless = repo(&env, "r-homeless", "reloader");
    let text = std::fs::read_to_string(homeless.join("renovate.json")).expect("renovate.json");
    assert!(
        !text.contains("SCAFFOLD_VERSION"),
        "no home, no scaffold manager"
    );

    let validator = std::env::var("RENOVATE_CONFIG_VALIDATOR")
        .unwrap_or_else(|_| "renovate-config-validator".into());
    // .ci/run installs it with npm and sets RENOVATE_CONFIG_VALIDATOR.
    if !require_tool(&validator) {
        return;
    }
    let out = Command::new(&validator)
        .args(["--strict", "renovate.json"])
        .current_dir(&dir)
        .output()
        .expect("validator runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "renovate-config-validator: {stdout}");
    assert!(stdout.contains("Config validated successfully"), "{stdout}");
}

/// actionlint and zizmor (installed by .ci/run from PyPI; ACTIONLINT and ZIZMOR name them)
/// find nothing in this project's workflows or in a generated repo's.
#[test]
fn workflows_pass_actionlint_and_zizmor() {
    let env = Env::new();
    let dir = repo_with_home(&env, "lint");
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows");
    let workflows: Vec<std::path::PathBuf> = [dir.join(".github/workflows"), project]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).expect("workflows directory"))
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(workflows.len() >= 3, "{workflows:?}");
    for (tool, args) in [
        ("ACTIONLINT", &["-no-color"][..]),
        ("ZIZMOR", &["--offline", "--no-progress"][..]),
    ] {
        let program = std::env::var(tool).unwrap_or_else(|_| tool.to_lowercase());
        if !require_tool(&program) {
            continue;
        }
        let out = Command::new(&program)
            .args(args)
            .args(&workflows)
            .output()
            .expect("linter runs");
        assert!(
            out.status.success(),
            "{program}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `make scaffold` installs the pinned release from a release layout (here a local copy,
/// `file://`, packed by scripts/release-package), verifies
/// its checksum, refuses a mismatch, and builds with cargo only when the release has no
/// asset for this machine.
#[test]
fn make_scaffold_installs_the_pinned_release_with_its_checksum() {
    if !require_tool("make") || !require_tool("curl") {
        return;
    }
    let env = Env::new();
    let dir = repo(&env, "pin", "reloader");
    let version = env!("CARGO_PKG_VERSION");
    let makefile = std::fs::read_to_string(dir.join("Makefile")).expect("Makefile");
    assert!(
        makefile.contains(&format!("SCAFFOLD_VERSION    := {version}\n")),
        "the Makefile pins the scaffold that made the repo"
    );
    let target = match std::env::consts::ARCH {
        "x86_64" => "x86_64-unknown-linux-musl",
        _ => "aarch64-unknown-linux-musl",
    };
    let releases = env.path("home-of-scaffold");
    let download = releases.join(format!("releases/download/v{version}"));
    // A stand-in binary keeps the archive small; the layout is what is under test.
    let binary = env.path("scaffold-built");
    std::fs::write(&binary, format!("#!/bin/sh\necho scaffold {version}\n")).expect("write");
    Command::new("chmod")
        .arg("+x")
        .arg(&binary)
        .status()
        .expect("chmod");
    let packed =
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/release-package"))
            .arg(target)
            .arg(&binary)
            .arg(&download)
            .output()
            .expect("release-package runs");
    assert!(
        packed.status.success(),
        "{}",
        String::from_utf8_lossy(&packed.stderr)
    );
    let url = format!("SCAFFOLD_GIT_URL=file://{}", releases.display());
    let installed = dir.join(".tools/bin/scaffold");
    let make = |args: &[&str], path: Option<&Path>| {
        let mut cmd = Command::new("make");
        cmd.args(args).current_dir(&dir);
        if let Some(fake) = path {
            let path = std::env::var("PATH").unwrap_or_default();
            cmd.env("PATH", format!("{}:{path}", fake.display()));
        }
        run(&mut cmd)
    };

    let out = make(&["scaffold"], None);
    assert_eq!(out.code, 2, "no URL: {}", out.stderr);
    assert!(
        out.stderr.contains("SCAFFOLD_GIT_URL is not set"),
        "{}",
        out.stderr
    );

    // A checksum that does not match: refused, nothing installed.
    let sums = download.join("SHA256SUMS");
    let good = std::fs::read_to_string(&sums).expect("sums");
    std::fs::write(&sums, format!("{}{}", "0".repeat(64), &good[64..])).expect("tamper");
    let out = make(&["scaffold", &url], None);
    assert_ne!(out.code, 0, "a bad checksum must fail: {}", out.stdout);
    assert!(
        out.stderr
            .contains("does not match the release's SHA256SUMS"),
        "{}",
        out.stderr
    );
    assert!(!installed.exists(), "nothing installed after a mismatch");

    std::fs::write(&sums, &good).expect("restore");
    let out = make(&["scaffold", &url], None);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let runs = run(Command::new(&installed).arg("--version"));
    assert!(runs.stdout.contains(version), "{}", runs.stdout);

    // No asset for this machine: cargo builds the pinned tag (a stand-in cargo records how).
    std::fs::remove_file(&installed).expect("rm");
    for entry in std::fs::read_dir(&download).expect("dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "gz") {
            std::fs::remove_file(path).expect("rm asset");
        }
    }
    let fake = env.path("fake-bin");
    std::fs::create_dir(&fake).expect("mkdir");
    let log = env.path("cargo-args");
    std::fs::write(
        fake.join("cargo"),
        format!("#!/bin/sh\necho \"$@\" > '{}'\n", log.display()),
    )
    .expect("write");
    Command::new("chmod")
        .arg("+x")
        .arg(fake.join("cargo"))
        .status()
        .expect("chmod");
    let out = make(&["scaffold", &url], Some(&fake));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("no release asset"), "{}", out.stderr);
    let args = std::fs::read_to_string(&log).expect("cargo ran");
    assert_eq!(
        args.trim(),
        format!(
            "install --locked --root {} --git file://{} --tag v{version} scaffold",
            dir.join(".tools").display(),
            releases.display()
        )
    );
}

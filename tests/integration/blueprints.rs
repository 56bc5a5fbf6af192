//! Blueprint authoring: lint (one test per kind of finding, location asserted), test,
//! init, list, show, layering with `extends`, and template errors that point at their line.
use std::path::{Path, PathBuf};

use crate::support::{Env, run};

const MANIFEST: &str = "name: t\nversion: 0.1.0\ndescription: a test blueprint\nquestions:\n  - key: name\n    prompt: Name\n    type: string\n    default: \"[[ target_dir_name ]]\"\n";

/// A blueprint directory from a manifest and (path, content) files.
fn blueprint(env: &Env, manifest: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = env.path("bp");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("blueprint.yaml"), manifest).expect("manifest");
    for (path, text) in files {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("dirs");
        std::fs::write(full, text).expect("file");
    }
    dir
}

fn lint(env: &Env, dir: &Path) -> (i32, String) {
    let out = run(env.scaffold().args(["blueprint", "lint"]).arg(dir));
    (out.code, out.stdout)
}

#[test]
fn the_default_blueprint_passes_lint_and_test() {
    let env = Env::new();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/default");
    let out = run(env.scaffold().args(["blueprint", "lint", root]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "");
    let out = run(env.scaffold().args(["blueprint", "test", "default"]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.ends_with("6 passed, 0 failed\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("PASS all-addons.yaml (")),
        "{}",
        out.stdout
    );
}

#[test]
fn the_all_addons_answer_set_lists_the_whole_catalog() {
    let env = Env::new();
    let out = run(env.scaffold().args(["list", "addons", "--json"]));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).expect("json");
    let mut optional: Vec<String> = rows
        .iter()
        .filter(|r| r["always"] == false)
        .map(|r| r["name"].as_str().expect("name").to_string())
        .collect();
    let set: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/blueprints/default/tests/all-addons.yaml"
        ))
        .expect("set"),
    )
    .expect("yaml");
    let mut listed: Vec<String> = serde_norway::from_value(set["addons"].clone()).expect("addons");
    optional.sort();
    listed.sort();
    assert_eq!(listed, optional);
}

#[test]
fn lint_finds_an_undeclared_variable() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        &[(
            "files/hello.txt.tera",
            "Hello [[ name ]],\nthis is [[ nmae ]].\n",
        )],
    );
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "files/hello.txt.tera:2:12: error: `nmae` is neither a question of the blueprint nor a built-in (did you mean `name`?)\n"
    );
}

#[test]
fn lint_finds_an_invalid_regex() {
    let env = Env::new();
    let manifest = format!("{MANIFEST}    regex: '^[a-z'\n");
    let dir = blueprint(&env, &manifest, &[]);
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("blueprint.yaml:9:13: error: question `name`: regex does not compile:"),
        "{out}"
    );
}

#[test]
fn lint_finds_a_default_failing_its_validation() {
    let env = Env::new();
    let manifest = format!(
        "{MANIFEST}  - key: size\n    prompt: Size\n    type: int\n    min: 1\n    max: 5\n    default: 9\n"
    );
    let dir = blueprint(&env, &manifest, &[]);
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "blueprint.yaml:14:5: error: question `size`: the default fails its own validation: `9` is out of range 1..=5\n"
    );
}

#[test]
fn lint_finds_a_path_escaping_with_dot_dot() {
    let env = Env::new();
    let manifest =
        format!("{MANIFEST}  - key: up\n    prompt: Up\n    type: string\n    default: \"..\"\n");
    let dir = blueprint(&env, &manifest, &[("files/[[ up ]]/evil.txt", "x\n")]);
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "files/[[ up ]]/evil.txt:1:1: error: rendered path `../evil.txt` escapes the repository: an answer it reads holds a `..` or `.` path segment; answer a plain name\n"
    );
}

#[test]
fn lint_finds_an_absolute_path() {
    let env = Env::new();
    let manifest = format!(
        "{MANIFEST}  - key: dest\n    prompt: Destination\n    type: string\n    default: /etc/cron.d/evil\n"
    );
    let dir = blueprint(&env, &manifest, &[("files/[[ dest ]]", "x\n")]);
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "files/[[ dest ]]:1:1: error: rendered path `/etc/cron.d/evil` is absolute\n"
    );
}

#[test]
fn lint_finds_a_symlink_pointing_outside() {
    let env = Env::new();
    let dir = blueprint(&env, MANIFEST, &[("files/README.md", "ok\n")]);
    std::os::unix::fs::symlink("/etc/hostname", dir.join("files/hostname")).expect("symlink");
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "files/hostname:1:1: error: symlink points outside the blueprint (/etc/hostname)\n"
    );
    // `new` refuses it too, before writing anything.
    let out = run(env
        .scaffold()
        .args(["new", "x", "--defaults", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("files/hostname: symlink points outside the blueprint"),
        "{}",
        out.stderr
    );
    assert!(!env.path("x").exists());
}

#[test]
fn lint_finds_a_template_syntax_error() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        &[(
            "files/broken.yaml.tera",
            "a: [[ name ]]\n[% if %]\nb: 1\n[% endif %]\n",
        )],
    );
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("files/broken.yaml.tera:2:7: error: "),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[test]
fn lint_finds_an_unknown_manifest_key() {
    let env = Env::new();
    let manifest = MANIFEST.replace(
        "description: a test blueprint\n",
        "description: a test blueprint\ncolour: blue\n",
    );
    let dir = blueprint(&env, &manifest, &[]);
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("blueprint.yaml:4:1: error: unknown field `colour`, expected one of"),
        "{out}"
    );
}

#[test]
fn lint_warns_about_delimiter_clashes() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        &[
            ("files/copied.md", "Use [[ name ]] here\n"),
            ("files/jinja.txt.tera", "ok [[ name ]]\nold {{ name }}\n"),
        ],
    );
    let (code, out) = lint(&env, &dir);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "files/copied.md:1:5: warning: contains `[[` but is copied as is (only `.tera` files are rendered)\n\
         files/jinja.txt.tera:2:5: warning: `{{ name }}` looks like a template variable, but this template writes them `[[ name ]]`\n"
    );
}

#[test]
fn template_errors_at_render_time_point_at_the_line() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        // Only rendering knows that a string has no field `nope`.
        &[("files/a.txt.tera", "one\ntwo [[ name.nope | to_json ]]\n")],
    );
    let out = run(env
        .scaffold()
        .args(["new", "x", "--defaults", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 5, "{}", out.stderr);
    // `new` runs lint's render with the defaults first: the finding, then the refusal.
    assert!(
        out.stderr.starts_with("files/a.txt.tera:2:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("undefined"), "{}", out.stderr);
    assert!(!env.path("x").exists());
}

#[test]
fn a_blueprint_extending_the_default_changes_adds_and_removes() {
    let env = Env::new();
    let acme = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/acme-blueprint");
    for command in ["lint", "test"] {
        let out = run(env.scaffold().args(["blueprint", command, acme]));
        assert_eq!(out.code, 0, "{command}: {}{}", out.stdout, out.stderr);
    }
    let out = run(env.scaffold().args([
        "new",
        "shop",
        "--defaults",
        "--blueprint",
        acme,
        "--set",
        "team=payments",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("shop");
    let read =
        |p: &str| std::fs::read_to_string(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert!(
        read("envs/prod/docs/OWNERS.md").contains("is run by the\nteam payments."),
        "{}",
        read("envs/prod/docs/OWNERS.md")
    );
    assert!(read("apps/prod/podinfo/release.yaml").contains("replicaCount: 3"));
    assert!(
        read("clusters/prod/30-addon-descheduler.yaml")
            .contains("path: ./environments/prod/infrastructure/addons/descheduler")
    );
    assert!(!dir.join("infrastructure/addons/reloader").exists());
    assert!(read(".scaffold/answers.yaml").contains("region: eu-central-1"));
    assert!(read(".scaffold/answers.yaml").contains("name: acme\n  version: 1.0.0"));

    let out = run(env.scaffold().args(["list", "addons", "--blueprint", acme]));
    assert!(
        out.stdout.contains("descheduler") && !out.stdout.contains("reloader"),
        "{}",
        out.stdout
    );
    let out = run(env.scaffold().args(["blueprint", "show", acme]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("addons/descheduler.yaml") && l.contains("acme 1.0.0")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("files/README.md.tera") && l.contains("default 0.5.0"))
    );
    assert!(out.stdout.contains("- key: team"));

    // add-addon works on a repo made from a blueprint given by path: found again by the
    // directory the record keeps, or given with --blueprint.
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["add-addon", "velero"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out =
        run(env
            .scaffold()
            .current_dir(&dir)
            .args(["add-addon", "headlamp", "--blueprint", acme]));
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn init_writes_blueprints_that_pass_lint_and_test() {
    let env = Env::new();
    for (dir, extra) in [
        ("team-bp", vec!["--extends", "default"]),
        ("own-bp", vec![]),
    ] {
        let out = run(env.scaffold().args(["blueprint", "init", dir]).args(&extra));
        assert_eq!(out.code, 0, "{}", out.stderr);
        let path = env.path(dir);
        let (code, findings) = lint(&env, &path);
        assert_eq!((code, findings.as_str()), (0, ""), "{dir}");
        let out = run(env.scaffold().args(["blueprint", "test"]).arg(&path));
        assert_eq!(out.code, 0, "{dir}: {}", out.stdout);
        assert!(
            out.stdout.ends_with("1 passed, 0 failed\n"),
            "{}",
            out.stdout
        );
        let out = run(env
            .scaffold()
            .args(["new", &format!("{dir}-repo"), "--defaults", "--blueprint"])
            .arg(&path));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    assert!(
        std::fs::read_to_string(env.path("team-bp-repo/docs/OWNERS.md"))
            .expect("owners")
            .contains("team platform")
    );
    // Issue 40: the layer says nothing of one environment in a repo of others.
    let out = run(env
        .scaffold()
        .args([
            "new",
            "team-bp-two",
            "--defaults",
            "--set",
            "environments=dev,staging",
        ])
        .arg("--blueprint")
        .arg(env.path("team-bp")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let owners = std::fs::read_to_string(env.path("team-bp-two/docs/OWNERS.md")).expect("owners");
    assert!(owners.contains("(environments: dev, staging)"), "{owners}");
    assert!(!owners.contains("prod"), "{owners}");
    let out = run(env.scaffold().args(["blueprint", "init", "team-bp"]));
    assert_eq!(out.code, 3, "an existing directory is refused");
}

#[test]
fn blueprints_are_found_by_name_on_the_search_path() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["blueprint", "init", "xdg/scaffold/blueprints/xdg-bp"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(env.scaffold().args(["blueprint", "init", "extra/path-bp"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list = |env: &Env| {
        run(env
            .scaffold()
            .args(["blueprint", "list"])
            .env("XDG_CONFIG_HOME", env.path("xdg"))
            .env("SCAFFOLD_BLUEPRINT_PATH", env.path("extra")))
    };
    let out = list(&env);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(names, ["path-bp", "xdg-bp", "default"], "{}", out.stdout);
    let out = run(env
        .scaffold()
        .args(["new", "r", "--defaults", "--blueprint", "xdg-bp"])
        .env("XDG_CONFIG_HOME", env.path("xdg")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(env.path("r/README.md").is_file());
}

#[test]
fn partials_and_per_glob_delimiters_let_other_template_languages_through() {
    let env = Env::new();
    let manifest = format!(
        "{MANIFEST}delimiters_by_glob:\n  - glob: \"files/docs/**\"\n    variable: [\"<<\", \">>\"]\n    block: [\"<%\", \"%>\"]\n    comment: [\"<#\", \"#>\"]\n"
    );
    let dir = blueprint(
        &env,
        &manifest,
        &[
            ("partials/header.tera", "# [[ name ]]\n"),
            (
                "files/README.md.tera",
                "[% include \"partials/header.tera\" %]\nCI: ${{ secrets.TOKEN }}, Helm: {{ .Values.x }}, Flux: ${CLUSTER_NAME}\n",
            ),
            (
                "files/docs/guide.md.tera",
                "Name: << name >>; literal [[ this ]] and [% that %]\n",
            ),
        ],
    );
    let (code, out) = lint(&env, &dir);
    assert_eq!((code, out.as_str()), (0, ""));
    let out = run(env
        .scaffold()
        .args(["new", "demo", "--defaults", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let read = |p: &str| std::fs::read_to_string(env.path("demo").join(p)).expect(p);
    assert_eq!(
        read("README.md"),
        "# demo\n\nCI: ${{ secrets.TOKEN }}, Helm: {{ .Values.x }}, Flux: ${CLUSTER_NAME}\n"
    );
    assert_eq!(
        read("docs/guide.md"),
        "Name: demo; literal [[ this ]] and [% that %]\n"
    );
    assert!(
        !env.path("demo/partials").exists(),
        "partials are never written"
    );
}

#[test]
fn a_blueprint_needing_a_newer_scaffold_is_refused() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        &MANIFEST.replace(
            "version: 0.1.0\n",
            "version: 0.1.0\nmin_scaffold_version: 99.0.0\n",
        ),
        &[],
    );
    let out = run(env
        .scaffold()
        .args(["new", "x", "--defaults", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "blueprint.yaml:3:1: min_scaffold_version: the blueprint needs scaffold 99.0.0 or newer"
        ),
        "{}",
        out.stderr
    );
    assert!(!env.path("x").exists());
}

/// Every question of the default blueprint says, at the prompt and in `--help`-like
/// listings, what it decides and what follows from it.
#[test]
fn every_default_question_has_help() {
    let manifest: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default/blueprint.yaml"),
        )
        .expect("manifest"),
    )
    .expect("yaml");
    let questions = manifest["questions"].as_sequence().expect("questions");
    assert!(questions.len() > 20);
    let without: Vec<&str> = questions
        .iter()
        .filter(|q| q["help"].as_str().is_none_or(|h| h.trim().len() < 20))
        .filter_map(|q| q["key"].as_str())
        .collect();
    assert!(without.is_empty(), "questions without help: {without:?}");
}

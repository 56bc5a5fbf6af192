//! Authoring a team blueprint (issue 18): no silent holes (undefined names, question
//! order, lint before test and new), small overrides (patches, `after:`, replaced files
//! with their base digest), removals that break references, file modes, the CLI views of
//! a blueprint's files, the record of the base, and a real location for every finding.
use std::path::{Path, PathBuf};

use crate::support::{Env, answers, run};

const TEAM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/team-blueprint");

const MANIFEST: &str = "name: t\nversion: 0.1.0\nquestions:\n  - key: name\n    prompt: Name\n    type: string\n    default: \"[[ target_dir_name ]]\"\n  - key: region\n    prompt: Region\n    type: string\n    default: eu-west-1\n";

/// A blueprint directory from a manifest and (path, content) files, with one answer set.
fn blueprint(env: &Env, manifest: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = env.path("bp");
    let _ = std::fs::remove_dir_all(&dir); // a test may write several in turn
    for (path, text) in [
        ("blueprint.yaml", manifest),
        ("tests/defaults.yaml", "{}\n"),
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

fn scaffold(env: &Env, args: &[&str], dir: &Path) -> crate::support::Output {
    run(env.scaffold().args(args).arg(dir))
}

fn new(env: &Env, dir: &Path) -> crate::support::Output {
    run(env
        .scaffold()
        .args([
            "new",
            "out",
            "--defaults",
            "--author",
            "T <t@example.org>",
            "--blueprint",
        ])
        .arg(dir))
}

#[test]
fn a_misspelt_field_piped_into_a_filter_fails_test_and_new_at_its_place() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        &[(
            "files/tags.tf.tera",
            "tags = {\n  region = [[ region.nmae | to_hcl ]]\n}\n",
        )],
    );
    // Lint (which `blueprint test` runs first) renders the defaults and finds it.
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("files/tags.tf.tera:2:29: error: the value is undefined"),
        "{}",
        out.stdout
    );
    // `new` runs the same lint, render included, before asking anything.
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "files/tags.tf.tera:2:29: error: the value is undefined (a misspelt variable or field?)"
        ) && out.stderr.ends_with(&format!(
            " 1 lint error(s) above; fix them (scaffold blueprint lint {})\n",
            dir.canonicalize().expect("dir").display()
        )),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
}

#[test]
fn an_undefined_name_in_a_condition_or_a_file_name_is_refused_before_anything_is_written() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        MANIFEST,
        &[
            (
                "files/a.txt.tera",
                "[% if regoin == \"x\" %]x[% endif %]a\n",
            ),
            ("files/[% if regon %]b.txt[% endif %]", "b\n"),
        ],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_eq!(
        out.stderr.lines().take(2).collect::<Vec<_>>(),
        [
            "files/[% if regon %]b.txt[% endif %]:1:13: error: in the file name: `regon` is neither a question of the blueprint nor a built-in (did you mean `region`?)",
            "files/a.txt.tera:1:7: error: `regoin` is neither a question of the blueprint nor a built-in (did you mean `region`?)",
        ]
    );
    assert!(!out.stderr.contains("__tera"), "{}", out.stderr);
    assert!(!env.path("out").exists());
    // blueprint test lints first, and says so.
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    assert_eq!(
        out.stderr,
        "error: blueprint test: lint found 2 error(s); fix them first\n"
    );
}

#[test]
fn new_shows_lint_warnings_and_goes_on() {
    let env = Env::new();
    let dir = blueprint(&env, MANIFEST, &[("files/notes.md", "Say [[ name ]].\n")]);
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("files/notes.md:1:5: warning: contains `[[` but is copied as is"),
        "{}",
        out.stderr
    );
    assert!(env.path("out/notes.md").is_file());
}

#[test]
fn a_question_may_read_only_questions_before_it() {
    let env = Env::new();
    let manifest = format!(
        "{MANIFEST}  - key: zone\n    prompt: Zone\n    type: string\n    default: \"[[ regoin ]]a\"\n"
    );
    let manifest = manifest.replacen(
        "    default: eu-west-1\n",
        "    default: eu-west-1\n    when: \"zone != ''\"\n",
        1,
    );
    let dir = blueprint(&env, &manifest, &[]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "blueprint.yaml:12:5: error: question `region`: `when` reads `zone`, which is asked after `region` (order: name, region, zone); move `region` below it, e.g. with `after: zone`\n"
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5);
    assert!(
        out.stderr
            .contains("blueprint.yaml:12:5: question `region`"),
        "{}",
        out.stderr
    );
    // Once in order, the misspelt name of the next question is found, with a suggestion.
    std::fs::write(
        dir.join("blueprint.yaml"),
        manifest.replace("    when: \"zone != ''\"\n", ""),
    )
    .expect("write");
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(
        out.stdout,
        "blueprint.yaml:15:5: error: question `zone`: `default` reads `regoin`, which is not a question asked before `zone` (did you mean `region`?)\n"
    );
}

#[test]
fn the_walkthrough_blueprint_adds_a_question_after_an_inherited_one_and_patches_files() {
    let env = Env::new();
    let out = run(env.scaffold().args(["blueprint", "show", TEAM]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let keys: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("- key: "))
        .take(5)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "environments",
            "environment",
            "cost_center",
            "dns_zone"
        ]
    );
    let out = run(env.scaffold().args(["blueprint", "files", TEAM]));
    let how = |path: &str| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(path).filter(|rest| rest.starts_with(' ')))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("{path} in {}", out.stdout))
            .to_string()
    };
    assert_eq!(
        how(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera"
        ),
        "patched"
    );
    assert_eq!(how("files/.sourceignore"), "replaced");
    assert_eq!(
        how("env-files/envs/[[ environment ]]/docs/RUNBOOK.md.tera"),
        "own"
    );
    assert_eq!(
        how("env-files/envs/[[ environment ]]/2-kops/main.tf"),
        "inherited"
    );
    assert!(!out.stdout.contains("podinfo/"), "removed directory listed");

    let out = run(env.scaffold().args([
        "new",
        "shop",
        "--defaults",
        "--set",
        "cost_center=payments",
        "--blueprint",
        TEAM,
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("shop");
    let pool: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(
            repo.join("environments/prod/infrastructure/karpenter/node-pool.yaml"),
        )
        .expect("pool"),
    )
    .expect("yaml");
    assert_eq!(
        pool["spec"]["template"]["metadata"]["labels"]["cost-center"],
        "payments"
    );
    assert_eq!(
        pool["spec"]["template"]["spec"]["nodeClassRef"]["name"], "default",
        "the rest is kept"
    );
    // Patched in place: the inherited file's comments survive.
    assert_eq!(
        std::fs::read_to_string(repo.join("apps/prod/kustomization.yaml")).expect("apps"),
        "# Applications of this environment, one directory each; a chart added with scaffold\n# add-addon --layer apps has its base in apps/base/ and this environment's overlay\n# here (sorted by name).\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"
    );
    // A keyed list merge: the team's requirement joins the base's, which all stay.
    let keys: Vec<&str> = pool["spec"]["template"]["spec"]["requirements"]
        .as_sequence()
        .expect("requirements")
        .iter()
        .filter_map(|r| r["key"].as_str())
        .collect();
    assert!(
        keys.contains(&"kubernetes.io/arch")
            && keys.last() == Some(&"karpenter.k8s.aws/instance-family"),
        "{keys:?}"
    );
    // The default's extension points: tags for Terraform and kops, a file asset for kops.
    let tags =
        std::fs::read_to_string(repo.join("envs/prod/1-prerequisites/tags.yaml")).expect("tags");
    assert!(
        tags.ends_with("extraTags:\n  cost-center: payments\n  team: payments\n"),
        "{tags}"
    );
    assert!(
        tags.starts_with("# Extension point: "),
        "comments kept: {tags}"
    );
    let values: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(repo.join("envs/prod/2-kops/values.yaml")).expect("values"),
    )
    .expect("yaml");
    assert_eq!(values["fileAssets"][0]["name"], "company-ca");
    assert!(values["hooks"].is_null(), "no addon brings a hook");
    assert!(!repo.join("apps/prod/podinfo").exists());
    // The record names the blueprint and the base it extends.
    let record = answers(&repo);
    assert_eq!(record["blueprint"]["name"], "team");
    assert_eq!(record["blueprint"]["base"]["name"], "default");
    assert_eq!(env.git(&repo, &["status", "--porcelain"]), "");
}

/// A blueprint extending the default, in `bp/` beside the work directory.
fn layered(env: &Env, extra: &str, files: &[(&str, &str)]) -> PathBuf {
    blueprint(
        env,
        &format!("name: layered\nversion: 1.0.0\nextends: default\n{extra}"),
        files,
    )
}

#[test]
fn a_replaced_file_whose_base_changed_is_warned_about() {
    let env = Env::new();
    let dir = layered(
        &env,
        "replaces:\n  files/.sourceignore: 0123456789ab\n",
        &[("files/.sourceignore", "/1-prerequisites/\n")],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("files/.sourceignore:1:1: warning: replaces a file of default "),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("(recorded 0123456789ab, now "),
        "{}",
        out.stdout
    );
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    assert!(
        out.stderr
            .starts_with("warning: files/.sourceignore replaces a file of default"),
        "{}",
        out.stderr
    );
    // Without a record, show prints the line to add; with it, nothing is said.
    let dir = layered(&env, "", &[("files/.sourceignore", "/1-prerequisites/\n")]);
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    let line = out
        .stderr
        .split('`')
        .nth(1)
        .unwrap_or_else(|| panic!("{}", out.stderr))
        .to_string();
    assert!(
        line.starts_with("replaces: {\"files/.sourceignore\": "),
        "{line}"
    );
    let dir = layered(
        &env,
        &format!("{line}\n"),
        &[("files/.sourceignore", "/1-prerequisites/\n")],
    );
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
}

#[test]
fn removing_a_directory_that_is_still_referenced_is_a_lint_error() {
    let env = Env::new();
    let dir = layered(
        &env,
        "remove_files:\n  - \"env-files/apps/[[ environment ]]/podinfo/\"\n  - \"env-files/envs/[[ environment ]]/3-bridge/Makefile.tera\"\n",
        &[],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "env-files/apps/[[ environment ]]/kustomization.yaml.tera:10:5: error: Kustomization apps does not build: resources entry `podinfo/` does not exist\n"
    );
    let out = scaffold(&env, &["blueprint", "files"], &dir);
    assert!(
        !out.stdout
            .contains("env-files/envs/[[ environment ]]/3-bridge/Makefile"),
        "glob removed it"
    );
    assert!(
        !out.stdout.contains("podinfo/release.yaml"),
        "directory removed"
    );
}

#[test]
fn file_modes_come_from_the_blueprint_and_are_committed_the_same() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        &format!("{MANIFEST}executable:\n  - files/bin/tool\n"),
        &[
            ("files/run.sh", "#!/bin/sh\n"),
            ("files/bin/tool", "#!/bin/sh\n"),
            ("files/notes.sh", "# sourced\n"),
        ],
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("files/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("out");
    let mode = |p: &str| {
        std::fs::metadata(repo.join(p))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!((mode("run.sh"), mode("bin/tool")), (0o755, 0o755));
    assert_eq!(
        mode("notes.sh") & 0o111,
        0,
        "a .sh name alone makes nothing executable"
    );
    let staged = env.git(&repo, &["ls-files", "-s"]);
    assert!(
        staged.contains("100755 ")
            && staged
                .lines()
                .any(|l| l.starts_with("100755") && l.ends_with("run.sh")),
        "{staged}"
    );
    assert!(
        staged
            .lines()
            .any(|l| l.starts_with("100644") && l.ends_with("notes.sh")),
        "{staged}"
    );
    assert_eq!(env.git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn blueprint_files_and_cat_show_the_default_blueprint() {
    let env = Env::new();
    let out = run(env.scaffold().args(["blueprint", "files", "default"]));
    assert_eq!(out.code, 0);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("files/.gitignore ")
                && l.ends_with("own        default 0.5.0 (embedded:default)")),
        "{}",
        out.stdout
    );
    let out = run(env.scaffold().args([
        "blueprint",
        "cat",
        "default",
        "env-files/envs/[[ environment ]]/2-kops/main.tf",
    ]));
    assert_eq!(out.code, 0);
    let stored = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/blueprints/default/env-files/envs/[[ environment ]]/2-kops/main.tf"
    ))
    .expect("main.tf");
    assert_eq!(out.stdout, stored);
    let out = run(env.scaffold().args([
        "blueprint",
        "cat",
        "default",
        "env-files/envs/[[ environment ]]/2-kops/mian.tf",
    ]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: env-files/envs/[[ environment ]]/2-kops/mian.tf: not a file of blueprint default (did you mean `env-files/envs/[[ environment ]]/2-kops/main.tf`?); `scaffold blueprint files default` lists them\n"
    );
}

/// One finding of `blueprint lint`, exactly.
fn lint_says(env: &Env, dir: &Path, expected: &str) {
    let out = scaffold(env, &["blueprint", "lint"], dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, format!("{expected}\n"));
}

#[test]
fn lint_locates_manifest_findings_of_layers() {
    let env = Env::new();
    let dir = layered(&env, "defaults:\n  regoin: x\n", &[]);
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:5:3: error: defaults: `regoin` is not a question of this blueprint or its base (did you mean `region`?)",
    );
    let dir = layered(&env, "remove_files:\n  - files/nope.tf\n", &[]);
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:5:5: error: remove_files: `files/nope.tf` matches no file of the base blueprint",
    );
    let dir = layered(&env, "remove_addons:\n  - [velero]\n", &[]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert!(
        out.stdout
            .starts_with("blueprint.yaml:5:5: error: remove_addons"),
        "{}",
        out.stdout
    );
    let dir = layered(
        &env,
        "questions:\n  - key: team\n    after: enviroment\n    prompt: Team\n    type: string\n",
        &[],
    );
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:6:5: error: question `team`: after: `enviroment` is not a question of this blueprint or its base (did you mean `environment`?)",
    );
    let dir = layered(&env, "extends_version: \">=2\"\n", &[]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert!(
        out.stdout
            .starts_with("blueprint.yaml:4:1: error: extends_version `>=2`: the base is default "),
        "{}",
        out.stdout
    );
}

#[test]
fn lint_locates_patch_and_catalog_findings() {
    let env = Env::new();
    let dir = layered(&env, "", &[("files/nope.yaml.patch.yaml", "a: 1\n")]);
    lint_says(
        &env,
        &dir,
        "files/nope.yaml.patch.yaml:1:1: error: patches `files/nope.yaml`, which no inherited file writes",
    );
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ndepends_on:\n  - cert-manger\nchart:\n  name: extra\n  version: 1.0.0\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:5:5: error: depends_on names unknown addon `cert-manger` (did you mean `cert-manager`?)",
    );
    let dir = layered(
        &env,
        "",
        &[(
            "addons/extra.yaml",
            &entry.replace("name: extra\nlayer", "name: other\nlayer"),
        )],
    );
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:1:1: error: name `other` differs from the file name",
    );
    let dir = layered(
        &env,
        "",
        &[(
            "addons/extra.yaml",
            &entry
                .replace("  - cert-manger\n", "  - cert-manager\n")
                .replace("layer: addons", "layer: addon"),
        )],
    );
    let dir_out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert!(
        dir_out.stdout.starts_with("addons/extra.yaml:2:1: error: layer `addon` is not one of the blueprint's layers (did you mean `addons`?)"),
        "{}",
        dir_out.stdout
    );
}

#[test]
fn lint_finds_a_misspelt_addon_field() {
    let env = Env::new();
    let dir = layered(
        &env,
        "",
        &[(
            "addon-files/notes/[[ addon.name ]].md.tera",
            "[% if addon.iam_polcy is defined %]IRSA[% endif %]\n",
        )],
    );
    lint_says(
        &env,
        &dir,
        "addon-files/notes/[[ addon.name ]].md.tera:1:7: error: `addon.iam_polcy`: no catalog entry has a field `iam_polcy` (did you mean `iam_policy`?)",
    );
}

#[test]
fn template_syntax_errors_in_file_names_and_conditions_name_the_real_place() {
    let env = Env::new();
    let dir = blueprint(&env, MANIFEST, &[("files/[% if %]x.txt", "x\n")]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.starts_with("files/[% if %]x.txt:1:"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("__tera"), "{}", out.stdout);
    let manifest = MANIFEST.replace(
        "    default: eu-west-1\n",
        "    default: eu-west-1\n    when: \"name ==\"\n",
    );
    let dir = blueprint(&env, &manifest, &[]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert!(
        out.stdout
            .starts_with("blueprint.yaml:12:5: error: question `region`: `when` does not parse: "),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("__tera"), "{}", out.stdout);
}

#[test]
fn a_catalog_entry_without_a_field_a_template_pipes_into_to_hcl_is_an_error() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ndefault: true\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\nvalues: {}\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        // The first template that reads a field the entry lacks (which one depends on
        // the default blueprint's templates) is named with its line and column.
        out.stderr.starts_with("addon-files/")
            && out.stderr.contains(".tera:")
            && out.stderr.contains("is not defined"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("(rendering addon `extra`)\nerror: blueprint "),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
}

#[test]
fn a_catalog_entry_patches_another_file_with_the_answers() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ncreate_namespace: true\ndefault: true\nrequires: []\ndepends_on: []\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\ncrds:\n  policy: CreateReplace\n  provides: []\n  uses: []\nvalues: {}\nbridge_values: {}\nrelease_depends_on: []\nconfigs: []\npatches:\n  - file: env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml\n    patch: |\n      spec:\n        template:\n          metadata:\n            labels:\n              [[ addon.name ]]-region: \"[[ region ]]\"\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pool: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(
            env.path("out/environments/prod/infrastructure/karpenter/node-pool.yaml"),
        )
        .expect("pool"),
    )
    .expect("yaml");
    assert_eq!(
        pool["spec"]["template"]["metadata"]["labels"]["extra-region"],
        "eu-west-1"
    );
    // A file the blueprint does not write is named, with the entry that asks for it.
    std::fs::remove_dir_all(env.path("out")).expect("clean");
    let dir = layered(
        &env,
        "",
        &[(
            "addons/extra.yaml",
            &entry.replace("node-pool.yaml", "nodepool.yaml"),
        )],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5);
    assert!(
        out.stderr.starts_with(
        "addons/extra.yaml:24:11: error: patches: `env-files/environments/[[ environment ]]/infrastructure/karpenter/nodepool.yaml` is not a file this blueprint writes (did you mean `env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml`?)\nerror: blueprint "),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
}

/// Issue 40: a catalog entry's patch lands only in the environments that run the addon,
/// with each one's own answers (the EBS CSI driver's startup taint on another
/// environment's NodePool would keep every workload off its Karpenter nodes).
#[test]
fn a_catalog_patch_lands_only_in_the_environments_running_its_addon() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ncreate_namespace: true\ndefault: false\nrequires: []\ndepends_on: []\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\ncrds:\n  policy: CreateReplace\n  provides: []\n  uses: []\nvalues: {}\nbridge_values: {}\nrelease_depends_on: []\nconfigs: []\npatches:\n  - file: env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml\n    patch: |\n      spec:\n        template:\n          spec:\n            startupTaints:\n              - key: extra.example.org/agent-not-ready\n                effect: NoExecute\n          metadata:\n            labels:\n              extra-region: \"[[ region ]]\"\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    let out = run(env
        .scaffold()
        .args([
            "new",
            "out",
            "--defaults",
            "--author",
            "T <t@example.org>",
            "--set",
            "environments=dev,prod",
            "--set",
            "prod.addons=extra",
            "--set",
            "prod.region=us-east-1",
            "--blueprint",
        ])
        .arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pool = |environment: &str| -> serde_norway::Value {
        let path =
            format!("out/environments/{environment}/infrastructure/karpenter/node-pool.yaml");
        serde_norway::from_str(&std::fs::read_to_string(env.path(&path)).expect("pool"))
            .expect("yaml")
    };
    let (dev, prod) = (pool("dev"), pool("prod"));
    let taint = &prod["spec"]["template"]["spec"]["startupTaints"][0]["key"];
    assert_eq!(taint, "extra.example.org/agent-not-ready");
    // Rendered with prod's own answers, not the first environment's.
    assert_eq!(
        prod["spec"]["template"]["metadata"]["labels"]["extra-region"],
        "us-east-1"
    );
    assert!(
        dev["spec"]["template"]["spec"]
            .get("startupTaints")
            .is_none(),
        "{dev:?}"
    );
    assert!(
        dev["spec"]["template"]["metadata"]["labels"]
            .get("extra-region")
            .is_none()
    );
}

#[test]
fn lint_locates_a_catalog_requirement_and_an_include_of_a_missing_partial() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\nrequires:\n  - regoin\nchart:\n  name: extra\n  version: 1.0.0\n";
    let manifest = format!("{MANIFEST}layers:\n  addons: infrastructure/addons\n");
    let dir = blueprint(
        &env,
        &manifest,
        &[
            ("addons/extra.yaml", entry),
            (
                "files/a.txt.tera",
                "a\n[% include \"partials/gone.tera\" %]\n",
            ),
        ],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "addons/extra.yaml:5:5: error: requires `regoin`, which is not a question (did you mean `region`?)\n\
         files/a.txt.tera:2:12: error: Unknown template `partials/gone.tera`\n"
    );
}

// Issue 27: every case that used to pass silently is now a finding at its place.

/// The findings of `blueprint lint` (stdout), asserting it exits `code`.
fn lint_out(env: &Env, dir: &Path, code: i32) -> String {
    let out = scaffold(env, &["blueprint", "lint"], dir);
    assert_eq!(out.code, code, "{}{}", out.stdout, out.stderr);
    out.stdout
}

#[test]
fn a_patch_named_after_the_template_or_ending_yml_is_refused_with_the_right_name() {
    let env = Env::new();
    let patch = "spec:\n  template:\n    metadata:\n      labels:\n        a: b\n";
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera.patch.yaml",
            patch,
        )],
    );
    lint_says(
        &env,
        &dir,
        "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera.patch.yaml:1:1: error: a patch is named after the file's output, not its template: rename it to `env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml`",
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(!env.path("out").exists());
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yml",
            patch,
        )],
    );
    lint_says(
        &env,
        &dir,
        "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yml:1:1: error: a patch ends in `.patch.yaml`, this one would be copied as a file: rename it to `env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml`",
    );
}

#[test]
fn replaces_entries_must_name_a_fork_of_this_layer() {
    let env = Env::new();
    let fork = ("files/.sourceignore", "/1-prerequisites/\n");
    let dir = layered(
        &env,
        "replaces:\n  files/.sourceignor: 0123456789ab\n",
        &[fork],
    );
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:5:3: error: replaces: `files/.sourceignor` is no file this layer replaces (did you mean `files/.sourceignore`?)",
    );
    // An inherited file the layer does not fork: drift tracking would watch nothing.
    let dir = layered(
        &env,
        "replaces:\n  files/.gitignore: 0123456789ab\n",
        &[fork],
    );
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:5:3: error: replaces: `files/.gitignore` is inherited, but this layer has no file replacing it; add `files/.gitignore` or drop the entry",
    );
    // Keyed by the layer's own `.tera` path: understood, so the base change is warned.
    let dir = layered(
        &env,
        "replaces:\n  files/.sourceignore.tera: 0123456789ab\n",
        &[("files/.sourceignore.tera", "/1-prerequisites/\n")],
    );
    let out = lint_out(&env, &dir, 0);
    assert!(
        out.starts_with("files/.sourceignore.tera:1:1: warning: replaces a file of default "),
        "{out}"
    );
}

#[test]
fn show_suggests_the_current_digest_only_for_what_it_is() {
    let env = Env::new();
    let base = run(env
        .scaffold()
        .args(["blueprint", "cat", "default", "files/.sourceignore"]))
    .stdout;
    // A verbatim copy of this base: its digest is the right one to record.
    let dir = layered(&env, "", &[("files/.sourceignore", &base)]);
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    assert!(
        out.stderr
            .trim_end()
            .ends_with(": it is still a verbatim copy of it"),
        "{}",
        out.stderr
    );
    // An edited copy may come from an older base: the note says whose digest to record.
    let dir = layered(&env, "", &[("files/.sourceignore", "/edited/\n")]);
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    assert!(
        out.stderr
            .contains(": only if you copied it from this base (default "),
        "{}",
        out.stderr
    );
}

#[test]
fn executable_globs_match_the_written_name_and_must_match_something() {
    let env = Env::new();
    let dir = blueprint(
        &env,
        &format!("{MANIFEST}executable:\n  - \"files/scripts/*.sh\"\n"),
        &[(
            "files/scripts/check.sh.tera",
            "#!/bin/sh\necho [[ name ]]\n",
        )],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(env.path("out/scripts/check.sh"))
        .expect("script")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    let dir = blueprint(
        &env,
        &format!("{MANIFEST}executable:\n  - \"files/script/*.sh\"\n"),
        &[("files/scripts/check.sh.tera", "#!/bin/sh\n")],
    );
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("blueprint.yaml:13:5: error: executable: `files/script/*.sh` matches no file of the blueprint"),
        "{out}"
    );
}

#[test]
fn requires_on_a_yes_no_question_wants_yes() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ndefault: true\nrequires: [metrics]\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\n";
    let dir = layered(
        &env,
        "questions:\n  - key: metrics\n    prompt: Metrics?\n    type: bool\n    default: false\n",
        &[("addons/extra.yaml", entry)],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let chosen = answers(&env.path("out"))["addons"].clone();
    assert!(
        !serde_norway::to_string(&chosen)
            .expect("yaml")
            .contains("extra"),
        "a false answer leaves the addon out of the default selection: {chosen:?}"
    );
    std::fs::remove_dir_all(env.path("out")).expect("clean");
    let out = run(env
        .scaffold()
        .args(["new", "out", "--defaults", "--author", "T <t@example.org>"])
        .args(["--set", "addons=extra", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("addons: extra needs `metrics` to be true: leave extra out of addons, or answer `metrics` true (`--set metrics=true` to new; `scaffold update --set metrics=true` in an existing repo)"),
        "{}",
        out.stderr
    );
}

#[test]
fn catalog_templates_of_unselected_entries_are_checked_at_their_line() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ndefault: false\nchart:\n  name: extra\n  version: 1.0.0\nconfigs:\n  - file: extra.yaml\n    content: |\n      kind: ConfigMap\n      region: [[ regoin ]]\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:12:18: error: configs: `regoin` is neither a question of the blueprint nor a built-in (did you mean `region`?)",
    );
    let dir = layered(
        &env,
        "",
        &[(
            "addons/extra.yaml",
            &entry.replace("[[ regoin ]]", "[[ addon.namepsace ]]"),
        )],
    );
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:12:18: error: configs: `addon.namepsace`: no catalog entry has a field `namepsace` (did you mean `namespace`?)",
    );
}

#[test]
fn manifest_and_catalog_errors_have_their_real_place() {
    let env = Env::new();
    // An inherited question's new default that fails its validation: at `defaults:`.
    let dir = layered(&env, "defaults:\n  region: Frankfurt\n", &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with(
            "blueprint.yaml:5:3: error: question `region`: the default fails its own validation"
        ),
        "{out}"
    );
    let dir = layered(&env, "min_scaffold_version: 99.0.0\n", &[]);
    lint_says(
        &env,
        &dir,
        &format!(
            "blueprint.yaml:4:1: error: min_scaffold_version: the blueprint needs scaffold 99.0.0 or newer (this is {}); update scaffold",
            env!("CARGO_PKG_VERSION")
        ),
    );
    let dir = layered(&env, "extends_version: \"~>1\"\n", &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("blueprint.yaml:4:1: error: extends_version: unknown operator `~>`"),
        "{out}"
    );
    let dir = blueprint(&env, &MANIFEST.replace("0.1.0", "\"0.1\""), &[]);
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:2:1: error: version: `0.1` is not a version MAJOR.MINOR.PATCH (e.g. `0.1.0`)",
    );
    // Two files writing one path: both named.
    let dir = blueprint(
        &env,
        MANIFEST,
        &[("files/a.txt", "a\n"), ("files/[[ 'a' ]].txt.tera", "b\n")],
    );
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.contains("error: renders `a.txt`, which `files/") && out.contains("renders too"),
        "{out}"
    );
    // A catalog entry without `chart.version`: at `chart:`'s mapping, not 1:1.
    let entry = "name: extra\nlayer: addons\nnamespace: extra\nchart:\n  name: extra\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:5:3: error: chart: missing field `version`",
    );
    // A patch that is not YAML: at its line.
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml",
            "spec:\n  template: [a\n",
        )],
    );
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml:3:1: error: not YAML"
        ),
        "{out}"
    );
}

#[test]
fn after_naming_a_later_question_of_the_layer_says_so() {
    let env = Env::new();
    let dir = layered(
        &env,
        "questions:\n  - key: team\n    after: squad\n    prompt: Team\n    type: string\n  - key: squad\n    after: environment\n    prompt: Squad\n    type: string\n",
        &[],
    );
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:6:5: error: question `team`: after: `squad` is a question of this layer listed below `team`; list `team` after `squad` instead",
    );
}

#[test]
fn a_patch_of_the_kops_go_template_says_what_to_change_instead() {
    let env = Env::new();
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/envs/[[ environment ]]/2-kops/cluster-template.yaml.patch.yaml",
            "spec:\n  cloudLabels:\n    team: payments\n",
        )],
    );
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("env-files/envs/[[ environment ]]/2-kops/cluster-template.yaml.patch.yaml:1:1: error: the patched file is a Go template (`{{ }}`), not YAML until its tool renders it"),
        "{out}"
    );
}

#[test]
fn removing_the_directory_a_flux_kustomization_reads_is_a_lint_error_at_its_path_line() {
    let env = Env::new();
    let dir = layered(
        &env,
        "remove_files:\n  - \"env-files/apps/[[ environment ]]/\"\n",
        &[],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    // The finding is check's flux.path on the rendering, moved to the template's line.
    let template = "env-files/clusters/[[ environment ]]/50-apps.yaml.tera";
    let line = std::fs::read_to_string(format!("blueprints/default/{template}"))
        .expect("the default blueprint's apps Kustomization")
        .lines()
        .position(|l| l.trim_start().starts_with("path:"))
        .expect("a path line")
        + 1;
    assert_eq!(
        out.stdout,
        format!(
            "{template}:{line}:3: error: Kustomization apps: path `./apps/prod` does not exist in the repo\n"
        )
    );
}

#[test]
fn new_refuses_a_blueprint_whose_removal_breaks_a_reference() {
    let env = Env::new();
    let dir = layered(
        &env,
        "remove_files:\n  - \"env-files/apps/[[ environment ]]/podinfo\"\n",
        &[],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("env-files/apps/[[ environment ]]/kustomization.yaml.tera:10:5: error: Kustomization apps does not build: resources entry `podinfo/` does not exist"),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
}

#[test]
fn list_addons_and_cat_know_a_team_blueprint() {
    let env = Env::new();
    let entry = "name: extra\ndescription: The team's own.\nlayer: addons\nnamespace: extra\ndefault: false\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\n";
    let dir = layered(
        &env,
        "",
        &[
            ("addons/extra.yaml", entry),
            ("files/.sourceignore", "/x/\n"),
        ],
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Inside the repo, the catalog of the blueprint that made it (off the search path).
    let out = run(env
        .scaffold()
        .current_dir(env.path("out"))
        .args(["list", "addons"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.lines().any(|l| l.starts_with("extra ")),
        "{}",
        out.stdout
    );
    let record = answers(&env.path("out"));
    assert_eq!(record["blueprint"]["base"]["source"], "embedded:default");
    assert_eq!(
        record["blueprint"]["digest"].as_str().map(str::len),
        Some(12)
    );
    // cat: the manifest, the answer sets, and a replaced file named for what it is.
    let cat = |path: &str| {
        run(env
            .scaffold()
            .args(["blueprint", "cat"])
            .arg(&dir)
            .arg(path))
    };
    assert!(cat("blueprint.yaml").stdout.starts_with("name: layered\n"));
    assert_eq!(cat("tests/defaults.yaml").stdout, "{}\n");
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml",
            "kind: NodePool
",
        )],
    );
    let out = cat(
        "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera",
    );
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!(
            "error: env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera: blueprint layered replaces it with `env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml` (`scaffold blueprint cat {} env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml`); the base's copy: `scaffold blueprint cat default env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera`\n",
            dir.display()
        )
    );
}

#[test]
fn update_applies_the_blueprints_answer_migrations_and_says_so() {
    let env = Env::new();
    let v1 =
        "questions:\n  - key: legacy\n    prompt: Legacy\n    type: string\n    default: old\n";
    let dir = layered(&env, v1, &[]);
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("out");
    assert_eq!(answers(&repo)["answers"]["legacy"], "old");
    // 1.1.0 renames the answer and one of its values; a typo in the target is refused.
    let v2 = |target: &str| {
        format!(
            "name: layered\nversion: 1.1.0\nextends: default\nquestions:\n  - key: heritage\n    prompt: Heritage\n    type: string\n    default: new\nmigrations:\n  - version: 1.1.0\n    rename: {{legacy: {target}}}\n    values: {{heritage: {{old: vintage}}}}\n"
        )
    };
    std::fs::write(dir.join("blueprint.yaml"), v2("heritag")).expect("v2");
    lint_says(
        &env,
        &dir,
        "blueprint.yaml:11:22: error: migrations 1.1.0: `heritag` is not a question of the blueprint (did you mean `heritage`?)",
    );
    std::fs::write(dir.join("blueprint.yaml"), v2("heritage")).expect("v2");
    // Found again by the source the record keeps (the directory is on no search path).
    let out = run(env.scaffold().current_dir(&repo).args(["update"]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let record = answers(&repo);
    assert_eq!(record["answers"]["heritage"], "vintage");
    assert!(record["answers"]["legacy"].is_null(), "{record:?}");
    let message = env.git(&repo, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("scaffold: update layered 1.0.0 → 1.1.0\n")
            && message.contains(
                "Migrations:\n- layered 1.1.0: answer `legacy` renamed `heritage`\n- layered 1.1.0: values of `heritage` renamed (old → vintage)\n"
            ),
        "{message}"
    );
}

#[test]
fn export_writes_a_blueprint_as_stored_and_init_pins_the_base() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["blueprint", "export", "default", "base"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/blueprints/default/");
    for path in [
        "blueprint.yaml",
        "env-files/envs/[[ environment ]]/2-kops/cluster-template.yaml.tera",
        "addons/velero.yaml",
    ] {
        assert_eq!(
            std::fs::read(env.path("base").join(path)).expect("exported"),
            std::fs::read(format!("{root}{path}")).expect("stored"),
            "{path}"
        );
    }
    // The copy is the same blueprint: same files, same content digest in a record.
    let files = |name: &str| {
        run(env.scaffold().args(["blueprint", "files", name]))
            .stdout
            .lines()
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(files("./base"), files("default"));
    let out = run(env
        .scaffold()
        .args(["blueprint", "export", "default", "base"]));
    assert_ne!(out.code, 0, "an existing directory is not overwritten");

    let out = run(env
        .scaffold()
        .args(["blueprint", "init", "team", "--extends", "default"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = std::fs::read_to_string(env.path("team/blueprint.yaml")).expect("manifest");
    assert!(
        manifest.contains("\nextends_version: \">=0.5.0, <0.6\"\n"),
        "{manifest}"
    );
}

#[test]
fn rebase_merges_a_fork_from_the_base_it_copied_to_the_current_one() {
    let env = Env::new();
    // The old base: the default without its first `.sourceignore` line.
    let out = run(env
        .scaffold()
        .args(["blueprint", "export", "default", "old"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let current = std::fs::read_to_string(env.path("old/files/.sourceignore")).expect("file");
    let (first, rest) = current.split_at(current.find('\n').expect("lines") + 1);
    assert!(!first.trim().is_empty());
    std::fs::write(env.path("old/files/.sourceignore"), rest).expect("old");
    let old_digest =
        env.git(env.work.path(), &["hash-object", "old/files/.sourceignore"])[..12].to_string();
    // The team's fork of the old file, with a line of its own.
    let dir = layered(
        &env,
        &format!("replaces:\n  files/.sourceignore: {old_digest}\n"),
        &[("files/.sourceignore", &format!("{rest}/team/\n"))],
    );
    let out = lint_out(&env, &dir, 0);
    assert!(out.contains("changed since it was copied"), "{out}");
    let out = run(env
        .scaffold()
        .args(["blueprint", "rebase"])
        .arg(&dir)
        .args(["--from", "./old"]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("files/.sourceignore: merged the base's changes"),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("files/.sourceignore")).expect("fork"),
        format!("{current}/team/\n"),
        "the base's new line and the team's own"
    );
    // `replaces` now records the current base: no warning left.
    let out = lint_out(&env, &dir, 0);
    assert_eq!(out, "", "{out}");
}

#[test]
fn lint_and_test_report_a_load_error_the_same_way() {
    let env = Env::new();
    let dir = layered(&env, "defaults:\n  regoin: x\n", &[]);
    let expected = "blueprint.yaml:5:3: error: defaults: `regoin` is not a question of this blueprint or its base (did you mean `region`?)\n";
    lint_says(&env, &dir, expected.trim_end());
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, expected);
}

#[test]
fn files_json_lists_removed_files_and_catalog_patches() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\nchart:\n  name: extra\n  version: 1.0.0\npatches:\n  - file: env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml\n    patch: \"spec: {}\\n\"\n";
    let dir = layered(
        &env,
        "remove_files:\n  - env-files/envs/[[ environment ]]/3-bridge/Makefile.tera\n",
        &[("addons/extra.yaml", entry)],
    );
    let out = scaffold(&env, &["blueprint", "files", "--json"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let has = |path: &str, how: &str, origin: &str| {
        rows.as_array().expect("rows").iter().any(|r| {
            r["path"] == path
                && r["how"] == how
                && r["origin"].as_str().is_some_and(|o| o.starts_with(origin))
        })
    };
    assert!(
        has(
            "env-files/envs/[[ environment ]]/3-bridge/Makefile.tera",
            "removed",
            "layered 1.0.0"
        ),
        "{rows}"
    );
    assert!(
        has(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml",
            "catalog-patch",
            "addons/extra.yaml"
        ),
        "{rows}"
    );
    assert!(has("addons/extra.yaml", "own", "layered 1.0.0"), "{rows}");
    assert!(
        has(
            "env-files/envs/[[ environment ]]/2-kops/main.tf",
            "inherited",
            "default "
        ),
        "{rows}"
    );
}

#[test]
fn an_unclosed_block_names_its_opening_tag_and_the_missing_end() {
    let env = Env::new();
    let dir = layered(
        &env,
        "",
        &[(
            "files/notes.md.tera",
            "# Notes\n[% for zone in zones %]\n- [[ zone ]]\n[% if dns_zone -%]\nzone: [[ dns_zone ]]\n[%- endif %]\n",
        )],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "files/notes.md.tera:2:1: error: `[% for zone in zones %]` is never closed: add `[% endfor %]` where its block ends"
        ),
        "{}{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn a_patched_base_file_that_changed_since_the_patch_is_warned_about() {
    const PATCH: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  weight: 10\n";
    let base =
        "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera";
    let env = Env::new();
    // Without a recorded digest, `show` says which one to record.
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml",
            PATCH,
        )],
    );
    let out = scaffold(&env, &["blueprint", "show"], &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let note = out
        .stderr
        .lines()
        .find(|l| l.starts_with(&format!("note: {base} of default")))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let digest = note
        .split(&format!("\"{base}\": "))
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("digest")
        .to_string();
    assert_eq!(digest.len(), 12, "{note}");

    // The digest of the base the patch was written against: quiet.
    let replaces = |digest: &str| format!("replaces:\n  {base}: {digest}\n");
    let dir = layered(
        &env,
        &replaces(&digest),
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml",
            PATCH,
        )],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(!out.stdout.contains("warning"), "{}", out.stdout);

    // An older base's digest: the base changed under the patch, and lint says so.
    let dir = layered(
        &env,
        &replaces("0123456789ab"),
        &[(
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.patch.yaml",
            PATCH,
        )],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "{base}:1:1: warning: is patched, and its file in default "
        )) && out.stdout.contains(&format!(
            "changed since the patch was written (recorded 0123456789ab, now {digest})"
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn rebase_marks_conflicts_where_the_fork_and_the_new_base_change_the_same_lines() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["blueprint", "export", "default", "old"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let current = std::fs::read_to_string(env.path("old/files/.sourceignore")).expect("file");
    let (first, rest) = current.split_at(current.find('\n').expect("lines") + 1);
    // The old base had another first line; the team changed that same line.
    std::fs::write(
        env.path("old/files/.sourceignore"),
        format!("/old-line/\n{rest}"),
    )
    .expect("old");
    let old_digest =
        env.git(env.work.path(), &["hash-object", "old/files/.sourceignore"])[..12].to_string();
    let manifest_extra = format!("replaces:\n  files/.sourceignore: {old_digest}\n");
    let dir = layered(
        &env,
        &manifest_extra,
        &[("files/.sourceignore", &format!("/team-line/\n{rest}"))],
    );
    let manifest_before = std::fs::read_to_string(dir.join("blueprint.yaml")).expect("manifest");
    let out = run(env
        .scaffold()
        .args(["blueprint", "rebase"])
        .arg(&dir)
        .args(["--from", "./old"]));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with(
            "files/.sourceignore: 1 conflict(s) marked; resolve them, then update `replaces` to "
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("0 merged, 1 with conflicts"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("blueprint rebase: conflicts in files/.sourceignore"),
        "{}",
        out.stderr
    );
    let fork = std::fs::read_to_string(dir.join("files/.sourceignore")).expect("fork");
    assert!(
        fork.starts_with("<<<<<<< ")
            && fork.contains("/team-line/\n")
            && fork.contains(first)
            && fork.contains(">>>>>>> "),
        "{fork}"
    );
    // The digest stays the old base's until the conflict is resolved, and nothing is left
    // half written beside the files.
    assert_eq!(
        std::fs::read_to_string(dir.join("blueprint.yaml")).expect("manifest"),
        manifest_before
    );
    let leftovers: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("scaffold-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn catalog_fields_are_blueprint_data_a_team_extends() {
    const ENTRY: &str = "name: extra\nlayer: addons\nnamespace: extra\nchart:\n  name: extra\n  version: 1.0.0\n  repo: https://charts.example.org\nowner: team-a\nvaluse:\n  replicas: 2\n";
    let env = Env::new();
    // A field nobody declared: a typo (did you mean), or a field the team forgot to declare.
    let dir = layered(&env, "", &[("addons/extra.yaml", ENTRY)]);
    let out = lint_out(&env, &dir, 0);
    assert!(
        out.contains("addons/extra.yaml:9:1: warning: field `valuse` is not a catalog field of this blueprint (did you mean `values`?)"),
        "{out}"
    );
    assert!(
        out.contains("addons/extra.yaml:8:1: warning: field `owner` is not a catalog field of this blueprint;"),
        "{out}"
    );
    // Declared in the team's blueprint.yaml, the field is the team's: no Rust involved.
    let dir = layered(
        &env,
        "catalog_fields:\n  owner: the team that owns the addon\n",
        &[("addons/extra.yaml", &ENTRY.replace("valuse:", "values:"))],
    );
    let out = lint_out(&env, &dir, 0);
    assert!(!out.contains("catalog field"), "{out}");
    let show = scaffold(&env, &["blueprint", "show"], &dir);
    assert!(
        show.stdout
            .contains("  owner: the team that owns the addon")
            && show.stdout.contains("  values: its Helm values"),
        "the base's fields and the team's, merged: {}",
        show.stdout
    );
}

#[test]
fn lint_checks_a_questions_on_change_template() {
    let env = Env::new();
    let question = |on_change: &str| {
        format!(
            "questions:\n  - key: owner\n    prompt: Owner\n    type: string\n    default: me\n    on_change: \"{on_change}\"\n"
        )
    };
    let dir = layered(&env, &question("was [[ befor ]], now [[ after ]]"), &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.contains("blueprint.yaml:9:5: error: question `owner`: on_change reads `befor`; it is rendered over key, before and after only (did you mean `before`?)"),
        "{out}"
    );
    let dir = layered(&env, &question("was [[ before "), &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.contains("question `owner`: on_change does not parse"),
        "{out}"
    );
    let dir = layered(
        &env,
        &question("[[ key ]] was [[ before ]], now [[ after ]]"),
        &[],
    );
    assert_eq!(lint_out(&env, &dir, 0), "");
}

// Issue 43: authoring round three.

/// A team addon whose chart ships its own CRDs, with a config using them.
const TRUST_ENTRY: &str = "name: trust\nlayer: addons\nnamespace: trust\ncreate_namespace: true\ndefault: true\nrequires: []\ndepends_on: []\nchart:\n  name: trust\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: trust\n    url: https://charts.example.org/\ncrds:\n  policy: CreateReplace\n  provides: [trust.example.org]\n  uses: []\nvalues: {}\nbridge_values: {}\nrelease_depends_on: []\nconfigs:\n  - file: bundle.yaml\n    content: |\n      apiVersion: trust.example.org/v1\n      kind: Bundle\n      metadata:\n        name: team-ca\n      spec:\n        sources: []\n";

#[test]
fn check_takes_crd_providers_from_the_blueprints_catalog() {
    let env = Env::new();
    let dir = layered(&env, "", &[("addons/trust.yaml", TRUST_ENTRY)]);
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = new(&env, &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(env.scaffold().arg("check").arg(env.path("out")));
    assert!(
        !out.stdout.contains("order.crd-provider"),
        "{}{}",
        out.stdout,
        out.stderr
    );
    // Without `crds.provides` the config's group has no provider: still an error.
    let dir = layered(
        &env,
        "",
        &[(
            "addons/trust.yaml",
            &TRUST_ENTRY.replace("provides: [trust.example.org]", "provides: []"),
        )],
    );
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("[order.crd-provider]"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_test_case_may_expect_findings_and_fails_when_they_do_not_appear() {
    let env = Env::new();
    let unprovided = TRUST_ENTRY.replace("provides: [trust.example.org]", "provides: []");
    let config = "infrastructure/addons-config/trust/configs.yaml";
    let case = format!("answers: {{}}\nexpect_findings: [order.crd-provider@{config}]\n");
    let dir = layered(
        &env,
        "",
        &[
            ("addons/trust.yaml", &unprovided),
            ("tests/defaults.yaml", &case),
        ],
    );
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The same expectation fails once the entry provides the group.
    let dir = layered(
        &env,
        "",
        &[
            ("addons/trust.yaml", TRUST_ENTRY),
            ("tests/defaults.yaml", &case),
        ],
    );
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "[blueprint.test-expect-finding] expected order.crd-provider in {config}, and check found no such error there"
        )),
        "{}",
        out.stdout
    );
    // An unexpected finding still fails the case, and a malformed expectation is named.
    let dir = layered(
        &env,
        "",
        &[
            ("addons/trust.yaml", &unprovided),
            (
                "tests/defaults.yaml",
                "answers: {}\nexpect_findings: [order.crd-provider]\n",
            ),
        ],
    );
    let out = scaffold(&env, &["blueprint", "test"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("is not RULE@PATH"), "{}", out.stdout);
}

const OLD_DEFAULT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/old-blueprints/default-0.2.1"
);

/// Every file of a tree below `root`, relative, `/`-separated.
fn files_below(root: &Path) -> Vec<String> {
    walk(root)
        .into_iter()
        .filter(|p| p.is_file())
        .filter_map(|p| {
            p.strip_prefix(root)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

#[test]
fn rebase_carries_forks_of_the_old_default_across_the_environment_move() {
    let env = Env::new();
    // A team layer forked from default 0.2.1: a fork of every file of its repo tree, three
    // of them with a line of the team's own.
    // The old base as stored, with one file the new base has in no form.
    let old_base = env.path("old");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(OLD_DEFAULT)
        .arg(&old_base)
        .status()
        .expect("cp");
    assert!(copied.success());
    std::fs::write(old_base.join("files/GONE.md"), "dropped in 0.4\n").expect("gone");
    let old_files = files_below(&old_base.join("files"));
    let mine = [
        "1-prerequisites/main.tf",
        "infrastructure/karpenter/node-pool.yaml.tera",
        "apps/[[ environment ]]/podinfo/release.yaml",
    ];
    let mut forks: Vec<(String, String)> = Vec::new();
    for path in &old_files {
        let mut text =
            std::fs::read_to_string(old_base.join("files").join(path)).expect("old file");
        if mine.contains(&path.as_str()) {
            text.push_str("# team-line\n");
        }
        forks.push((format!("files/{path}"), text));
    }
    let borrowed: Vec<(&str, &str)> = forks
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let dir = layered(&env, "", &borrowed);
    let out = run(env
        .scaffold()
        .args(["blueprint", "rebase"])
        .arg(&dir)
        .arg("--from")
        .arg(&old_base));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "files/GONE.md: not carried (default 0.5.0 has no such file, and no move or rename of it was found)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("not carried: files/GONE.md"),
        "{}",
        out.stderr
    );
    // Every other fork is carried: said so, and gone from its old path.
    for path in old_files.iter().filter(|p| *p != "GONE.md") {
        let old = format!("files/{path}");
        let said = out.stdout.lines().any(|l| {
            l.starts_with(&format!("{old}: merged the base's changes (0.5.0)"))
                || l.starts_with(&format!("{old}: unchanged in 0.5.0"))
        });
        assert!(said, "{old} not carried:\n{}", out.stdout);
        let moved = out.stdout.contains(&format!("{old}: ")) && !dir.join(&old).exists();
        let stayed = dir.join(&old).exists()
            && !out
                .stdout
                .contains(&format!("{old}: merged the base's changes (0.5.0) (moved"));
        assert!(moved || stayed, "{old}");
    }
    // The team's lines follow their files to the new places, over the new base's text.
    for (old, new) in [
        (
            "files/1-prerequisites/main.tf",
            "env-files/envs/[[ environment ]]/1-prerequisites/main.tf",
        ),
        (
            "files/infrastructure/karpenter/node-pool.yaml.tera",
            "env-files/environments/[[ environment ]]/infrastructure/karpenter/node-pool.yaml.tera",
        ),
    ] {
        assert!(
            out.stdout.contains(&format!("(moved to {new})")),
            "{}{}",
            out.stdout,
            out.stderr
        );
        let text = std::fs::read_to_string(dir.join(new)).expect("carried");
        assert!(text.contains("# team-line\n"), "{text}");
        assert!(!dir.join(old).exists());
    }
    // A fork the new base moved without a migration is found by its name and text.
    assert!(
        out.stdout.contains("files/apps/[[ environment ]]/podinfo/release.yaml: unchanged in 0.5.0 (moved to env-files/apps/[[ environment ]]/podinfo/release.yaml)"),
        "{}",
        out.stdout
    );
    let release =
        std::fs::read_to_string(dir.join("env-files/apps/[[ environment ]]/podinfo/release.yaml"))
            .expect("release");
    assert!(release.ends_with("# team-line\n"), "{release}");
}

#[test]
fn rebase_merges_as_git_merge_file_does() {
    if !crate::support::require_tool("git") {
        return;
    }
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["blueprint", "export", "default", "current"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let new = std::fs::read_to_string(env.path("current/files/.sourceignore")).expect("file");
    let lines: Vec<&str> = new.split_inclusive('\n').collect();
    // The old base lacks line 3 (so the new base inserts it there) and, for the second
    // case, has an extra last line the new base dropped.
    let old_insert = [&lines[..2], &lines[3..]].concat().concat();
    let cases = [
        // Both insert at the same place: a conflict, as git says.
        (
            old_insert.clone(),
            [&lines[..2], &["/team/\n"][..], &lines[3..]]
                .concat()
                .concat(),
        ),
        // Both insert the same line: no conflict.
        (old_insert.clone(), new.clone()),
        // Insertions at different places: both kept.
        (
            old_insert.clone(),
            [&lines[..2], &lines[3..], &["/team/\n"][..]]
                .concat()
                .concat(),
        ),
        // The fork changes a line next to the base's insertion: a conflict.
        (
            old_insert.clone(),
            [&lines[..1], &["/changed/\n"][..], &lines[3..]]
                .concat()
                .concat(),
        ),
    ];
    for (index, (old, fork)) in cases.iter().enumerate() {
        let root = env.path(&format!("case{index}"));
        std::fs::create_dir_all(&root).expect("dir");
        let old_base = root.join("old");
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(env.path("current"))
            .arg(&old_base)
            .status()
            .expect("cp");
        assert!(copied.success());
        std::fs::write(old_base.join("files/.sourceignore"), old).expect("old");
        let dir = blueprint(
            &env,
            "name: layered\nversion: 1.0.0\nextends: default\n",
            &[("files/.sourceignore", fork)],
        );
        let out = run(env
            .scaffold()
            .args(["blueprint", "rebase"])
            .arg(&dir)
            .arg("--from")
            .arg(&old_base));
        let ours = std::fs::read_to_string(dir.join("files/.sourceignore")).expect("merged");
        // git merge-file on the same three texts, with rebase's labels.
        for (name, text) in [("fork.txt", fork), ("old.txt", old), ("new.txt", &new)] {
            std::fs::write(root.join(name), text).expect("input");
        }
        let git = std::process::Command::new("git")
            .current_dir(&root)
            .args([
                "merge-file",
                "-p",
                "--diff3",
                "-L",
                "yours",
                "-L",
                "base",
                "-L",
                "default",
                "fork.txt",
                "old.txt",
                "new.txt",
            ])
            .output()
            .expect("git merge-file");
        let theirs = String::from_utf8(git.stdout).expect("utf-8");
        assert_eq!(
            ours,
            theirs,
            "case {index}: {}",
            String::from_utf8_lossy(&git.stderr)
        );
        let git_conflicts = git.status.code().expect("exit");
        assert_eq!(
            out.code,
            i32::from(git_conflicts > 0),
            "case {index}: {}{}",
            out.stdout,
            out.stderr
        );
    }
}

#[test]
fn moves_render_per_environment_at_update_and_are_linted() {
    let env = Env::new();
    let doc = (
        "env-files/envs/[[ environment ]]/docs/OWNERS.md.tera",
        "owners of [[ environment ]]\n",
    );
    let dir = layered(&env, "", &[doc]);
    let out = run(env
        .scaffold()
        .args(["new", "out", "--defaults", "--author", "T <t@example.org>"])
        .args(["--set", "environments=dev,prod", "--blueprint"])
        .arg(&dir));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("out");
    assert!(repo.join("envs/prod/docs/OWNERS.md").is_file());
    // 1.1.0 renames the file in every environment; a move lint cannot render, one onto
    // itself and two onto one target are refused at their line first.
    let v2 = |moves: &str| {
        format!(
            "name: layered\nversion: 1.1.0\nextends: default\nmigrations:\n  - version: 1.1.0\n    moves:\n{moves}"
        )
    };
    let moved = "env-files/envs/[[ environment ]]/docs/TEAM.md.tera";
    std::fs::remove_file(dir.join(doc.0)).expect("old place");
    std::fs::write(dir.join(moved), doc.1).expect("new place");
    std::fs::write(
        dir.join("blueprint.yaml"),
        v2("      \"envs/[[ environment ]]/docs/OWNERS.md\": \"envs/[[ environmnt ]]/docs/TEAM.md\"\n"),
    )
    .expect("v2");
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("blueprint.yaml:7:48: error: ") && out.contains("environmnt"),
        "{out}"
    );
    std::fs::write(
        dir.join("blueprint.yaml"),
        v2("      README.md: \"envs/[[ environment ]]/docs/TEAM.md\"\n      \"envs/[[ environment ]]/docs/OWNERS.md\": \"envs/[[ environment ]]/docs/TEAM.md\"\n      docs/x.md: docs/x.md\n"),
    )
    .expect("v2");
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.contains("migrations 1.1.0 moves `envs/[[ environment ]]/docs/OWNERS.md`: to `envs/prod/docs/TEAM.md`, where `README.md` moves too (environment prod)")
            && out.contains("migrations 1.1.0 moves `docs/x.md`: onto itself (`docs/x.md`)"),
        "{out}"
    );
    std::fs::write(
        dir.join("blueprint.yaml"),
        v2("      \"envs/[[ environment ]]/docs/OWNERS.md\": \"envs/[[ environment ]]/docs/TEAM.md\"\n"),
    )
    .expect("v2");
    assert_eq!(lint_out(&env, &dir, 0), "");
    let out = run(env.scaffold().current_dir(&repo).args(["update"]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    for name in ["dev", "prod"] {
        assert!(!repo.join(format!("envs/{name}/docs/OWNERS.md")).exists());
        assert_eq!(
            std::fs::read_to_string(repo.join(format!("envs/{name}/docs/TEAM.md"))).expect("moved"),
            format!("owners of {name}\n")
        );
    }
}

#[test]
fn replacing_the_inherited_environment_question_is_a_lint_error() {
    let env = Env::new();
    let question = "questions:\n  - key: environment\n    prompt: Environment\n    type: choice\n    choices: [staging, production]\n    default: staging\n";
    let dir = layered(&env, question, &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("blueprint.yaml:5:5: error: question `environment` replaces the inherited one, which each environment answers with its own name: remove it, and restrict the environment names with `item_regex` on `environments` instead"),
        "{out}"
    );
    let out = new(&env, &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(!env.path("out").exists());
}

#[test]
fn a_dot_dot_from_an_answer_is_the_answers_error_exit_2() {
    let env = Env::new();
    let manifest = format!(
        "{MANIFEST}  - key: team\n    prompt: Team\n    type: string\n    default: platform\n"
    );
    let dir = blueprint(&env, &manifest, &[("files/[[ team ]]/RUNBOOK.md", "x\n")]);
    let out = run(env
        .scaffold()
        .args([
            "new",
            "out",
            "--defaults",
            "--set",
            "team=../..",
            "--blueprint",
        ])
        .arg(&dir));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("rendered path `../../RUNBOOK.md` escapes the repository: an answer it reads holds a `..` or `.` path segment; answer a plain name"),
        "{}",
        out.stderr
    );
    assert!(!env.path("out").exists());
}

#[test]
fn blueprint_lint_takes_a_blueprint_name_as_test_does() {
    let env = Env::new();
    let out = run(env.scaffold().args(["blueprint", "lint", "default"]));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("blueprint lint: 0 errors"),
        "{}",
        out.stderr
    );
    let out = run(env.scaffold().args(["blueprint", "lint", "nosuch"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn a_default_that_is_not_an_answer_is_reported_at_its_line() {
    let env = Env::new();
    let dir = layered(&env, "defaults:\n  node_max: ten\n", &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with(
            "blueprint.yaml:5:3: error: question `node_max`: the default is not an answer: "
        ),
        "{out}"
    );
}

#[test]
fn an_include_of_a_missing_partial_in_an_environment_tree_is_at_its_line() {
    let env = Env::new();
    let dir = layered(
        &env,
        "",
        &[(
            "env-files/envs/[[ environment ]]/docs/COST.md.tera",
            "cost\n[% include \"partials/cost-labels.tera\" %]\n",
        )],
    );
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with(
            "env-files/envs/[[ environment ]]/docs/COST.md.tera:2:12: error: Unknown template"
        ),
        "{out}"
    );
}

#[test]
fn removing_an_addon_another_depends_on_is_blamed_on_remove_addons() {
    let env = Env::new();
    let dir = layered(&env, "remove_addons:\n  - prometheus-operator-crds\n", &[]);
    let out = lint_out(&env, &dir, 1);
    assert!(
        out.starts_with("blueprint.yaml:5:5: error: remove_addons: `prometheus-operator-crds` is a dependency of `"),
        "{out}"
    );
    let dir = layered(
        &env,
        "remove_addons:\n  - prometheus-operator-crds\n  - kube-prometheus-stack\n",
        &[],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert!(
        !out.stdout.contains("depends_on names unknown addon"),
        "{}",
        out.stdout
    );
}

#[test]
fn lint_from_the_previous_version_wants_a_migration_for_moved_paths() {
    let env = Env::new();
    let doc = (
        "env-files/envs/[[ environment ]]/docs/OWNERS.md.tera",
        "owners of [[ environment ]]\n",
    );
    let dir = layered(&env, "", &[doc]);
    let old = env.path("previous");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(&dir)
        .arg(&old)
        .status()
        .expect("cp");
    assert!(copied.success());
    // 1.1.0 writes the file elsewhere, with no migration: an error at `version:`.
    std::fs::remove_file(dir.join(doc.0)).expect("old place");
    let moved = dir.join("env-files/envs/[[ environment ]]/runbooks/OWNERS.md.tera");
    std::fs::create_dir_all(moved.parent().expect("parent")).expect("dir");
    std::fs::write(&moved, doc.1).expect("new place");
    let manifest = |extra: &str| {
        std::fs::write(
            dir.join("blueprint.yaml"),
            format!("name: layered\nversion: 1.1.0\nextends: default\n{extra}"),
        )
        .expect("manifest")
    };
    manifest("");
    let lint_from = || {
        run(env
            .scaffold()
            .args(["blueprint", "lint"])
            .arg(&dir)
            .arg("--from")
            .arg(&old))
    };
    let out = lint_from();
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "blueprint.yaml:2:1: error: `envs/prod/docs/OWNERS.md` of 1.0.0 moved to `envs/prod/runbooks/OWNERS.md` with no migration: add `moves: {envs/prod/docs/OWNERS.md: envs/prod/runbooks/OWNERS.md}` under a `migrations:` entry of version 1.1.0\n"
    );
    // Without --from, lint cannot know: clean.
    assert_eq!(lint_out(&env, &dir, 0), "");
    // A move of a path 1.0.0 never wrote is an error at its line; the right move is clean.
    manifest(
        "migrations:\n  - version: 1.1.0\n    moves:\n      \"envs/[[ environment ]]/docs/OWNER.md\": \"envs/[[ environment ]]/runbooks/OWNERS.md\"\n",
    );
    let out = lint_from();
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("blueprint.yaml:7:7: warning: moves `envs/[[ environment ]]/docs/OWNER.md`: layered 1.0.0 wrote no `envs/prod/docs/OWNER.md`: the move applies only where a repo has that path of its own (a misspelt source never applies)\n"),
        "{}",
        out.stdout
    );
    manifest(
        "migrations:\n  - version: 1.1.0\n    moves:\n      \"envs/[[ environment ]]/docs/OWNERS.md\": \"envs/[[ environment ]]/runbooks/OWNERS.md\"\n",
    );
    let out = lint_from();
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "");
}

/// Issue 40: a file rendered once for every environment, or a question answered once,
/// that reads an environment's own value is refused at its line, with the fix; the same
/// values in an environment's tree are fine.
#[test]
fn lint_refuses_an_environment_value_in_a_shared_tree() {
    let env = Env::new();
    let fix = "move it to an environment-scoped tree (`scope: environment` or `addon-environment` under `trees:`), or substitute a per-cluster value from `cluster-vars` (`${VAR}`, written by each environment's bridge)";
    let dir = layered(
        &env,
        "questions:\n  - key: cost_center\n    after: environment\n    prompt: Cost center\n    type: string\n    default: \"[[ environment ]]-platform\"\n",
        &[
            (
                "files/scripts/preflight.sh.tera",
                "#!/bin/sh\n# [[ name ]]\nwant_region=\"[[ region ]]\"\n",
            ),
            (
                "env-files/envs/[[ environment ]]/preflight.sh.tera",
                "want_region=\"[[ region ]]\" # [[ environment ]]\n",
            ),
        ],
    );
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "blueprint.yaml:9:5: error: question `cost_center`: `default` reads `environment`, an environment's own value, but `cost_center` is answered once for every environment: mark it `per_environment: true`, or read only shared answers\n\
             files/scripts/preflight.sh.tera:3:17: error: `region` is an environment's own value, but this file renders once for every environment (tree `files`); {fix}\n"
        )
    );
    let json = scaffold(&env, &["blueprint", "lint", "--json"], &dir);
    assert!(
        json.stdout.contains("\"blueprint.environment-scope\""),
        "{}",
        json.stdout
    );
}

/// Issue 40: lint renders two environments that run different addons, and each alone: an
/// addon's shared file that reads the addons of the whole repo (istio's Gateway scaling as
/// default 0.3.0 switched it on metrics-server) is refused at the line that differs.
#[test]
fn lint_refuses_a_shared_addon_file_that_reads_the_other_environments_addons() {
    let env = Env::new();
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/old-blueprints/default-0.3.0/addons/istio.yaml"
    );
    let istio = std::fs::read_to_string(old).expect("istio 0.3.0");
    let dir = layered(&env, "", &[("addons/istio.yaml", &istio)]);
    let out = scaffold(&env, &["blueprint", "lint"], &dir);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = istio
        .lines()
        .position(|l| l.trim() == "horizontalPodAutoscaler: |")
        .expect("the HPA overlay")
        + 1;
    assert!(
        out.stdout.starts_with(&format!(
            "addons/istio.yaml:{line}:9: error: `infrastructure/addons-config/istio/configs.yaml` renders once for every environment but reads what differs between them: with environment lint-b alone its line `horizontalPodAutoscaler: |`"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
}

/// Issue 40: a catalog patch of a file every environment shares, from an addon some
/// environments do not run, would land there too: refused at the patch's `file`.
#[test]
fn lint_refuses_a_catalog_patch_of_a_shared_file_from_an_optional_addon() {
    let env = Env::new();
    let entry = "name: extra\nlayer: addons\nnamespace: extra\ncreate_namespace: true\ndefault: false\nrequires: []\ndepends_on: []\nchart:\n  name: extra\n  version: 1.0.0\n  source:\n    kind: HelmRepository\n    name: extra\n    url: https://charts.example.org/\ncrds:\n  policy: CreateReplace\n  provides: []\n  uses: []\nvalues: {}\nbridge_values: {}\nrelease_depends_on: []\nconfigs: []\npatches:\n  - file: files/renovate.json\n    patch: |\n      extends: [\"config:recommended\"]\n";
    let dir = layered(&env, "", &[("addons/extra.yaml", entry)]);
    lint_says(
        &env,
        &dir,
        "addons/extra.yaml:24:11: error: patches: `files/renovate.json` renders once for every environment, so this patch lands in environments that do not run extra; patch a file of an environment-scoped tree (applied only where the addon runs), or make the addon `always`",
    );
}

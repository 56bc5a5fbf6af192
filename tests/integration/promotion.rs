//! Issue 41: promotion over a default repo of three environments that run different
//! addons: the platform's own components and their dependencies move, what the target
//! owns stays, a removed key is removed (never `null`), and nothing moved makes no commit.
use std::path::{Path, PathBuf};

use crate::support::{Env, run};

fn three(env: &Env) -> PathBuf {
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,staging,prod",
        "--set",
        "dev.addons=istio,metrics-server",
        "--set",
        "staging.addons=metrics-server",
        "--set",
        "prod.addons=istio,reloader",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path("p")
}

fn scaffold(env: &Env, args: &[&str]) -> crate::support::Output {
    run(env.scaffold().current_dir(env.path("p")).args(args))
}

fn promote(env: &Env, args: &[&str]) -> crate::support::Output {
    let mut all = vec!["promote"];
    all.extend_from_slice(args);
    let out = scaffold(env, &all);
    assert_eq!(out.code, 0, "{all:?}: {}{}", out.stdout, out.stderr);
    out
}

/// The overlay folder of `component` (in `layer_dir`) in `env`.
fn overlay(dir: &Path, env: &str, layer_dir: &str, component: &str) -> PathBuf {
    dir.join(format!("environments/{env}/{layer_dir}/{component}"))
}

/// Every file of the folder, concatenated in name order.
fn text_of(folder: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read"))
        .collect()
}

/// Replaces `from` with `to` in the folder's files, as a hand edit or Renovate would.
fn edit(folder: &Path, from: &str, to: &str) {
    let mut edited = false;
    for entry in std::fs::read_dir(folder).expect("folder") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        if text.contains(from) {
            std::fs::write(&path, text.replace(from, to)).expect("write");
            edited = true;
        }
    }
    assert!(edited, "{from} in {}", folder.display());
}

fn commit(env: &Env, dir: &Path, message: &str) {
    env.git(dir, &["commit", "-qam", message]);
}

fn head(env: &Env, dir: &Path) -> String {
    env.git(dir, &["log", "-1", "--format=%B"])
}

#[test]
fn an_istio_group_and_a_karpenter_bump_move_with_one_promote_each() {
    let env = Env::new();
    let dir = three(&env);
    let addons = "infrastructure/addons";
    // Renovate's istio group bumps istiod and istio-base together in dev.
    for component in ["istio", "istio-base"] {
        edit(
            &overlay(&dir, "dev", addons, component),
            "\"1.30.3\"",
            "\"1.30.4\"",
        );
    }
    commit(&env, &dir, "chore(deps): update istio to 1.30.4");
    promote(&env, &["--from", "dev", "--to", "prod", "istio"]);
    for component in ["istio", "istio-base"] {
        let prod = text_of(&overlay(&dir, "prod", addons, component));
        assert!(prod.contains("\"1.30.4\""), "{component}: {prod}");
    }
    let message = head(&env, &dir);
    assert!(
        message.contains("- istio 1.30.3 → 1.30.4")
            && message.contains("- istio-base 1.30.3 → 1.30.4"),
        "{message}"
    );

    // Karpenter and its CRDs (always on, never chosen) move together, named by either.
    let karpenter = overlay(&dir, "dev", "infrastructure/karpenter", "karpenter");
    let crds = overlay(&dir, "dev", "infrastructure/crds", "karpenter-crd");
    edit(&karpenter, "1.14.1", "1.14.2");
    edit(&crds, "1.14.1", "1.14.2");
    commit(&env, &dir, "chore(deps): update karpenter to 1.14.2");
    promote(&env, &["--from", "dev", "--to", "prod", "karpenter-crd"]);
    for (layer, component) in [
        ("infrastructure/karpenter", "karpenter"),
        ("infrastructure/crds", "karpenter-crd"),
    ] {
        let prod = text_of(&overlay(&dir, "prod", layer, component));
        assert!(
            prod.contains("1.14.2") && !prod.contains("1.14.1"),
            "{component}: {prod}"
        );
        let staging = text_of(&overlay(&dir, "staging", layer, component));
        assert!(staging.contains("1.14.1"), "{component}: {staging}");
    }
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    let out = scaffold(&env, &["promote", "--from", "dev", "--to", "prod"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("nothing to do")
            && out.stdout.contains("karpenter")
            && out.stdout.contains("aws-load-balancer-controller"),
        "{}",
        out.stdout
    );
}

#[test]
fn prods_own_sizing_survives_three_promotions_and_a_removed_key_is_removed() {
    let env = Env::new();
    let dir = three(&env);
    let set = |env_name: &str, value: &str| {
        let out = scaffold(
            &env,
            &["add-addon", "istio", "--env", env_name, "--helm-set", value],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    };
    set("prod", "autoscaleMin=5");
    set("dev", "autoscaleMin=3");
    let prod_istio = overlay(&dir, "prod", "infrastructure/addons", "istio");
    let dev_istio = overlay(&dir, "dev", "infrastructure/addons", "istio");
    for (round, version) in ["1.30.4", "1.30.5", "1.30.6"].iter().enumerate() {
        let before = format!("\"1.30.{}\"", round + 3);
        edit(&dev_istio, &before, &format!("\"{version}\""));
        if round == 1 {
            // The source drops a value: the target drops it too, never writing `null`.
            edit(&dev_istio, "    pdb:\n      minAvailable: 1\n", "");
        }
        commit(&env, &dir, &format!("bump istio to {version}"));
        let out = promote(&env, &["--from", "dev", "--to", "prod", "istio"]);
        assert!(
            out.stderr.contains("kept") || out.stdout.contains("kept"),
            "{}{}",
            out.stdout,
            out.stderr
        );
        let prod = text_of(&prod_istio);
        assert!(prod.contains(&format!("\"{version}\"")), "{prod}");
        assert!(prod.contains("autoscaleMin: 5"), "round {round}: {prod}");
        assert!(!prod.contains("null"), "round {round}: {prod}");
        if round >= 1 {
            assert!(!prod.contains("pdb"), "round {round}: {prod}");
        }
    }
    // `--values` takes the source's too.
    promote(
        &env,
        &["--from", "dev", "--to", "prod", "istio", "--values"],
    );
    assert!(text_of(&prod_istio).contains("autoscaleMin: 3"));
}

#[test]
fn values_with_a_key_moves_that_key_of_the_targets_own_and_keeps_the_rest() {
    let env = Env::new();
    let dir = three(&env);
    for (env_name, value) in [
        ("prod", "autoscaleMin=5"),
        ("prod", "autoscaleMax=9"),
        ("dev", "autoscaleMin=3"),
    ] {
        let out = scaffold(
            &env,
            &["add-addon", "istio", "--env", env_name, "--helm-set", value],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let head_before = env.git(&dir, &["rev-parse", "HEAD"]);
    // A key prod does not own, or a component not promoted: refused, naming what it owns.
    for key in ["istio:replicas", "reloader:autoscaleMin"] {
        let out = scaffold(
            &env,
            &[
                "promote", "--from", "dev", "--to", "prod", "istio", "--values", key,
            ],
        );
        assert_eq!(out.code, 2, "{key}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert!(
            out.stderr.contains("its own: autoscaleMax, autoscaleMin")
                || out.stderr.contains("its own: none"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head_before);
    let out = promote(
        &env,
        &[
            "--from",
            "dev",
            "--to",
            "prod",
            "istio",
            "--values",
            "istio:autoscaleMin",
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let istio = report["promoted"]
        .as_array()
        .and_then(|all| all.iter().find(|e| e["component"] == "istio"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        istio["moved"],
        serde_json::json!(["autoscaleMin"]),
        "{report}"
    );
    assert_eq!(
        istio["kept"],
        serde_json::json!(["autoscaleMax"]),
        "{report}"
    );
    let prod = text_of(&overlay(&dir, "prod", "infrastructure/addons", "istio"));
    assert!(prod.contains("autoscaleMin: 3"), "{prod}");
    assert!(prod.contains("autoscaleMax: 9"), "{prod}");
    // The key is the source's now: the next promotion keeps only autoscaleMax.
    let out = promote(&env, &["--from", "dev", "--to", "prod", "istio"]);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("kept (the target's own): autoscaleMax"),
        "{said}"
    );
    assert!(!said.contains("autoscaleMax, autoscaleMin"), "{said}");
}

#[test]
fn a_hand_edit_in_the_target_makes_no_empty_commit() {
    let env = Env::new();
    let dir = three(&env);
    let prod = overlay(&dir, "prod", "infrastructure/addons", "istio");
    edit(
        &prod,
        "accessLogFile: /dev/stdout",
        "accessLogFile: /dev/null",
    );
    commit(&env, &dir, "prod logs nowhere");
    let before = env.git(&dir, &["rev-parse", "HEAD"]);
    for _ in 0..2 {
        let out = promote(&env, &["--from", "dev", "--to", "prod"]);
        assert!(out.stdout.contains("nothing to do"), "{}", out.stdout);
        assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), before);
    }
    // dev changing the same value would overwrite the hand edit: refused, nothing written.
    let dev = overlay(&dir, "dev", "infrastructure/addons", "istio");
    edit(
        &dev,
        "accessLogFile: /dev/stdout",
        "accessLogFile: /dev/stderr",
    );
    commit(&env, &dir, "dev logs to stderr");
    let out = scaffold(&env, &["promote", "--from", "dev", "--to", "prod"]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("would conflict") && out.stderr.contains("meshConfig.accessLogFile"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn promote_json_lists_what_moved_and_what_stayed() {
    let env = Env::new();
    let dir = three(&env);
    let out = scaffold(
        &env,
        &[
            "add-addon",
            "istio",
            "--env",
            "prod",
            "--helm-set",
            "autoscaleMin=5",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    edit(
        &overlay(&dir, "dev", "infrastructure/addons", "istio"),
        "\"1.30.3\"",
        "\"1.30.4\"",
    );
    commit(&env, &dir, "bump istio");
    let out = promote(&env, &["--from", "dev", "--to", "prod", "istio", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let istio = report["promoted"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["component"] == "istio"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(istio["version_before"], "1.30.3", "{report}");
    assert_eq!(istio["version_after"], "1.30.4", "{report}");
    assert_eq!(
        istio["kept"],
        serde_json::json!(["autoscaleMin"]),
        "{report}"
    );
    assert!(report["commit"].is_string(), "{report}");
}

#[test]
fn a_new_environment_starts_from_its_sources_current_overlays() {
    let env = Env::new();
    let dir = three(&env);
    let out = scaffold(
        &env,
        &[
            "add-addon",
            "istio",
            "--env",
            "dev",
            "--helm-set",
            "autoscaleMin=3",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dev = overlay(&dir, "dev", "infrastructure/addons", "istio");
    edit(&dev, "\"1.30.3\"", "\"1.30.4\"");
    edit(
        &dev,
        "accessLogFile: /dev/stdout",
        "accessLogFile: /dev/stderr",
    );
    commit(&env, &dir, "dev: istio 1.30.4, logs to stderr");
    let out = scaffold(&env, &["env", "add", "qa", "--from", "dev"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("takes dev's istio 1.30.4 (values: autoscaleMin, meshConfig.accessLogFile)"),
        "{said}"
    );
    let qa = text_of(&overlay(&dir, "qa", "infrastructure/addons", "istio"));
    for want in [
        "\"1.30.4\"",
        "autoscaleMin: 3",
        "accessLogFile: /dev/stderr",
    ] {
        assert!(qa.contains(want), "{want}: {qa}");
    }
    assert!(!qa.contains("null"), "{qa}");
    let message = head(&env, &dir);
    assert!(message.contains("Taken from dev's overlays"), "{message}");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

/// The Kubernetes version of an environment's cluster spec values.
fn kubernetes_of(dir: &Path, env: &str) -> String {
    let values = std::fs::read_to_string(dir.join(format!("envs/{env}/2-kops/values.yaml")))
        .expect("values.yaml");
    values
        .lines()
        .find(|l| l.trim_start().starts_with("kubernetesVersion:"))
        .map(|l| {
            l.split(':')
                .nth(1)
                .unwrap_or_default()
                .trim()
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_default()
}

/// The value of `VAR := value` in one of an environment's Makefiles.
fn make_pin(dir: &Path, env: &str, makefile: &str, var: &str) -> String {
    let text =
        std::fs::read_to_string(dir.join(format!("envs/{env}/{makefile}"))).expect("Makefile");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{var} := ")))
        .unwrap_or_default()
        .to_string()
}

/// What the environment's runbook records in `envs/ENV/applied-versions.yaml` once its
/// cluster runs the versions its files pin (2-kops and 3-bridge make targets), committed.
fn record_applied(env: &Env, dir: &Path, name: &str) {
    let provider = |root: &str| {
        let versions = std::fs::read_to_string(dir.join(format!("envs/{name}/{root}/versions.tf")))
            .expect("versions.tf");
        versions
            .lines()
            .find_map(|l| l.trim().strip_prefix("version = \""))
            .map(|v| v.trim_end_matches('"').to_string())
            .unwrap_or_default()
    };
    let text = format!(
        "aws_provider_version: \"{}\"\nflux_version: \"{}\"\nkops_version: \"{}\"\nkubernetes_provider_version: \"{}\"\nkubernetes_version: \"{}\"\n",
        provider("2-kops"),
        make_pin(dir, name, "3-bridge/Makefile", "FLUX_VERSION"),
        make_pin(dir, name, "2-kops/Makefile", "KOPS_VERSION"),
        provider("3-bridge"),
        kubernetes_of(dir, name)
    );
    std::fs::write(dir.join(format!("envs/{name}/applied-versions.yaml")), text).expect("write");
    env.git(dir, &["add", "-A"]);
    env.git(
        dir,
        &["commit", "-qm", &format!("{name}: applied its pins")],
    );
}

/// Where each line appears in `text` (in order), or a panic naming the missing one.
fn positions(text: &str, lines: &[&str]) -> Vec<usize> {
    lines
        .iter()
        .map(|l| text.find(l).unwrap_or_else(|| panic!("{l}: {text}")))
        .collect()
}

#[test]
fn a_kubernetes_minor_and_a_flux_bump_move_dev_staging_prod_in_order_and_an_unsafe_order_is_refused()
 {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "p",
        "--defaults",
        "-q",
        "--set",
        "environments=dev,staging,prod",
        "--set",
        "dev.addons=istio,metrics-server",
        "--set",
        "staging.addons=metrics-server",
        "--set",
        "prod.addons=istio,reloader",
        "--set",
        "dev.kubernetes_version=1.35.0",
        "--set",
        "dev.kops_version=1.35.0",
        "--set",
        "dev.flux_version=2.10.0",
        "--set",
        "prod.kubernetes_version=1.33.5",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let cluster = |from: &str, to: &str| {
        scaffold(&env, &["promote", "--from", from, "--to", to, "--cluster"])
    };
    let refused = |from: &str, to: &str, why: &str| {
        let head_before = env.git(&dir, &["rev-parse", "HEAD"]);
        let out = cluster(from, to);
        assert_eq!(out.code, 3, "{from} → {to}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(why), "{why}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head_before);
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    };
    // dev is two minors ahead of prod; backwards is refused too.
    refused("dev", "prod", "skips a minor");
    refused("prod", "staging", "newer than");
    // dev's cluster does not run its pins yet: nothing recorded, nothing moves.
    refused(
        "dev",
        "staging",
        "dev has not applied kops_version 1.35.0 yet",
    );
    record_applied(&env, &dir, "dev");
    refused("staging", "prod", "staging has not applied");
    record_applied(&env, &dir, "staging");

    // staging → prod: one minor (1.33 → 1.34); then dev → staging → prod: kops,
    // Kubernetes 1.35 and Flux 2.10, each applied in the source first.
    let out = cluster("staging", "prod");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(kubernetes_of(&dir, "prod"), "1.34.1");
    record_applied(&env, &dir, "prod");
    for (from, to) in [("dev", "staging"), ("staging", "prod")] {
        if from == "staging" {
            refused(from, to, "staging has not applied kops_version 1.35.0 yet");
            record_applied(&env, &dir, from);
        }
        let out = cluster(from, to);
        assert_eq!(out.code, 0, "{from} → {to}: {}", out.stderr);
        assert_eq!(kubernetes_of(&dir, to), "1.35.0");
        assert_eq!(
            make_pin(&dir, to, "3-bridge/Makefile", "FLUX_VERSION"),
            "2.10.0"
        );
        let message = head(&env, &dir);
        let at = positions(
            &message,
            &[
                "1. kops 1.34.0 → 1.35.0",
                "2. Kubernetes 1.34.1 → 1.35.0",
                "3. Flux 2.9.4 → 2.10.0",
            ],
        );
        assert!(at.windows(2).all(|w| w[0] < w[1]), "in order: {message}");
        assert!(
            message.contains(&format!("envs/{to}/3-bridge")),
            "{message}"
        );
        // The runbook of the target is written with the new versions, in order.
        let readme =
            std::fs::read_to_string(dir.join(format!("envs/{to}/README.md"))).expect("README.md");
        let at = positions(
            &readme,
            &[
                "### Upgrading the cluster",
                "1. kops 1.35.0",
                "2. Kubernetes 1.35.0",
                "3. Flux 2.10.0",
                "4. hashicorp/aws 6.69.1",
            ],
        );
        assert!(at.windows(2).all(|w| w[0] < w[1]), "in order: {readme}");
    }
    // dev's own pins and runbook are untouched by its promotions.
    assert_eq!(
        make_pin(&dir, "dev", "2-kops/Makefile", "KOPS_VERSION"),
        "1.35.0"
    );
    let out = cluster("staging", "prod");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("nothing to do") && out.stdout.contains("flux_version"),
        "{}",
        out.stdout
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

/// Whether Renovate updates `dep` (of `manager`) in `file` under `rules`: its packageRules
/// apply in order and a later `enabled` overrides an earlier one (renovatebot/renovate
/// `lib/util/package-rules/index.ts`, `applyPackageRules`); `matchFileNames` are minimatch
/// globs over the package file's path (`lib/util/package-rules/files.ts`), where `*` does
/// not cross `/`; `matchDepNames` are exact names (`dep-names.ts`).
fn renovate_updates(rules: &[serde_json::Value], manager: &str, dep: &str, file: &str) -> bool {
    let strings = |rule: &serde_json::Value, key: &str| -> Option<Vec<String>> {
        rule.get(key).and_then(|v| v.as_array()).map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
    };
    let mut enabled = true;
    for rule in rules {
        let Some(value) = rule.get("enabled").and_then(|e| e.as_bool()) else {
            continue;
        };
        let managers =
            strings(rule, "matchManagers").is_none_or(|m| m.iter().any(|m| m == manager));
        let deps = strings(rule, "matchDepNames").is_none_or(|d| d.iter().any(|d| d == dep));
        let files = strings(rule, "matchFileNames").is_none_or(|globs| {
            globs.iter().any(|g| {
                globset::GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .expect("glob")
                    .compile_matcher()
                    .is_match(file)
            })
        });
        if managers && deps && files && strings(rule, "matchPackageNames").is_none() {
            enabled = value;
        }
    }
    enabled
}

/// Renovate updates each component in exactly one environment, the first that runs it
/// (prod's reloader, which dev lacks, included), and kops and Kubernetes in the first only.
#[test]
fn renovate_updates_each_component_once_in_the_first_environment_that_runs_it() {
    let env = Env::new();
    let dir = three(&env);
    let text = std::fs::read_to_string(dir.join("renovate.json")).expect("renovate.json");
    let config: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let rules = config["packageRules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(config["flux"]["managerFilePatterns"].is_array(), "{config}");
    let order = ["dev", "staging", "prod"];
    // component → the environments whose overlay of it Renovate updates / that run it.
    let mut updated: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    let mut runs: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for entry in walkdir::WalkDir::new(dir.join("environments"))
        .into_iter()
        .flatten()
    {
        let rel = entry
            .path()
            .strip_prefix(&dir)
            .expect("inside")
            .display()
            .to_string();
        let parts: Vec<&str> = rel.split('/').collect();
        // environments/<env>/infrastructure/<layer>/<component>/kustomization.yaml
        if entry.file_name() != "kustomization.yaml" || parts.len() != 6 {
            continue;
        }
        let env_name = order
            .iter()
            .find(|e| **e == parts[1])
            .expect("an environment");
        let component = parts[parts.len() - 2].to_string();
        let release = rel.replace("kustomization.yaml", "release.yaml");
        runs.entry(component.clone()).or_default().push(env_name);
        if renovate_updates(&rules, "flux", &component, &release) {
            updated.entry(component).or_default().push(env_name);
        }
    }
    assert!(
        runs.contains_key("reloader") && runs.contains_key("karpenter"),
        "{runs:?}"
    );
    for (component, envs) in &runs {
        assert_eq!(
            updated
                .get(component)
                .map(Vec::as_slice)
                .unwrap_or_default(),
            &envs[..1],
            "{component}: runs in {envs:?}"
        );
    }
    for (env_name, want) in [("dev", true), ("staging", false), ("prod", false)] {
        // The cluster pins, by the manager and dependency name Renovate extracts them
        // with (the terraform manager names a provider by its local name, `aws`:
        // renovatebot/renovate lib/modules/manager/terraform/base.ts).
        for (manager, dep, file) in [
            ("regex", "kubernetes/kubernetes", "2-kops/values.yaml"),
            ("regex", "kubernetes/kops", "2-kops/Makefile"),
            ("regex", "fluxcd/flux2", "3-bridge/Makefile"),
            ("terraform", "aws", "1-prerequisites/versions.tf"),
            ("terraform", "aws", "2-kops/versions.tf"),
            ("terraform", "kubernetes", "3-bridge/versions.tf"),
        ] {
            let file = format!("envs/{env_name}/{file}");
            assert_eq!(
                renovate_updates(&rules, manager, dep, &file),
                want,
                "{dep} in {file}"
            );
        }
        let flux_entry = format!("clusters/{env_name}/flux-system/gotk-sync.yaml");
        assert_eq!(
            renovate_updates(&rules, "flux", "flux2", &flux_entry),
            want,
            "{flux_entry}"
        );
    }
    // The shared bases are never updated (each overlay carries the version).
    assert!(!renovate_updates(
        &rules,
        "flux",
        "istio",
        "infrastructure/addons/istio/release.yaml"
    ));
}

/// Renovate's own run over a three-environment repo, offline (`--platform=local`, lookups
/// fail without network): every dependency whose rules Renovate settles (`skipReason`
/// absent, or `disabled` by a packageRule) is updated in exactly one environment, the
/// first that runs it, and nowhere in the shared bases. Dependencies Renovate leaves
/// undecided offline (a `github-releases` lookup stops at `github-token-required` before
/// the rules) are held by `renovate_updates_each_component_once_…` above.
#[test]
fn renovate_itself_extracts_each_component_once_in_the_first_environment_that_runs_it() {
    let validator = std::env::var("RENOVATE_CONFIG_VALIDATOR")
        .unwrap_or_else(|_| "renovate-config-validator".into());
    // .ci/run installs renovate@41 and names its validator; renovate sits beside it.
    let renovate = match validator.rsplit_once('/') {
        Some((bin, _)) => format!("{bin}/renovate"),
        None => "renovate".to_string(),
    };
    if !crate::support::require_tool(&renovate) {
        return;
    }
    let env = Env::new();
    let dir = three(&env);
    let base = env.path("renovate-base");
    let out = std::process::Command::new(&renovate)
        .current_dir(&dir)
        .env("RENOVATE_PLATFORM", "local")
        .env("RENOVATE_DRY_RUN", "lookup")
        .env("RENOVATE_ONBOARDING", "false")
        .env("RENOVATE_REQUIRE_CONFIG", "optional")
        .env("RENOVATE_BASE_DIR", &base)
        .env("LOG_LEVEL", "debug")
        .env("LOG_FORMAT", "json")
        .output()
        .expect("renovate runs");
    let log = String::from_utf8_lossy(&out.stdout);
    let files = log
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|l| l["msg"] == "packageFiles with updates")
        .map(|l| l["config"].clone())
        .unwrap_or_else(|| panic!("no packageFiles in Renovate's log: {log}"));
    let order = ["dev", "staging", "prod"];
    // (manager, dependency, file with its environment as ENV) → environments that update it / that have it.
    type Key = (String, String, String);
    let mut updated: std::collections::BTreeMap<Key, Vec<&str>> = Default::default();
    let mut present: std::collections::BTreeMap<Key, Vec<&str>> = Default::default();
    let managers = files.as_object().cloned().unwrap_or_default();
    for (manager, package_files) in &managers {
        for file in package_files.as_array().into_iter().flatten() {
            let path = file["packageFile"].as_str().unwrap_or_default();
            let parts: Vec<&str> = path.split('/').collect();
            let in_env = ["environments", "apps", "envs", "clusters"].contains(&parts[0]);
            for dep in file["deps"].as_array().into_iter().flatten() {
                let skip = dep["skipReason"].as_str();
                if !matches!(skip, None | Some("disabled")) {
                    continue;
                }
                let name = dep["depName"].as_str().unwrap_or_default().to_string();
                if !in_env {
                    let shared = parts[0] == "infrastructure" || parts[..2] == ["apps", "base"];
                    assert!(
                        !shared || skip.is_some(),
                        "{manager} {name} updated in the shared base {path}"
                    );
                    continue;
                }
                let Some(env_name) = order.iter().find(|e| **e == parts[1]) else {
                    continue;
                };
                let mut generic = parts.clone();
                generic[1] = "ENV";
                let key = (manager.clone(), name, generic.join("/"));
                present.entry(key.clone()).or_default().push(env_name);
                if skip.is_none() {
                    updated.entry(key).or_default().push(env_name);
                }
            }
        }
    }
    for want in [
        ("flux", "reloader"),
        ("flux", "metrics-server"),
        ("flux", "istiod"),
        ("terraform", "aws"),
    ] {
        assert!(
            present
                .keys()
                .any(|(m, d, _)| (m.as_str(), d.as_str()) == want),
            "{want:?} not extracted: {present:?}"
        );
    }
    for (key, envs) in &present {
        let first = order
            .iter()
            .find(|e| envs.contains(e))
            .expect("an environment");
        assert_eq!(
            updated.get(key).map(Vec::as_slice).unwrap_or_default(),
            &[*first][..],
            "{key:?}: present in {envs:?}"
        );
    }
}

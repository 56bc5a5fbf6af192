//! `scaffold check`: every repo scaffold makes passes it, and each rule, broken alone in a
//! generated repo, is reported alone.
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::support::{Env, run};

const AUTHOR: &str = "Test Author <test@example.org>";

fn new_repo(env: &Env, name: &str, values: Option<&Path>) -> PathBuf {
    let mut cmd = env.scaffold();
    cmd.args(["new", name, "--defaults", "--author", AUTHOR]);
    if let Some(values) = values {
        cmd.arg("--values").arg(values);
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "new {name}: {}", out.stderr);
    env.path(name)
}

/// Runs `check --json` with extra arguments; returns the exit code and the findings.
fn check(env: &Env, dir: &Path, args: &[&str]) -> (i32, Vec<Json>) {
    let out = run(env
        .scaffold()
        .arg("check")
        .arg(dir)
        .arg("--json")
        .args(args));
    let report: Json = serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check --json prints JSON ({e}): {}\n{}",
            out.stdout, out.stderr
        )
    });
    (
        out.code,
        report["findings"].as_array().cloned().unwrap_or_default(),
    )
}

fn errors(findings: &[Json]) -> Vec<&Json> {
    findings
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect()
}

fn blueprint_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default")
}

#[test]
fn every_answer_set_makes_a_repo_that_passes_check() {
    let env = Env::new();
    let mut sets = 0;
    for entry in std::fs::read_dir(blueprint_dir().join("tests")).expect("tests dir") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("answer set");
        if text.contains("expect_error") {
            continue;
        }
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let dir = new_repo(&env, &name, Some(&path));
        let (code, findings) = check(&env, &dir, &[]);
        assert!(errors(&findings).is_empty(), "{name}: {findings:#?}");
        assert_eq!(code, 0, "{name}");
        sets += 1;
    }
    assert!(sets >= 3, "answer sets found: {sets}");
}

#[test]
fn every_catalog_addon_added_to_a_default_repo_passes_check() {
    let env = Env::new();
    let out = run(env.scaffold().args(["list", "addons", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let catalog: Json = serde_json::from_str(&out.stdout).expect("json");
    let names: Vec<String> = catalog
        .as_array()
        .or_else(|| catalog["addons"].as_array())
        .expect("addon list")
        .iter()
        .filter_map(|a| a["name"].as_str().map(str::to_string))
        .collect();
    let base = new_repo(&env, "base", None);
    let defaults = std::fs::read_to_string(base.join(".scaffold/answers.yaml")).expect("answers");
    let mut added = 0;
    for name in names
        .iter()
        .filter(|n| !defaults.contains(&format!("- {n}\n")))
    {
        let dir = new_repo(&env, &format!("with-{name}"), None);
        let out = run(env
            .scaffold()
            .args(["add-addon", name, "-C"])
            .arg(&dir)
            .args(["--author", AUTHOR]));
        assert_eq!(out.code, 0, "add-addon {name}: {}", out.stderr);
        let (code, findings) = check(&env, &dir, &[]);
        assert!(
            errors(&findings).is_empty(),
            "add-addon {name}: {findings:#?}"
        );
        assert_eq!(code, 0);
        added += 1;
    }
    assert!(added > 0, "no addon outside the defaults");
    let dir = new_repo(&env, "custom", None);
    let out = run(env
        .scaffold()
        .args([
            "add-addon",
            "podinfo2",
            "--chart",
            "podinfo",
            "--repo",
            "oci://ghcr.io/stefanprodan/charts",
            "--version",
            "6.9.0",
            "--layer",
            "apps",
            "-C",
        ])
        .arg(&dir)
        .args(["--author", AUTHOR]));
    assert_eq!(out.code, 0, "custom chart: {}", out.stderr);
    let (code, findings) = check(&env, &dir, &[]);
    assert!(errors(&findings).is_empty(), "custom chart: {findings:#?}");
    assert_eq!(code, 0);
}

fn replace(dir: &Path, file: &str, old: &str, new: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert!(text.contains(old), "{file} has no {old:?}");
    std::fs::write(&path, text.replacen(old, new, 1)).expect("write");
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// Breaks a default repo with `edit`, then asserts `check` reports `rule` and nothing else
/// (tf.backend, a warning on today's local state, aside unless it is the rule tested).
fn breaks(rule: &str, edit: impl FnOnce(&Env, &Path)) {
    breaks_with(rule, &[], edit)
}

/// As [`breaks`], the rules in `also` allowed besides `rule` (a note and what it notes).
fn breaks_with(rule: &str, also: &[&str], edit: impl FnOnce(&Env, &Path)) {
    breaks_repo(rule, also, None, edit);
}

/// As [`breaks`], in a repo of two environments: dev, and prod in its own region with
/// authentik (which reads a platform secret).
fn breaks_two(rule: &str, edit: impl FnOnce(&Env, &Path)) {
    let values = tempfile::NamedTempFile::new().expect("values");
    std::fs::write(
        values.path(),
        "environments: dev,prod\nprod:\n  region: us-east-1\n  addons: [istio, authentik, metrics-server]\n",
    )
    .expect("values");
    breaks_repo(rule, &[], Some(values.path()), edit);
}

fn breaks_repo(rule: &str, also: &[&str], values: Option<&Path>, edit: impl FnOnce(&Env, &Path)) {
    let env = Env::new();
    let dir = new_repo(&env, "broken", values);
    edit(&env, &dir);
    let skip: &[&str] = if rule == "tf.backend" {
        &[]
    } else {
        &["--skip", "tf.backend"]
    };
    let (code, findings) = check(&env, &dir, skip);
    assert!(!findings.is_empty(), "{rule}: nothing reported");
    let others: Vec<&Json> = findings
        .iter()
        .filter(|f| f["rule"] != rule && !also.iter().any(|a| f["rule"] == *a))
        .collect();
    assert!(
        others.is_empty(),
        "{rule}: other rules reported: {others:#?}"
    );
    assert!(
        findings.iter().any(|f| f["rule"] == rule),
        "{rule}: not reported: {findings:#?}"
    );
    let error = findings.iter().any(|f| f["severity"] == "error");
    assert_eq!(code, if error { 1 } else { 0 }, "{rule}: exit code");
    for f in &findings {
        assert!(
            f["file"].as_str().is_some_and(|p| !p.is_empty())
                && !f["hint"].as_str().unwrap_or("").is_empty(),
            "{f}"
        );
    }
}

const CM_RELEASE: &str = "infrastructure/addons/cert-manager/release.yaml";
const CM_SOURCE: &str = "infrastructure/addons/cert-manager/source.yaml";
/// The environment's overlay of cert-manager: its chart version and values.
const CM_OVERLAY: &str = "environments/prod/infrastructure/addons/cert-manager/release.yaml";
const CM_OVERLAY_SOURCE: &str = "environments/prod/infrastructure/addons/cert-manager/source.yaml";
const TEMPLATE: &str = "envs/prod/2-kops/cluster-template.yaml";

#[test]
fn yaml_parse() {
    breaks("yaml.parse", |_, d| {
        write(d, "notes.yaml", "a: 1\nb: 2\na: 3\n")
    });
}

#[test]
fn json_parse() {
    breaks("json.parse", |_, d| {
        write(d, "dashboards/nodes.json", "{\"title\": \"nodes\",\n")
    });
}

#[test]
fn k8s_schema() {
    breaks("k8s.schema", |_, d| {
        replace(
            d,
            CM_RELEASE,
            "  interval: 30m\n",
            "  interval: 30m\n  bogus: true\n",
        )
    });
}

#[test]
fn k8s_unknown_kind() {
    breaks("k8s.unknown-kind", |_, d| {
        write(
            d,
            "extra/widget.yaml",
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
        )
    });
}

#[test]
fn flux_api_removed() {
    // The environment's overlay patches the source at v1, which no longer matches it: the
    // build fails too, as kustomize's does (a patch without target matches apiVersion).
    breaks_with("flux.api-removed", &["flux.path"], |_, d| {
        replace(
            d,
            CM_SOURCE,
            "source.toolkit.fluxcd.io/v1\n",
            "source.toolkit.fluxcd.io/v1beta2\n",
        )
    });
}

#[test]
fn flux_depends_on() {
    breaks("flux.depends-on", |_, d| {
        replace(
            d,
            "clusters/prod/50-apps.yaml",
            "  dependsOn:\n",
            "  dependsOn:\n    - name: ghost\n",
        )
    });
}

#[test]
fn flux_cycle() {
    breaks("flux.cycle", |_, d| {
        replace(
            d,
            "clusters/prod/00-crds.yaml",
            "spec:\n",
            "spec:\n  dependsOn:\n    - name: apps\n",
        )
    });
}

#[test]
fn flux_source_ref() {
    breaks("flux.source-ref", |_, d| {
        replace(
            d,
            "clusters/prod/50-apps.yaml",
            "    name: flux-system\n",
            "    name: elsewhere\n",
        )
    });
}

#[test]
fn flux_path() {
    breaks("flux.path", |_, d| {
        replace(
            d,
            "infrastructure/addons/cert-manager/kustomization.yaml",
            "  - release.yaml\n",
            "  - release.yaml\n  - missing.yaml\n",
        )
    });
}

#[test]
fn flux_wait() {
    breaks("flux.wait", |_, d| {
        replace(
            d,
            "clusters/prod/30-addon-cert-manager.yaml",
            "  wait: true\n",
            "  wait: false\n",
        )
    });
}

#[test]
fn flux_chart_version() {
    breaks("flux.chart-version", |_, d| {
        replace(d, CM_OVERLAY_SOURCE, "tag: \"v1.21.1\"", "tag: latest")
    });
}

#[test]
fn order_crd() {
    breaks("order.crd", |_, d| {
        write(
            d,
            "environments/prod/infrastructure/karpenter/issuer.yaml",
            "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n",
        );
        replace(
            d,
            "environments/prod/infrastructure/karpenter/kustomization.yaml",
            "resources:\n",
            "resources:\n  - issuer.yaml\n",
        );
    });
}

#[test]
fn order_crd_provider() {
    breaks("order.crd-provider", |_, d| {
        write(
            d,
            "infrastructure/addons-config/cert-manager/monitor.yaml",
            "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: cert-manager\n  namespace: cert-manager\nspec:\n  selector: {}\n  endpoints:\n    - port: metrics\n",
        );
        replace(
            d,
            "infrastructure/addons-config/cert-manager/kustomization.yaml",
            "resources:\n",
            "resources:\n  - monitor.yaml\n",
        );
    });
}

#[test]
fn order_watched_api() {
    // The shape of review N-B1: external-dns watching HTTPRoutes with no Gateway API CRDs.
    breaks("order.watched-api", |_, d| {
        replace(
            d,
            "environments/prod/infrastructure/addons/external-dns/release.yaml",
            "    - ingress\n",
            "    - ingress\n    - gateway-httproute\n",
        );
    });
}

#[test]
fn order_layers() {
    breaks("order.layers", |_, d| {
        // The apps layer keeps no dependsOn at all.
        let path = d.join("clusters/prod/50-apps.yaml");
        let text = std::fs::read_to_string(&path).expect("apps layer");
        let mut in_depends = false;
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| {
                if *l == "  dependsOn:" {
                    in_depends = true;
                } else if in_depends && !l.starts_with("    - name:") {
                    in_depends = false;
                }
                !in_depends
            })
            .collect();
        assert!(
            kept.len() < text.lines().count(),
            "no dependsOn in the apps layer"
        );
        std::fs::write(&path, kept.join("\n") + "\n").expect("write");
    });
}

#[test]
fn order_owner() {
    breaks("order.owner", |_, d| {
        replace(
            d,
            TEMPLATE,
            "  karpenter:\n    enabled: false",
            "  karpenter:\n    enabled: true",
        )
    });
}

#[test]
fn bridge_substitution() {
    breaks("bridge.substitution", |_, d| {
        replace(
            d,
            CM_SOURCE,
            "metadata:\n",
            "metadata:\n  labels:\n    team: ${NOT_PROVIDED}\n",
        )
    });
}

/// The findings of `check --json` on `dir` for `rule`, as (file, line).
fn places_of(env: &Env, dir: &Path, rule: &str) -> Vec<(String, u64)> {
    let (_, findings) = check(env, dir, &["--skip", "tf.backend"]);
    findings
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| {
            let file = f["file"].as_str().unwrap_or_default().to_string();
            (file, f["line"].as_u64().unwrap_or_default())
        })
        .collect()
}

/// Issue 40 (review check-overlays-3, item 1): a `${VAR}` nothing provides, written in an
/// environment's overlay patch, is found at the overlay's line.
#[test]
fn bridge_substitution_in_an_overlay() {
    let env = Env::new();
    let dir = new_repo(&env, "overlay", None);
    replace(
        &dir,
        CM_OVERLAY,
        "  values:\n",
        "  values:\n    podLabels:\n      owner: ${CLUSTER_NAMEE}\n",
    );
    let text = std::fs::read_to_string(dir.join(CM_OVERLAY)).expect("overlay");
    let line = text
        .lines()
        .position(|l| l.contains("${CLUSTER_NAMEE}"))
        .expect("line") as u64
        + 1;
    assert_eq!(
        places_of(&env, &dir, "bridge.substitution"),
        [(CM_OVERLAY.to_string(), line)]
    );
}

#[test]
fn bridge_values_from() {
    breaks("bridge.values-from", |_, d| {
        replace(
            d,
            CM_RELEASE,
            "name: cert-manager-tf-values",
            "name: missing-values",
        )
    });
}

#[test]
fn kops_render() {
    breaks("kops.render", |_, d| {
        replace(d, TEMPLATE, "{{ .environment }}", "{{ .environmentName }}")
    });
}

#[test]
fn kops_schema() {
    breaks("kops.schema", |_, d| {
        replace(
            d,
            TEMPLATE,
            "  cloudProvider: aws\n",
            "  cloudProvider: aws\n  bogusField: true\n",
        )
    });
}

#[test]
fn kops_imds() {
    breaks("kops.imds", |_, d| {
        replace(d, TEMPLATE, "httpTokens: required", "httpTokens: optional")
    });
}

#[test]
fn kops_irsa() {
    breaks("kops.irsa", |_, d| {
        replace(
            d,
            "envs/prod/2-kops/values.yaml",
            "serviceAccount: cert-manager",
            "serviceAccount: cert-manager-x",
        )
    });
}

#[test]
fn kops_api_access() {
    breaks("kops.api-access", |_, d| {
        replace(
            d,
            "envs/prod/2-kops/values.yaml",
            "adminCidrs: []",
            "adminCidrs:\n  - 203.0.113.0/24",
        )
    });
}

#[test]
fn kops_karpenter_kubelet() {
    // Review issue A-m17: the values and the EC2NodeClass drift apart.
    breaks("kops.karpenter-kubelet", |_, d| {
        replace(
            d,
            "envs/prod/2-kops/values.yaml",
            "  maxPods: 110",
            "  maxPods: 64",
        )
    });
}

#[test]
fn make_flags() {
    breaks("make.flags", |_, d| {
        replace(
            d,
            "envs/prod/2-kops/Makefile",
            "kops replace -f cluster.yaml --force",
            "kops replace -f cluster.yaml --force --bogus",
        )
    });
}

#[test]
fn tf_parse() {
    breaks("tf.parse", |_, d| {
        write(
            d,
            "envs/prod/1-prerequisites/broken.tf",
            "resource \"null_resource\" \"x\" {\n",
        )
    });
}

#[test]
fn tf_refs() {
    breaks("tf.refs", |_, d| {
        write(
            d,
            "envs/prod/1-prerequisites/extra.tf",
            "locals {\n  extra = var.nope\n}\n",
        )
    });
}

#[test]
fn tf_providers() {
    breaks("tf.providers", |_, d| {
        write(
            d,
            "envs/prod/1-prerequisites/extra.tf",
            "resource \"random_id\" \"x\" {\n  byte_length = 4\n}\n",
        )
    });
}

#[test]
fn tf_state_bucket() {
    breaks("tf.state-bucket", |_, d| {
        replace(
            d,
            "envs/prod/1-prerequisites/state-bucket.tf",
            "versioning_configuration {\n    status = \"Enabled\"",
            "versioning_configuration {\n    status = \"Suspended\"",
        )
    });
}

#[test]
fn repo_conflict_markers() {
    // The tfvars is not read: what its values would settle (tf.vars) is left out, noted.
    breaks_with("repo.conflict-markers", &["check.partial"], |_, d| {
        replace(
            d,
            "envs/prod/1-prerequisites/terraform.tfvars",
            "vpc_cidr",
            "<<<<<<< ours\nvpc_cidr = \"10.1.0.0/16\"\n=======\nvpc_cidr = \"10.2.0.0/16\"\n>>>>>>> theirs\nold_vpc_cidr",
        )
    });
}

#[test]
fn check_partial() {
    breaks_with("check.partial", &["tf.parse"], |_, d| {
        replace(d, "envs/prod/1-prerequisites/main.tf", "locals {", "locals")
    });
}

#[test]
fn check_catalog() {
    // The record names a team blueprint that is not here: the CRD and feature rules judge
    // with the embedded default's catalog, and say so (a warning: exit 0).
    breaks("check.catalog", |_, d| {
        replace(
            d,
            ".scaffold/answers.yaml",
            "source: embedded:default",
            "source: /nowhere/team-blueprint",
        );
        replace(
            d,
            ".scaffold/answers.yaml",
            "blueprint:\n  name: default\n",
            "blueprint:\n  name: team-gone\n",
        );
    });
}

#[test]
fn ref_node_class() {
    breaks("ref.node-class", |_, d| {
        replace(
            d,
            "environments/prod/infrastructure/karpenter/node-pool.yaml",
            "        name: default",
            "        name: defualt",
        )
    });
}

const ROUTE: &str = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  parentRefs:\n    - name: platform\n      namespace: istio-ingress\n  rules:\n    - backendRefs:\n        - name: podinfo\n          port: 9898\n";
const GATEWAY: &str = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: platform\n  namespace: podinfo\nspec:\n  gatewayClassName: istio\n  listeners:\n    - name: https\n      port: 443\n      protocol: HTTPS\n      tls:\n        certificateRefs:\n          - name: missing-tls\n";

fn add_to_podinfo(d: &Path, file: &str, text: &str) {
    write(d, &format!("apps/prod/podinfo/{file}"), text);
    replace(
        d,
        "apps/prod/podinfo/kustomization.yaml",
        "resources:\n",
        &format!("resources:\n  - {file}\n"),
    );
}

#[test]
fn ref_gateway() {
    // No layer installs the Gateway API CRDs in a default repo: order.crd-provider too.
    breaks_with("ref.gateway", &["order.crd-provider"], |_, d| {
        add_to_podinfo(d, "route.yaml", ROUTE)
    });
}

#[test]
fn ref_certificate() {
    breaks_with("ref.certificate", &["order.crd-provider"], |_, d| {
        add_to_podinfo(d, "gateway.yaml", GATEWAY)
    });
}

#[test]
fn ref_secret_store() {
    let also = ["external-secret.remote-key"];
    breaks_with("ref.secret-store", &also, |_, d| {
        add_to_podinfo(d, "secret.yaml", EXTERNAL_SECRET)
    });
}

/// A Service and a ServiceMonitor of a namespace no HelmRelease installs into (the repo
/// holds all its Services); `{labels}` and `{port}` are the monitor's selector and port.
fn metrics_demo(labels: &str, port: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: exporter\n  namespace: metrics-demo\n  labels:\n    app: exporter\nspec:\n  selector:\n    app: exporter\n  ports:\n    - name: metrics\n      port: 9100\n---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: exporter\n  namespace: metrics-demo\nspec:\n  selector:\n    matchLabels:\n      {labels}\n  endpoints:\n    - port: {port}\n"
    )
}

#[test]
fn ref_service_monitor() {
    // No layer installs the Prometheus operator's CRDs in a default repo: order.crd-provider too.
    let also = ["order.crd-provider"];
    breaks_with("ref.service-monitor", &also, |_, d| {
        add_to_podinfo(d, "monitor.yaml", &metrics_demo("app: exportr", "metrics"))
    });
    breaks_with("ref.service-monitor", &also, |_, d| {
        add_to_podinfo(d, "monitor.yaml", &metrics_demo("app: exporter", "metrcs"))
    });
    // Reported at the line that is wrong: the selector, then the endpoint's port.
    for (labels, port, line) in [
        ("app: exportr", "metrics", 21),
        ("app: exporter", "metrcs", 25),
    ] {
        let env = Env::new();
        let dir = new_repo(&env, "broken", None);
        add_to_podinfo(&dir, "monitor.yaml", &metrics_demo(labels, port));
        let (_, findings) = check(&env, &dir, &["--skip", "tf.backend"]);
        let found = findings
            .iter()
            .find(|f| f["rule"] == "ref.service-monitor")
            .expect("reported");
        assert_eq!(found["file"], "apps/prod/podinfo/monitor.yaml");
        assert_eq!(found["line"], line, "{found}");
    }
    // The same objects, matching: the rule stays quiet.
    let env = Env::new();
    let dir = new_repo(&env, "monitored", None);
    add_to_podinfo(
        &dir,
        "monitor.yaml",
        &metrics_demo("app: exporter", "metrics"),
    );
    let (_, findings) = check(&env, &dir, &["--skip", "tf.backend"]);
    assert!(
        findings.iter().all(|f| f["rule"] != "ref.service-monitor"),
        "{findings:#?}"
    );
}

const EXTERNAL_SECRET: &str = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: app\n  namespace: podinfo\nspec:\n  secretStoreRef:\n    kind: ClusterSecretStore\n    name: aws-secret-manager\n  target:\n    name: app\n  data:\n    - secretKey: password\n      remoteRef:\n        key: prod/app\n";

#[test]
fn tf_vars() {
    breaks("tf.vars", |_, d| {
        replace(
            d,
            "envs/prod/1-prerequisites/terraform.tfvars",
            "dns_zone     =",
            "dns_zoen =",
        )
    });
}

#[test]
fn tf_schema() {
    breaks("tf.schema", |_, d| {
        replace(
            d,
            "envs/prod/1-prerequisites/state-bucket.tf",
            "  bucket = \"${local.bucket_base}",
            "  buckt = \"${local.bucket_base}",
        )
    });
}

#[test]
fn helm_values() {
    breaks("helm.values", |_, d| {
        replace(
            d,
            CM_OVERLAY,
            "    serviceAccount:\n",
            "    serviceAcount:\n",
        )
    });
}

#[test]
fn helm_values_unchecked() {
    // A podinfo version scaffold vendors no values for.
    breaks("helm.values-unchecked", |_, d| {
        replace(
            d,
            "apps/prod/podinfo/source.yaml",
            "tag: \"6.14.1\"",
            "tag: \"6.13.0\"",
        )
    });
}

#[test]
fn tf_backend() {
    breaks("tf.backend", |_, d| {
        write(
            d,
            "envs/prod/1-prerequisites/backend.tf",
            "terraform {\n  backend \"local\" {}\n}\n",
        )
    });
}

#[test]
fn ingress_certificate() {
    breaks("ingress.certificate", |_, d| {
        write(
            d,
            "apps/prod/podinfo/ingress.yaml",
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: podinfo\n  namespace: podinfo\n  annotations:\n    alb.ingress.kubernetes.io/listen-ports: '[{\"HTTPS\": 443}]'\nspec:\n  ingressClassName: alb\n  rules:\n    - host: podinfo.example.com\n      http:\n        paths:\n          - path: /\n            pathType: Prefix\n            backend:\n              service:\n                name: podinfo\n                port:\n                  number: 9898\n",
        );
        replace(
            d,
            "apps/prod/podinfo/kustomization.yaml",
            "resources:\n",
            "resources:\n  - ingress.yaml\n",
        );
    });
}

#[test]
fn external_secret_remote_key() {
    breaks("external-secret.remote-key", |_, d| {
        write(
            d,
            "infrastructure/addons-config/external-secrets/app-secret.yaml",
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: app\n  namespace: podinfo\nspec:\n  secretStoreRef:\n    kind: ClusterSecretStore\n    name: aws-secrets-manager\n  target:\n    name: app\n  data:\n    - secretKey: password\n      remoteRef:\n        key: prod/nowhere\n",
        );
        replace(
            d,
            "infrastructure/addons-config/external-secrets/kustomization.yaml",
            "resources:\n",
            "resources:\n  - app-secret.yaml\n",
        );
    });
}

/// Issue 40: an ExternalSecret key under another environment's prefix (authentik in prod
/// reading dev's secret, as default 0.3.0 wrote it), at its line.
#[test]
fn environment_secret_key() {
    const SECRET: &str = "infrastructure/addons-config/authentik/configs.yaml";
    breaks_two("environment.secret-key", |_, d| {
        replace(
            d,
            SECRET,
            "key: ${PLATFORM_SECRETS_PREFIX}/authentik",
            "key: broken/dev/platform/authentik",
        )
    });
    let env = Env::new();
    let values = env.path("two.yaml");
    std::fs::write(
        &values,
        "environments: dev,prod\nprod:\n  addons: [istio, authentik]\n",
    )
    .expect("values");
    let dir = new_repo(&env, "two", Some(&values));
    assert!(places_of(&env, &dir, "environment.secret-key").is_empty());
    replace(
        &dir,
        SECRET,
        "key: ${PLATFORM_SECRETS_PREFIX}/authentik",
        "key: two/dev/platform/authentik",
    );
    let text = std::fs::read_to_string(dir.join(SECRET)).expect("configs");
    let line = text
        .lines()
        .position(|l| l.contains("two/dev/platform"))
        .expect("line") as u64
        + 1;
    assert_eq!(
        places_of(&env, &dir, "environment.secret-key"),
        [(SECRET.to_string(), line)]
    );
}

/// Issue 40: prod's region written into a file every environment shares, at its line.
#[test]
fn environment_shared_value() {
    let edit = |d: &Path| {
        replace(
            d,
            CM_SOURCE,
            "metadata:\n",
            "metadata:\n  labels:\n    region: us-east-1\n",
        )
    };
    breaks_two("environment.shared-value", |_, d| edit(d));
    let env = Env::new();
    let values = env.path("two.yaml");
    std::fs::write(
        &values,
        "environments: dev,prod\nprod:\n  region: us-east-1\n",
    )
    .expect("values");
    let dir = new_repo(&env, "two", Some(&values));
    assert!(places_of(&env, &dir, "environment.shared-value").is_empty());
    edit(&dir);
    assert_eq!(
        places_of(&env, &dir, "environment.shared-value"),
        [(CM_SOURCE.to_string(), 5)]
    );
}

#[test]
fn kms_key_access() {
    breaks("kms.key-access", |_, d| {
        write(
            d,
            "envs/prod/1-prerequisites/reader.tf",
            "resource \"aws_iam_policy\" \"reader\" {\n  name = \"reader\"\n  policy = jsonencode({\n    Version = \"2012-10-17\"\n    Statement = [{\n      Effect   = \"Allow\"\n      Action   = \"s3:GetObject\"\n      Resource = \"${aws_s3_bucket.kops_state.arn}/*\"\n    }]\n  })\n}\n",
        )
    });
}

#[test]
fn repo_tracked_output() {
    breaks("repo.tracked-output", |env, d| {
        write(d, "envs/prod/1-prerequisites/terraform.tfstate", "{}\n");
        env.git(
            d,
            &["add", "-f", "envs/prod/1-prerequisites/terraform.tfstate"],
        );
    });
}

#[test]
fn repo_secrets() {
    breaks("repo.secrets", |_, d| {
        write(
            d,
            "apps/prod/podinfo/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: podinfo\nstringData:\n  password: hunter2\n",
        )
    });
}

#[test]
fn repo_placeholders() {
    breaks("repo.placeholders", |_, d| {
        write(d, "docs/notes.md", "Cluster: {{ cluster_name }}\n")
    });
}

#[test]
fn a_suppression_with_a_reason_silences_one_finding() {
    let env = Env::new();
    let dir = new_repo(&env, "quiet", None);
    replace(
        &dir,
        TEMPLATE,
        "httpTokens: required",
        "httpTokens: optional # scaffold:ignore kops.imds legacy agent needs IMDSv1",
    );
    let (code, findings) = check(&env, &dir, &["--rule", "kops.imds"]);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0);
    replace(
        &dir,
        TEMPLATE,
        "# scaffold:ignore kops.imds legacy agent needs IMDSv1",
        "# scaffold:ignore kops.imds",
    );
    let (code, findings) = check(&env, &dir, &["--rule", "kops.imds"]);
    // One finding per control-plane group the template renders (prod: three).
    assert_eq!(
        findings.len(),
        3,
        "a suppression without a reason is ignored: {findings:#?}"
    );
    assert_eq!(code, 1);
}

#[test]
fn human_output_is_grouped_by_file_and_uncoloured_when_piped() {
    let env = Env::new();
    let dir = new_repo(&env, "human", None);
    replace(
        &dir,
        TEMPLATE,
        "httpTokens: required",
        "httpTokens: optional",
    );
    let out = run(env
        .scaffold()
        .arg("check")
        .arg(&dir)
        .args(["--rule", "kops.imds"]));
    assert_eq!(out.code, 1);
    let mut lines = out.stdout.lines();
    assert_eq!(lines.next(), Some(TEMPLATE));
    let finding = lines.next().expect("finding line");
    assert!(
        finding.starts_with(&format!("  {TEMPLATE}:"))
            && finding.contains(": error [kops.imds] InstanceGroup"),
        "{finding}"
    );
    assert!(!out.stdout.contains('\x1b'), "no colour when piped");
    // One per control-plane group the template renders (prod: three).
    assert_eq!(out.stderr, "error: check: 3 errors, 0 warnings\n");
}

#[test]
fn usage_errors_exit_2_and_the_catalogue_lists_every_rule() {
    let env = Env::new();
    let out = run(env.scaffold().args(["check", "--rule", "no.such-rule"]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: unknown rule no.such-rule: see `scaffold check --list-rules`\n"
    );
    let out = run(env.scaffold().args(["check", "does-not-exist"]));
    assert_eq!(out.code, 2);
    let out = run(env.scaffold().args(["check", "--list-rules", "--json"]));
    assert_eq!(out.code, 0);
    let rules: Json = serde_json::from_str(&out.stdout).expect("json");
    let ids: Vec<&str> = rules
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/check.md"))
        .expect("docs/check.md");
    for id in &ids {
        assert!(
            docs.contains(&format!("`{id}`")),
            "docs/check.md does not document {id}"
        );
    }
    // Every rule has a test of its own in this file.
    let tests = include_str!("check.rs");
    for id in &ids {
        assert!(
            tests.contains(&format!("breaks(\"{id}\""))
                || tests.contains(&format!("breaks_with(\"{id}\""))
                || tests.contains(&format!("breaks_two(\"{id}\""))
                || tests.contains(&format!("fn {}() {{", id.replace(['.', '-'], "_"))),
            "no test breaks {id}"
        );
    }
}

#[test]
fn a_fleet_is_checked_in_one_run_with_one_summary_and_the_worst_exit_status() {
    let env = Env::new();
    new_repo(&env, "clean", None);
    let broken = new_repo(&env, "broken", None);
    replace(
        &broken,
        "environments/prod/infrastructure/karpenter/node-pool.yaml",
        "        name: default",
        "        name: defualt",
    );
    std::fs::create_dir(env.path("empty")).expect("mkdir");
    let skip = ["--skip", "tf.backend"];

    // Findings in one repo: exit 1, each repo under its own heading, one summary.
    let out = run(env.scaffold().args(["check", "clean", "broken"]).args(skip));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let clean_at = out.stdout.find("== clean\n").expect("clean heading");
    let broken_at = out.stdout.find("== broken\n").expect("broken heading");
    assert!(clean_at < broken_at, "in the order given: {}", out.stdout);
    assert!(
        out.stdout[broken_at..].contains("[ref.node-class]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with(
            "check: 2 repos: 1 with errors, 0 with warnings only, 1 clean, 0 not checked\n"
        ),
        "{}",
        out.stdout
    );

    // A path that is no platform repo is reported and is the worst status (usage, 2).
    let out = run(env
        .scaffold()
        .args(["check", "clean", "broken", "empty", "--json"])
        .args(skip));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let report: Json = serde_json::from_str(&out.stdout).expect("one JSON document");
    assert_eq!(report["version"], 1);
    let repos = report["repos"].as_array().expect("repos");
    assert_eq!(repos.len(), 3);
    assert_eq!(repos[0]["root"], "clean");
    assert_eq!(repos[0]["errors"], 0);
    assert_eq!(repos[1]["errors"], 1);
    assert_eq!(repos[1]["findings"][0]["rule"], "ref.node-class");
    assert_eq!(repos[1]["findings"][0]["line"], 15);
    assert_eq!(repos[2]["exit"], 2);
    assert!(
        repos[2]["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not a scaffold platform repo")),
        "{report}"
    );
    assert_eq!(
        report["summary"],
        serde_json::json!({"repos": 3, "with_errors": 1, "with_warnings": 0, "clean": 1, "not_checked": 1})
    );

    // Clean repos only: exit 0 (a repo named twice is checked once); SARIF stays one
    // repo's format.
    let out = run(env
        .scaffold()
        .args(["check", "clean", "./clean"])
        .args(skip));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("note: `./clean` is given twice; checked once"),
        "{}",
        out.stderr
    );
    let out = run(env
        .scaffold()
        .args(["check", "clean", "broken", "--format", "sarif"]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--format sarif: one SARIF document per repo")
    );
}

/// A repo of two clusters (two `flux-system` entries) is judged one environment at a time:
/// dev's broken `dependsOn` is dev's finding alone, and prod's Kustomizations of the same
/// names never stand in for dev's.
#[test]
fn a_repo_of_two_clusters_is_judged_one_environment_at_a_time() {
    let env = Env::new();
    let dir = new_repo(&env, "two", None);
    for file in std::fs::read_dir(dir.join("clusters/prod")).expect("clusters") {
        let file = file.expect("entry").path();
        if file.is_file() {
            let to = dir
                .join("clusters/dev")
                .join(file.file_name().expect("name"));
            std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
            std::fs::copy(&file, to).expect("copy");
        }
    }
    write(
        &dir,
        "clusters/dev/flux-system/gotk-sync.yaml",
        &std::fs::read_to_string(dir.join("clusters/prod/flux-system/gotk-sync.yaml"))
            .expect("sync")
            .replace("./clusters/prod", "./clusters/dev"),
    );
    std::fs::remove_file(dir.join("clusters/dev/00-crds.yaml")).expect("rm");
    env.git(&dir, &["add", "-A"]);
    let (code, findings) = check(&env, &dir, &[]);
    assert_eq!(code, 1, "{findings:?}");
    let broken: Vec<(&str, &str)> = errors(&findings)
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or_default(),
                f["environment"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert!(!broken.is_empty());
    // Every error is dev's: its karpenter layer waits for a `crds` only prod has.
    assert!(broken.iter().all(|(_, e)| *e == "dev"), "{broken:?}");
    assert!(broken.contains(&("flux.depends-on", "dev")), "{broken:?}");
    let out = run(env.scaffold().arg("check").arg(&dir));
    assert!(
        out.stderr.contains("(dev: ") && out.stderr.contains("; prod: 0 errors, 0 warnings)"),
        "{}",
        out.stderr
    );
}

/// Issue 40: two environments whose Terraform names one AWS resource the same (here a
/// hand edit gives prod dev's prefixes) are found at the second environment's name.
#[test]
fn tf_aws_name_shared() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "shared",
        "--defaults",
        "--author",
        AUTHOR,
        "--set",
        "environments=dev,prod",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("shared");
    let (_, before) = check(&env, &dir, &["--skip", "tf.backend"]);
    assert!(errors(&before).is_empty(), "{before:#?}");
    let tfvars = "envs/prod/1-prerequisites/terraform.tfvars";
    replace(
        &dir,
        tfvars,
        "name_prefix   = \"shared-prod\"",
        "name_prefix   = \"shared-dev\"",
    );
    let (code, findings) = check(&env, &dir, &["--skip", "tf.backend"]);
    assert_eq!(code, 1, "{findings:#?}");
    assert!(
        findings.iter().all(|f| f["rule"] == "tf.aws-name-shared"),
        "{findings:#?}"
    );
    let kms = "envs/prod/1-prerequisites/kms.tf";
    let text = std::fs::read_to_string(dir.join(kms)).expect("kms.tf");
    let line = text
        .lines()
        .position(|l| l.contains("name          = \"alias/${local.name_prefix}\""))
        .expect("alias")
        + 1;
    let alias = findings
        .iter()
        .find(|f| f["file"] == kms)
        .unwrap_or_else(|| panic!("{findings:#?}"));
    assert_eq!(alias["line"], line, "{alias}");
    assert_eq!(alias["environment"], "prod", "{alias}");
    assert!(
        alias["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("aws_kms_alias `alias/shared-dev` is environment dev's name too (envs/dev/1-prerequisites/kms.tf:")),
        "{alias}"
    );
    // The buckets keep their own prefix: only the names made from name_prefix are found.
    assert!(
        !findings.iter().any(|f| f["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("aws_s3_bucket")),
        "{findings:#?}"
    );
}

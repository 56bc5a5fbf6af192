//! The agreement corpus (49 breakages): hand-made breakages of a default repo, each one a mistake a user
//! plausibly makes by hand. `check` must report each at the expected rule, file AND line;
//! and every breakage the independent validator (`../shared/validate/validate-platform`)
//! fails, check fails too, unless the breakage is a named exception below.
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

use crate::support::{Env, run};

const AUTHOR: &str = "Test Author <test@example.org>";
const CM_RELEASE: &str = "infrastructure/addons/cert-manager/release.yaml";
const CM_SOURCE: &str = "infrastructure/addons/cert-manager/source.yaml";
/// cert-manager's chart version and values in the environment (its overlay's patch).
const CM_VALUES: &str = "environments/prod/infrastructure/addons/cert-manager/release.yaml";
/// cert-manager's OCI tag in the environment (its overlay's patch of the OCIRepository).
const CM_VERSION: &str = "environments/prod/infrastructure/addons/cert-manager/source.yaml";
const TEMPLATE: &str = "envs/prod/2-kops/cluster-template.yaml";
const PREREQ_VARS: &str = "envs/prod/1-prerequisites/terraform.tfvars";
const STATE_BUCKET: &str = "envs/prod/1-prerequisites/state-bucket.tf";
const CONFLICT: &str = "<<<<<<< ours\nleft\n=======\nright\n>>>>>>> theirs\n";

enum Edit {
    /// In a file, the first `old` becomes `new`.
    Replace(&'static str, &'static str, &'static str),
    /// A file written whole.
    Write(&'static str, &'static str),
    /// A file appended to.
    Append(&'static str, &'static str),
    Remove(&'static str),
}
use Edit::*;

/// A breakage and where check must report it: rule, file, and the text on the line
/// (the first line of the edited file containing it).
struct Breakage {
    name: &'static str,
    edits: &'static [Edit],
    rule: &'static str,
    file: &'static str,
    needle: &'static str,
}

const fn b(
    name: &'static str,
    edits: &'static [Edit],
    rule: &'static str,
    file: &'static str,
    needle: &'static str,
) -> Breakage {
    Breakage {
        name,
        edits,
        rule,
        file,
        needle,
    }
}

/// Breakages the validator fails and check does not, each with why (docs/check.md,
/// "What it does not do"). Empty: check catches all the validator catches in this corpus.
const EXCEPTIONS: &[(&str, &str)] = &[];

static CORPUS: &[Breakage] = &[
    // The five "neither" breakages of issue 25 (and their variants).
    b(
        "helm values typo, inline",
        &[Replace(
            CM_VALUES,
            "    serviceAccount:\n",
            "    serviceAcount:\n",
        )],
        "helm.values",
        CM_VALUES,
        "serviceAcount:",
    ),
    b(
        "helm values typo, nested",
        &[Replace(
            CM_VALUES,
            "    podDisruptionBudget:\n      enabled: true\n",
            "    podDisruptionBudget:\n      enabeld: true\n",
        )],
        "helm.values",
        CM_VALUES,
        "enabeld:",
    ),
    b(
        "helm values typo, Terraform values ConfigMap",
        &[Replace(
            "envs/prod/3-bridge/addon-external-dns.tf",
            "      serviceAccount = {",
            "      serviceAcount = {",
        )],
        "helm.values",
        "envs/prod/3-bridge/addon-external-dns.tf",
        "serviceAcount",
    ),
    b(
        "helm values typo, the app's chart",
        &[Replace(
            "apps/prod/podinfo/release.yaml",
            "    hpa:\n",
            "    hpaa:\n",
        )],
        "helm.values",
        "apps/prod/podinfo/release.yaml",
        "hpaa:",
    ),
    b(
        "helm values typo, metrics-server",
        &[Replace(
            "environments/prod/infrastructure/addons/metrics-server/release.yaml",
            "  values:\n",
            "  values:\n    replicaCount: 2\n",
        )],
        "helm.values",
        "environments/prod/infrastructure/addons/metrics-server/release.yaml",
        "replicaCount: 2",
    ),
    b(
        "route attached to a missing Gateway",
        &[
            Write(
                "apps/prod/podinfo/route.yaml",
                "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: podinfo\n  namespace: podinfo\nspec:\n  parentRefs:\n    - name: platform\n      namespace: istio-ingress\n  rules:\n    - backendRefs:\n        - name: podinfo\n          port: 9898\n",
            ),
            Replace(
                "apps/prod/podinfo/kustomization.yaml",
                "resources:\n",
                "resources:\n  - route.yaml\n",
            ),
        ],
        "ref.gateway",
        "apps/prod/podinfo/route.yaml",
        "- name: platform",
    ),
    b(
        "Gateway certificate Secret nobody makes",
        &[
            Write(
                "apps/prod/podinfo/gateway.yaml",
                "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: platform\n  namespace: podinfo\nspec:\n  gatewayClassName: istio\n  listeners:\n    - name: https\n      port: 443\n      protocol: HTTPS\n      tls:\n        certificateRefs:\n          - name: missing-tls\n",
            ),
            Replace(
                "apps/prod/podinfo/kustomization.yaml",
                "resources:\n",
                "resources:\n  - gateway.yaml\n",
            ),
        ],
        "ref.certificate",
        "apps/prod/podinfo/gateway.yaml",
        "name: missing-tls",
    ),
    b(
        "ExternalSecret store typo",
        &[
            Write(
                "apps/prod/podinfo/secret.yaml",
                "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: app\n  namespace: podinfo\nspec:\n  secretStoreRef:\n    kind: ClusterSecretStore\n    name: aws-secret-manager\n  target:\n    name: app\n  data:\n    - secretKey: password\n      remoteRef:\n        key: prod/app\n",
            ),
            Replace(
                "apps/prod/podinfo/kustomization.yaml",
                "resources:\n",
                "resources:\n  - secret.yaml\n",
            ),
        ],
        "ref.secret-store",
        "apps/prod/podinfo/secret.yaml",
        "name: aws-secret-manager",
    ),
    b(
        "NodePool names no EC2NodeClass",
        &[Replace(
            "environments/prod/infrastructure/karpenter/node-pool.yaml",
            "        name: default",
            "        name: defualt",
        )],
        "ref.node-class",
        "environments/prod/infrastructure/karpenter/node-pool.yaml",
        "name: defualt",
    ),
    b(
        "conflict markers in terraform.tfvars",
        &[Replace(
            PREREQ_VARS,
            "vpc_cidr",
            "<<<<<<< ours\nvpc_cidr = \"10.1.0.0/16\"\n=======\nvpc_cidr = \"10.2.0.0/16\"\n>>>>>>> theirs\nvpc_cidr_old",
        )],
        "repo.conflict-markers",
        PREREQ_VARS,
        "<<<<<<<",
    ),
    b(
        "conflict markers in a HelmRelease",
        &[Replace(
            CM_RELEASE,
            "  interval: 30m\n",
            "<<<<<<< ours\n  interval: 30m\n=======\n  interval: 1h\n>>>>>>> theirs\n",
        )],
        "repo.conflict-markers",
        CM_RELEASE,
        "<<<<<<<",
    ),
    b(
        "conflict markers in a .tf file",
        &[Append(STATE_BUCKET, CONFLICT)],
        "repo.conflict-markers",
        STATE_BUCKET,
        "<<<<<<<",
    ),
    b(
        "conflict markers in a Makefile",
        &[Append("envs/prod/1-prerequisites/Makefile", CONFLICT)],
        "repo.conflict-markers",
        "envs/prod/1-prerequisites/Makefile",
        "<<<<<<<",
    ),
    b(
        "conflict markers in the README",
        &[Append("README.md", CONFLICT)],
        "repo.conflict-markers",
        "README.md",
        "<<<<<<<",
    ),
    b(
        "tfvars key no variable declares",
        &[Replace(PREREQ_VARS, "dns_zone     =", "dns_zoen =")],
        "tf.vars",
        PREREQ_VARS,
        "dns_zoen",
    ),
    b(
        "required variable without a value",
        &[Replace(PREREQ_VARS, "name         = ", "# name = ")],
        "tf.vars",
        "envs/prod/1-prerequisites/variables.tf",
        "variable \"name\"",
    ),
    b(
        "tfvars key typo in 3-bridge",
        &[Replace(
            "envs/prod/3-bridge/terraform.tfvars",
            "state_region",
            "state_regoin",
        )],
        "tf.vars",
        "envs/prod/3-bridge/terraform.tfvars",
        "state_regoin",
    ),
    // The two "validator only" breakages.
    b(
        "Terraform argument typo",
        &[Replace(
            STATE_BUCKET,
            "  bucket = \"${local.bucket_base}",
            "  buckt = \"${local.bucket_base}",
        )],
        "tf.schema",
        STATE_BUCKET,
        "buckt =",
    ),
    b(
        "Terraform block typo",
        &[Replace(
            STATE_BUCKET,
            "versioning_configuration {",
            "versioning_config {",
        )],
        "tf.schema",
        STATE_BUCKET,
        "versioning_config {",
    ),
    b(
        "Terraform unknown resource type",
        &[Append(
            "envs/prod/1-prerequisites/extra.tf",
            "resource \"aws_s3_bukcet\" \"x\" {\n  bucket = \"x\"\n}\n",
        )],
        "tf.schema",
        "envs/prod/1-prerequisites/extra.tf",
        "aws_s3_bukcet",
    ),
    b(
        "Terraform argument typo, kubernetes provider",
        &[Replace(
            "envs/prod/3-bridge/addon-cert-manager.tf",
            "    name      = \"cert-manager-tf-values\"",
            "    nmae      = \"cert-manager-tf-values\"",
        )],
        "tf.schema",
        "envs/prod/3-bridge/addon-cert-manager.tf",
        "nmae",
    ),
    b(
        "deleted CRD layer",
        &[
            Remove("clusters/prod/00-crds.yaml"),
            Replace(
                "clusters/prod/10-karpenter.yaml",
                "  dependsOn:\n    - name: crds\n",
                "",
            ),
        ],
        "order.crd-provider",
        "environments/prod/infrastructure/karpenter/node-class.yaml",
        "apiVersion:",
    ),
    // A parse error: one finding where it is, no cascade.
    b(
        "HCL missing brace",
        &[Replace(
            "envs/prod/1-prerequisites/main.tf",
            "locals {",
            "locals",
        )],
        "tf.parse",
        "envs/prod/1-prerequisites/main.tf",
        "locals",
    ),
    b(
        "YAML bad indentation in a HelmRelease",
        &[Replace(
            CM_RELEASE,
            "  interval: 30m\n",
            "  interval: 30m\n   bad: [\n",
        )],
        "yaml.parse",
        CM_RELEASE,
        "bad: [",
    ),
    b(
        "YAML duplicate key",
        &[Write("notes.yaml", "a: 1\nb: 2\na: 3\n")],
        "yaml.parse",
        "notes.yaml",
        "a: 3",
    ),
    b(
        "JSON truncated",
        &[Write("dashboards/nodes.json", "{\"title\": \"nodes\",\n")],
        "json.parse",
        "dashboards/nodes.json",
        "",
    ),
    // The rules check had before issue 25, each broken by hand.
    b(
        "unknown field in a HelmRelease",
        &[Replace(
            CM_RELEASE,
            "  interval: 30m\n",
            "  interval: 30m\n  bogus: true\n",
        )],
        "k8s.schema",
        CM_RELEASE,
        "bogus: true",
    ),
    b(
        "removed Flux API",
        &[Replace(
            CM_SOURCE,
            "source.toolkit.fluxcd.io/v1\n",
            "source.toolkit.fluxcd.io/v1beta2\n",
        )],
        "flux.api-removed",
        CM_SOURCE,
        "v1beta2",
    ),
    b(
        "dependsOn a missing layer",
        &[Replace(
            "clusters/prod/50-apps.yaml",
            "  dependsOn:\n",
            "  dependsOn:\n    - name: ghost\n",
        )],
        "flux.depends-on",
        "clusters/prod/50-apps.yaml",
        "name: ghost",
    ),
    b(
        "dependsOn cycle",
        &[Replace(
            "clusters/prod/00-crds.yaml",
            "spec:\n",
            "spec:\n  dependsOn:\n    - name: apps\n",
        )],
        "flux.cycle",
        "clusters/prod/20-aws-load-balancer-controller.yaml",
        "dependsOn:",
    ),
    b(
        "sourceRef to a missing source",
        &[Replace(
            "clusters/prod/50-apps.yaml",
            "    name: flux-system\n",
            "    name: elsewhere\n",
        )],
        "flux.source-ref",
        "clusters/prod/50-apps.yaml",
        "sourceRef:",
    ),
    b(
        "kustomization lists a missing file",
        &[Replace(
            "infrastructure/addons/cert-manager/kustomization.yaml",
            "  - release.yaml\n",
            "  - release.yaml\n  - missing.yaml\n",
        )],
        "flux.path",
        "infrastructure/addons/cert-manager/kustomization.yaml",
        "missing.yaml",
    ),
    b(
        "Kustomization path missing",
        &[Replace(
            "clusters/prod/50-apps.yaml",
            "  path: ./apps/prod",
            "  path: ./apps/staging",
        )],
        "flux.path",
        "clusters/prod/50-apps.yaml",
        "path: ./apps/staging",
    ),
    b(
        "layer depended on does not wait",
        &[Replace(
            "clusters/prod/30-addon-cert-manager.yaml",
            "  wait: true\n",
            "  wait: false\n",
        )],
        "flux.wait",
        "clusters/prod/30-addon-cert-manager.yaml",
        "",
    ),
    b(
        "chart tag latest",
        &[Replace(CM_VERSION, "tag: \"v1.21.1\"", "tag: latest")],
        "flux.chart-version",
        CM_VERSION,
        "  ref:",
    ),
    b(
        "CRD used before its layer",
        &[
            Write(
                "environments/prod/infrastructure/karpenter/issuer.yaml",
                "apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: selfsigned\nspec:\n  selfSigned: {}\n",
            ),
            Replace(
                "environments/prod/infrastructure/karpenter/kustomization.yaml",
                "resources:\n",
                "resources:\n  - issuer.yaml\n",
            ),
        ],
        "order.crd",
        "environments/prod/infrastructure/karpenter/issuer.yaml",
        "apiVersion:",
    ),
    b(
        "kops and Flux both own Karpenter",
        &[Replace(
            TEMPLATE,
            "  karpenter:\n    enabled: false",
            "  karpenter:\n    enabled: true",
        )],
        "order.owner",
        TEMPLATE,
        "",
    ),
    b(
        "substitution nobody provides",
        &[Replace(
            CM_SOURCE,
            "metadata:\n",
            "metadata:\n  labels:\n    team: ${NOT_PROVIDED}\n",
        )],
        "bridge.substitution",
        CM_SOURCE,
        "NOT_PROVIDED",
    ),
    b(
        "valuesFrom a missing ConfigMap",
        &[Replace(
            CM_RELEASE,
            "name: cert-manager-tf-values",
            "name: missing-values",
        )],
        "bridge.values-from",
        CM_RELEASE,
        "missing-values",
    ),
    b(
        "kops template reads a missing value",
        &[Replace(
            TEMPLATE,
            "{{ .environment }}",
            "{{ .environmentName }}",
        )],
        "kops.render",
        TEMPLATE,
        "environmentName",
    ),
    b(
        "kops Cluster unknown field",
        &[Replace(
            TEMPLATE,
            "  channel: {{ .kopsChannel }}\n",
            "  channel: {{ .kopsChannel }}\n  bogusField: true\n",
        )],
        "kops.schema",
        TEMPLATE,
        "",
    ),
    b(
        "IMDSv1 allowed",
        &[Replace(
            TEMPLATE,
            "httpTokens: required",
            "httpTokens: optional",
        )],
        "kops.imds",
        TEMPLATE,
        "",
    ),
    b(
        "IRSA for a ServiceAccount nobody uses",
        &[Replace(
            "envs/prod/2-kops/values.yaml",
            "serviceAccount: cert-manager",
            "serviceAccount: cert-manager-x",
        )],
        "kops.irsa",
        "envs/prod/2-kops/values.yaml",
        "cert-manager-x",
    ),
    b(
        "kops flag that does not exist",
        &[Replace(
            "envs/prod/2-kops/Makefile",
            "kops replace -f cluster.yaml --force",
            "kops replace -f cluster.yaml --force --bogus",
        )],
        "make.flags",
        "envs/prod/2-kops/Makefile",
        "--bogus",
    ),
    b(
        "undeclared variable",
        &[Write(
            "envs/prod/1-prerequisites/extra.tf",
            "locals {\n  extra = var.nope\n}\n",
        )],
        "tf.refs",
        "envs/prod/1-prerequisites/extra.tf",
        "var.nope",
    ),
    b(
        "provider not required",
        &[Write(
            "envs/prod/1-prerequisites/extra.tf",
            "resource \"random_id\" \"x\" {\n  byte_length = 4\n}\n",
        )],
        "tf.providers",
        "envs/prod/1-prerequisites/extra.tf",
        "random_id",
    ),
    b(
        "state bucket versioning suspended",
        &[Replace(
            STATE_BUCKET,
            "versioning_configuration {\n    status = \"Enabled\"",
            "versioning_configuration {\n    status = \"Suspended\"",
        )],
        "tf.state-bucket",
        STATE_BUCKET,
        "",
    ),
    b(
        "plaintext Secret",
        &[Write(
            "apps/prod/podinfo/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: podinfo\nstringData:\n  password: hunter2\n",
        )],
        "repo.secrets",
        "apps/prod/podinfo/secret.yaml",
        "password: hunter2",
    ),
    b(
        "leftover template markup",
        &[Write("docs/notes.md", "Cluster: {{ cluster_name }}\n")],
        "repo.placeholders",
        "docs/notes.md",
        "cluster_name",
    ),
];

fn new_base(env: &Env) -> PathBuf {
    let out = run(env
        .scaffold()
        .args(["new", "base", "--defaults", "--author", AUTHOR]));
    assert_eq!(out.code, 0, "new: {}", out.stderr);
    env.path("base")
}

/// A copy of the base repo (with its .git) with the breakage applied.
fn broken_copy(env: &Env, base: &Path, index: usize, breakage: &Breakage) -> PathBuf {
    let dir = env.path(&format!("case-{index}"));
    let status = Command::new("cp")
        .arg("-a")
        .arg(base)
        .arg(&dir)
        .status()
        .expect("cp");
    assert!(status.success());
    for edit in breakage.edits {
        match edit {
            Replace(file, old, new) => {
                let path = dir.join(file);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
                assert!(
                    text.contains(old),
                    "{}: {file} has no {old:?}",
                    breakage.name
                );
                std::fs::write(&path, text.replacen(old, new, 1)).expect("write");
            }
            Write(file, text) | Append(file, text) => {
                let path = dir.join(file);
                std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
                let before = match edit {
                    Append(..) => std::fs::read_to_string(&path).unwrap_or_default(),
                    _ => String::new(),
                };
                std::fs::write(&path, before + text).expect("write");
            }
            Remove(file) => std::fs::remove_file(dir.join(file)).expect("remove"),
        }
    }
    dir
}

fn check(env: &Env, dir: &Path) -> (i32, Vec<Json>) {
    let out = run(env.scaffold().arg("check").arg(dir).arg("--json"));
    let report: Json = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json ({e}): {}\n{}", out.stdout, out.stderr));
    (
        out.code,
        report["findings"].as_array().cloned().unwrap_or_default(),
    )
}

/// The 1-based line of the first line of `file` containing `needle`; 0 for an empty
/// needle (the finding may be on any line).
fn line_of(dir: &Path, file: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{file} has no line with {needle:?}"))
}

#[test]
fn the_corpus_has_at_least_40_breakages() {
    assert!(CORPUS.len() >= 40, "{} breakages", CORPUS.len());
}

#[test]
fn check_reports_every_breakage_at_its_rule_file_and_line() {
    let env = Env::new();
    let base = new_base(&env);
    let (code, findings) = check(&env, &base);
    assert!(
        findings.iter().all(|f| f["severity"] != "error") && code == 0,
        "the base repo passes: {findings:#?}"
    );
    let mut failures = Vec::new();
    for (index, breakage) in CORPUS.iter().enumerate() {
        let dir = broken_copy(&env, &base, index, breakage);
        let (code, findings) = check(&env, &dir);
        let line = line_of(&dir, breakage.file, breakage.needle);
        let found = findings.iter().any(|f| {
            f["rule"] == breakage.rule
                && f["severity"] == "error"
                && f["file"] == breakage.file
                && (line == 0 || f["line"] == line)
        });
        if !found || code != 1 {
            failures.push(format!(
                "{}: expected error {} at {}:{line} (exit 1, got {code}); found {:#?}",
                breakage.name, breakage.rule, breakage.file, findings
            ));
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A parse error suppresses what depends on the broken file, with one note: a missing
/// brace in main.tf gives one tf.parse and one check.partial, not 84 tf.refs.
#[test]
fn a_parse_error_does_not_cascade() {
    let env = Env::new();
    let base = new_base(&env);
    let breakage = CORPUS
        .iter()
        .find(|b| b.name == "HCL missing brace")
        .expect("corpus entry");
    let dir = broken_copy(&env, &base, 0, breakage);
    let (_, findings) = check(&env, &dir);
    let rules: Vec<&str> = findings.iter().filter_map(|f| f["rule"].as_str()).collect();
    assert_eq!(rules, ["check.partial", "tf.parse"], "{findings:#?}");
    let note = findings[0]["message"].as_str().expect("message");
    assert!(
        note.contains("tf.refs") && note.contains("envs/prod/1-prerequisites/main.tf"),
        "{note}"
    );
    assert_eq!(findings[0]["severity"], "warning");
}

/// Conflict markers are reported instead of the parse error they cause.
#[test]
fn conflict_markers_come_instead_of_parse_errors() {
    let env = Env::new();
    let base = new_base(&env);
    for name in [
        "conflict markers in terraform.tfvars",
        "conflict markers in a HelmRelease",
        "conflict markers in a .tf file",
    ] {
        let breakage = CORPUS
            .iter()
            .find(|b| b.name == name)
            .expect("corpus entry");
        let dir = broken_copy(&env, &base, 0, breakage);
        let (_, findings) = check(&env, &dir);
        assert!(
            findings
                .iter()
                .all(|f| f["rule"] != "yaml.parse" && f["rule"] != "tf.parse"),
            "{name}: {findings:#?}"
        );
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}

#[test]
fn an_empty_or_foreign_directory_is_not_a_platform_repo() {
    let env = Env::new();
    let empty = env.path("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let out = run(env.scaffold().arg("check").arg(&empty));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not a scaffold platform repo"),
        "{}",
        out.stderr
    );
    std::fs::write(empty.join("notes.md"), "# notes\n").expect("write");
    let out = run(env.scaffold().arg("check").arg(&empty).arg("--json"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", out.stdout);
}

/// The validator, from VALIDATOR or ../shared/validate/validate-platform; None when it is
/// not there (a failure under CI=true, where .ci/run sets it up before the tests).
pub fn validator() -> Option<PathBuf> {
    let path = std::env::var_os("VALIDATOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/validate/validate-platform")
        });
    let ready = path.is_file()
        && Command::new(&path)
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success());
    if !ready {
        assert!(
            !crate::support::in_ci(),
            "CI=true and the validator is missing at {}: run ../shared/validate/setup",
            path.display()
        );
        eprintln!(
            "skipped: no validator at {} (set VALIDATOR)",
            path.display()
        );
        return None;
    }
    Some(path)
}

/// Whether the validator fails the repo (its own git cleanliness check aside: the
/// breakages are not committed) and the checks it failed.
fn validator_fails(validator: &Path, dir: &Path) -> (bool, String) {
    let out = Command::new(validator)
        .arg(dir)
        .args(["--json", "--no-checkov", "--quiet"])
        .args(
            [
                "yaml",
                "schema",
                "kustomize",
                "flux-graph",
                "flux-layers",
                "substitution",
                "terraform",
                "kops",
                "repo",
            ]
            .iter()
            .flat_map(|g| ["--only", g]),
        )
        .output()
        .expect("run the validator");
    let report: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "validator JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let failed = report["failed"].as_u64().unwrap_or(0);
    (failed > 0, report["failed_checks"].to_string())
}

#[test]
fn every_breakage_the_validator_catches_check_catches_too() {
    let Some(validator) = validator() else { return };
    let env = Env::new();
    let base = new_base(&env);
    let (base_fails, what) = validator_fails(&validator, &base);
    assert!(!base_fails, "the validator passes the base repo: {what}");
    let mut disagreements = Vec::new();
    let mut validator_caught = 0;
    for (index, breakage) in CORPUS.iter().enumerate() {
        let dir = broken_copy(&env, &base, index, breakage);
        let (fails, what) = validator_fails(&validator, &dir);
        let (code, _) = check(&env, &dir);
        eprintln!(
            "{}: validator {}, check exit {code}",
            breakage.name,
            if fails { "fails" } else { "passes" }
        );
        if fails {
            validator_caught += 1;
            let excepted = EXCEPTIONS.iter().any(|(n, _)| *n == breakage.name);
            if code != 1 && !excepted {
                disagreements.push(format!(
                    "{}: the validator fails {what}, check passes",
                    breakage.name
                ));
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    eprintln!(
        "validator caught {validator_caught} of {} breakages",
        CORPUS.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// The real kubectl the validator's setup installs (kustomize v5.6.0 inside), or None
/// (a failure under CI=true).
fn kubectl() -> Option<PathBuf> {
    validator_bin("kubectl")
}

/// (kind, name, namespace) of what `kubectl kustomize` builds in `dir`.
fn kubectl_build(kubectl: &Path, dir: &Path) -> Vec<(String, String, String)> {
    let out = Command::new(kubectl)
        .args(["kustomize", "--load-restrictor=LoadRestrictionsNone"])
        .arg(dir)
        .output()
        .expect("kubectl kustomize");
    assert!(
        out.status.success(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut objects: Vec<_> = text
        .split("\n---\n")
        .filter_map(|doc| serde_norway::from_str::<serde_norway::Value>(doc).ok())
        .filter(|v| v.get("kind").is_some())
        .map(|v| {
            let s = |path: &[&str]| {
                path.iter()
                    .try_fold(&v, |v, k| v.get(k))
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string()
            };
            (
                s(&["kind"]),
                s(&["metadata", "name"]),
                s(&["metadata", "namespace"]),
            )
        })
        .collect();
    objects.sort();
    objects
}

/// check's own kustomize build (scaffold_check::kustomize) against `kubectl kustomize` on
/// every kustomization directory a Flux Kustomization points at, in every answer set's repo
/// and in hand-made overlays: the same objects, in the same namespaces (for objects
/// kubectl gives a namespace; check does not model which kinds are cluster-scoped).
#[test]
fn check_kustomize_builds_what_kubectl_kustomize_builds() {
    use scaffold_check::{Repo, kustomize};
    let Some(kubectl) = kubectl() else { return };
    let env = Env::new();
    let mut dirs = Vec::new();
    let sets = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default/tests");
    for entry in std::fs::read_dir(&sets).expect("answer sets") {
        let path = entry.expect("entry").path();
        if std::fs::read_to_string(&path)
            .expect("set")
            .contains("expect_error")
        {
            continue;
        }
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let out = run(env
            .scaffold()
            .args(["new", &name, "--defaults", "--author", AUTHOR, "--values"])
            .arg(&path));
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        dirs.push(env.path(&name));
    }
    // Hand-made overlays: an overlay's namespace over a base's, nested.
    let overlay = env.path("overlays");
    for (file, text) in [
        (
            "base/kustomization.yaml",
            "namespace: base-ns\nresources:\n  - cm.yaml\n",
        ),
        (
            "base/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: own\n",
        ),
        (
            "mid/kustomization.yaml",
            "resources:\n  - ../base\n  - sa.yaml\n",
        ),
        (
            "mid/sa.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: s\n",
        ),
        (
            "top/kustomization.yaml",
            "namespace: top-ns\nresources:\n  - ../mid\n",
        ),
        (
            "flux.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: a\n  namespace: flux-system\nspec:\n  path: ./top\n  interval: 1h\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: b\n  namespace: flux-system\nspec:\n  path: ./mid\n  interval: 1h\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
        ),
    ] {
        let path = overlay.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    dirs.push(overlay);
    let mut compared = 0;
    let mut differences = Vec::new();
    for dir in &dirs {
        let repo = Repo::read(dir).expect("read");
        let paths: std::collections::BTreeSet<String> = repo
            .objects
            .iter()
            .filter(|o| {
                o.kind == "Kustomization"
                    && o.api_version.starts_with("kustomize.toolkit.fluxcd.io")
            })
            .filter_map(|o| {
                o.spec("path")
                    .and_then(|p| p.as_str())
                    .map(|p| p.trim_start_matches("./").trim_end_matches('/').to_string())
            })
            .filter(|p| {
                ["kustomization.yaml", "kustomization.yml", "Kustomization"]
                    .iter()
                    .any(|k| repo.exists(&format!("{p}/{k}")))
            })
            .collect();
        for path in paths {
            let built = kustomize::build(&repo, &path);
            assert!(built.errors.is_empty(), "{path}: {:?}", built.errors);
            let mut ours: Vec<(String, String, String)> = built
                .objects
                .iter()
                .map(|(i, ns)| {
                    let o = &repo.objects[*i];
                    (
                        o.kind.clone(),
                        o.name.clone(),
                        ns.clone().or(o.namespace.clone()).unwrap_or_default(),
                    )
                })
                .collect();
            ours.sort();
            let theirs = kubectl_build(&kubectl, &dir.join(&path));
            let key = |v: &[(String, String, String)]| -> Vec<(String, String)> {
                v.iter().map(|(k, n, _)| (k.clone(), n.clone())).collect()
            };
            if key(&ours) != key(&theirs) {
                differences.push(format!(
                    "{}/{path}: objects differ\n check: {ours:?}\n kubectl: {theirs:?}",
                    dir.display()
                ));
                continue;
            }
            for (mine, real) in ours.iter().zip(&theirs) {
                if !real.2.is_empty() && mine.2 != real.2 {
                    differences.push(format!(
                        "{}/{path}: {} {} in {} (check) vs {} (kubectl)",
                        dir.display(),
                        mine.0,
                        mine.1,
                        mine.2,
                        real.2
                    ));
                }
            }
            compared += 1;
        }
    }
    assert!(compared >= 10, "kustomizations compared: {compared}");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The validator's kops-render (Go text/template + sprig, as kops), or None (a failure
/// under CI=true).
fn kops_render() -> Option<PathBuf> {
    validator_bin("kops-render")
}

/// `bin/NAME` of the validator's setup (`$VALIDATE_HOME`, default
/// ~/.cache/platform-validate), or None: a failure under CI=true, where setup runs first.
fn validator_bin(name: &str) -> Option<PathBuf> {
    let home = std::env::var_os("VALIDATE_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/platform-validate"))
        })?;
    let path = home.join("bin").join(name);
    if path.is_file() {
        return Some(path);
    }
    assert!(
        !crate::support::in_ci(),
        "CI=true and no {name} at {}: run ../shared/validate/setup",
        path.display()
    );
    eprintln!("skipped: no {name} at {}", path.display());
    None
}

/// Stand-in Terraform outputs of 1-prerequisites: a map by zone for `*_by_zone`, a list for
/// plural names, a string otherwise (both renderers read the same file).
fn synthetic_outputs(dir: &Path) -> Json {
    let values: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(dir.join("envs/prod/2-kops/values.yaml")).expect("values"),
    )
    .expect("values yaml");
    let zones: Vec<String> = values["zones"]
        .as_sequence()
        .map(|z| {
            z.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut outputs = String::new();
    for entry in std::fs::read_dir(dir.join("envs/prod/1-prerequisites")).expect("prerequisites") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "tf") {
            outputs += &std::fs::read_to_string(&path).expect("tf");
        }
    }
    let mut out = serde_json::Map::new();
    for line in outputs.lines() {
        let Some(name) = line
            .strip_prefix("output \"")
            .and_then(|l| l.split('"').next())
        else {
            continue;
        };
        let value = if name.ends_with("_by_zone") {
            Json::Object(
                zones
                    .iter()
                    .map(|z| (z.clone(), Json::from(format!("id-{z}"))))
                    .collect(),
            )
        } else if name.ends_with('s') && !name.ends_with("_ids") {
            Json::from(vec![format!("{name}-0"), format!("{name}-1")])
        } else {
            Json::from(format!("synthetic-{name}"))
        };
        out.insert(name.to_string(), value);
    }
    Json::Object(out)
}

/// check's kops template rendering (scaffold_check::kops) against the validator's
/// kops-render on every answer set's cluster template, with the same values: the same
/// documents.
#[test]
fn check_renders_kops_templates_as_kops_render_does() {
    use scaffold_check::{Repo, kops};
    let Some(renderer) = kops_render() else {
        return;
    };
    let env = Env::new();
    let sets = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default/tests");
    let mut compared = 0;
    for entry in std::fs::read_dir(&sets).expect("answer sets") {
        let path = entry.expect("entry").path();
        if std::fs::read_to_string(&path)
            .expect("set")
            .contains("expect_error")
        {
            continue;
        }
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let out = run(env
            .scaffold()
            .args(["new", &name, "--defaults", "--author", AUTHOR, "--values"])
            .arg(&path));
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let dir = env.path(&name);
        // One cluster per repo here: kops renders one template at a time.
        if std::fs::read_dir(dir.join("envs")).expect("envs").count() > 1 {
            continue;
        }
        let outputs = synthetic_outputs(&dir);
        std::fs::write(
            dir.join("envs/prod/2-kops/tf-outputs.json"),
            outputs.to_string(),
        )
        .expect("outputs");
        let values: serde_norway::Value = serde_norway::from_str(
            &std::fs::read_to_string(dir.join("envs/prod/2-kops/values.yaml")).expect("values"),
        )
        .expect("values yaml");
        let values_json = env.path(&format!("{name}-values.json"));
        std::fs::write(&values_json, serde_json::to_string(&values).expect("json")).expect("write");
        // The values files in the order 2-kops/Makefile passes them to kops.
        let tags: serde_norway::Value = serde_norway::from_str(
            &std::fs::read_to_string(dir.join("envs/prod/1-prerequisites/tags.yaml"))
                .expect("tags"),
        )
        .expect("tags yaml");
        let tags_json = env.path(&format!("{name}-tags.json"));
        std::fs::write(&tags_json, serde_json::to_string(&tags).expect("json")).expect("write");
        let real = Command::new(&renderer)
            .arg("-values")
            .arg(&values_json)
            .arg("-values")
            .arg(&tags_json)
            .arg("-values")
            .arg(dir.join("envs/prod/2-kops/tf-outputs.json"))
            .arg("-template")
            .arg(dir.join("envs/prod/2-kops/cluster-template.yaml"))
            .output()
            .expect("kops-render");
        assert!(
            real.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&real.stderr)
        );
        let theirs: Vec<Json> = String::from_utf8(real.stdout)
            .expect("utf-8")
            .split("\n---\n")
            .filter_map(|d| serde_norway::from_str::<Json>(d).ok())
            .filter(|v| !v.is_null())
            .collect();
        // tf-outputs.json is git-ignored (Repo::read leaves it out): add it to the model.
        let mut files = Repo::read(&dir).expect("read").files;
        files.insert(
            "envs/prod/2-kops/tf-outputs.json".into(),
            Some(outputs.to_string().into()),
        );
        let repo = Repo::from_files(files);
        let rendered = kops::render_all(&repo);
        assert_eq!(rendered.len(), 1, "{name}: one kops template");
        let ours: Vec<Json> = match &rendered[0].result {
            Ok(docs) => docs
                .iter()
                .map(|d| serde_json::Value::clone(&d.value))
                .collect(),
            Err(e) => panic!(
                "{name}: check does not render: {} (line {})",
                e.message, e.line
            ),
        };
        assert_eq!(ours, theirs, "{name}: check and kops-render disagree");
        compared += 1;
    }
    assert!(compared >= 3, "answer sets compared: {compared}");
}

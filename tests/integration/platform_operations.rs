//! The generated Makefiles run as an operator runs them, with `kops` and `terraform`
//! replaced by recording stand-ins on PATH (no cloud account), and the names kops
//! gives to what the generated Terraform references: an operator-level review of
//! issue 11's repo. docs/platform-design.md ("Infrastructure") names the upstream
//! sources (kops v1.34.0).
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, require_tool, run};

fn generate(env: &Env, name: &str, args: &[&str]) -> PathBuf {
    let out = run(env.scaffold().args(["new", name, "--defaults"]).args(args));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A generated repo (`demo`, default answers), or None when a tool the Makefiles need
/// is missing ([`require_tool`]: a failure under CI).
fn repo_with(tools: &[&str]) -> Option<(Env, PathBuf)> {
    if !tools.iter().all(|tool| require_tool(tool)) {
        return None;
    }
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    Some((env, dir))
}

/// A directory with executable stand-ins: each appends `<tool> <args>` (and what the
/// script adds) to `calls.log` next to them, then runs `body`.
struct Tools {
    dir: tempfile::TempDir,
}

impl Tools {
    fn new(scripts: &[(&str, &str)]) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::TempDir::new().expect("tools dir");
        let log = dir.path().join("calls.log");
        for (tool, body) in scripts {
            let path = dir.path().join(tool);
            let script = format!(
                "#!/bin/bash\nset -eu\nLOG='{}'\necho \"{tool} $*\" >> \"$LOG\"\n{body}\n",
                log.display()
            );
            std::fs::write(&path, script).expect("write tool");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        Tools { dir }
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// `make TARGET` in `dir` with these tools first on PATH.
    fn make(&self, dir: &Path, target: &str) -> crate::support::Output {
        self.make_with(dir, target, &[])
    }

    /// `make TARGET` with these tools first on PATH and `vars` in the environment.
    fn make_with(&self, dir: &Path, target: &str, vars: &[(&str, &str)]) -> crate::support::Output {
        let path = format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("make");
        command
            .arg(target)
            .current_dir(dir)
            .env("PATH", path)
            .env_remove("KUBECONFIG")
            .env_remove("MAKEFLAGS")
            .env_remove("GIT_PASSWORD")
            .env_remove("GIT_USERNAME")
            .env_remove("DNS_IGNORE_NS_CHECK");
        for (name, value) in vars {
            command.env(name, value);
        }
        run(&mut command)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Teardown on a machine that never ran `make init` (a fresh clone, CI): without the
/// S3 backend initialised first, `terraform init -migrate-state` has nothing to copy
/// from and starts an empty local state; `make destroy` then destroys nothing and the
/// real state goes with the emptied bucket.
#[test]
fn state_local_copies_the_s3_state_and_refuses_an_empty_copy() {
    let Some((_env, dir)) = repo_with(&["make"]) else {
        return;
    };
    std::fs::write(
        dir.join("envs/prod/terraform-backend.hcl"),
        "bucket = \"demo-prod-tfstate-111111111111\"\nregion = \"eu-west-1\"\n",
    )
    .expect("backend");
    let root = dir.join("envs/prod/1-prerequisites");
    let with_state = Tools::new(&[(
        "terraform",
        r#"if [ "$1" = state ]; then echo aws_s3_bucket.terraform_state; fi"#,
    )]);
    let out = with_state.make(&root, "state-local");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let calls = with_state.log();
    let s3_init = calls
        .iter()
        .position(|c| c == "terraform init -backend-config=../terraform-backend.hcl")
        .unwrap_or_else(|| panic!("the S3 backend is never initialised: {calls:?}"));
    let migrate = calls
        .iter()
        .position(|c| c == "terraform init -migrate-state -force-copy")
        .unwrap_or_else(|| panic!("no migration: {calls:?}"));
    assert!(s3_init < migrate, "{calls:?}");
    assert!(root.join("backend_override.tf").exists());

    // Run again: the state is already local, nothing is re-initialised.
    let again = with_state.make(&root, "state-local");
    assert_ne!(again.code, 0);
    assert!(again.stderr.contains("already local"), "{}", again.stderr);

    // A migration that brings no resources stops teardown before the buckets are emptied.
    std::fs::remove_file(root.join("backend_override.tf")).expect("reset");
    let empty = Tools::new(&[("terraform", "true")]);
    let out = empty.make(&root, "state-local");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("the local state is empty"),
        "{}",
        out.stderr
    );
}

/// A Kubernetes upgrade: kops keeps the node groups on the control plane's version
/// only when it can read the control plane through the kubeconfig context named after
/// the cluster (kops v1.34.0 cmd/kops/update_cluster.go checkControlPlaneRunningVersion).
#[test]
fn kops_update_reads_the_admin_kubeconfig_and_upgrades_run_control_plane_first() {
    let Some((_env, dir)) = repo_with(&["make", "jq"]) else {
        return;
    };
    let kops_dir = dir.join("envs/prod/2-kops");
    let tools = Tools::new(&[
        (
            "terraform",
            r#"if [ "$1" = output ]; then echo '{"kops_state_bucket": {"value": "demo-kops-state"}}'; fi"#,
        ),
        (
            "kops",
            r#"case "$1" in
  version) echo 1.34.0 ;;
  toolbox) printf 'kind: Cluster\nmetadata:\n  name: c\n' > cluster.yaml ;;
  get)
    stamp="$(sed -n 's|^    scaffold.dev/rendered-spec-sha256: ||p' cluster.yaml)"
    echo "[{\"kind\": \"Cluster\", \"metadata\": {\"name\": \"c\", \"annotations\": {\"scaffold.dev/rendered-spec-sha256\": $stamp}}}]" ;;
  update)
    echo "env KUBECONFIG=${KUBECONFIG:-} KOPS_STATE_STORE=$KOPS_STATE_STORE" >> "$LOG"
    mkdir -p kops-tf/data
    printf 'locals {\n  cluster_name = "c"\n}\n\nprovider "aws" {\n  region = "eu-west-1"\n}\n\nprovider "aws" {\n  alias  = "files"\n  region = "eu-west-1"\n}\n\nresource "aws_s3_object" "nodeupscript-karpenter-nodes" {\n  content = "x"\n}\n\nterraform {\n  required_version = ">= 0.15.0"\n  required_providers {\n    aws = {\n      "source" = "hashicorp/aws"\n    }\n  }\n}\n' > kops-tf/kubernetes.tf
    printf 'KubernetesVersion: 1.35.0\n' > kops-tf/data/aws_s3_object_nodeupconfig-control-plane-eu-west-1a_content
    printf 'KubernetesVersion: 1.34.1\n' > kops-tf/data/aws_s3_object_nodeupconfig-nodes_content
    ;;
esac"#,
        ),
    ]);
    // Left by an earlier render of a group that no longer exists.
    std::fs::create_dir_all(kops_dir.join("kops-tf/data")).expect("mkdir");
    std::fs::write(
        kops_dir.join("kops-tf/data/aws_s3_object_nodeupconfig-removed_content"),
        "KubernetesVersion: 1.33.0\n",
    )
    .expect("stale file");
    let out = tools.make(&kops_dir, "cluster-render");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let kubeconfig = kops_dir.join("kubeconfig");
    let seen = format!(
        "env KUBECONFIG={} KOPS_STATE_STORE=s3://demo-kops-state",
        kubeconfig.display()
    );
    assert!(tools.log().contains(&seen), "{:?}", tools.log());
    // The module kops wrote lost its provider and terraform blocks, kept the rest, and
    // got scaffold.tf.
    let module = read(&kops_dir.join("kops-tf/kubernetes.tf"));
    assert!(!module.contains("provider \"aws\"") && !module.contains("terraform {"));
    assert!(module.contains("locals {") && module.contains("nodeupscript-karpenter-nodes"));
    assert!(kops_dir.join("kops-tf/scaffold.tf").exists());

    let versions = tools.make(&kops_dir, "cluster-versions");
    assert_eq!(versions.code, 0, "{}", versions.stderr);
    assert_eq!(
        versions.stdout,
        "control-plane-eu-west-1a 1.35.0\nnodes 1.34.1\n"
    );

    // The runbook rolls the control plane before any node.
    let makefile = read(&kops_dir.join("Makefile"));
    assert!(makefile.contains(
        "control-plane-rolling-update-yes: check-account check-kops ## Upgrades: replace only the control plane\n\tkops rolling-update cluster --instance-group-roles=control-plane --yes\n"
    ));
    let readme = read(&dir.join("envs/prod/README.md"));
    let upgrade = &readme[readme.find("### Upgrading Kubernetes").expect("section")..];
    let at = |needle: &str| {
        upgrade
            .find(needle)
            .unwrap_or_else(|| panic!("upgrade lacks {needle}"))
    };
    assert!(at("make kubeconfig") < at("make cluster-update cluster-versions"));
    assert!(
        at("make control-plane-rolling-update-yes") < at("make cluster-render cluster-versions")
    );
    assert!(at("make cluster-render cluster-versions") < at("make cluster-rolling-update-yes"));
}

/// kops' 6-character name hash: FNV-32a, base32 "hex" alphabet, lower case
/// (kops v1.34.0 pkg/truncate/truncate.go HashString).
fn kops_hash(text: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    let alphabet = b"0123456789abcdefghijklmnopqrstuv";
    let bits = u64::from(hash) << 8; // 40 bits, 5 per character; the first 6 are kept
    (0..6)
        .map(|i| alphabet[((bits >> (35 - 5 * i)) & 31) as usize] as char)
        .collect()
}

/// The name kops gives an IAM role and instance profile: as is up to 64 characters,
/// else the first 57, `-` and the hash (pkg/model/names.go IAMName, TruncateString).
fn kops_iam_name(name: &str) -> String {
    if name.len() <= 64 {
        return name.to_string();
    }
    format!("{}-{}", &name[..57], kops_hash(name))
}

/// IAM's resource wildcard (`*`, `?`) against a name.
fn iam_matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(&p, &n)
}

#[test]
fn kops_hash_matches_kops_own_test_cases() {
    // kops v1.34.0 pkg/truncate/truncate_test.go.
    assert_eq!(kops_hash("this_string_is_33_characters_long"), "t4mk8d");
    assert_eq!(
        kops_hash("this_string_is_longer_it_is_46_characters_long"),
        "ha2gug"
    );
    assert_eq!(
        kops_iam_name("nodes.prod.demo.example.com"),
        "nodes.prod.demo.example.com"
    );
}

/// Cluster names up to the 63 characters the answers allow: what the generated
/// Terraform references must be what kops writes for them, also when kops shortens
/// `nodes.<cluster>` (longer than 64) with a hash.
#[test]
fn kops_names_hold_for_long_cluster_names() {
    let env = Env::new();
    for cluster in [
        "prod.demo.example.com".to_string(),
        format!("{}.{}.example.com", "a".repeat(20), "b".repeat(30)),
    ] {
        let name = format!("n{}", cluster.len());
        // Both names sit under example.com: the cluster name must be under the DNS zone.
        let dir = generate(
            &env,
            &name,
            &[
                "--set",
                "dns_zone=example.com",
                "--set",
                &format!("cluster_name={cluster}"),
            ],
        );
        let module = read(&dir.join("envs/prod/2-kops/kops-module.tf.tmpl"));
        let sanitized = cluster.replace('.', "-");
        // The launch template keeps its full name; the profile is read from kops' local.
        assert!(
            module.contains(&format!("aws_launch_template.nodes-{sanitized}.image_id")),
            "{module}"
        );
        assert!(!module.contains("aws_iam_instance_profile."), "{module}");
        assert!(module.contains("value = local.nodes_role_name"), "{module}");

        if !require_tool("terraform") {
            continue;
        }
        // Evaluate the node role name the Karpenter policy allows to pass.
        let policy = read(&dir.join("envs/prod/1-prerequisites/addon-karpenter.tf"));
        assert!(
            policy.contains("role/${local.karpenter_node_role_name}\""),
            "{policy}"
        );
        let start = policy.find("  karpenter_node_role_name = ").expect("local");
        let end = start + policy[start..].find("\n\n").expect("end of the local");
        let scratch = tempfile::TempDir::new().expect("scratch");
        std::fs::write(
            scratch.path().join("main.tf"),
            format!(
                "variable \"cluster_name\" {{\n  default = \"{cluster}\"\n}}\n\nlocals {{\n{}\n}}\n",
                &policy[start..end]
            ),
        )
        .expect("main.tf");
        let tf = |args: &[&str], input: Option<&str>| {
            use std::io::Write;
            let mut child = Command::new("terraform")
                .args(args)
                .current_dir(scratch.path())
                .env("HOME", env.home.path())
                .env("TF_CLI_CONFIG_FILE", "/dev/null")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("terraform");
            if let Some(input) = input {
                child
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(input.as_bytes())
                    .expect("write");
            }
            let out = child.wait_with_output().expect("terraform runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .trim_matches('"')
                .to_string()
        };
        tf(&["init", "-input=false"], None);
        let pattern = tf(&["console"], Some("local.karpenter_node_role_name\n"));
        let role = kops_iam_name(&format!("nodes.{cluster}"));
        assert!(
            iam_matches(&pattern, &role),
            "PassRole on role/{pattern} misses kops' role {role}"
        );
        assert!(!iam_matches(&pattern, &format!("nodes.other{cluster}")));
    }
}

/// The state bucket's bootstrap writes the backend settings every root reads. Without
/// `kms_key_id`, Terraform's s3 backend (`encrypt = true`) uploads with SSE-S3, which
/// overrides the bucket's default SSE-KMS (hashicorp/terraform
/// internal/backend/remote-state/s3/client.go PutObject).
#[test]
fn state_bootstrap_writes_bucket_region_and_kms_key_for_every_root() {
    let Some((env, dir)) = repo_with(&["make", "jq"]) else {
        return;
    };
    let root = dir.join("envs/prod/1-prerequisites");
    let show = r#"if [ "$1" = show ]; then echo '{"values": {"root_module": {"resources": [
  {"address": "aws_kms_key.platform", "values": {"arn": "arn:aws:kms:eu-west-1:111111111111:key/k1"}},
  {"address": "aws_s3_bucket.terraform_state", "values": {"bucket": "demo-prod-tfstate-111111111111"}}]}}}'; fi
if [ "$1" = init ]; then echo "env TF_VAR_state_bucket=${TF_VAR_state_bucket:-}" >> "$LOG"; fi"#;
    let tools = Tools::new(&[("terraform", show)]);
    let out = tools.make(&root, "state-bootstrap");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let backend = read(&dir.join("envs/prod/terraform-backend.hcl"));
    assert!(
        backend.contains("bucket     = \"demo-prod-tfstate-111111111111\"\n")
            && backend.contains("region     = \"eu-west-1\"\n")
            && backend.contains("kms_key_id = \"arn:aws:kms:eu-west-1:111111111111:key/k1\"\n"),
        "{backend}"
    );
    let calls = tools.log();
    let migrate =
        "terraform init -migrate-state -force-copy -backend-config=../terraform-backend.hcl";
    assert!(calls.iter().any(|c| c == migrate), "{calls:?}");
    assert!(!root.join("backend_override.tf").exists());
    // Every root initialises with it; the bridge also reads the bucket from it.
    for other in ["envs/prod/2-kops", "envs/prod/3-bridge"] {
        let makefile = read(&dir.join(other).join("Makefile"));
        assert!(makefile.contains("terraform init -backend-config=$(STATE_BACKEND)"));
    }
    let bridge = tools.make(&dir.join("envs/prod/3-bridge"), "init");
    assert_eq!(bridge.code, 0, "{}", bridge.stderr);
    assert!(
        tools
            .log()
            .contains(&"env TF_VAR_state_bucket=demo-prod-tfstate-111111111111".to_string()),
        "{:?}",
        tools.log()
    );

    // A local state without the key (an apply that did not finish) writes nothing.
    let again = generate(&env, "again", &[]);
    let partial = Tools::new(&[(
        "terraform",
        r#"if [ "$1" = show ]; then echo '{"values": {"root_module": {"resources": [{"address": "aws_s3_bucket.terraform_state", "values": {"bucket": "b"}}]}}}'; fi"#,
    )]);
    let out = partial.make(&again.join("envs/prod/1-prerequisites"), "state-bootstrap");
    assert_ne!(out.code, 0);
    assert!(!again.join("envs/prod/terraform-backend.hcl").exists());
}

/// A kops stand-in with a state store: `toolbox template` writes what `render.yaml`
/// next to it holds (the template as this checkout renders it), `replace` stores
/// cluster.yaml, `get all -o json|yaml` reads the store back with each object's kind,
/// name and annotations, `update cluster` writes kops-tf/.
const KOPS_WITH_STORE: &str = r#"here="$(dirname "$0")"
case "$1" in
  version) echo 1.34.0 ;;
  toolbox) cp "$here/render.yaml" cluster.yaml ;;
  replace) cp cluster.yaml "$here/store.yaml" ;;
  get)
    test -f "$here/store.yaml" || { echo "cluster not found" >&2; exit 1; }
    case "$*" in
      *yaml*) cat "$here/store.yaml" ;;
      *) awk 'function emit() { if (kind != "") { if (n++) printf ","; printf "{\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\",\"annotations\":{\"scaffold.dev/rendered-spec-sha256\":%s}}}", kind, name, (stamp == "" ? "\"\"" : stamp) } kind = ""; name = ""; stamp = "" }
           BEGIN { printf "[" } /^kind:/ { kind = $2 } /^    scaffold.dev\/rendered-spec-sha256:/ { stamp = $2 } /^  name:/ { name = $2 } /^---$/ { emit() } END { emit(); printf "]\n" }' "$here/store.yaml" ;;
    esac ;;
  update)
    mkdir -p kops-tf/data
    printf 'locals {\n  cluster_name = "c"\n}\n' > kops-tf/kubernetes.tf ;;
esac"#;

const SPEC_A: &str = "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\nmetadata:\n  name: prod.demo.example.com\nspec:\n  kubernetesVersion: 1.34.1\n---\napiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  labels:\n    kops.k8s.io/cluster: prod.demo.example.com\n  name: nodes\nspec:\n  machineType: m6i.large\n";

/// Review issue A3: `cluster-diff` shows the change and writes nothing to the state
/// store; `cluster-update` stamps every stored object with the sha256 of the render;
/// `apply` and `cluster-render` refuse a stored spec this checkout did not render
/// (another operator's branch), and name an instance group git no longer has.
#[test]
fn kops_changes_are_shown_before_they_are_stored_and_apply_refuses_a_spec_git_did_not_render() {
    let Some((_env, dir)) = repo_with(&["make", "jq", "sha256sum", "awk", "diff"]) else {
        return;
    };
    let kops_dir = dir.join("envs/prod/2-kops");
    let tools = Tools::new(&[
        (
            "terraform",
            r#"if [ "$1" = output ]; then echo '{"kops_state_bucket": {"value": "demo-kops-state"}}'; fi"#,
        ),
        ("kops", KOPS_WITH_STORE),
    ]);
    let stored = tools.path("store.yaml");
    let render = |spec: &str| std::fs::write(tools.path("render.yaml"), spec).expect("render");
    let writes = |tools: &Tools| {
        tools
            .log()
            .iter()
            .filter(|c| c.starts_with("kops replace"))
            .count()
    };

    // First install: nothing stored yet; the dry run says so and writes nothing.
    render(SPEC_A);
    let out = tools.make(&kops_dir, "cluster-diff");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("holds no cluster"), "{}", out.stdout);
    assert!(!stored.exists() && writes(&tools) == 0, "{:?}", tools.log());

    let out = tools.make(&kops_dir, "cluster-update");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let store = read(&stored);
    assert_eq!(
        store
            .matches("    scaffold.dev/rendered-spec-sha256: \"")
            .count(),
        2,
        "every object is stamped: {store}"
    );
    assert!(
        tools
            .log()
            .iter()
            .any(|c| c.starts_with("kops update cluster"))
    );
    let out = tools.make(&kops_dir, "apply");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(tools.log().contains(&"terraform apply".to_string()));
    // Review issue A-m1: once the bridge is initialised, its apply follows (Karpenter's
    // user data carries the new nodeup hash).
    let before = tools
        .log()
        .iter()
        .filter(|c| *c == "terraform apply")
        .count();
    std::fs::create_dir_all(dir.join("envs/prod/3-bridge/.terraform")).expect("bridge init");
    let out = tools.make(&kops_dir, "apply");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let after = tools
        .log()
        .iter()
        .filter(|c| *c == "terraform apply")
        .count();
    assert_eq!(
        after,
        before + 2,
        "2-kops, then 3-bridge: {:?}",
        tools.log()
    );

    // Operator A tries a change on a branch: the dry run shows it, the store keeps git's.
    let spec_b = SPEC_A.replace("m6i.large", "m6i.xlarge");
    render(&spec_b);
    let out = tools.make(&kops_dir, "cluster-diff");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("-  machineType: m6i.large")
            && out.stdout.contains("+  machineType: m6i.xlarge"),
        "{}",
        out.stdout
    );
    assert_eq!(read(&stored), store, "the dry run wrote to the state store");
    assert_eq!(writes(&tools), 1);
    // ... and writes it anyway.
    let out = tools.make(&kops_dir, "cluster-update");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);

    // Operator B, on the default branch, renders A's spec from git: nothing is applied.
    render(SPEC_A);
    let applies = |tools: &Tools| {
        tools
            .log()
            .iter()
            .filter(|c| *c == "terraform apply")
            .count()
    };
    let renders = |tools: &Tools| {
        tools
            .log()
            .iter()
            .filter(|c| c.starts_with("kops update"))
            .count()
    };
    let (applied, rendered) = (applies(&tools), renders(&tools));
    let out = tools.make(&kops_dir, "apply");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("not the one rendered from this commit")
            && out
                .stderr
                .contains("Cluster prod.demo.example.com: stored from another render"),
        "{}",
        out.stderr
    );
    assert_eq!(applies(&tools), applied);
    let out = tools.make(&kops_dir, "cluster-render");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_eq!(renders(&tools), rendered);

    // Back to git's spec, plus an instance group git no longer has.
    let out = tools.make(&kops_dir, "cluster-update");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let mut store = read(&stored);
    store.push_str("---\napiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  annotations:\n    scaffold.dev/rendered-spec-sha256: \"0000\"\n  name: old-nodes\nspec: {}\n");
    std::fs::write(&stored, store).expect("store");
    let out = tools.make(&kops_dir, "apply");
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("InstanceGroup old-nodes: not in cluster-template.yaml")
            && out
                .stderr
                .contains("kops delete instancegroup old-nodes --yes"),
        "{}",
        out.stderr
    );
    assert_eq!(applies(&tools), applied);
}

/// flux stand-ins for `make flux-bootstrap`: the pinned version, a passing pre-check,
/// and a remote that has the branch.
fn flux_tools() -> Tools {
    Tools::new(&[
        (
            "flux",
            r#"if [ "$1" = version ]; then echo '{"flux": "v2.9.4"}'; fi"#,
        ),
        ("git", "true"),
    ])
}

/// Review issue A2: an https:// URL bootstraps with token auth (the sync keeps https,
/// flux2 v2.9.4 cmd/flux/bootstrap_git.go) and needs GIT_PASSWORD; ssh:// keeps the
/// agent and deploy-key path.
#[test]
fn flux_bootstrap_keeps_the_git_url_scheme_and_asks_for_the_credential_it_needs() {
    let Some((env, ssh_dir)) = repo_with(&["make", "jq"]) else {
        return;
    };
    let https_url = "https://git.example.org/platform/demo.git";
    let https_dir = generate(&env, "web", &["--set", &format!("git_url={https_url}")]);
    for dir in [&ssh_dir, &https_dir] {
        std::fs::write(dir.join("envs/prod/2-kops/kubeconfig"), "apiVersion: v1\n")
            .expect("kubeconfig");
    }

    let tools = flux_tools();
    let out = tools.make(&https_dir.join("envs/prod/3-bridge"), "flux-bootstrap");
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("GIT_PASSWORD is not set"),
        "{}",
        out.stderr
    );
    assert!(!tools.log().iter().any(|c| c.contains(" bootstrap git ")));

    let out = tools.make_with(
        &https_dir.join("envs/prod/3-bridge"),
        "flux-bootstrap",
        &[("GIT_PASSWORD", "token"), ("GIT_USERNAME", "oauth2")],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // The environment's own kubeconfig and context, not the shell's.
    let pinned = |dir: &Path, cluster: &str| {
        format!(
            "flux --kubeconfig={} --context={cluster}",
            dir.join("envs/prod/2-kops/kubeconfig").display()
        )
    };
    let bootstrap = format!(
        "{} bootstrap git --url={https_url} --branch=main --path=clusters/prod --token-auth --username=oauth2",
        pinned(&https_dir, "prod.web.example.com")
    );
    assert!(tools.log().contains(&bootstrap), "{:?}", tools.log());

    let ssh = flux_tools();
    let out = ssh.make(&ssh_dir.join("envs/prod/3-bridge"), "flux-bootstrap");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let call = ssh
        .log()
        .into_iter()
        .find(|c| c.contains(" bootstrap git "))
        .expect("bootstrap ran");
    assert_eq!(
        call,
        format!(
            "{} bootstrap git --url=ssh://git@github.com/example-org/demo.git --branch=main --path=clusters/prod",
            pinned(&ssh_dir, "prod.demo.example.com")
        )
    );

    // The runbook names the credential of each.
    let readme = read(&https_dir.join("envs/prod/README.md"));
    assert!(
        readme.contains("GIT_PASSWORD") && readme.contains("--token-auth"),
        "{readme}"
    );
    let readme = read(&ssh_dir.join("envs/prod/README.md"));
    assert!(readme.contains("deploy key"), "{readme}");
}

/// Review issue A-m6: the key that encrypts every state and the two state buckets carry
/// prevent_destroy; only teardown's `make destroy` (after state-local) lifts it, for
/// that one run, whatever terraform destroy returns.
#[test]
fn only_teardown_destroys_the_platform_key_and_the_state_buckets() {
    let Some((_env, dir)) = repo_with(&["make"]) else {
        return;
    };
    let root = dir.join("envs/prod/1-prerequisites");
    for (file, resource) in [
        ("kms.tf", "resource \"aws_kms_key\" \"platform\""),
        (
            "state-bucket.tf",
            "resource \"aws_s3_bucket\" \"kops_state\"",
        ),
        (
            "terraform-state-bucket.tf",
            "resource \"aws_s3_bucket\" \"terraform_state\"",
        ),
    ] {
        let text = read(&root.join(file));
        let block = &text[text.find(resource).expect(resource)..];
        let block = &block[..block.find("\n}\n").expect("end of block")];
        assert!(block.contains("prevent_destroy = true"), "{file}: {block}");
    }
    // terraform destroy sees the override; it is gone afterwards, also when destroy fails.
    let tools = Tools::new(&[(
        "terraform",
        r#"if [ "$1" = destroy ]; then cp destroy_override.tf "$(dirname "$0")/seen.tf"; exit "${DESTROY_EXIT:-0}"; fi"#,
    )]);
    let refused = tools.make(&root, "destroy");
    assert_ne!(refused.code, 0);
    assert!(
        !tools.path("seen.tf").exists(),
        "destroy ran before state-local"
    );
    std::fs::write(root.join("backend_override.tf"), "").expect("local backend");
    for exit in ["0", "1"] {
        let out = tools.make_with(&root, "destroy", &[("DESTROY_EXIT", exit)]);
        assert_eq!(out.code != 0, exit == "1", "{}{}", out.stdout, out.stderr);
        let seen = read(&tools.path("seen.tf"));
        for resource in [
            "resource \"aws_kms_key\" \"platform\" {",
            "resource \"aws_s3_bucket\" \"kops_state\" {",
            "resource \"aws_s3_bucket\" \"terraform_state\" {",
        ] {
            assert!(seen.contains(resource), "{seen}");
        }
        assert_eq!(seen.matches("prevent_destroy = false").count(), 3, "{seen}");
        assert!(!root.join("destroy_override.tf").exists());
    }
}

/// Review issue A-m16: a state migration that fails leaves the backend file unwritten
/// (a re-run bootstraps again instead of pointing at an empty backend), and a failed
/// move back to local state leaves no override behind.
#[test]
fn a_failed_state_migration_can_be_run_again() {
    let Some((_env, dir)) = repo_with(&["make", "jq"]) else {
        return;
    };
    let root = dir.join("envs/prod/1-prerequisites");
    let tools = Tools::new(&[(
        "terraform",
        r#"if [ "$1" = show ]; then echo '{"values": {"root_module": {"resources": [
  {"address": "aws_kms_key.platform", "values": {"arn": "arn:aws:kms:eu-west-1:111111111111:key/k1"}},
  {"address": "aws_s3_bucket.terraform_state", "values": {"bucket": "demo-prod-tfstate-111111111111"}}]}}}'; fi
if [ "$1 $2" = "init -migrate-state" ]; then exit 1; fi"#,
    )]);
    let out = tools.make(&root, "state-bootstrap");
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("still in terraform.tfstate"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("envs/prod/terraform-backend.hcl").exists());
    assert!(
        root.join("backend_override.tf").exists(),
        "the local backend stays in use"
    );
    // The re-run gets past the "already bootstrapped" guard and re-initialises locally.
    let again = tools.make(&root, "state-bootstrap");
    assert!(
        !again.stderr.contains("is bootstrapped"),
        "{}",
        again.stderr
    );
    assert!(
        tools
            .log()
            .contains(&"terraform init -reconfigure".to_string())
    );

    std::fs::write(
        dir.join("envs/prod/terraform-backend.hcl"),
        "bucket = \"b\"\nregion = \"eu-west-1\"\n",
    )
    .expect("backend");
    std::fs::remove_file(root.join("backend_override.tf")).expect("reset");
    let out = tools.make(&root, "state-local");
    assert_ne!(out.code, 0);
    assert!(!root.join("backend_override.tf").exists());
}

/// Issue 40: with `aws_account_id` answered, every target that changes AWS first asks
/// `aws sts get-caller-identity` and refuses other credentials, naming both accounts,
/// before Terraform or kops runs; the environment's own account goes through.
#[test]
fn make_refuses_credentials_of_another_account() {
    if !require_tool("make") {
        return;
    }
    let env = Env::new();
    let dir = generate(&env, "acct", &["--set", "aws_account_id=111111111111"]);
    let providers = read(&dir.join("envs/prod/1-prerequisites/providers.tf"));
    assert!(
        providers.contains(
            "allowed_account_ids = var.aws_account_id == \"\" ? null : [var.aws_account_id]"
        ),
        "{providers}"
    );
    assert!(
        read(&dir.join("envs/prod/1-prerequisites/terraform.tfvars"))
            .contains("aws_account_id = \"111111111111\"")
    );
    let other = Tools::new(&[
        ("aws", "echo 222222222222"),
        ("terraform", "true"),
        ("kops", "true"),
    ]);
    for (root, target) in [
        ("1-prerequisites", "state-bootstrap"),
        ("1-prerequisites", "apply"),
        ("1-prerequisites", "destroy"),
        ("2-kops", "cluster-update"),
        ("2-kops", "apply"),
        ("2-kops", "cluster-rolling-update-yes"),
        ("2-kops", "destroy"),
        ("2-kops", "cluster-destroy-yes"),
        ("3-bridge", "apply"),
        ("3-bridge", "destroy"),
    ] {
        let out = other.make(&dir.join("envs/prod").join(root), target);
        assert_ne!(out.code, 0, "{root} {target}: {}", out.stdout);
        assert!(
            out.stderr.contains("the AWS credentials are those of account 222222222222, but environment prod lives in account 111111111111"),
            "{root} {target}: {}",
            out.stderr
        );
    }
    let calls = other.log();
    assert!(
        calls
            .iter()
            .all(|c| c == "aws sts get-caller-identity --query Account --output text"),
        "something ran before the account check: {calls:?}"
    );
    let own = Tools::new(&[("aws", "echo 111111111111"), ("terraform", "true")]);
    let out = own.make(&dir.join("envs/prod/3-bridge"), "apply");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        own.log().iter().any(|c| c == "terraform apply"),
        "{:?}",
        own.log()
    );

    // Without the answer nothing is asked of AWS.
    let unpinned = generate(&env, "free", &[]);
    let tools = Tools::new(&[("aws", "exit 1"), ("terraform", "true")]);
    let out = tools.make(&unpinned.join("envs/prod/3-bridge"), "apply");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !tools.log().iter().any(|c| c.starts_with("aws ")),
        "{:?}",
        tools.log()
    );
}

/// Issue 40: the teardown's kubectl and flux calls name the environment's own
/// kubeconfig and context, whatever the shell's current context is.
#[test]
fn teardown_calls_name_the_environments_own_kube_context() {
    if !require_tool("make") {
        return;
    }
    let env = Env::new();
    let dir = generate(
        &env,
        "ctx",
        &["--set", "environments=dev,prod", "--set", "dns_zone="],
    );
    let bridge = dir.join("envs/dev/3-bridge");
    let kubeconfig = dir.join("envs/dev/2-kops/kubeconfig");
    std::fs::write(&kubeconfig, "apiVersion: v1\nkind: Config\n").expect("kubeconfig");
    let tools = Tools::new(&[
        (
            "kubectl",
            r#"if [ "$1" = config ]; then echo ctx-dev.k8s.local; fi"#,
        ),
        ("flux", "true"),
    ]);
    for target in ["teardown-flux", "teardown-nodes"] {
        let out = tools.make_with(&bridge, target, &[("KUBECONFIG", "/elsewhere/prod")]);
        assert_eq!(out.code, 0, "{target}: {}{}", out.stdout, out.stderr);
    }
    let calls = tools.log();
    let pinned = format!("--kubeconfig={}", kubeconfig.display());
    let acting: Vec<&String> = calls
        .iter()
        .filter(|c| !c.starts_with("kubectl config "))
        .collect();
    assert!(acting.len() >= 4, "{calls:?}");
    for call in acting {
        assert!(
            call.contains(&pinned) && call.contains("--context=ctx-dev.k8s.local"),
            "{call} runs against the shell's context"
        );
    }
    assert!(
        calls.contains(&format!(
            "flux {pinned} --context=ctx-dev.k8s.local suspend kustomization --all"
        )),
        "{calls:?}"
    );
    assert!(
        calls.contains(&format!(
            "kubectl {pinned} --context=ctx-dev.k8s.local delete nodepools.karpenter.sh --all"
        )),
        "{calls:?}"
    );

    // A kubeconfig without this cluster's context stops before any call.
    let other = Tools::new(&[
        (
            "kubectl",
            r#"if [ "$1" = config ]; then echo ctx-prod.k8s.local; fi"#,
        ),
        ("flux", "true"),
    ]);
    let out = other.make(&bridge, "teardown-flux");
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("has no context ctx-dev.k8s.local"),
        "{}",
        out.stderr
    );
    assert!(
        !other.log().iter().any(|c| c.starts_with("flux")),
        "{:?}",
        other.log()
    );
}

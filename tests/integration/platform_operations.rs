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
        let path = format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        run(Command::new("make")
            .arg(target)
            .current_dir(dir)
            .env("PATH", path)
            .env_remove("KUBECONFIG")
            .env_remove("MAKEFLAGS"))
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
        dir.join("terraform-backend.hcl"),
        "bucket = \"demo-prod-tfstate-111111111111\"\nregion = \"eu-west-1\"\n",
    )
    .expect("backend");
    let root = dir.join("1-prerequisites");
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
    let kops_dir = dir.join("2-kops");
    let tools = Tools::new(&[
        (
            "terraform",
            r#"if [ "$1" = output ]; then echo '{"kops_state_bucket": {"value": "demo-kops-state"}}'; fi"#,
        ),
        (
            "kops",
            r#"case "$1" in
  version) echo 1.34.0 ;;
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
        "control-plane-rolling-update-yes: check-kops ## Upgrades: replace only the control plane\n\tkops rolling-update cluster --instance-group-roles=control-plane --yes\n"
    ));
    let readme = read(&dir.join("README.md"));
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
        let module = read(&dir.join("2-kops/kops-module.tf.tmpl"));
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
        let policy = read(&dir.join("1-prerequisites/addon-karpenter.tf"));
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
    let root = dir.join("1-prerequisites");
    let show = r#"if [ "$1" = show ]; then echo '{"values": {"root_module": {"resources": [
  {"address": "aws_kms_key.platform", "values": {"arn": "arn:aws:kms:eu-west-1:111111111111:key/k1"}},
  {"address": "aws_s3_bucket.terraform_state", "values": {"bucket": "demo-prod-tfstate-111111111111"}}]}}}'; fi
if [ "$1" = init ]; then echo "env TF_VAR_state_bucket=${TF_VAR_state_bucket:-}" >> "$LOG"; fi"#;
    let tools = Tools::new(&[("terraform", show)]);
    let out = tools.make(&root, "state-bootstrap");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let backend = read(&dir.join("terraform-backend.hcl"));
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
    for other in ["2-kops", "3-bridge"] {
        let makefile = read(&dir.join(other).join("Makefile"));
        assert!(makefile.contains("terraform init -backend-config=$(STATE_BACKEND)"));
    }
    let bridge = tools.make(&dir.join("3-bridge"), "init");
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
    let out = partial.make(&again.join("1-prerequisites"), "state-bootstrap");
    assert_ne!(out.code, 0);
    assert!(!again.join("terraform-backend.hcl").exists());
}

//! The Terraform, kops and Karpenter a generated repo ships, checked against what the
//! upstream tools accept at the pinned versions (kops v1.34.0, Karpenter v1.14.1,
//! hashicorp/aws 6.x, flux2 v2.9): one test per defect of issue 11, on the files the
//! real binary writes. docs/platform-design.md names the upstream file behind each.
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, require_tool, run};

/// `scaffold new NAME --defaults ARGS...` in `env`; the repo's path.
fn generate(env: &Env, name: &str, args: &[&str]) -> PathBuf {
    let out = run(env.scaffold().args(["new", name, "--defaults"]).args(args));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn answer_set(name: &str) -> String {
    format!(
        "{}/blueprints/default/tests/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The text of the IAM statement `sid` in a jsonencode'd policy: from its `Sid` line to
/// the next statement's.
fn statement<'a>(policy: &'a str, sid: &str) -> &'a str {
    let is_sid = |line: &str| line.trim_start().starts_with("Sid ");
    let mut offset = 0;
    let mut start = None;
    for line in policy.split_inclusive('\n') {
        if let Some(begin) = start {
            if is_sid(line) {
                return &policy[begin..offset];
            }
        } else if is_sid(line) && line.contains(&format!("\"{sid}\"")) {
            start = Some(offset);
        }
        offset += line.len();
    }
    let begin = start.unwrap_or_else(|| panic!("no statement {sid}:\n{policy}"));
    &policy[begin..]
}

/// The YAML document of a kops template (`---`-separated) that contains `needle`.
fn document<'a>(template: &'a str, needle: &str) -> &'a str {
    template
        .split("\n---\n")
        .find(|doc| doc.contains(needle))
        .unwrap_or_else(|| panic!("no document with {needle}"))
}

fn yaml(dir: &Path, rel: &str) -> serde_norway::Value {
    serde_norway::from_str(&read(dir, rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Flags kops v1.34.0 accepts per subcommand: docs/cli/kops_<sub>.md (generated from the
/// binary and diffed by its `make verify-gendocs`), plus the root's persistent flags.
const KOPS_FLAGS: &[(&str, &[&str])] = &[
    (
        "toolbox template",
        &[
            "--template",
            "--values",
            "--format-yaml",
            "--out",
            "--set",
            "--set-string",
            "--snippets",
            "--channel",
            "--fail-on-missing",
            "--config-value",
        ],
    ),
    ("replace", &["-f", "--filename", "--force"]),
    (
        "update cluster",
        &[
            "--target",
            "--out",
            "--create-kube-config",
            "--yes",
            "--admin",
            "--user",
            "--internal",
            "--lifecycle-overrides",
            "--phase",
            "--ssh-public-key",
            "--allow-kops-downgrade",
            "--instance-group",
            "--instance-group-roles",
            "--prune",
            "--use-kubeconfig",
            "--api-server",
            "--ignore-kubelet-version-skew",
        ],
    ),
    (
        "export kubeconfig",
        &[
            "--admin",
            "--kubeconfig",
            "--all",
            "--api-server",
            "--auth-plugin",
            "--internal",
            "--user",
        ],
    ),
    (
        "validate cluster",
        &[
            "--wait",
            "--count",
            "--interval",
            "--output",
            "--kubeconfig",
            "--use-kubeconfig",
            "--api-server",
        ],
    ),
    (
        "rolling-update cluster",
        &[
            "--yes",
            "--admin",
            "--api-server",
            "--bastion-interval",
            "--cloudonly",
            "--control-plane-interval",
            "--drain-timeout",
            "--fail-on-drain-error",
            "--fail-on-validate-error",
            "--force",
            "--instance-group",
            "--instance-group-roles",
            "--interactive",
            "--node-interval",
            "--post-drain-delay",
            "--use-kubeconfig",
            "--validate-count",
            "--validation-timeout",
        ],
    ),
    (
        "delete cluster",
        &[
            "--yes",
            "--count",
            "--external",
            "--interval",
            "--region",
            "--unregister",
            "--wait",
        ],
    ),
    ("version", &["--short"]),
];
const KOPS_ROOT_FLAGS: &[&str] = &["--name", "--state", "--config", "-v"];

/// Every recipe line of `makefile` that runs `tool SUB ...` with SUB in `table`: the
/// subcommand, each flag it passes, and the line. Lines of other subcommands are skipped.
fn flags_passed<'a>(
    makefile: &'a str,
    tool: &str,
    table: &[(&'a str, &'a [&'a str])],
) -> Vec<(&'a str, &'a [&'a str], Vec<&'a str>, &'a str)> {
    let call = format!("{tool} ");
    let mut found = Vec::new();
    for line in makefile.lines().filter(|l| l.starts_with('\t')) {
        let Some(at) = line.find(&call) else {
            continue;
        };
        // Up to the end of the command: a shell separator or a closing $( ).
        let rest = &line[at + call.len()..];
        let command = &rest[..rest.find([';', '|', ')', '&']).unwrap_or(rest.len())];
        let Some((sub, allowed)) = table.iter().find(|(sub, _)| command.starts_with(sub)) else {
            continue;
        };
        let flags = command
            .split_whitespace()
            .filter(|w| w.starts_with('-'))
            .map(|w| w.split('=').next().unwrap_or(w))
            .collect();
        found.push((*sub, *allowed, flags, line));
    }
    found
}

#[test]
fn every_kops_command_line_uses_flags_kops_accepts() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let makefile = read(&dir, "envs/prod/2-kops/Makefile");
    let commands = flags_passed(&makefile, "kops", KOPS_FLAGS);
    for (sub, allowed, flags, line) in &commands {
        for flag in flags {
            assert!(
                allowed.contains(flag) || KOPS_ROOT_FLAGS.contains(flag),
                "kops {sub} has no flag {flag} in v1.34.0: {line}"
            );
        }
    }
    assert!(
        commands.len() >= 9,
        "only {} kops command lines found",
        commands.len()
    );
    // The review's blocker: rolling-update builds its own credential.
    for line in makefile
        .lines()
        .filter(|l| l.contains("kops rolling-update"))
    {
        assert!(!line.contains("--kubeconfig"), "{line}");
    }
}

/// Flags flux2 v2.9.4 defines for the commands the bridge's Makefile runs
/// (cmd/flux/{bootstrap,bootstrap_git,check,version}.go).
const FLUX_FLAGS: &[(&str, &[&str])] = &[
    (
        "bootstrap git",
        &["--url", "--branch", "--path", "--token-auth"],
    ),
    ("check", &["--pre"]),
    ("version", &["--client", "-o", "--output"]),
    // cmd/flux/suspend.go (--all) and main.go (--all-namespaces; --kubeconfig and
    // --context, k8s.io/cli-runtime genericclioptions, are in $(FLUX)).
    ("suspend kustomization", &["--all"]),
    ("suspend helmrelease", &["--all", "--all-namespaces"]),
];

#[test]
fn every_flux_command_line_uses_flags_flux_accepts() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    // Every call goes through $(FLUX), which names the kubeconfig and context.
    let makefile = read(&dir, "envs/prod/3-bridge/Makefile").replace("$(FLUX) ", "flux ");
    assert!(
        makefile.contains(
            "FLUX         := flux --kubeconfig=$(KUBECONFIG) --context=$(KUBE_CONTEXT)\n"
        ),
        "{makefile}"
    );
    let commands = flags_passed(&makefile, "flux", FLUX_FLAGS);
    for (sub, allowed, flags, line) in &commands {
        for flag in flags {
            assert!(
                allowed.contains(flag),
                "flux {sub} has no flag {flag}: {line}"
            );
        }
    }
    assert_eq!(commands.len(), 5, "flux command lines found");
}

#[test]
fn velero_may_use_the_kms_key_of_its_bucket() {
    let env = Env::new();
    let dir = generate(&env, "demo", &["--set", "addons=velero"]);
    let policy = read(&dir, "envs/prod/1-prerequisites/addon-velero.tf");
    assert!(policy.contains("kms_master_key_id = aws_kms_key.platform.arn"));
    let key = statement(&policy, "BackupBucketKey");
    for action in ["kms:GenerateDataKey", "kms:Decrypt", "kms:DescribeKey"] {
        assert!(key.contains(&format!("\"{action}\"")), "{action}:\n{key}");
    }
    assert!(
        key.contains("Resource = \"${aws_kms_key.platform.arn}\""),
        "{key}"
    );
    assert!(
        key.contains("\"kms:ViaService\" = \"s3.${var.region}.${local.dns_suffix}\""),
        "{key}"
    );
}

#[test]
fn karpenter_user_data_comes_from_the_applied_kops_state() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let bridge = read(&dir, "envs/prod/3-bridge/data.tf");
    assert!(
        !bridge.contains("file(\"${path.module}/../2-kops"),
        "the bridge reads no work-tree file of 2-kops:\n{bridge}"
    );
    assert!(!bridge.contains("kops-tf/data"), "{bridge}");
    assert!(bridge.contains("jsonencode(local.kops.karpenter_nodes_user_data)"));
    // 2-kops records the script of the object its apply uploads, through the module.
    assert!(
        read(&dir, "envs/prod/2-kops/outputs.tf")
            .contains("value       = module.kops.karpenter_nodes_user_data")
    );
    let module = read(&dir, "envs/prod/2-kops/kops-module.tf.tmpl");
    assert!(module.contains("value = aws_s3_object.nodeupscript-karpenter-nodes.content"));
    let makefile = read(&dir, "envs/prod/2-kops/Makefile");
    assert!(makefile.contains("cp kops-module.tf.tmpl kops-tf/scaffold.tf"));
    // The runbook applies the bridge after 2-kops' apply, not after cluster-update.
    let readme = read(&dir, "envs/prod/README.md");
    let changing = &readme[readme.find("## Changing the cluster").expect("section")..];
    let apply = changing.find("make apply ").expect("2-kops apply");
    let bridge_apply = changing
        .find("make -C ../3-bridge apply")
        .expect("bridge apply");
    assert!(apply < bridge_apply, "{changing}");
    assert!(!readme.contains("After every `cluster-update` that changed the nodes"));
}

#[test]
fn karpenter_nodes_are_a_kops_instance_group_managed_by_karpenter() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    let group = document(&template, "name: karpenter-nodes");
    assert!(group.contains("kind: InstanceGroup"), "{group}");
    assert!(group.contains("  manager: Karpenter\n"), "{group}");
    assert!(group.contains("  role: Node\n"), "{group}");
    assert!(
        group.contains("  taints:\n  - karpenter.sh/unregistered:NoExecute\n"),
        "{group}"
    );
    // Flux owns the controller: kops' addon stays off.
    assert!(template.contains("  karpenter:\n    enabled: false\n"));

    let class = yaml(
        &dir,
        "environments/prod/infrastructure/karpenter/node-class.yaml",
    );
    let spec = &class["spec"];
    assert_eq!(
        spec["instanceProfile"],
        "${KARPENTER_NODE_INSTANCE_PROFILE}"
    );
    assert!(
        spec["role"].is_null(),
        "role: makes Karpenter create an instance profile"
    );
    assert_eq!(spec["tags"]["kops.k8s.io/instancegroup"], "karpenter-nodes");
    assert_eq!(spec["tags"]["KubernetesCluster"], "${CLUSTER_NAME}");
    assert!(
        read(&dir, "envs/prod/3-bridge/cluster-vars.tf")
            .contains("KARPENTER_NODE_INSTANCE_PROFILE  = local.karpenter_node_instance_profile")
    );
    let policy = read(&dir, "envs/prod/1-prerequisites/addon-karpenter.tf");
    assert!(
        !policy.contains("iam:CreateInstanceProfile"),
        "no profile of its own"
    );
}

#[test]
fn karpenter_runs_the_image_kops_runs() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let class = yaml(
        &dir,
        "environments/prod/infrastructure/karpenter/node-class.yaml",
    );
    let terms = class["spec"]["amiSelectorTerms"]
        .as_sequence()
        .expect("amiSelectorTerms");
    assert_eq!(terms.len(), 1, "{terms:?}");
    assert_eq!(terms[0]["id"], "${KARPENTER_NODE_IMAGE_ID}");
    assert!(
        read(&dir, "envs/prod/3-bridge/cluster-vars.tf")
            .contains("KARPENTER_NODE_IMAGE_ID          = local.karpenter_node_image_id")
    );
    assert!(
        read(&dir, "envs/prod/2-kops/kops-module.tf.tmpl")
            .contains("value = aws_launch_template.nodes-prod-demo-example-com.image_id")
    );
}

#[test]
fn karpenter_sizes_nodes_with_kops_kubelet_settings() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let class = yaml(
        &dir,
        "environments/prod/infrastructure/karpenter/node-class.yaml",
    );
    let values = yaml(&dir, "envs/prod/2-kops/values.yaml");
    let kubelet = &class["spec"]["kubelet"];
    let kops = &values["karpenterKubelet"];
    assert_eq!(kubelet["maxPods"], 110);
    for key in ["maxPods", "kubeReserved", "systemReserved"] {
        assert_eq!(kubelet[key], kops[key], "{key} differs from kops'");
    }
    let group = document(
        &read(&dir, "envs/prod/2-kops/cluster-template.yaml"),
        "name: karpenter-nodes",
    )
    .to_string();
    assert!(
        group.contains("maxPods: {{ .karpenterKubelet.maxPods }}"),
        "{group}"
    );

    let pool = yaml(
        &dir,
        "environments/prod/infrastructure/karpenter/node-pool.yaml",
    );
    let requirements = pool["spec"]["template"]["spec"]["requirements"]
        .as_sequence()
        .expect("requirements");
    let values_of = |key: &str| -> Option<Vec<String>> {
        requirements.iter().find(|r| r["key"] == key).map(|r| {
            r["values"]
                .as_sequence()
                .expect("values")
                .iter()
                .map(|v| v.as_str().expect("string").to_string())
                .collect()
        })
    };
    assert_eq!(
        values_of("karpenter.k8s.aws/instance-category"),
        Some(vec!["c".into(), "m".into(), "r".into()])
    );
    assert_eq!(
        values_of("karpenter.k8s.aws/instance-generation"),
        Some(vec!["5".into()])
    );
    assert_eq!(values_of("karpenter.k8s.aws/instance-family"), None);
    assert_eq!(values_of("kubernetes.io/arch"), Some(vec!["amd64".into()]));

    let graviton = generate(&env, "arm", &["--set", "node_machine_type=m7g.large"]);
    let pool = read(
        &graviton,
        "environments/prod/infrastructure/karpenter/node-pool.yaml",
    );
    assert!(
        pool.contains("            - arm64\n") && !pool.contains("amd64"),
        "{pool}"
    );
}

#[test]
fn karpenter_receives_interruptions_through_its_queue() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let prerequisites = read(&dir, "envs/prod/1-prerequisites/addon-karpenter.tf");
    assert!(prerequisites.contains("resource \"aws_sqs_queue\" \"karpenter_interruption\""));
    for detail in [
        "AWS Health Event",
        "EC2 Spot Instance Interruption Warning",
        "EC2 Instance Rebalance Recommendation",
        "EC2 Instance State-change Notification",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ] {
        assert!(
            prerequisites.contains(&format!("detail_type = \"{detail}\"")),
            "{detail}"
        );
    }
    assert!(prerequisites.contains("arn       = aws_sqs_queue.karpenter_interruption.arn"));
    let queue = statement(&prerequisites, "AllowInterruptionQueueActions");
    for action in ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"] {
        assert!(queue.contains(action), "{queue}");
    }
    assert!(
        queue.contains("${aws_sqs_queue.karpenter_interruption.arn}"),
        "{queue}"
    );
    let bridge = read(&dir, "envs/prod/3-bridge/addon-karpenter.tf");
    assert!(
        bridge.contains(
            "interruptionQueue = \"${local.prerequisites.karpenter_interruption_queue}\""
        ),
        "{bridge}"
    );
}

#[test]
fn karpenter_policy_keeps_upstream_cluster_and_region_scoping() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let policy = read(&dir, "envs/prod/1-prerequisites/addon-karpenter.tf");
    let owned = "\"aws:ResourceTag/kubernetes.io/cluster/${var.cluster_name}\" = \"owned\"";
    let requested = "\"aws:RequestTag/kubernetes.io/cluster/${var.cluster_name}\" = \"owned\"";
    for sid in [
        "AllowScopedEC2LaunchTemplateAccessActions",
        "AllowScopedResourceTagging",
        "AllowScopedDeletion",
    ] {
        assert!(statement(&policy, sid).contains(owned), "{sid}");
    }
    for sid in [
        "AllowScopedEC2InstanceActionsWithTags",
        "AllowScopedResourceCreationTagging",
    ] {
        let text = statement(&policy, sid);
        assert!(text.contains(requested), "{sid}");
        assert!(
            text.contains("\"aws:RequestTag/eks:eks-cluster-name\""),
            "{sid}"
        );
    }
    assert!(
        statement(&policy, "AllowRegionalReadActions")
            .contains("\"aws:RequestedRegion\" = \"${var.region}\"")
    );
    // kops' node role only (its name, shortened as kops does: platform_operations.rs).
    assert!(statement(&policy, "AllowPassingInstanceRole").contains(
        "Resource = \"arn:${local.partition}:iam::${local.account_id}:role/${local.karpenter_node_role_name}\""
    ));
    assert!(
        policy.contains("\"nodes.${var.cluster_name}\" :"),
        "{policy}"
    );
    // Every EC2 ARN is in this region; no ARN hard-codes the aws partition.
    for line in policy.lines().filter(|l| l.contains("\"arn:")) {
        assert!(line.contains("arn:${local.partition}:"), "{line}");
        if line.contains(":ec2:") || line.contains(":ssm:") {
            assert!(line.contains(":${var.region}:"), "{line}");
        }
    }
    // The same for the other catalog policies of this layer's owner.
    let all = generate(&env, "all", &["--values", &answer_set("all-addons")]);
    for addon in [
        "aws-load-balancer-controller",
        "cert-manager",
        "external-dns",
        "velero",
    ] {
        let text = read(&all, &format!("envs/prod/1-prerequisites/addon-{addon}.tf"));
        assert!(
            !text.contains("arn:aws:"),
            "{addon} hard-codes the aws partition"
        );
    }
}

#[test]
fn terraform_state_lives_in_s3_with_locking() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    for (root, key) in [
        (
            "envs/prod/1-prerequisites",
            "1-prerequisites/terraform.tfstate",
        ),
        ("envs/prod/2-kops", "2-kops/terraform.tfstate"),
        ("envs/prod/3-bridge", "3-bridge/terraform.tfstate"),
    ] {
        let versions = read(&dir, &format!("{root}/versions.tf"));
        assert!(
            versions.contains("  backend \"s3\" {\n"),
            "{root}:\n{versions}"
        );
        assert!(
            versions.contains(&format!("key          = \"{key}\"")),
            "{root}"
        );
        assert!(versions.contains("use_lockfile = true"), "{root}");
        assert!(
            versions.contains("required_version = \"~> 1.11\""),
            "{root}: use_lockfile needs 1.10, write-only arguments 1.11"
        );
        let makefile = read(&dir, &format!("{root}/Makefile"));
        assert!(
            makefile.contains("terraform init -backend-config=$(STATE_BACKEND)"),
            "{root}"
        );
    }
    let bridge = read(&dir, "envs/prod/3-bridge/data.tf");
    assert_eq!(bridge.matches("backend = \"s3\"").count(), 2, "{bridge}");
    assert!(!bridge.contains("backend = \"local\""));
    // The bucket is bootstrapped with local state, then the state moves into it.
    let prerequisites = read(&dir, "envs/prod/1-prerequisites/Makefile");
    let bootstrap = &prerequisites[prerequisites.find("state-bootstrap:").expect("target")..];
    let bootstrap = &bootstrap[..bootstrap.find("\ninit:").expect("next target")];
    assert!(bootstrap.contains("\t$(LOCAL_BACKEND)\n"), "{bootstrap}");
    assert!(prerequisites.contains("LOCAL_BACKEND := printf 'terraform {\\n  backend \"local\" {}\\n}\\n' > backend_override.tf"));
    assert!(
        bootstrap.contains("-target=,$(STATE_TARGETS)"),
        "{bootstrap}"
    );
    assert!(
        bootstrap
            .contains("terraform init -migrate-state -force-copy -backend-config=$(STATE_BACKEND)")
    );
    assert!(
        read(&dir, "envs/prod/1-prerequisites/terraform-state-bucket.tf")
            .contains("resource \"aws_s3_bucket_versioning\" \"terraform_state\"")
    );
    // A fresh clone plans 2-kops without writing the spec: cluster-render has no kops replace.
    let kops = read(&dir, "envs/prod/2-kops/Makefile");
    let render = &kops[kops.find("\ncluster-render:").expect("cluster-render")..];
    let render = &render[..render.find("\n\n").expect("end")];
    assert!(
        render.contains("kops update cluster") && !render.contains("kops replace"),
        "{render}"
    );
}

#[test]
fn dns_policies_are_scoped_to_the_platform_zone() {
    let env = Env::new();
    let dir = generate(&env, "demo", &["--set", "addons=cert-manager,external-dns"]);
    let external_dns = read(&dir, "envs/prod/1-prerequisites/addon-external-dns.tf");
    assert!(
        statement(&external_dns, "ChangeRecords")
            .contains("Resource = \"${aws_route53_zone.this.arn}\"")
    );
    let cert_manager = read(&dir, "envs/prod/1-prerequisites/addon-cert-manager.tf");
    let txt = statement(&cert_manager, "ChangeTxtRecords");
    assert!(
        txt.contains("Resource = \"${aws_route53_zone.this.arn}\""),
        "{txt}"
    );
    assert!(txt.contains("\"TXT\""), "{txt}");
    assert!(!external_dns.contains("hostedzone/*") && !cert_manager.contains("hostedzone/*"));
}

#[test]
fn readme_takes_an_operator_from_zero_to_teardown_in_order() {
    let env = Env::new();
    let dir = generate(&env, "demo", &["--set", "addons=velero"]);
    let readme = read(&dir, "envs/prod/README.md");
    let position = |needle: &str| {
        readme
            .find(needle)
            .unwrap_or_else(|| panic!("README lacks {needle}"))
    };
    let push = position("git push -u origin main");
    let bootstrap_state = position("make state-bootstrap");
    let prerequisites = position("`make init plan apply` (still in `1-prerequisites`)");
    let flux = position("`cd 3-bridge && make flux-bootstrap`");
    assert!(push < flux && bootstrap_state < prerequisites && prerequisites < flux);
    let teardown = &readme[position("## Teardown")..];
    for needle in [
        "make state-local",
        "Velero's backup bucket",
        "Terraform state bucket",
        "deletion_window_in_days",
        "instance profile",
    ] {
        assert!(teardown.contains(needle), "teardown lacks {needle}");
    }
    // flux bootstrap refuses to run against a remote without the branch.
    let makefile = read(&dir, "envs/prod/3-bridge/Makefile");
    let target = &makefile[makefile.find("\nflux-bootstrap:").expect("target")..];
    let ls_remote = target
        .find("git ls-remote --exit-code --heads $(GIT_URL) $(GIT_BRANCH)")
        .expect("check");
    assert!(ls_remote < target.find("$(FLUX) bootstrap git").expect("bootstrap"));
}

#[test]
fn network_and_security_details_an_expert_expects() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    assert!(
        !template.contains("\n  sshAccess:"),
        "port 22 open with no key installed"
    );
    // The only external policies: AWS's managed SSM policy (break-glass access).
    let external: Vec<&str> = template
        .lines()
        .filter(|l| l.trim_start().starts_with("- arn:"))
        .collect();
    assert!(
        external.len() == 2
            && external
                .iter()
                .all(|l| l.ends_with(":iam::aws:policy/AmazonSSMManagedInstanceCore")),
        "{external:?}"
    );
    assert!(!dir.join("envs/prod/1-prerequisites/iam.tf").exists());
    assert!(
        !read(&dir, "envs/prod/1-prerequisites/kms.tf").contains("through S3 (kms:ViaService)")
    );
    let network = read(&dir, "envs/prod/1-prerequisites/network.tf");
    assert!(network.contains("resource \"aws_vpc_endpoint\" \"s3\""));
    assert!(network.contains("vpc_endpoint_type = \"Gateway\""));
    assert!(!network.contains("karpenter.sh/discovery"));
    assert!(read(&dir, "envs/prod/1-prerequisites/variables.tf").contains("<= 21"));
    // A /22 VPC would give /28 utility subnets, too small for an ALB.
    let out = run(env.scaffold().args([
        "new",
        "small",
        "--defaults",
        "--set",
        "vpc_cidr=10.0.0.0/22",
    ]));
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("vpc_cidr"), "{}", out.stderr);

    let existing = generate(&env, "existing", &["--values", &answer_set("existing-vpc")]);
    let network = read(&existing, "envs/prod/1-prerequisites/network.tf");
    assert!(
        !network.contains("karpenter.sh/discovery"),
        "single-valued tag shared by clusters"
    );
    assert!(network.contains("key         = local.karpenter_subnet_tag"));
    assert!(network.contains("data \"aws_route_table\" \"private\""));
    assert!(network.contains("route.nat_gateway_id == var.nat_gateway_ids[each.key]"));
    // Review issue A-m5: a subnet on the main route table (no explicit association)
    // and centralised egress (Transit Gateway, endpoint, appliance) both pass.
    assert!(
        network.contains("name   = \"association.main\""),
        "{network}"
    );
    assert!(network.contains(
        "route_table_id = coalesce(one(data.aws_route_tables.private_explicit[each.key].ids), one(data.aws_route_tables.main.ids))"
    ));
    for egress in [
        "transit_gateway_id",
        "vpc_endpoint_id",
        "network_interface_id",
    ] {
        assert!(
            network.contains(&format!("route.{egress} != \"\"")),
            "{egress}"
        );
    }
    assert!(!network.contains("subnet_id = each.value\n\n  lifecycle"));
    assert!(
        read(&existing, "envs/prod/1-prerequisites/outputs.tf")
            .contains("output \"vpc_additional_cidrs\"")
    );
    assert!(
        read(&existing, "envs/prod/2-kops/cluster-template.yaml")
            .contains("additionalNetworkCIDRs:")
    );
    let class = yaml(
        &existing,
        "environments/prod/infrastructure/karpenter/node-class.yaml",
    );
    let selector = &class["spec"]["subnetSelectorTerms"][0]["tags"];
    assert_eq!(
        selector["kops.k8s.io/instance-group/karpenter-nodes"],
        "true"
    );
    assert_eq!(selector["kubernetes.io/cluster/${CLUSTER_NAME}"], "*");
}

#[test]
fn generated_terraform_is_terraform_fmt_clean() {
    if !require_tool("terraform") {
        return;
    }
    let env = Env::new();
    for (name, args) in [
        ("demo", vec![]),
        (
            "all",
            vec!["--values".to_string(), answer_set("all-addons")],
        ),
        (
            "existing",
            vec!["--values".to_string(), answer_set("existing-vpc")],
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let dir = generate(&env, name, &args);
        // kops-module.tf.tmpl becomes kops-tf/scaffold.tf: check it as a .tf file.
        std::fs::copy(
            dir.join("envs/prod/2-kops/kops-module.tf.tmpl"),
            dir.join("envs/prod/2-kops/kops-module-check.tf"),
        )
        .expect("copy");
        let out = run(Command::new("terraform")
            .args(["fmt", "-check", "-recursive", "-list=true"])
            .arg(&dir)
            .env("HOME", env.home.path()));
        assert_eq!(
            out.code, 0,
            "{name}: not terraform fmt clean:\n{}{}",
            out.stdout, out.stderr
        );
    }
}

/// Review issue A1: the API load balancer is internal, so the VPC's own CIDRs are always
/// admitted (a bastion, CI runner or SSM port forward inside it), admin CIDRs add routed
/// private ranges once each, and a public admin CIDR is warned about by `new` and by
/// `scaffold check` (file:line in values.yaml) but kept.
#[test]
fn internal_api_admits_the_vpc_and_warns_on_public_admin_cidrs() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    let access = &template[template.find("  kubernetesApiAccess:\n").expect("access")..];
    let access = &access[..access.find("  sshKeyName").expect("end")];
    assert!(
        access.starts_with("  kubernetesApiAccess:\n  - {{ .vpc_cidr }}\n  {{- range .vpc_additional_cidrs }}\n  - {{ . }}\n"),
        "{access}"
    );
    assert!(
        access.contains("{{- if and (ne . $.vpc_cidr) (not (has . $.vpc_additional_cidrs)) }}"),
        "an admin CIDR equal to a VPC CIDR would be a duplicate kops task: {access}"
    );
    assert!(template.contains("      type: Internal\n"));
    assert!(read(&dir, "envs/prod/2-kops/values.yaml").contains("\nadminCidrs: []\n"));
    let blueprint = read(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "blueprints/default/blueprint.yaml",
    );
    assert!(!blueprint.contains("and SSH"), "no SSH is opened (m10)");

    // A public range: `new` warns and keeps it, `check` points at the line.
    let out = run(env.scaffold().args([
        "new",
        "office",
        "--defaults",
        "--set",
        "admin_cidrs=10.8.0.0/16,203.0.113.0/24",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("warning: admin_cidrs:") && out.stderr.contains("never reaches it"),
        "{}",
        out.stderr
    );
    let office = env.path("office");
    let values = read(&office, "envs/prod/2-kops/values.yaml");
    let line = values
        .lines()
        .position(|l| l == "  - 203.0.113.0/24")
        .expect("kept")
        + 1;
    let check =
        run(env
            .scaffold()
            .arg("check")
            .arg(&office)
            .args(["--rule", "kops.api-access", "--json"]));
    assert_eq!(check.code, 0, "a warning: {}", check.stdout);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).expect("json");
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["file"], "envs/prod/2-kops/values.yaml");
    assert_eq!(findings[0]["line"], line);
    assert_eq!(findings[0]["severity"], "warning");
    assert!(
        findings[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("203.0.113.0/24")
    );

    // Private ranges only: no warning anywhere.
    let out = run(env.scaffold().args([
        "new",
        "vpn",
        "--defaults",
        "--set",
        "admin_cidrs=10.8.0.0/16,192.168.0.0/24,172.20.0.0/16",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    let check = run(env.scaffold().arg("check").arg(env.path("vpn")).args([
        "--rule",
        "kops.api-access",
        "--json",
    ]));
    let report: serde_json::Value = serde_json::from_str(&check.stdout).expect("json");
    assert_eq!(
        report["findings"].as_array().map(Vec::len),
        Some(0),
        "{report}"
    );
}

/// Review issue A-m3: the node image and recommended versions come from the channel of
/// the pinned kops release, not kops' live master branch; Renovate moves it with
/// KOPS_VERSION in one PR.
#[test]
fn kops_channel_is_the_pinned_release_and_moves_with_it() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    assert!(
        template.contains("\n  channel: {{ .kopsChannel }}\n"),
        "{template}"
    );
    let values = read(&dir, "envs/prod/2-kops/values.yaml");
    let channel = "https://raw.githubusercontent.com/kubernetes/kops/v1.34.0/channels/stable";
    assert!(
        values.contains(&format!("\nkopsChannel: {channel}\n")),
        "{values}"
    );
    let renovate: serde_json::Value =
        serde_json::from_str(&read(&dir, "renovate.json")).expect("renovate.json");
    let kops = renovate["customManagers"]
        .as_array()
        .expect("managers")
        .iter()
        .find(|m| m["depNameTemplate"] == "kubernetes/kops")
        .expect("kops manager");
    let patterns: Vec<regex::Regex> = kops["matchStrings"]
        .as_array()
        .expect("matchStrings")
        .iter()
        .map(|p| regex::Regex::new(p.as_str().expect("string")).expect("regex"))
        .collect();
    // managerFilePatterns: a regex between slashes.
    let files: Vec<regex::Regex> = kops["managerFilePatterns"]
        .as_array()
        .expect("managerFilePatterns")
        .iter()
        .map(|p| {
            let text = p.as_str().expect("string");
            let inner = text.strip_prefix('/').and_then(|t| t.strip_suffix('/'));
            regex::Regex::new(inner.expect("a /regex/")).expect("regex")
        })
        .collect();
    for (file, text) in [
        ("envs/prod/2-kops/values.yaml", values.as_str()),
        (
            "envs/prod/2-kops/Makefile",
            &read(&dir, "envs/prod/2-kops/Makefile"),
        ),
    ] {
        assert!(files.iter().any(|f| f.is_match(file)), "{file}");
        let versions: Vec<String> = patterns
            .iter()
            .filter_map(|p| p.captures(text))
            .map(|c| c["currentValue"].to_string())
            .collect();
        assert_eq!(versions, ["1.34.0"], "{file}");
    }
}

/// Review issues A-m11 and A-m12: a node stuck at boot is reachable through SSM (AWS's
/// managed policy on the node roles, switchable in values.yaml), and a prod environment
/// gets three control planes (etcd quorum, no API downtime on a roll) by default.
#[test]
fn nodes_have_break_glass_access_and_prod_defaults_to_three_control_planes() {
    let env = Env::new();
    let dir = generate(&env, "demo", &[]);
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    assert!(
        template.contains("  {{- if .nodeSsmAccess }}\n  externalPolicies:\n    node:\n    - arn:{{ .partition }}:iam::aws:policy/AmazonSSMManagedInstanceCore\n    master:\n    - arn:{{ .partition }}:iam::aws:policy/AmazonSSMManagedInstanceCore\n  {{- end }}\n"),
        "{template}"
    );
    assert!(read(&dir, "envs/prod/2-kops/values.yaml").contains("\nnodeSsmAccess: true\n"));
    assert!(read(&dir, "envs/prod/1-prerequisites/outputs.tf").contains("output \"partition\""));
    let zones = |dir: &Path| -> Vec<String> {
        let env = std::fs::read_dir(dir.join("envs"))
            .expect("envs")
            .next()
            .expect("an environment")
            .expect("entry")
            .file_name();
        let values = yaml(
            dir,
            &format!("envs/{}/2-kops/values.yaml", env.to_string_lossy()),
        );
        serde_norway::from_value(values["controlPlaneZones"].clone()).expect("zones")
    };
    assert_eq!(zones(&dir), ["eu-west-1a", "eu-west-1b", "eu-west-1c"]);
    let dev = generate(&env, "dev", &["--set", "environments=dev"]);
    assert_eq!(zones(&dev), ["eu-west-1a"]);
    let two = generate(&env, "two", &["--set", "zones=eu-west-1a,eu-west-1b"]);
    assert_eq!(zones(&two), ["eu-west-1a"]);
}

/// Review issues A-m8 (fresh) and m8 (round one): cert-manager may write ACME challenge
/// TXT records only, as kops' own policy; service names follow the partition.
#[test]
fn acme_records_only_and_partition_aware_service_names() {
    let env = Env::new();
    let dir = generate(
        &env,
        "demo",
        &["--set", "addons=cert-manager,velero,external-secrets"],
    );
    let cert_manager = read(&dir, "envs/prod/1-prerequisites/addon-cert-manager.tf");
    let txt = statement(&cert_manager, "ChangeTxtRecords");
    assert!(
        txt.contains("\"route53:ChangeResourceRecordSetsNormalizedRecordNames\" = [")
            && txt.contains("\"_acme-challenge.*\",")
            && txt.contains("\"ForAllValues:StringLike\""),
        "{txt}"
    );
    let velero = read(&dir, "envs/prod/1-prerequisites/addon-velero.tf");
    let writes = statement(&velero, "EbsSnapshotWrites");
    assert!(
        writes.contains("ec2:${var.region}:${local.account_id}:volume/*")
            && writes.contains("ec2:${var.region}::snapshot/*")
            && !writes.contains("ec2:*"),
        "{writes}"
    );
    let main = read(&dir, "envs/prod/1-prerequisites/main.tf");
    assert!(main.contains("data.aws_partition.current.dns_suffix"));
    for file in [
        "kms.tf",
        "network.tf",
        "addon-velero.tf",
        "addon-external-secrets.tf",
    ] {
        let text = read(&dir, &format!("envs/prod/1-prerequisites/{file}"));
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            let regional = line.contains("${var.region}.amazonaws.com")
                || line.contains("com.amazonaws.${var.region}");
            assert!(!regional, "{file}: {line}");
        }
    }
}

/// Review issue A-m7: authentik's generated passwords never reach the Terraform state.
#[test]
fn authentik_passwords_stay_out_of_terraform_state() {
    let env = Env::new();
    let dir = generate(&env, "demo", &["--set", "addons=authentik"]);
    let tf = read(&dir, "envs/prod/1-prerequisites/addon-authentik.tf");
    assert!(tf.contains("ephemeral \"aws_secretsmanager_random_password\" \"authentik\" {"));
    assert!(!tf.contains("data \"aws_secretsmanager_random_password\""));
    assert!(
        tf.contains("secret_string_wo = jsonencode({")
            && tf.contains("secret_string_wo_version = 1")
    );
    assert!(!tf.contains("secret_string ="), "{tf}");
}

/// Issue 40: in an account shared by several environments, the AWS Load Balancer
/// Controller changes only this cluster's security groups and Velero deletes only this
/// cluster's snapshots (conditions on the tags kops and the controller set).
#[test]
fn shared_account_policies_reach_only_this_cluster() {
    let env = Env::new();
    let dir = generate(&env, "demo", &["--set", "addons=velero"]);
    let lbc = read(
        &dir,
        "envs/prod/1-prerequisites/addon-aws-load-balancer-controller.tf",
    );
    for action in [
        "ec2:AuthorizeSecurityGroupIngress",
        "ec2:DeleteSecurityGroup",
    ] {
        let mut rest = lbc.as_str();
        while let Some(at) = rest.find(&format!("\"{action}\"")) {
            let statement = &rest[at..];
            let statement = &statement[..statement.find("},\n      {").unwrap_or(statement.len())];
            assert!(
                statement
                    .contains("\"aws:ResourceTag/KubernetesCluster\" = \"${var.cluster_name}\"")
                    || statement.contains(
                        "\"aws:ResourceTag/elbv2.k8s.aws/cluster\" = \"${var.cluster_name}\""
                    ),
                "{action} is not scoped to this cluster: {statement}"
            );
            rest = &rest[at + action.len()..];
        }
    }
    let velero = read(&dir, "envs/prod/1-prerequisites/addon-velero.tf");
    let delete = &velero[velero
        .find("\"ec2:DeleteSnapshot\"")
        .expect("DeleteSnapshot")..];
    let delete = &delete[..delete.find("},\n      {").unwrap_or(delete.len())];
    assert!(
        delete.contains("\"aws:ResourceTag/KubernetesCluster\" = \"${var.cluster_name}\""),
        "{delete}"
    );
    assert_eq!(velero.matches("ec2:DeleteSnapshot").count(), 1, "{velero}");
}

//! The rule catalogue: every rule's stable id, severity, one-line requirement and fix hint
//! (`scaffold check --list-rules`, docs/check.md).
use crate::diagnostic::Severity;

/// A rule in the catalogue.
#[derive(Debug)]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    /// What the rule requires, one line.
    pub summary: &'static str,
    /// How to fix a finding, one line.
    pub hint: &'static str,
}

const fn rule(
    id: &'static str,
    severity: Severity,
    summary: &'static str,
    hint: &'static str,
) -> Rule {
    Rule {
        id,
        severity,
        summary,
        hint,
    }
}

use Severity::{Error as E, Warning as W};

/// Every rule, by group. Ids are stable: tools and `scaffold:ignore` comments name them.
pub static RULES: &[Rule] = &[
    rule(
        "repo.conflict-markers",
        E,
        "no merge conflict markers (<<<<<<< ======= >>>>>>>) in any text file",
        "resolve the conflict: keep one side (or merge both) and delete the marker lines",
    ),
    rule(
        "check.partial",
        W,
        "findings that depend on a file that does not parse are not reported (one note says how many)",
        "fix the parse errors first, then run check again",
    ),
    rule(
        "check.catalog",
        W,
        "a note, not a requirement: the catalog of the blueprint the repo records loads, so the CRD and feature rules know its charts",
        "make the recorded blueprint loadable here (`.scaffold/answers.yaml` names it and where it came from); until then the embedded default catalog stands in",
    ),
    rule(
        "yaml.parse",
        E,
        "every YAML document parses; duplicate keys are errors",
        "fix the YAML at the given line (a duplicate key overrides the first silently in some tools, fails in kubectl and kustomize)",
    ),
    rule(
        "json.parse",
        E,
        "every JSON file parses",
        "fix the JSON at the given line",
    ),
    rule(
        "k8s.schema",
        E,
        "every Kubernetes object validates against its CRD or the Kubernetes schema (unknown fields fail)",
        "compare the field with the CRD of the pinned controller version (`kubectl explain`)",
    ),
    rule(
        "k8s.unknown-kind",
        W,
        "every object's kind has a vendored schema or a CRD in the repo",
        "add the CRD to the repo, or ignore the finding for kinds scaffold does not vendor",
    ),
    rule(
        "flux.api-removed",
        E,
        "no Flux API version that Flux removed (v1beta*, v2beta*)",
        "change apiVersion to the named replacement and check the fields it renamed",
    ),
    rule(
        "flux.depends-on",
        E,
        "every dependsOn names an existing Kustomization/HelmRelease",
        "fix the name (and namespace) or add the missing object",
    ),
    rule(
        "flux.cycle",
        E,
        "dependsOn has no cycle",
        "remove one dependsOn edge of the printed cycle",
    ),
    rule(
        "flux.source-ref",
        E,
        "every sourceRef/chartRef resolves to a source in the repo; a HelmRelease has exactly one of chart and chartRef",
        "fix the kind/name/namespace or add the source",
    ),
    rule(
        "flux.path",
        E,
        "every Kustomization path exists and builds (resources, patches and generator files exist)",
        "fix the path or the kustomization.yaml entry",
    ),
    rule(
        "flux.wait",
        E,
        "a Kustomization others depend on has wait: true or healthChecks",
        "set spec.wait: true so dependents start only once it is healthy",
    ),
    rule(
        "flux.chart-version",
        E,
        "chart versions and OCI tags are exact (no ranges, no latest)",
        "pin an exact version such as 1.2.3",
    ),
    rule(
        "order.crd",
        E,
        "the layer installing a CRD group runs before every layer using it",
        "add a dependsOn on the layer installing the CRDs (or move the objects to a later layer)",
    ),
    rule(
        "order.crd-provider",
        E,
        "some layer (or kops) installs every CRD group the repo uses (else every apply of its objects fails: no matches for kind)",
        "install the CRDs in an early layer (a CRD chart or the chart's crds value)",
    ),
    rule(
        "order.watched-api",
        E,
        "a controller configured to watch an API (a chart feature the blueprint catalog declares) runs after a layer installing that API",
        "add the addon that installs the API (the message names it) so an earlier layer installs it, or remove the value that turns the feature on",
    ),
    rule(
        "order.layers",
        E,
        "CRDs → Karpenter → AWS LB controller → addons → apps holds through dependsOn",
        "add the missing dependsOn to the later layer",
    ),
    rule(
        "order.owner",
        E,
        "one owner per component across kops addons and Flux",
        "turn the component off (or managed: false) in the kops spec, or remove the duplicate HelmRelease",
    ),
    rule(
        "bridge.substitution",
        E,
        "every ${VAR} of a substituted tree is provided (substitute, a substituteFrom ConfigMap/Secret listing the key, or a default)",
        "add the key to the bridge ConfigMap (Terraform) or to postBuild.substitute, or write ${VAR:=default}",
    ),
    rule(
        "bridge.values-from",
        E,
        "valuesFrom/substituteFrom objects exist in the right namespace (repo or Terraform) with the key read",
        "create the ConfigMap/Secret (e.g. in 3-bridge) in the HelmRelease's namespace, or mark the reference optional",
    ),
    rule(
        "kops.render",
        E,
        "the kops template renders with its values files and the prerequisites' Terraform outputs (missing key = error)",
        "add the key to values.yaml or an output to the prerequisites module",
    ),
    rule(
        "kops.schema",
        E,
        "the rendered kops objects validate against the kops CRDs",
        "fix the field (kops.k8s.io/v1alpha2)",
    ),
    rule(
        "kops.imds",
        E,
        "every InstanceGroup requires IMDSv2 (instanceMetadata.httpTokens: required)",
        "set spec.instanceMetadata.httpTokens: required",
    ),
    rule(
        "kops.irsa",
        E,
        "every IRSA entry of the kops values names a ServiceAccount a HelmRelease in that namespace uses",
        "make the irsa entry's namespace/serviceAccount match the chart's serviceAccount.name",
    ),
    rule(
        "kops.api-access",
        W,
        "an internal API load balancer admits private ranges only (kubernetesApiAccess): it sees each client's own address",
        "drop the public CIDR from adminCidrs (2-kops/values.yaml); reach the API from the VPC (bastion, CI runner, SSM port forward) or through a VPN/Transit Gateway range routed into it",
    ),
    rule(
        "kops.karpenter-kubelet",
        E,
        "an EC2NodeClass's kubelet sizing (maxPods, kubeReserved, systemReserved) equals the kubelet kops boots the manager: Karpenter instance group with",
        "change both together: the instance group's kubelet in the kops template/values and the EC2NodeClass's spec.kubelet",
    ),
    rule(
        "make.flags",
        E,
        "every kops/terraform/flux command in a Makefile uses flags of the pinned tool version",
        "use a flag the tool's --help lists at the pinned version",
    ),
    rule(
        "tf.parse",
        E,
        "every .tf file parses",
        "fix the HCL at the given line",
    ),
    rule(
        "tf.refs",
        E,
        "var./local./module. references resolve in their module",
        "declare the variable/local/output or fix the name",
    ),
    rule(
        "tf.providers",
        E,
        "every provider used is in required_providers with a version constraint",
        "add it to terraform { required_providers { ... } } with a version",
    ),
    rule(
        "tf.state-bucket",
        E,
        "the state bucket is encrypted, versioned and blocks public access",
        "add the missing aws_s3_bucket_* resource for the bucket",
    ),
    rule(
        "tf.backend",
        W,
        "Terraform state is remote and locked",
        "add backend \"s3\" with use_lockfile = true (or a DynamoDB table)",
    ),
    rule(
        "ingress.certificate",
        E,
        "an ALB Ingress listening on HTTPS has a certificate source",
        "set alb.ingress.kubernetes.io/certificate-arn, or spec.tls hosts for certificate discovery",
    ),
    rule(
        "external-secret.remote-key",
        E,
        "an ExternalSecret's remote key is created by the repo's Terraform or documented",
        "create the secret in Terraform, or document it in a README",
    ),
    rule(
        "environment.secret-key",
        E,
        "in a repo of several environments, an ExternalSecret's key (with the environment's cluster-vars substituted) lies under its own environment's prefix",
        "read the environment's own secret: write the key per environment (its overlay), or as ${PLATFORM_SECRETS_PREFIX}/… from its cluster-vars",
    ),
    rule(
        "environment.shared-value",
        E,
        "a file every environment shares holds no value that only one environment's Terraform inputs (.tfvars) hold",
        "move the value to the environment's own files (environments/<env>/…, its overlay), or substitute it per cluster from cluster-vars (${VAR})",
    ),
    rule(
        "kms.key-access",
        E,
        "roles that use a KMS-encrypted bucket may use its key",
        "add kms:Decrypt/kms:GenerateDataKey on the key to the policy that reads/writes the bucket",
    ),
    rule(
        "repo.tracked-output",
        E,
        "no Terraform state, .terraform/, plans or saved outputs committed",
        "git rm --cached the file and add it to .gitignore",
    ),
    rule(
        "repo.secrets",
        E,
        "no plaintext secrets (access keys, private keys, literal Secret data, password values)",
        "move the value to a secret store (ExternalSecret, SOPS) and rotate it",
    ),
    rule(
        "repo.placeholders",
        E,
        "no leftover template markup or placeholder tokens",
        "render or replace the placeholder",
    ),
    rule(
        "ref.node-class",
        E,
        "every Karpenter NodePool's nodeClassRef names an EC2NodeClass in the repo",
        "fix nodeClassRef.name, or add the EC2NodeClass it names",
    ),
    rule(
        "ref.gateway",
        E,
        "every Gateway API route's parentRefs name a Gateway in the repo, and a listener it has",
        "fix the parentRef's name/namespace/sectionName, or add the Gateway",
    ),
    rule(
        "ref.certificate",
        E,
        "every Gateway listener's certificate Secret is made by the repo (Secret, Certificate, ExternalSecret)",
        "add a cert-manager Certificate with that secretName, or fix the certificateRefs name",
    ),
    rule(
        "ref.secret-store",
        E,
        "every ExternalSecret's secretStoreRef names a SecretStore/ClusterSecretStore in the repo",
        "fix secretStoreRef (kind, name), or add the store",
    ),
    rule(
        "ref.service-monitor",
        W,
        "every ServiceMonitor selects a Service of the repo and scrapes a port name it has (namespaces a HelmRelease installs into are skipped)",
        "fix spec.selector.matchLabels, namespaceSelector or the endpoint's port name to match the Service",
    ),
    rule(
        "tf.aws-name-shared",
        E,
        "no two environments' Terraform gives one AWS bucket, IAM role or policy, EventBridge rule, SQS queue, KMS alias or log group the same name",
        "give each environment its own name prefix (envs/<environment>/1-prerequisites/terraform.tfvars name_prefix and bucket_prefix, or the answers they come from)",
    ),
    rule(
        "tf.vars",
        E,
        "every .tfvars key is a declared variable; every variable without a default has a value",
        "declare the variable (or fix the key's spelling), or give the variable a value in terraform.tfvars",
    ),
    rule(
        "tf.schema",
        E,
        "resource, data source and provider blocks use only arguments and blocks their provider's pinned schema has",
        "fix the name (see the did-you-mean) against the provider's documentation at the pinned version",
    ),
    rule(
        "helm.values",
        E,
        "every value a HelmRelease sets exists in its chart at the pinned version",
        "fix the key (see the did-you-mean), or check the chart's values.yaml at that version",
    ),
    rule(
        "helm.values-unchecked",
        W,
        "a HelmRelease's values are checked only when its chart is vendored (schemas/charts) or kept in the repo",
        "vendor the chart's values with scripts/vendor-chart-values.py, or ignore the note for a chart you trust",
    ),
];

/// The catalogue entry of a rule id.
pub fn rule_of(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

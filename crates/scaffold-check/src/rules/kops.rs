//! kops.render, kops.schema, kops.imds, kops.irsa, kops.api-access, kops.karpenter-kubelet.
use serde_json::Value as Json;

use super::context::Context;
use crate::model::{self, Object};
use crate::schema::{self, Lookup};
use crate::{Findings, yaml};

pub fn run(context: &Context, findings: &mut Findings) {
    for rendered in &context.kops {
        let template = rendered.template.as_str();
        let text = context.repo.text(template).unwrap_or("");
        let docs = match &rendered.result {
            Ok(docs) => docs,
            Err(e) => {
                let values = if rendered.values_files.is_empty() {
                    "no values files".to_string()
                } else {
                    rendered.values_files.join(", ")
                };
                findings.add(
                    "kops.render",
                    template,
                    e.line,
                    format!(
                        "does not render with {values} and the Terraform outputs: {}",
                        e.message
                    ),
                );
                continue;
            }
        };
        for doc in docs {
            let value = &doc.value;
            let kind = yaml::str_at(value, "kind").unwrap_or("");
            let name = yaml::str_at(value, "metadata/name").unwrap_or("");
            let api = yaml::str_at(value, "apiVersion").unwrap_or("");
            if let Lookup::Schema(schema) = schema::lookup(api, kind) {
                for v in schema::validate(value, schema) {
                    let key = v
                        .path
                        .iter()
                        .rev()
                        .find(|k| k.parse::<usize>().is_err())
                        .cloned()
                        .unwrap_or_default();
                    let line = model::line_in(text, &format!("{key}:"));
                    findings.add(
                        "kops.schema",
                        template,
                        line,
                        format!("{kind} {name}: {} {}", v.path.join("."), v.message),
                    );
                }
            } else {
                findings.add(
                    "kops.schema",
                    template,
                    0,
                    format!("{kind} {name}: {api} is not a kops kind"),
                );
            }
            if kind == "InstanceGroup"
                && yaml::str_at(value, "spec/instanceMetadata/httpTokens") != Some("required")
            {
                let line = model::line_in(text, "httpTokens:")
                    .max(model::line_in(text, "kind: InstanceGroup"));
                findings.add("kops.imds", template, line, format!("InstanceGroup {name} does not require IMDSv2 (spec.instanceMetadata.httpTokens: required)"));
            }
        }
    }
    irsa(context, findings);
    api_access(context, findings);
    karpenter_kubelet(context, findings);
}

/// The kubelet settings Karpenter sizes instances by. With a Custom image the
/// EC2NodeClass's `spec.kubelet` is not applied to the node: kops' nodeup boots it with
/// the kubelet of the `manager: Karpenter` instance group. The two must agree, or
/// Karpenter launches instances for pods that do not fit (or too few).
const SIZING_KEYS: [&str; 3] = ["maxPods", "kubeReserved", "systemReserved"];

/// A value not known offline: a Terraform output or a Flux substitution.
fn unknown(value: &Json) -> bool {
    match value {
        Json::String(s) => s.contains(crate::kops::UNKNOWN) || s.contains("${"),
        Json::Array(items) => items.iter().any(unknown),
        Json::Object(map) => map.values().any(unknown),
        _ => false,
    }
}

fn karpenter_kubelet(context: &Context, findings: &mut Findings) {
    let groups: Vec<(&str, &Json)> = context
        .kops
        .iter()
        .flat_map(|r| {
            r.result.iter().flatten().filter_map(move |d| {
                let karpenter = yaml::str_at(&d.value, "kind") == Some("InstanceGroup")
                    && yaml::str_at(&d.value, "spec/manager") == Some("Karpenter");
                let name = yaml::str_at(&d.value, "metadata/name").unwrap_or("");
                karpenter.then(|| {
                    (
                        name,
                        yaml::at(&d.value, "spec/kubelet").unwrap_or(&Json::Null),
                    )
                })
            })
        })
        .collect();
    for (class, _) in context.objects("EC2NodeClass") {
        let Some(sizing) = class.spec("kubelet") else {
            continue;
        };
        for (group, kubelet) in &groups {
            for key in SIZING_KEYS {
                let (booted, assumed) = (kubelet.get(key), sizing.get(key));
                if booted == assumed || booted.is_some_and(unknown) || assumed.is_some_and(unknown)
                {
                    continue;
                }
                let show = |v: Option<&Json>| v.map_or("unset".to_string(), Json::to_string);
                let line = class.doc.line_of_key(key);
                findings.add(
                    "kops.karpenter-kubelet",
                    &class.file,
                    line,
                    format!(
                        "EC2NodeClass {}: kubelet.{key} is {}, but kops boots the nodes of InstanceGroup {group} with {}",
                        class.name,
                        show(assumed),
                        show(booted)
                    ),
                );
            }
        }
    }
}

/// Whether an IPv4 CIDR lies inside the private blocks of RFC 1918. Anything that is not
/// an IPv4 CIDR (an unknown Terraform output, IPv6) is `None`.
fn rfc1918(cidr: &str) -> Option<bool> {
    let (address, prefix) = cidr.split_once('/')?;
    let address: std::net::Ipv4Addr = address.parse().ok()?;
    let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let [a, b, ..] = address.octets();
    Some(
        (a == 10 && prefix >= 8)
            || (a == 172 && (16..32).contains(&b) && prefix >= 12)
            || (a == 192 && b == 168 && prefix >= 16),
    )
}

/// An internal API load balancer sees each client's own address (kops v1.34.0
/// pkg/model/awsmodel/api_loadbalancer.go opens 443 to kubernetesApiAccess only): a
/// public range there admits nobody, and the operator is locked out.
fn api_access(context: &Context, findings: &mut Findings) {
    for (template, cluster) in context.kops_clusters() {
        if yaml::str_at(cluster, "spec/api/loadBalancer/type") != Some("Internal") {
            continue;
        }
        let access = yaml::at(cluster, "spec/kubernetesApiAccess").and_then(Json::as_array);
        for cidr in access.into_iter().flatten().filter_map(Json::as_str) {
            if rfc1918(cidr) != Some(false) {
                continue;
            }
            let (file, line) = in_values_files(context, template, |node| node.find_scalar(cidr))
                .unwrap_or_else(|| {
                    let text = context.repo.text(template).unwrap_or("");
                    (
                        template.to_string(),
                        model::line_in(text, "kubernetesApiAccess:"),
                    )
                });
            findings.add(
                "kops.api-access",
                &file,
                line,
                format!("{cidr} is not a private range: the API load balancer is internal, so no client with a public address reaches it"),
            );
        }
    }
}

/// Service account names a HelmRelease's chart will use: `name` under any key containing
/// "serviceAccount" in its values (one level of nesting), and the release name.
fn service_accounts(release: &Object) -> Vec<String> {
    let mut names = vec![
        release
            .spec("releaseName")
            .and_then(Json::as_str)
            .unwrap_or(&release.name)
            .to_string(),
    ];
    fn walk(value: &Json, under: bool, depth: usize, names: &mut Vec<String>) {
        if let Json::Object(map) = value {
            for (key, child) in map {
                let sa = under || key.to_lowercase().contains("serviceaccount");
                if sa
                    && key == "name"
                    && let Some(n) = child.as_str()
                {
                    names.push(n.to_string());
                }
                if depth < 6 {
                    walk(child, sa, depth + 1, names);
                }
            }
        }
    }
    if let Some(values) = release.spec("values") {
        walk(values, false, 0, &mut names);
    }
    names
}

fn irsa(context: &Context, findings: &mut Findings) {
    let releases: Vec<(String, Vec<String>)> = context
        .objects("HelmRelease")
        .map(|(o, ns)| {
            let target = o
                .spec("targetNamespace")
                .and_then(Json::as_str)
                .unwrap_or(ns);
            (target.to_string(), service_accounts(o))
        })
        .collect();
    for (template, cluster) in context.kops_clusters() {
        let entries = yaml::at(cluster, "spec/iam/serviceAccountExternalPermissions")
            .and_then(Json::as_array);
        for entry in entries.into_iter().flatten() {
            let name = yaml::str_at(entry, "name").unwrap_or("");
            let namespace = yaml::str_at(entry, "namespace").unwrap_or("");
            if name == "UNKNOWN" || namespace == "UNKNOWN" {
                continue;
            }
            // A HelmRelease's ServiceAccount, or one the repo writes (e.g. the one an
            // ExternalSecrets store's jwt auth names).
            let used = releases
                .iter()
                .any(|(ns, names)| ns == namespace && names.iter().any(|n| n == name))
                || context
                    .objects("ServiceAccount")
                    .any(|(o, ns)| ns == namespace && o.name == name);
            if !used {
                let (file, line) = in_values_files(context, template, |node| {
                    node.find_entry("serviceAccount", name)
                })
                .unwrap_or_else(|| (template.to_string(), 0));
                findings.add("kops.irsa", &file, line, format!("IRSA role for ServiceAccount {namespace}/{name}: no HelmRelease in {namespace} uses a ServiceAccount of that name"));
            }
        }
    }
}

/// The first place in the values files of kops template `template` that `find` finds:
/// where an operator changes what the rendered cluster spec says.
fn in_values_files(
    context: &Context,
    template: &str,
    find: impl Fn(&scaffold_support::yaml::Node) -> Option<scaffold_support::yaml::Pos>,
) -> Option<(String, usize)> {
    let rendered = context.kops.iter().find(|r| r.template == template)?;
    rendered.values_files.iter().find_map(|file| {
        let docs = context.repo.yaml.get(file)?;
        let at = docs.iter().find_map(|d| find(&d.node))?;
        Some((file.clone(), at.line))
    })
}

#[cfg(test)]
mod tests {
    use super::rfc1918;

    #[test]
    fn rfc1918_blocks_and_their_edges() {
        assert_eq!(rfc1918("10.0.0.0/16"), Some(true));
        assert_eq!(rfc1918("172.31.0.0/16"), Some(true));
        assert_eq!(rfc1918("192.168.4.0/24"), Some(true));
        assert_eq!(rfc1918("172.32.0.0/16"), Some(false));
        assert_eq!(rfc1918("10.0.0.0/7"), Some(false));
        assert_eq!(rfc1918("203.0.113.0/24"), Some(false));
        assert_eq!(rfc1918("0.0.0.0/0"), Some(false));
        assert_eq!(rfc1918("100.64.0.0/10"), Some(false));
        assert_eq!(rfc1918("UNKNOWN"), None);
        assert_eq!(rfc1918("fd00::/8"), None);
    }

    fn instance_group(metadata: &str) -> String {
        format!(
            "apiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\nmetadata:\n  name: nodes\n  labels:\n    kops.k8s.io/cluster: {{{{ .clusterName }}}}\nspec:\n  role: Node\n  machineType: m6i.large\n  minSize: 1\n  maxSize: 3\n  subnets:\n    - eu-west-1a\n{metadata}"
        )
    }

    fn findings_of(template: &str) -> crate::Findings {
        super::super::testing::run_in_context(
            &[
                ("kops/ig.yaml", template),
                ("kops/values.yaml", "clusterName: dev.example.com\n"),
            ],
            super::run,
        )
    }

    #[test]
    fn an_instance_group_without_imdsv2_is_found_at_its_kind() {
        let findings = findings_of(&instance_group(""));
        assert_eq!(
            super::super::testing::found(&findings, "kops.imds"),
            [("kops/ig.yaml".to_string(), 2)]
        );
    }

    #[test]
    fn a_template_that_does_not_render_is_a_render_finding() {
        let broken = instance_group("").replace("{{ .clusterName }}", "{{ if .clusterName }}");
        let findings = findings_of(&broken);
        let render = super::super::testing::found(&findings, "kops.render");
        assert_eq!(render.len(), 1, "{:?}", findings.0);
        assert_eq!(render[0].0, "kops/ig.yaml");
    }

    #[test]
    fn an_instance_group_requiring_imdsv2_passes() {
        let findings = findings_of(&instance_group(
            "  instanceMetadata:\n    httpTokens: required\n    httpPutResponseHopLimit: 1\n",
        ));
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

//! Cross-object references the API server accepts but the controllers then fail on:
//! ref.node-class, ref.gateway, ref.certificate, ref.secret-store, ref.service-monitor.
use serde_json::Value as Json;

use super::context::Context;
use crate::model::Object;
use crate::{Findings, yaml};

pub fn run(context: &Context, findings: &mut Findings) {
    node_classes(context, findings);
    gateways(context, findings);
    certificates(context, findings);
    secret_stores(context, findings);
    service_monitors(context, findings);
}

fn items(value: Option<&Json>) -> impl Iterator<Item = &Json> {
    value.and_then(Json::as_array).into_iter().flatten()
}

/// Routes' parentRefs name a Gateway of the repo, and a listener it has (sectionName): else
/// the route is never attached (Accepted=False) and serves nothing.
fn gateways(context: &Context, findings: &mut Findings) {
    const GATEWAY_API: &str = "gateway.networking.k8s.io";
    let gateways: Vec<(&Object, &str)> = context
        .objects("Gateway")
        .filter(|(o, _)| o.group() == GATEWAY_API)
        .collect();
    for (route, namespace) in context
        .repo
        .objects
        .iter()
        .zip(&context.namespaces)
        .filter(|(o, _)| o.group() == GATEWAY_API && o.kind.ends_with("Route"))
    {
        for parent in items(route.spec("parentRefs")) {
            if yaml::str_at(parent, "kind").is_some_and(|k| k != "Gateway")
                || yaml::str_at(parent, "group").is_some_and(|g| g != GATEWAY_API)
            {
                continue;
            }
            let Some(name) = yaml::str_at(parent, "name") else {
                continue;
            };
            let ns = yaml::str_at(parent, "namespace").unwrap_or(namespace);
            if name.contains("${") || ns.contains("${") {
                continue;
            }
            let line = route.doc.line_at(&["spec", "parentRefs", "name"]);
            let Some((gateway, _)) = gateways
                .iter()
                .find(|(g, gns)| g.name == name && *gns == ns)
            else {
                findings.add(
                    "ref.gateway",
                    &route.file,
                    line,
                    format!("{} {} attaches to Gateway {ns}/{name}, which the repo does not define: the route serves nothing", route.kind, route.name),
                );
                continue;
            };
            if let Some(section) = yaml::str_at(parent, "sectionName") {
                let listeners: Vec<&str> = items(gateway.spec("listeners"))
                    .filter_map(|l| yaml::str_at(l, "name"))
                    .collect();
                if !listeners.contains(&section) {
                    findings.add(
                        "ref.gateway",
                        &route.file,
                        route.doc.line_at(&["spec", "parentRefs", "sectionName"]),
                        format!("{} {} attaches to listener {section} of Gateway {ns}/{name}, which has {}", route.kind, route.name, listeners.join(", ")),
                    );
                }
            }
        }
    }
}

/// A Secret name the repo makes in a namespace: a Secret, a cert-manager Certificate's
/// secretName, or an ExternalSecret's target.
fn secret_made(context: &Context, name: &str, namespace: &str) -> bool {
    context
        .repo
        .objects
        .iter()
        .zip(&context.namespaces)
        .any(|(o, ns)| {
            ns == namespace
                && match (o.group(), o.kind.as_str()) {
                    ("", "Secret") => o.name == name,
                    ("cert-manager.io", "Certificate") => {
                        o.spec("secretName").and_then(Json::as_str) == Some(name)
                    }
                    ("external-secrets.io", "ExternalSecret") => {
                        o.spec("target/name")
                            .and_then(Json::as_str)
                            .unwrap_or(&o.name)
                            == name
                    }
                    _ => false,
                }
        })
}

/// A Gateway listener's certificate Secret is made by the repo (or by cert-manager's
/// gateway-shim, when the Gateway is annotated for it): else the listener is not
/// programmed (ResolvedRefs=False) and HTTPS fails.
fn certificates(context: &Context, findings: &mut Findings) {
    for (gateway, namespace) in context.objects("Gateway") {
        if gateway.group() != "gateway.networking.k8s.io" {
            continue;
        }
        let annotations = gateway
            .value()
            .get("metadata")
            .and_then(|m| m.get("annotations"));
        if annotations.is_some_and(|a| {
            a.get("cert-manager.io/issuer").is_some()
                || a.get("cert-manager.io/cluster-issuer").is_some()
        }) {
            continue;
        }
        for listener in items(gateway.spec("listeners")) {
            for reference in items(yaml::at(listener, "tls/certificateRefs")) {
                if yaml::str_at(reference, "kind").is_some_and(|k| k != "Secret") {
                    continue;
                }
                let Some(name) = yaml::str_at(reference, "name") else {
                    continue;
                };
                let ns = yaml::str_at(reference, "namespace").unwrap_or(namespace);
                if name.contains("${") || secret_made(context, name, ns) {
                    continue;
                }
                findings.add(
                    "ref.certificate",
                    &gateway.file,
                    gateway.doc.line_of_entry("name", name),
                    format!("Gateway {} listener {} uses certificate Secret {ns}/{name}, which no Secret, cert-manager Certificate or ExternalSecret of the repo makes", gateway.name, yaml::str_at(listener, "name").unwrap_or("?")),
                );
            }
        }
    }
}

/// An ExternalSecret's secretStoreRef names a store of the repo: else it never syncs.
fn secret_stores(context: &Context, findings: &mut Findings) {
    for (external, namespace) in context.objects("ExternalSecret") {
        if external.group() != "external-secrets.io" {
            continue;
        }
        let Some(reference) = external.spec("secretStoreRef") else {
            continue;
        };
        let kind = yaml::str_at(reference, "kind").unwrap_or("SecretStore");
        let Some(name) = yaml::str_at(reference, "name") else {
            continue;
        };
        if name.contains("${") {
            continue;
        }
        let found = context.objects(kind).any(|(store, ns)| {
            store.group() == "external-secrets.io"
                && store.name == name
                && (kind == "ClusterSecretStore" || ns == namespace)
        });
        if !found {
            findings.add(
                "ref.secret-store",
                &external.file,
                external.doc.line_at(&["spec", "secretStoreRef", "name"]),
                format!("ExternalSecret {} reads from {kind} {name}, which the repo does not define{}: it never syncs", external.name, if kind == "SecretStore" { format!(" in {namespace}") } else { String::new() }),
            );
        }
    }
}

/// A NodePool whose nodeClassRef names no EC2NodeClass never launches a node (Karpenter
/// marks it NotReady; pods stay Pending).
fn node_classes(context: &Context, findings: &mut Findings) {
    let classes: Vec<&str> = context
        .repo
        .objects
        .iter()
        .filter(|o| o.is("karpenter.k8s.aws", "EC2NodeClass"))
        .map(|o| o.name.as_str())
        .collect();
    for pool in context
        .repo
        .objects
        .iter()
        .filter(|o| o.is("karpenter.sh", "NodePool"))
    {
        let Some(reference) = pool.spec("template/spec/nodeClassRef") else {
            continue;
        };
        let kind = yaml::str_at(reference, "kind").unwrap_or("EC2NodeClass");
        let Some(name) = yaml::str_at(reference, "name") else {
            continue;
        };
        if kind != "EC2NodeClass" || name.contains("${") || classes.contains(&name) {
            continue;
        }
        let path: Vec<String> = ["spec", "template", "spec", "nodeClassRef", "name"]
            .map(String::from)
            .to_vec();
        let known = if classes.is_empty() {
            "the repo has none".to_string()
        } else {
            format!("the repo has {}", classes.join(", "))
        };
        findings.add(
            "ref.node-class",
            &pool.file,
            pool.doc.line_at(&path),
            format!("NodePool {} uses EC2NodeClass {name}, which is not in the repo ({known}): it launches no node", pool.name),
        );
    }
}

/// A ServiceMonitor scrapes the Services its selector matches, on the named ports of its
/// endpoints: a selector that matches nothing, or a port no matched Service names, leaves
/// the target list empty and Prometheus silently scrapes nothing. Judged only where the
/// repo holds every Service of the namespaces it selects: a namespace that a HelmRelease
/// installs into gets Services the repo cannot see.
fn service_monitors(context: &Context, findings: &mut Findings) {
    let chart_namespaces: Vec<&str> = context
        .objects("HelmRelease")
        .filter(|(o, _)| o.group() == "helm.toolkit.fluxcd.io")
        .map(|(o, ns)| {
            o.spec("targetNamespace")
                .and_then(Json::as_str)
                .unwrap_or(ns)
        })
        .collect();
    for (monitor, namespace) in context.objects("ServiceMonitor") {
        if monitor.group() != "monitoring.coreos.com" {
            continue;
        }
        let selector = monitor.spec("namespaceSelector");
        if selector.and_then(|s| s.get("any")).and_then(Json::as_bool) == Some(true) {
            continue;
        }
        let names: Vec<&str> = items(selector.and_then(|s| s.get("matchNames")))
            .filter_map(Json::as_str)
            .collect();
        let namespaces = if names.is_empty() {
            vec![namespace]
        } else {
            names
        };
        if namespaces
            .iter()
            .any(|ns| ns.contains("${") || chart_namespaces.contains(ns))
        {
            continue;
        }
        let Some(labels) = monitor
            .spec("selector")
            .map(|s| s.get("matchLabels").and_then(Json::as_object))
        else {
            continue;
        };
        if monitor
            .spec("selector/matchExpressions")
            .is_some_and(|e| e.as_array().is_some_and(|a| !a.is_empty()))
        {
            // Set-based selectors are not modelled: judging them by labels alone would guess.
            continue;
        }
        let matched: Vec<&Object> = context
            .objects("Service")
            .filter(|(service, ns)| {
                service.group().is_empty()
                    && namespaces.contains(ns)
                    && labels.into_iter().flatten().all(|(key, want)| {
                        service
                            .value()
                            .get("metadata")
                            .and_then(|m| m.get("labels"))
                            .and_then(|l| l.get(key))
                            == Some(want)
                    })
            })
            .map(|(service, _)| service)
            .collect();
        if matched.is_empty() {
            findings.add(
                "ref.service-monitor",
                &monitor.file,
                monitor.doc.line_at(&["spec", "selector"]),
                format!("ServiceMonitor {} selects no Service of the repo in {}: Prometheus scrapes nothing for it", monitor.name, namespaces.join(", ")),
            );
            continue;
        }
        for endpoint in items(monitor.spec("endpoints")) {
            let Some(port) = yaml::str_at(endpoint, "port") else {
                continue;
            };
            let named = matched.iter().any(|service| {
                items(service.spec("ports")).any(|p| yaml::str_at(p, "name") == Some(port))
            });
            if !named {
                findings.add(
                    "ref.service-monitor",
                    &monitor.file,
                    monitor.doc.line_at(&["spec", "endpoints", "port"]),
                    format!("ServiceMonitor {} scrapes port {port}, which no Service it selects names: that endpoint has no target", monitor.name),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_in_context};
    use super::run;

    const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n";

    const CLASS: &str =
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\n";

    const SECRET: &str = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: db\n  namespace: apps\nspec:\n  secretStoreRef:\n    kind: SecretStore\n    name: aws\n";

    const STORE: &str = "apiVersion: external-secrets.io/v1\nkind: SecretStore\nmetadata:\n  name: aws\n  namespace: apps\n";

    #[test]
    fn a_node_pool_and_an_external_secret_naming_nothing_are_found() {
        let findings = run_in_context(
            &[("karpenter/pool.yaml", POOL), ("apps/secret.yaml", SECRET)],
            run,
        );
        assert_eq!(
            found(&findings, "ref.node-class"),
            [("karpenter/pool.yaml".to_string(), 11)]
        );
        assert_eq!(
            found(&findings, "ref.secret-store"),
            [("apps/secret.yaml".to_string(), 9)]
        );
    }

    #[test]
    fn a_store_in_another_namespace_is_not_the_secrets_store() {
        let elsewhere = STORE.replace("namespace: apps", "namespace: other");
        let findings = run_in_context(
            &[
                ("apps/secret.yaml", SECRET),
                ("apps/store.yaml", &elsewhere),
            ],
            run,
        );
        assert_eq!(found(&findings, "ref.secret-store").len(), 1);
    }

    #[test]
    fn references_to_objects_the_repo_defines_pass() {
        let findings = run_in_context(
            &[
                ("karpenter/pool.yaml", POOL),
                ("karpenter/class.yaml", CLASS),
                ("apps/secret.yaml", SECRET),
                ("apps/store.yaml", STORE),
            ],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

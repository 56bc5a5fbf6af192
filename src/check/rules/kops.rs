//! kops.render, kops.schema, kops.imds, kops.irsa.
use serde_json::Value as Json;

use super::Context;
use crate::check::model::{self, Object};
use crate::check::schema::{self, Lookup};
use crate::check::{Findings, yaml};

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
                let rendered = context.kops.iter().find(|r| r.template == template);
                let (file, line) = rendered
                    .into_iter()
                    .flat_map(|r| r.values_files.iter())
                    .find_map(|f| {
                        context
                            .repo
                            .text(f)
                            .map(|t| {
                                (
                                    f.clone(),
                                    model::line_in(t, &format!("serviceAccount: {name}")),
                                )
                            })
                            .filter(|(_, l)| *l > 0)
                    })
                    .unwrap_or_else(|| (template.to_string(), 0));
                findings.add("kops.irsa", &file, line, format!("IRSA role for ServiceAccount {namespace}/{name}: no HelmRelease in {namespace} uses a ServiceAccount of that name"));
            }
        }
    }
}

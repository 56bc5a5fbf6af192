//! Rules learned from real failures: ingress.certificate, external-secret.remote-key,
//! kms.key-access.
use serde_json::Value as Json;

use super::context::Context;
use crate::model;
use crate::{Findings, yaml};

pub fn run(context: &Context, findings: &mut Findings) {
    ingress(context, findings);
    external_secrets(context, findings);
    kms(context, findings);
}

fn annotation<'a>(object: &'a model::Object, key: &str) -> Option<&'a str> {
    object
        .value()
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
}

fn ingress(context: &Context, findings: &mut Findings) {
    for object in context
        .repo
        .kind("Ingress")
        .filter(|o| o.group() == "networking.k8s.io")
    {
        let class = object
            .spec("ingressClassName")
            .and_then(Json::as_str)
            .or(annotation(object, "kubernetes.io/ingress.class"));
        let alb = class == Some("alb")
            || annotation(object, "alb.ingress.kubernetes.io/scheme").is_some();
        let https = annotation(object, "alb.ingress.kubernetes.io/listen-ports")
            .is_some_and(|p| p.contains("HTTPS"));
        if !alb || !https {
            continue;
        }
        let arn = annotation(object, "alb.ingress.kubernetes.io/certificate-arn")
            .is_some_and(|a| !a.is_empty());
        let tls_hosts = object
            .spec("tls")
            .and_then(Json::as_array)
            .is_some_and(|t| {
                t.iter().any(|e| {
                    e.get("hosts")
                        .and_then(Json::as_array)
                        .is_some_and(|h| !h.is_empty())
                })
            });
        if !arn && !tls_hosts {
            findings.add(
                "ingress.certificate",
                &object.file,
                object
                    .doc
                    .line_where(&|n| n.text().is_some_and(|t| t.ends_with("listen-ports"))),
                format!("Ingress {} listens on HTTPS but has no certificate-arn annotation nor spec.tls hosts: the ALB is never created", object.name),
            );
        }
    }
}

fn external_secrets(context: &Context, findings: &mut Findings) {
    let known: Vec<&str> = context
        .repo
        .texts()
        .filter(|(p, _)| p.ends_with(".tf") || p.ends_with(".md"))
        .map(|(_, t)| t)
        .collect();
    let created = created_secret_names(context);
    for object in context.repo.kind("ExternalSecret") {
        let mut keys = Vec::new();
        for item in object
            .spec("data")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            keys.extend(yaml::str_at(item, "remoteRef/key"));
        }
        for item in object
            .spec("dataFrom")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            keys.extend(yaml::str_at(item, "extract/key"));
        }
        for key in keys {
            if key.contains("${")
                || known.iter().any(|t| t.contains(key))
                || created.iter().any(|re| re.is_match(key))
            {
                continue;
            }
            findings.add(
                "external-secret.remote-key",
                &object.file,
                object.doc.line_of_scalar(key),
                format!("ExternalSecret {} reads remote key {key}, which no Terraform file creates and no README documents", object.name),
            );
        }
    }
}

/// The names of the secrets and parameters the repo's Terraform creates, as patterns: an
/// interpolation (`${var.name}/${var.environment}/app`) matches any text.
fn created_secret_names(context: &Context) -> Vec<regex::Regex> {
    let mut out = Vec::new();
    for module in &context.repo.terraform {
        for kind in ["aws_secretsmanager_secret", "aws_ssm_parameter"] {
            for (_, _, body) in module.resources(kind) {
                let Some(name) = body.attributes().find(|a| a.key() == "name") else {
                    continue;
                };
                let text = name.expr().to_string();
                let text = text.trim_matches('"');
                let pattern: String = text
                    .split("${")
                    .enumerate()
                    .map(|(i, part)| match (i, part.split_once('}')) {
                        (0, _) | (_, None) => regex::escape(part),
                        (_, Some((_, rest))) => format!(".+{}", regex::escape(rest)),
                    })
                    .collect();
                out.extend(regex::Regex::new(&format!("^{pattern}$")).ok());
            }
        }
    }
    out
}

fn kms(context: &Context, findings: &mut Findings) {
    for module in &context.repo.terraform {
        let encrypted: Vec<String> = module
            .resources("aws_s3_bucket_server_side_encryption_configuration")
            .filter(|(_, _, body)| {
                let text = format!("{:?}", body);
                text.contains("aws:kms") && text.contains("aws_kms_key")
            })
            .filter_map(|(_, _, body)| {
                let bucket = body
                    .attributes()
                    .find(|a| a.key() == "bucket")?
                    .expr()
                    .to_string();
                let name = bucket
                    .strip_prefix("aws_s3_bucket.")?
                    .split('.')
                    .next()?
                    .to_string();
                Some(name)
            })
            .collect();
        if encrypted.is_empty() {
            continue;
        }
        for other in &context.repo.terraform {
            for kind in ["aws_iam_policy", "aws_iam_role_policy"] {
                for (file, name, body) in other.resources(kind) {
                    let Some(policy) = body
                        .attributes()
                        .find(|a| a.key() == "policy")
                        .map(|a| a.expr().to_string())
                    else {
                        continue;
                    };
                    for bucket in &encrypted {
                        let uses = policy.contains(&format!("aws_s3_bucket.{bucket}."))
                            && policy.contains("s3:");
                        let may_use_key = policy.contains("kms:Decrypt")
                            || policy.contains("kms:GenerateDataKey")
                            || policy.contains("kms:*");
                        if uses && !may_use_key {
                            findings.add(
                                "kms.key-access",
                                &file.path,
                                model::line_in(&file.text, &format!("\"{kind}\" \"{name}\"")),
                                format!("{kind}.{name} grants S3 access to the KMS-encrypted bucket aws_s3_bucket.{bucket} but no kms:Decrypt/kms:GenerateDataKey on its key"),
                            );
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_in_context};
    use super::run;

    fn ingress(extra: &str) -> String {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n  annotations:\n    alb.ingress.kubernetes.io/scheme: internet-facing\n    alb.ingress.kubernetes.io/listen-ports: '[{{\"HTTPS\":443}}]'\n{extra}spec:\n  ingressClassName: alb\n"
        )
    }

    const SECRET: &str = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: db\nspec:\n  data:\n    - secretKey: password\n      remoteRef:\n        key: shop/dev/db\n";

    #[test]
    fn an_https_alb_ingress_without_a_certificate_is_found_at_its_listen_ports() {
        let web = ingress("");
        let findings = run_in_context(&[("apps/ingress.yaml", &web)], run);
        assert_eq!(
            found(&findings, "ingress.certificate"),
            [("apps/ingress.yaml".to_string(), 7)]
        );
    }

    #[test]
    fn an_https_alb_ingress_with_a_certificate_arn_passes() {
        let web = ingress(
            "    alb.ingress.kubernetes.io/certificate-arn: arn:aws:acm:eu-west-1:111122223333:certificate/x\n",
        );
        let findings = run_in_context(&[("apps/ingress.yaml", &web)], run);
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn a_remote_key_nothing_creates_is_found_and_one_terraform_creates_passes() {
        let findings = run_in_context(&[("apps/secret.yaml", SECRET)], run);
        assert_eq!(
            found(&findings, "external-secret.remote-key"),
            [("apps/secret.yaml".to_string(), 9)]
        );
        let created =
            "resource \"aws_secretsmanager_secret\" \"db\" {\n  name = \"shop/${var.env}/db\"\n}\n";
        let findings = run_in_context(
            &[("apps/secret.yaml", SECRET), ("infra/secrets.tf", created)],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn s3_access_to_a_kms_encrypted_bucket_needs_the_key() {
        let bucket = "resource \"aws_s3_bucket\" \"data\" {\n  bucket = \"d\"\n}\n\nresource \"aws_kms_key\" \"k\" {}\n\nresource \"aws_s3_bucket_server_side_encryption_configuration\" \"data\" {\n  bucket = aws_s3_bucket.data.id\n  rule {\n    apply_server_side_encryption_by_default {\n      sse_algorithm     = \"aws:kms\"\n      kms_master_key_id = aws_kms_key.k.arn\n    }\n  }\n}\n";
        let policy = |actions: &str| {
            format!(
                "resource \"aws_iam_policy\" \"reader\" {{\n  policy = jsonencode({{\n    Statement = [{{\n      Action   = [{actions}]\n      Resource = [\"${{aws_s3_bucket.data.arn}}/*\"]\n    }}]\n  }})\n}}\n"
            )
        };
        let without_key = policy("\"s3:GetObject\"");
        let findings = run_in_context(
            &[("infra/bucket.tf", bucket), ("infra/iam.tf", &without_key)],
            run,
        );
        assert_eq!(
            found(&findings, "kms.key-access"),
            [("infra/iam.tf".to_string(), 1)]
        );
        let with_key = policy("\"s3:GetObject\", \"kms:Decrypt\"");
        let findings = run_in_context(
            &[("infra/bucket.tf", bucket), ("infra/iam.tf", &with_key)],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

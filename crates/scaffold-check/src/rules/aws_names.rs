//! tf.aws-name-shared: two environments' Terraform naming one AWS resource the same. Bucket
//! names are global and IAM, EventBridge, SQS, KMS and CloudWatch Logs names are unique
//! in an account (or a region of it): two environments with one name share the resource,
//! or the second apply fails, and one's teardown deletes the other's. Judged over the
//! whole repo, since no environment's view holds another's files.
use std::collections::BTreeMap;

use crate::Findings;
use crate::environments::owner;
use crate::model::Repo;

/// The resource types whose name is unique in an account or globally, and the argument
/// that holds it (terraform-provider-aws).
const NAMED: &[(&str, &str)] = &[
    ("aws_s3_bucket", "bucket"),
    ("aws_iam_role", "name"),
    ("aws_iam_policy", "name"),
    ("aws_cloudwatch_event_rule", "name"),
    ("aws_sqs_queue", "name"),
    ("aws_kms_alias", "name"),
    ("aws_cloudwatch_log_group", "name"),
];

/// One named resource: the resource type, the name with the module's variables and
/// locals substituted, and where the name is written.
struct Named {
    kind: &'static str,
    name: String,
    file: String,
    line: usize,
}

pub fn run(repo: &Repo, environments: &[String], findings: &mut Findings) {
    let mut seen: BTreeMap<(&str, String), (&str, String, usize)> = BTreeMap::new();
    for env in environments {
        for module in &repo.terraform {
            if owner(&module.dir, environments) != Some(env.as_str()) {
                continue;
            }
            for named in names_in(repo, &module.dir) {
                let key = (named.kind, named.name.clone());
                match seen.get(&key) {
                    Some((first, file, line)) if *first != env.as_str() => findings.add(
                        "tf.aws-name-shared",
                        &named.file,
                        named.line,
                        format!(
                            "{} `{}` is environment {first}'s name too ({file}:{line}): both would share one resource, or the second apply fails and one teardown deletes it",
                            named.kind, named.name
                        ),
                    ),
                    Some(_) => {}
                    None => {
                        seen.insert(key, (env.as_str(), named.file, named.line));
                    }
                }
            }
        }
    }
}

/// The named resources of the module in `dir`, each name resolved as far as its
/// `terraform.tfvars` strings and `locals` go (what stays unresolved stays as written).
fn names_in(repo: &Repo, dir: &str) -> Vec<Named> {
    let Some(module) = repo.terraform.iter().find(|m| m.dir == dir) else {
        return Vec::new();
    };
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let tfvars = format!("{dir}/terraform.tfvars");
    for (key, value) in assignments(repo.text(&tfvars).unwrap_or_default()) {
        values.insert(format!("var.{key}"), value);
    }
    let mut found = Vec::new();
    for file in &module.files {
        let mut kind: Option<&'static str> = None;
        let mut in_locals = false;
        for (index, line) in file.text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if !line.starts_with(' ') && !line.starts_with('\t') {
                kind = resource_kind(line);
                in_locals = line.starts_with("locals ");
                continue;
            }
            let Some((key, value)) = assignment(line) else {
                continue;
            };
            if in_locals && line.starts_with("  ") && !line.starts_with("   ") {
                values.insert(format!("local.{key}"), value);
            } else if let Some(kind) = kind
                && NAMED.iter().any(|(k, arg)| *k == kind && *arg == key)
                && line.starts_with("  ")
                && !line.starts_with("   ")
            {
                found.push(Named {
                    kind,
                    name: value,
                    file: file.path.clone(),
                    line: index + 1,
                });
            }
        }
    }
    for named in &mut found {
        named.name = resolve(&named.name, &values, 0);
    }
    found
}

/// The resource type of a top-level `resource "TYPE" "NAME" {` line, if it is one of
/// [`NAMED`].
fn resource_kind(line: &str) -> Option<&'static str> {
    let rest = line.strip_prefix("resource \"")?;
    let kind = &rest[..rest.find('"')?];
    NAMED.iter().map(|(k, _)| *k).find(|k| *k == kind)
}

/// `key = value` with the value as written (a quoted template without its quotes).
fn assignment(line: &str) -> Option<(String, String)> {
    let (key, value) = line.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let value = value.trim();
    let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(quoted) => quoted.to_string(),
        None => format!("${{{value}}}"),
    };
    Some((key.to_string(), value))
}

fn assignments(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#'))
        .filter_map(assignment)
        .collect()
}

/// `template` with each `${var.X}`/`${local.X}` that `values` knows substituted (to a
/// small depth: locals name other locals).
fn resolve(template: &str, values: &BTreeMap<String, String>, depth: usize) -> String {
    if depth > 4 {
        return template.to_string();
    }
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}').map(|e| e + start) else {
            out.push_str(&rest[start..]);
            return out;
        };
        let reference = rest[start + 2..end].trim();
        match values.get(reference) {
            Some(value) => out.push_str(&resolve(value, values, depth + 1)),
            None => out.push_str(&rest[start..=end]),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_through_tfvars_and_locals() {
        let mut values = BTreeMap::new();
        values.insert("var.name_prefix".to_string(), "shop-dev".to_string());
        values.insert(
            "local.name_prefix".to_string(),
            "${var.name_prefix}".to_string(),
        );
        assert_eq!(
            resolve("${local.name_prefix}-karpenter-${each.key}", &values, 0),
            "shop-dev-karpenter-${each.key}"
        );
        assert_eq!(
            assignment("  name_prefix = var.name_prefix"),
            Some(("name_prefix".into(), "${var.name_prefix}".into()))
        );
    }

    fn run_for_two(dev_prefix: &str, prod_prefix: &str) -> crate::Findings {
        let main = "locals {\n  prefix = var.prefix\n}\n\nresource \"aws_iam_role\" \"karpenter\" {\n  name = \"${local.prefix}-karpenter\"\n}\n";
        let dev_vars = format!("prefix = \"{dev_prefix}\"\n");
        let prod_vars = format!("prefix = \"{prod_prefix}\"\n");
        let repo = super::super::testing::repo(&[
            ("envs/dev/infra/main.tf", main),
            ("envs/dev/infra/terraform.tfvars", &dev_vars),
            ("envs/prod/infra/main.tf", main),
            ("envs/prod/infra/terraform.tfvars", &prod_vars),
        ]);
        let mut findings = crate::Findings::default();
        run(
            &repo,
            &["dev".to_string(), "prod".to_string()],
            &mut findings,
        );
        findings
    }

    #[test]
    fn two_environments_resolving_to_one_role_name_are_found_in_the_second() {
        let findings = run_for_two("shop", "shop");
        assert_eq!(
            super::super::testing::found(&findings, "tf.aws-name-shared"),
            [("envs/prod/infra/main.tf".to_string(), 6)]
        );
        assert!(
            findings.0[0].message.contains("shop-karpenter"),
            "{:?}",
            findings.0
        );
    }

    #[test]
    fn environments_whose_names_differ_pass() {
        let findings = run_for_two("shop-dev", "shop-prod");
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

//! environment.secret-key and environment.shared-value: in one environment's view of a
//! repo of several (`model::EnvironmentScope`), the secrets its ExternalSecrets read are its
//! own, and the files every environment shares hold no value only one of them has.
use std::collections::BTreeMap;

use hcl::Expression;
use serde_json::Value as Json;

use super::context::Context;
use crate::environments::owner;
use crate::model::EnvironmentScope;
use crate::{Findings, yaml};

pub fn run(context: &Context, findings: &mut Findings) {
    let Some(scope) = &context.repo.environment else {
        return;
    };
    secret_keys(context, scope, findings);
    shared_values(context, scope, findings);
}

/// The literal values this view's Terraform writes into ConfigMaps' `data` (the bridge's
/// cluster-vars): what Flux substitutes for `${KEY}` in this environment.
fn literal_vars(context: &Context) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for module in &context.repo.terraform {
        for (_, _, body) in module.resources("kubernetes_config_map_v1_data") {
            let data = body
                .attributes()
                .find(|a| a.key() == "data")
                .map(|a| a.expr());
            let Some(Expression::Object(object)) = data else {
                continue;
            };
            for (key, value) in object {
                if let Expression::String(text) = value {
                    let key = key.to_string().trim_matches('"').to_string();
                    vars.insert(key, text.clone());
                }
            }
        }
    }
    vars
}

/// `text` with each `${KEY}` that `vars` holds replaced.
fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (key, value) in vars {
        out = out.replace(&format!("${{{key}}}"), value);
    }
    out
}

/// An ExternalSecret whose key (once this environment's cluster-vars are substituted)
/// names another environment and not its own: the secret of another environment, which
/// this one's store should not read, or a key that does not exist here.
fn secret_keys(context: &Context, scope: &EnvironmentScope, findings: &mut Findings) {
    let vars = literal_vars(context);
    for object in context.repo.kind("ExternalSecret") {
        let items = |field: &str, key: &str| -> Vec<String> {
            object
                .spec(field)
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(|item| yaml::str_at(item, key).map(str::to_string))
                .collect()
        };
        let mut keys = items("data", "remoteRef/key");
        keys.extend(items("dataFrom", "extract/key"));
        for key in keys {
            let resolved = substitute(&key, &vars);
            let segments: Vec<&str> = resolved.split('/').collect();
            if segments.contains(&scope.own.as_str()) {
                continue;
            }
            let Some(other) = scope
                .all
                .iter()
                .find(|env| segments.contains(&env.as_str()))
            else {
                continue;
            };
            // Reported where the key is written: an overlay patch, or the object's file.
            let (file, line) = match &object.overlay {
                Some((file, doc)) if doc.node.find_scalar(&key).is_some() => {
                    (file, doc.line_of_scalar(&key))
                }
                _ => (&object.file, object.doc.line_of_scalar(&key)),
            };
            findings.add(
                "environment.secret-key",
                file,
                line,
                format!(
                    "ExternalSecret {} of environment {} reads `{resolved}`, under environment {other}'s prefix: {} reads {other}'s secret, or one that does not exist",
                    object.name, scope.own, scope.own
                ),
            );
        }
    }
}

/// A value only one environment's Terraform inputs hold, written in an object of a file
/// every environment shares: the other environments get it too.
fn shared_values(context: &Context, scope: &EnvironmentScope, findings: &mut Findings) {
    if scope.values.is_empty() {
        return;
    }
    for object in &context.repo.objects {
        if owner(&object.file, &scope.all).is_some() {
            continue;
        }
        for node in object.doc.node.scalars() {
            let text = node.text().unwrap_or_default();
            for (value, env) in &scope.values {
                if text.contains(value.as_str()) {
                    findings.add(
                        "environment.shared-value",
                        &object.file,
                        node.pos.line,
                        format!(
                            "`{value}` is environment {env}'s own (its Terraform inputs hold it), but {} is shared by every environment",
                            object.file
                        ),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::context::Context;
    use super::super::testing::{found, repo};
    use super::run;
    use crate::Findings;
    use crate::model::EnvironmentScope;

    const SECRET: &str = "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: db\n  namespace: apps\nspec:\n  data:\n    - secretKey: password\n      remoteRef:\n        key: ${ENV}/db\n";

    fn scope(own: &str, values: &[(&str, &str)]) -> EnvironmentScope {
        EnvironmentScope {
            own: own.to_string(),
            all: vec!["dev".to_string(), "prod".to_string()],
            values: values
                .iter()
                .map(|(v, e)| (v.to_string(), e.to_string()))
                .collect(),
        }
    }

    fn findings_of(env: &str, files: &[(&str, &str)], values: &[(&str, &str)]) -> Findings {
        let mut repo = repo(files);
        repo.environment = Some(scope(env, values));
        let mut findings = Findings::default();
        run(&Context::new(&repo), &mut findings);
        findings
    }

    fn vars(env: &str) -> String {
        format!(
            "resource \"kubernetes_config_map_v1_data\" \"vars\" {{\n  data = {{\n    ENV = \"{env}\"\n  }}\n}}\n"
        )
    }

    #[test]
    fn a_secret_key_under_another_environments_prefix_is_found() {
        let infra = vars("prod");
        let findings = findings_of(
            "dev",
            &[("apps/secret.yaml", SECRET), ("dev/infra/main.tf", &infra)],
            &[],
        );
        assert_eq!(
            found(&findings, "environment.secret-key"),
            [("apps/secret.yaml".to_string(), 10)]
        );
    }

    #[test]
    fn a_secret_key_under_its_own_prefix_passes() {
        let infra = vars("dev");
        let findings = findings_of(
            "dev",
            &[("apps/secret.yaml", SECRET), ("dev/infra/main.tf", &infra)],
            &[],
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }

    #[test]
    fn one_environments_value_in_a_shared_file_is_found_not_in_its_own() {
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  zone: dev.example.com\n";
        let files = [("apps/cm.yaml", cm), ("dev/apps/cm.yaml", cm)];
        let findings = findings_of("dev", &files, &[("dev.example.com", "dev")]);
        assert_eq!(
            found(&findings, "environment.shared-value"),
            [("apps/cm.yaml".to_string(), 6)]
        );
    }

    #[test]
    fn a_repo_of_one_environment_is_not_judged() {
        let mut findings = Findings::default();
        run(
            &Context::new(&repo(&[("apps/secret.yaml", SECRET)])),
            &mut findings,
        );
        assert!(findings.0.is_empty());
    }
}

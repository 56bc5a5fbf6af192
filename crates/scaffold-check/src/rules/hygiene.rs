//! repo.tracked-output, repo.secrets, repo.placeholders: what must never be committed.
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value as Json;

use crate::Findings;
use crate::model::{self, Repo};

pub fn run(repo: &Repo, findings: &mut Findings) {
    conflict_markers(repo, findings);
    tracked_output(repo, findings);
    secrets(repo, findings);
    placeholders(repo, findings);
}

fn conflict_markers(repo: &Repo, findings: &mut Findings) {
    for (path, lines) in &repo.conflicts {
        for line in lines {
            findings.add(
                "repo.conflict-markers",
                path,
                *line,
                "merge conflict markers: the file is not parsed until they are resolved",
            );
        }
    }
}

fn tracked_output(repo: &Repo, findings: &mut Findings) {
    for path in repo.files.keys() {
        let name = path.rsplit('/').next().unwrap_or(path);
        let what = if name.ends_with(".tfstate") || name.contains(".tfstate.") {
            Some("Terraform state")
        } else if path.split('/').any(|p| p == ".terraform") {
            Some("a .terraform/ directory")
        } else if name.ends_with(".tfplan") || name == "tfplan" {
            Some("a Terraform plan")
        } else if name == "tf-outputs.json" || name.starts_with("terraform-outputs.") {
            Some("saved Terraform outputs")
        } else {
            None
        };
        if let Some(what) = what {
            findings.add(
                "repo.tracked-output",
                path,
                0,
                format!("{what} is committed (it holds account details and goes stale)"),
            );
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("static regex"))
}

fn secrets(repo: &Repo, findings: &mut Findings) {
    static KEY: OnceLock<Regex> = OnceLock::new();
    let access_key = re(&KEY, r"\b(AKIA|ASIA)[A-Z0-9]{16}\b");
    for (path, text) in repo.texts() {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if let Some(m) = access_key.find(line)
                && !m.as_str().ends_with("EXAMPLE")
            {
                findings.add(
                    "repo.secrets",
                    path,
                    i + 1,
                    "an AWS access key id is committed",
                );
            }
            if line.contains("-----BEGIN")
                && line.contains("PRIVATE KEY-----")
                && lines
                    .get(i + 1)
                    .is_some_and(|next| !next.trim().is_empty() && !next.contains("-----END"))
            {
                findings.add("repo.secrets", path, i + 1, "a private key is committed");
            }
        }
    }
    for object in &repo.objects {
        if object.value().get("sops").is_some() {
            continue;
        }
        let literal = |v: &Json| {
            v.as_str().is_some_and(|s| {
                let substituted = s.starts_with("${") && s.ends_with('}');
                !(s.is_empty() || substituted || s.starts_with("ENC["))
            })
        };
        if object.kind == "Secret" && object.group().is_empty() {
            for field in ["data", "stringData"] {
                for (key, value) in object
                    .value()
                    .get(field)
                    .and_then(Json::as_object)
                    .into_iter()
                    .flatten()
                {
                    if literal(value) {
                        findings.add(
                            "repo.secrets",
                            &object.file,
                            object.doc.line_of_key(key),
                            format!("Secret {} has a literal {field}.{key}", object.name),
                        );
                    }
                }
            }
        }
        if object.kind == "Kustomization" && object.group() == "kustomize.config.k8s.io" {
            for generator in object
                .value()
                .get("secretGenerator")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                if generator.get("literals").is_some()
                    || generator.get("files").is_some()
                    || generator.get("envs").is_some()
                {
                    findings.add(
                        "repo.secrets",
                        &object.file,
                        object.doc.line_of_key("secretGenerator"),
                        "a secretGenerator makes a Secret from committed plaintext",
                    );
                }
            }
        }
        if object.kind == "HelmRelease"
            && let Some(values) = object.spec("values")
        {
            secret_values(object, values, findings);
        }
    }
}

fn secret_values(object: &model::Object, value: &Json, findings: &mut Findings) {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let k8s_name = re(&NAME, r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$");
    match value {
        Json::Object(map) => {
            for (key, child) in map {
                let lower = key.to_lowercase();
                let secretish = ["password", "secret", "token", "secretkey"]
                    .iter()
                    .any(|s| lower.ends_with(s));
                if secretish
                    && !lower.starts_with("existingsecret")
                    && let Some(s) = child.as_str()
                    && !s.is_empty()
                    && !s.contains("${")
                    && !(lower.ends_with("secret") && k8s_name.is_match(s))
                {
                    findings.add(
                        "repo.secrets",
                        &object.file,
                        object.doc.line_of_key(key),
                        format!(
                            "HelmRelease {} has a literal value for {key}: use valuesFrom a Secret",
                            object.name
                        ),
                    );
                }
                secret_values(object, child, findings);
            }
        }
        Json::Array(items) => items
            .iter()
            .for_each(|i| secret_values(object, i, findings)),
        _ => {}
    }
}

fn placeholders(repo: &Repo, findings: &mut Findings) {
    static JINJA: OnceLock<Regex> = OnceLock::new();
    static SCAFFOLD: OnceLock<Regex> = OnceLock::new();
    static TOKEN: OnceLock<Regex> = OnceLock::new();
    let jinja = re(
        &JINJA,
        r"(^|[^$])\{\{-?\s*([a-z_][A-Za-z0-9_]*)(\s*\|\s*[a-z_]+(\([^)]*\))?)*\s*-?\}\}|\{%.*%\}|\{#.*#\}",
    );
    let scaffold = re(
        &SCAFFOLD,
        r"\[\[ ?[a-z_][a-z0-9_.]*( ?\|[^\]]*)? ?\]\]|\[%.*%\]",
    );
    let token = re(
        &TOKEN,
        r"REPLACE_ME|CHANGEME|TODO\(scaffold\)|<[A-Z][A-Z0-9]*_[A-Z0-9_]+>",
    );
    for (path, text) in repo.texts() {
        let go_template = (model::is_yaml(path) && model::is_kops_template(text))
            || path.contains("/templates/")
            || [".tmpl", ".tpl", ".gotmpl", ".json"]
                .iter()
                .any(|e| path.ends_with(e));
        let markdown = path.ends_with(".md");
        for (i, line) in text.lines().enumerate() {
            let jinja_hit = !go_template
                && jinja.captures(line).is_some_and(|c| {
                    c.get(2).is_none_or(|w| {
                        !matches!(
                            w.as_str(),
                            "end" | "else" | "break" | "continue" | "nil" | "true" | "false"
                        )
                    })
                });
            let hit = jinja_hit || scaffold.is_match(line) || (!markdown && token.is_match(line));
            if hit {
                findings.add(
                    "repo.placeholders",
                    path,
                    i + 1,
                    format!("leftover template markup or placeholder: {}", line.trim()),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_on};
    use super::run;

    #[test]
    fn committed_state_keys_placeholders_and_markers_are_found_where_they_are() {
        let findings = run_on(
            &[
                ("infra/terraform.tfstate", "{}"),
                ("infra/notes.txt", "ok\nkey = AKIAABCDEFGHIJKLMNOP\n"),
                ("apps/cm.yaml", "data:\n  host: REPLACE_ME\n"),
                (
                    "apps/x.yaml",
                    "a: 1\n<<<<<<< ours\nb: 2\n=======\nb: 3\n>>>>>>> theirs\n",
                ),
            ],
            run,
        );
        assert_eq!(
            found(&findings, "repo.tracked-output"),
            [("infra/terraform.tfstate".to_string(), 0)]
        );
        assert_eq!(
            found(&findings, "repo.secrets"),
            [("infra/notes.txt".to_string(), 2)]
        );
        assert_eq!(
            found(&findings, "repo.placeholders"),
            [("apps/cm.yaml".to_string(), 2)]
        );
        assert_eq!(
            found(&findings, "repo.conflict-markers"),
            [("apps/x.yaml".to_string(), 2)]
        );
    }

    #[test]
    fn example_keys_flux_substitutions_and_go_templates_pass() {
        let findings = run_on(
            &[
                (
                    "README.md",
                    "Use AKIAIOSFODNN7EXAMPLE; set REPLACE_ME later.\n",
                ),
                ("apps/cm.yaml", "data:\n  host: ${CLUSTER_NAME}\n"),
                ("charts/x/templates/cm.yaml", "name: {{ .Values.name }}\n"),
            ],
            run,
        );
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

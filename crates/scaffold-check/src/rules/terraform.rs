//! tf.parse, tf.refs, tf.providers, tf.state-bucket, tf.backend.
use std::collections::BTreeSet;
use std::sync::OnceLock;

use hcl::{Block, Body, Expression};
use regex::Regex;

use crate::Findings;
use crate::model::{self, Repo, TfModule};

pub fn run(repo: &Repo, findings: &mut Findings) {
    for module in &repo.terraform {
        for file in &module.files {
            if let Err(e) = &file.body
                && !repo.conflicts.contains_key(&file.path)
            {
                findings.at(
                    "tf.parse",
                    &file.path,
                    e.line,
                    e.column,
                    format!("does not parse: {}", e.message),
                );
            }
        }
        refs(repo, module, findings);
        providers(module, findings);
        state_buckets(module, findings);
        backend(module, findings);
    }
}

fn reference() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(^|[^A-Za-z0-9_.])(var|local|module)\.([A-Za-z_][A-Za-z0-9_-]*)(\.([A-Za-z_][A-Za-z0-9_-]*))?").expect("static regex")
    })
}

/// The text of a line without its `#` or `//` comment (not inside a string).
fn code(line: &str) -> &str {
    let mut quote = false;
    let bytes = line.as_bytes();
    for (i, c) in bytes.iter().enumerate() {
        match c {
            b'"' if i == 0 || bytes[i - 1] != b'\\' => quote = !quote,
            b'#' if !quote => return &line[..i],
            b'/' if !quote && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

fn refs(repo: &Repo, module: &TfModule, findings: &mut Findings) {
    let variables: BTreeSet<String> = module.labels("variable").into_iter().collect();
    let locals: BTreeSet<String> = module.locals().into_iter().collect();
    let calls: Vec<(String, Option<String>)> = module
        .blocks()
        .filter(|(_, b)| b.identifier() == "module")
        .filter_map(|(_, b)| {
            let name = b.labels().first()?.as_str().to_string();
            let source = b
                .body()
                .attributes()
                .find(|a| a.key() == "source")
                .and_then(|a| match a.expr() {
                    Expression::String(s) => Some(s.clone()),
                    _ => None,
                });
            Some((name, source))
        })
        .collect();
    for file in &module.files {
        if file.body.is_err() {
            continue;
        }
        let mut in_heredoc: Option<String> = None;
        for (index, line) in file.text.lines().enumerate() {
            if let Some(end) = &in_heredoc {
                if line.trim() == end {
                    in_heredoc = None;
                }
                continue;
            }
            if let Some(pos) = line.find("<<") {
                let tag = line[pos + 2..].trim_start_matches('-').trim();
                if !tag.is_empty() && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    in_heredoc = Some(tag.to_string());
                }
            }
            for caps in reference().captures_iter(code(line)) {
                let kind = &caps[2];
                let name = &caps[3];
                let column = caps.get(2).map_or(0, |m| m.start() + 1);
                let missing = match kind {
                    "var" => (!variables.contains(name))
                        .then(|| format!("var.{name} is not declared in {}", module.dir)),
                    "local" => (!locals.contains(name))
                        .then(|| format!("local.{name} is not defined in {}", module.dir)),
                    _ => match calls.iter().find(|(n, _)| n == name) {
                        None => Some(format!("module.{name} is not declared in {}", module.dir)),
                        Some((_, source)) => caps.get(5).and_then(|output| {
                            let source = source
                                .as_deref()
                                .filter(|s| s.starts_with("./") || s.starts_with("../"))?;
                            let dir = model::join(&module.dir, source)?;
                            let child = repo.terraform.iter().find(|m| m.dir == dir)?;
                            let output = output.as_str();
                            (!child.labels("output").iter().any(|o| o == output)).then(|| {
                                format!("module.{name}.{output}: {dir} has no output {output}")
                            })
                        }),
                    },
                };
                if let Some(message) = missing {
                    findings.at("tf.refs", &file.path, index + 1, column, message);
                }
            }
        }
    }
}

fn terraform_blocks(module: &TfModule) -> impl Iterator<Item = (&crate::model::TfFile, &Block)> {
    module
        .blocks()
        .filter(|(_, b)| b.identifier() == "terraform")
}

fn providers(module: &TfModule, findings: &mut Findings) {
    let mut pinned = BTreeSet::new();
    let mut declared = BTreeSet::new();
    for (_, block) in terraform_blocks(module) {
        for required in block
            .body()
            .blocks()
            .filter(|b| b.identifier() == "required_providers")
        {
            for attr in required.body().attributes() {
                declared.insert(attr.key().to_string());
                if let Expression::Object(o) = attr.expr()
                    && o.keys()
                        .any(|k| k.to_string().trim_matches('"') == "version")
                {
                    pinned.insert(attr.key().to_string());
                }
            }
        }
    }
    let mut reported = BTreeSet::new();
    for (file, block) in module.blocks() {
        let (provider, needle) = match (block.identifier(), block.labels()) {
            ("resource" | "data", [kind, name, ..]) => {
                let kind = kind.as_str();
                let provider = kind.split('_').next().unwrap_or(kind).to_string();
                (provider, format!("\"{kind}\" \"{}\"", name.as_str()))
            }
            ("provider", [name, ..]) => (
                name.as_str().to_string(),
                format!("provider \"{}\"", name.as_str()),
            ),
            _ => continue,
        };
        if provider == "terraform"
            || pinned.contains(&provider)
            || !reported.insert(provider.clone())
        {
            continue;
        }
        let why = if declared.contains(&provider) {
            "has no version constraint in required_providers"
        } else {
            "is not in required_providers"
        };
        findings.add(
            "tf.providers",
            &file.path,
            model::line_in(&file.text, &needle),
            format!("provider {provider} {why} of {}", module.dir),
        );
    }
}

fn attr_text(body: &Body, key: &str) -> Option<String> {
    body.attributes()
        .find(|a| a.key() == key)
        .map(|a| a.expr().to_string())
}

/// Resources of `kind` whose `bucket` refers to `aws_s3_bucket.NAME`.
fn for_bucket<'a>(module: &'a TfModule, kind: &'a str, name: &'a str) -> Vec<&'a Body> {
    let needle = format!("aws_s3_bucket.{name}.");
    module
        .resources(kind)
        .filter(|(_, _, body)| attr_text(body, "bucket").is_some_and(|b| b.contains(&needle)))
        .map(|(_, _, body)| body)
        .collect()
}

fn state_buckets(module: &TfModule, findings: &mut Findings) {
    for (file, name, body) in module.resources("aws_s3_bucket") {
        let bucket = attr_text(body, "bucket").unwrap_or_default();
        if !name.contains("state") && !bucket.contains("state") {
            continue;
        }
        let line = model::line_in(&file.text, &format!("\"aws_s3_bucket\" \"{name}\""));
        let mut missing = Vec::new();
        if for_bucket(
            module,
            "aws_s3_bucket_server_side_encryption_configuration",
            name,
        )
        .is_empty()
        {
            missing.push("default encryption (aws_s3_bucket_server_side_encryption_configuration)");
        }
        let versioned = for_bucket(module, "aws_s3_bucket_versioning", name)
            .iter()
            .any(|b| {
                b.blocks()
                    .filter(|c| c.identifier() == "versioning_configuration")
                    .any(|c| attr_text(c.body(), "status").is_some_and(|s| s.contains("Enabled")))
            });
        if !versioned {
            missing.push("versioning status Enabled (aws_s3_bucket_versioning)");
        }
        let blocked = for_bucket(module, "aws_s3_bucket_public_access_block", name)
            .iter()
            .any(|b| {
                [
                    "block_public_acls",
                    "block_public_policy",
                    "ignore_public_acls",
                    "restrict_public_buckets",
                ]
                .iter()
                .all(|k| attr_text(b, k).as_deref() == Some("true"))
            });
        if !blocked {
            missing.push("a public access block with all four flags true (aws_s3_bucket_public_access_block)");
        }
        if !missing.is_empty() {
            findings.add(
                "tf.state-bucket",
                &file.path,
                line,
                format!(
                    "state bucket aws_s3_bucket.{name} lacks {}",
                    missing.join(", ")
                ),
            );
        }
    }
}

fn backend(module: &TfModule, findings: &mut Findings) {
    let Some((first, _)) = terraform_blocks(module).next() else {
        return;
    };
    let mut any = false;
    for (file, block) in terraform_blocks(module) {
        for b in block.body().blocks() {
            let kind = b.labels().first().map(|l| l.as_str()).unwrap_or("");
            let locked = match (b.identifier(), kind) {
                ("cloud", _) => true,
                ("backend", "s3") => {
                    attr_text(b.body(), "use_lockfile").as_deref() == Some("true")
                        || attr_text(b.body(), "dynamodb_table").is_some()
                }
                ("backend", "local") => false,
                ("backend", _) => true,
                _ => continue,
            };
            any = true;
            if !locked {
                findings.add(
                    "tf.backend",
                    &file.path,
                    model::line_in(&file.text, &format!("backend \"{kind}\"")),
                    format!("{} backend \"{kind}\" is local or not locked", module.dir),
                );
            }
        }
    }
    if !any {
        findings.add(
            "tf.backend",
            &first.path,
            model::line_in(&first.text, "terraform {"),
            format!(
                "{} keeps its state in a local file: no backend block",
                module.dir
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_on};
    use super::run;

    const PINNED: &str = "terraform {\n  backend \"s3\" {\n    bucket       = \"b\"\n    use_lockfile = true\n  }\n  required_providers {\n    aws = {\n      source  = \"hashicorp/aws\"\n      version = \"6.0.0\"\n    }\n  }\n}\n";

    #[test]
    fn undeclared_refs_unpinned_providers_and_unlocked_backends_are_found() {
        let main = "terraform {\n  backend \"local\" {}\n}\n\nresource \"aws_s3_bucket\" \"logs\" {\n  bucket = var.missing\n}\n";
        let findings = run_on(&[("infra/main.tf", main)], run);
        assert_eq!(
            found(&findings, "tf.refs"),
            [("infra/main.tf".to_string(), 6)]
        );
        assert_eq!(
            found(&findings, "tf.providers"),
            [("infra/main.tf".to_string(), 5)]
        );
        assert_eq!(
            found(&findings, "tf.backend"),
            [("infra/main.tf".to_string(), 2)]
        );
    }

    #[test]
    fn a_state_bucket_without_encryption_versioning_or_access_block_is_found() {
        let main = format!(
            "{PINNED}\nresource \"aws_s3_bucket\" \"state\" {{\n  bucket = \"team-state\"\n}}\n"
        );
        let findings = run_on(&[("infra/main.tf", &main)], run);
        assert_eq!(
            found(&findings, "tf.state-bucket"),
            [("infra/main.tf".to_string(), 14)]
        );
        assert_eq!(findings.0.len(), 1, "{:?}", findings.0);
    }

    #[test]
    fn a_module_that_does_not_parse_is_one_parse_finding() {
        let findings = run_on(&[("infra/main.tf", "resource \"x\" {\n")], run);
        assert_eq!(found(&findings, "tf.parse").len(), 1, "{:?}", findings.0);
        assert_eq!(found(&findings, "tf.parse")[0].0, "infra/main.tf");
    }

    #[test]
    fn a_pinned_locked_module_with_declared_refs_passes() {
        let main = format!(
            "{PINNED}\nvariable \"name\" {{}}\n\nlocals {{\n  tag = var.name\n}}\n\nresource \"aws_sqs_queue\" \"q\" {{\n  name = local.tag # var.commented_out\n}}\n"
        );
        let findings = run_on(&[("infra/main.tf", &main)], run);
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

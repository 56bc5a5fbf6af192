//! tf.schema: resource, data source and provider blocks against the vendored schema of
//! their provider (schemas/terraform, made by scripts/vendor-tf-schemas.py from the
//! provider bindings generated from `terraform providers schema -json`): an argument or
//! block its provider does not have fails `terraform plan` ("Unsupported argument").
//! Only the types a repo uses are parsed.
use std::collections::BTreeMap;

use hcl::{Body, Expression};
use serde::Deserialize;

use crate::Findings;
use crate::model::{Repo, TfFile, TfModule};
use crate::schema::vendored;
use crate::suggest::did_you_mean;

/// The names a block may hold (see scripts/vendor-tf-schemas.py).
#[derive(Debug, Default, Deserialize)]
struct Schema {
    #[serde(default)]
    a: Vec<String>,
    /// Lists of objects: written as an argument or as blocks; their content is not checked.
    #[serde(default)]
    l: Vec<String>,
    #[serde(default)]
    b: BTreeMap<String, Schema>,
    /// Opaque blocks: anything inside.
    #[serde(default)]
    x: Vec<String>,
    /// A name was uncertain in the bindings: unknown names are not reported.
    #[serde(default)]
    i: u8,
}

#[derive(Debug, Deserialize)]
struct Header {
    source: String,
    version: String,
}

/// One vendored provider: its header and its text, one block per line.
struct Provider {
    header: Header,
    text: &'static str,
    /// `"KIND NAME"` → that block's JSON, built on the first lookup (one pass over the
    /// text instead of a search of all of it per block: aws alone is 790 KB).
    index: std::cell::OnceCell<std::collections::HashMap<&'static str, &'static str>>,
}

impl Provider {
    fn lookup(&self, kind: &str, name: &str) -> Option<Schema> {
        let index = self.index.get_or_init(|| {
            self.text
                .lines()
                .skip(1)
                .filter_map(|line| {
                    let kind_end = line.find(' ')?;
                    let name_end = kind_end + 1 + line[kind_end + 1..].find(' ')?;
                    Some((&line[..name_end], &line[name_end + 1..]))
                })
                .collect()
        });
        serde_json::from_str(index.get(format!("{kind} {name}").as_str())?).ok()
    }
    fn label(&self) -> String {
        format!("{} {}", self.header.source, self.header.version)
    }
}

fn providers() -> Vec<Provider> {
    vendored("terraform")
        .filter_map(|(_, text)| {
            let header = serde_json::from_str(text.lines().next()?).ok()?;
            Some(Provider {
                header,
                text,
                index: std::cell::OnceCell::new(),
            })
        })
        .collect()
}

const META: &[&str] = &["count", "for_each", "depends_on", "provider", "lifecycle"];
const META_BLOCKS: &[&str] = &[
    "lifecycle",
    "provisioner",
    "connection",
    "precondition",
    "postcondition",
];

pub fn run(repo: &Repo, findings: &mut Findings) {
    let mut cache: Option<Vec<Provider>> = None;
    for module in &repo.terraform {
        let sources = sources(module);
        for (file, block) in module.blocks() {
            let (kind, type_name) = match (block.identifier(), block.labels()) {
                ("resource", [t, _, ..]) => ("resource", t.as_str()),
                ("data", [t, _, ..]) => ("data", t.as_str()),
                ("provider", [p, ..]) => ("provider", p.as_str()),
                _ => continue,
            };
            if type_name.starts_with("terraform_") {
                continue;
            }
            let local = if kind == "provider" {
                type_name
            } else {
                type_name.split('_').next().unwrap_or(type_name)
            };
            let source = sources
                .get(local)
                .cloned()
                .unwrap_or_else(|| format!("hashicorp/{local}"));
            let all = cache.get_or_insert_with(providers);
            let Some(provider) = all.iter().find(|p| p.header.source == source) else {
                continue;
            };
            let labels = block
                .labels()
                .iter()
                .map(|l| format!("\"{}\"", l.as_str()))
                .collect::<Vec<_>>()
                .join(" ");
            let head = format!("{} {labels}", block.identifier());
            let start = file
                .text
                .find(&head)
                .map_or(0, |i| file.text[..i].lines().count() + 1);
            let at = Place {
                file,
                line: start.max(1),
            };
            let Some(schema) = provider.lookup(kind, type_name) else {
                let known = provider
                    .text
                    .lines()
                    .filter_map(|l| l.strip_prefix(&format!("{kind} ")))
                    .filter_map(|l| l.split(' ').next());
                findings.add(
                    "tf.schema",
                    &file.path,
                    at.line,
                    format!(
                        "{source} has no {kind} type {type_name}{} (vendored schema {})",
                        did_you_mean(type_name, known),
                        provider.label()
                    ),
                );
                continue;
            };
            let what = format!("{kind} {type_name}");
            check_body(
                block.body(),
                &schema,
                &what,
                &at,
                provider,
                findings,
                kind != "provider",
            );
        }
    }
}

/// The provider sources of `required_providers`, by local name.
fn sources(module: &TfModule) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (_, block) in module
        .blocks()
        .filter(|(_, b)| b.identifier() == "terraform")
    {
        for required in block
            .body()
            .blocks()
            .filter(|b| b.identifier() == "required_providers")
        {
            for attr in required.body().attributes() {
                if let Expression::Object(o) = attr.expr() {
                    for (k, v) in o.iter() {
                        if k.to_string().trim_matches('"') == "source"
                            && let Expression::String(s) = v
                        {
                            let s = s.trim_start_matches("registry.terraform.io/");
                            out.insert(attr.key().to_string(), s.to_string());
                        }
                    }
                }
            }
        }
    }
    out
}

struct Place<'a> {
    file: &'a TfFile,
    /// The line the enclosing block starts on: names are looked for after it.
    line: usize,
}

impl Place<'_> {
    /// The line of `name` (as `name =` or `name {`) at or after this place.
    fn find(&self, name: &str) -> usize {
        self.file
            .text
            .lines()
            .enumerate()
            .skip(self.line.saturating_sub(1))
            .find(|(_, l)| {
                l.trim_start().strip_prefix(name).is_some_and(|rest| {
                    let rest = rest.trim_start();
                    rest.starts_with('=') || rest.starts_with('{') || rest.starts_with('"')
                })
            })
            .map_or(self.line, |(i, _)| i + 1)
    }
}

fn check_body(
    written: &Body,
    schema: &Schema,
    what: &str,
    at: &Place,
    provider: &Provider,
    findings: &mut Findings,
    meta: bool,
) {
    if schema.i != 0 {
        return;
    }
    let names = || {
        schema
            .a
            .iter()
            .chain(&schema.l)
            .chain(schema.b.keys())
            .chain(&schema.x)
            .map(String::as_str)
    };
    for attr in written.attributes() {
        let key = attr.key();
        if (meta && META.contains(&key)) || schema.a.iter().chain(&schema.l).any(|a| a == key) {
            continue;
        }
        let why = if schema.b.contains_key(key) || schema.x.iter().any(|x| x == key) {
            " as an argument (it is a block: write `".to_string() + key + " { … }`)"
        } else {
            did_you_mean(key, names())
        };
        findings.add(
            "tf.schema",
            &at.file.path,
            at.find(key),
            format!(
                "{what} has no argument {key}{why} (vendored schema {})",
                provider.label()
            ),
        );
    }
    for block in written.blocks() {
        let (name, inner): (&str, &Body) = if block.identifier() == "dynamic" {
            let Some(label) = block.labels().first() else {
                continue;
            };
            let content = block.body().blocks().find(|b| b.identifier() == "content");
            match content {
                Some(c) => (label.as_str(), c.body()),
                None => continue,
            }
        } else {
            (block.identifier(), block.body())
        };
        if (meta && META_BLOCKS.contains(&name))
            || schema.l.iter().chain(&schema.x).any(|l| l == name)
        {
            continue;
        }
        let line = at.find(name);
        match schema.b.get(name) {
            Some(nested) => {
                let place = Place {
                    file: at.file,
                    line,
                };
                check_body(
                    inner,
                    nested,
                    &format!("{what} block {name}"),
                    &place,
                    provider,
                    findings,
                    false,
                );
            }
            None => {
                let why = if schema.a.iter().any(|a| a == name) {
                    " as a block (it is an argument: write `".to_string() + name + " = …`)"
                } else {
                    did_you_mean(name, names())
                };
                findings.add(
                    "tf.schema",
                    &at.file.path,
                    line,
                    format!(
                        "{what} has no block {name}{why} (vendored schema {})",
                        provider.label()
                    ),
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
    fn an_argument_and_a_type_the_vendored_provider_lacks_are_found() {
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  name        = \"q\"\n  no_such_arg = 1\n}\n\nresource \"aws_sqs_queeu\" \"r\" {\n}\n";
        let findings = run_on(&[("infra/main.tf", main)], run);
        assert_eq!(
            found(&findings, "tf.schema"),
            [
                ("infra/main.tf".to_string(), 3),
                ("infra/main.tf".to_string(), 6),
            ]
        );
        assert!(
            findings.0[1].message.contains("aws_sqs_queue"),
            "a suggestion: {:?}",
            findings.0
        );
    }

    #[test]
    fn arguments_the_provider_has_and_meta_arguments_pass() {
        let main = "resource \"aws_sqs_queue\" \"q\" {\n  count = 1\n  name  = \"q\"\n  tags  = {}\n  lifecycle {\n    prevent_destroy = true\n  }\n}\n";
        let findings = run_on(&[("infra/main.tf", main)], run);
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

//! tf.vars: what `terraform plan` refuses before it reads any provider: a `.tfvars` key no
//! variable declares ("Value for undeclared variable", an error with `-var-file`), and a
//! variable without a default that nothing gives a value (plan prompts, or fails in CI).
use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

use crate::Findings;
use crate::model::{self, Repo, TfModule};
use crate::suggest::did_you_mean;

pub fn run(repo: &Repo, findings: &mut Findings) {
    for module in &repo.terraform {
        if module.files.iter().any(|f| f.body.is_err()) {
            continue;
        }
        check_module(repo, module, findings);
    }
}

/// A `.tfvars` file of a module: its path and the keys it sets, with their lines.
struct VarsFile<'a> {
    path: &'a str,
    keys: Vec<(String, usize)>,
}

fn vars_file<'a>(repo: &'a Repo, path: &'a str, findings: &mut Findings) -> Option<VarsFile<'a>> {
    let text = repo.text(path)?;
    if repo.conflicts.contains_key(path) {
        return None;
    }
    match hcl::parse(text) {
        Ok(body) => Some(VarsFile {
            path,
            keys: body
                .attributes()
                .map(|a| {
                    let key = a.key().to_string();
                    let line = text
                        .lines()
                        .position(|l| {
                            l.trim_start()
                                .strip_prefix(key.as_str())
                                .is_some_and(|rest| rest.trim_start().starts_with('='))
                        })
                        .map_or(0, |i| i + 1);
                    (key, line)
                })
                .collect(),
        }),
        Err(e) => {
            let (line, column) = match &e {
                hcl::Error::Parse(p) => (p.location().line(), p.location().column()),
                _ => (0, 0),
            };
            findings.at(
                "tf.parse",
                path,
                line,
                column,
                format!(
                    "does not parse: {}",
                    e.to_string().lines().next().unwrap_or("")
                ),
            );
            None
        }
    }
}

fn var_flag() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"TF_VAR_([A-Za-z0-9_-]+)|-var[ =]['"]?([A-Za-z0-9_-]+)="#)
            .expect("static regex")
    })
}

fn var_file_flag() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r#"-var-file[ =]['"]?([^\s'"]+)"#).expect("static regex"))
}

fn check_module(repo: &Repo, module: &TfModule, findings: &mut Findings) {
    let prefix = if module.dir.is_empty() {
        String::new()
    } else {
        format!("{}/", module.dir)
    };
    let in_dir = |p: &str| {
        p.strip_prefix(&prefix)
            .is_some_and(|rest| !rest.contains('/'))
    };
    let makefiles: Vec<&str> = repo
        .makefiles()
        .filter(|(p, _)| in_dir(p))
        .map(|(_, t)| t)
        .collect();
    let named: BTreeSet<String> = makefiles
        .iter()
        .flat_map(|t| var_file_flag().captures_iter(t))
        .filter_map(|c| model::join(&module.dir, &c[1]))
        .collect();
    let mut files = Vec::new();
    for path in repo.files.keys().filter(|p| in_dir(p)) {
        let name = &path[prefix.len()..];
        let auto = name == "terraform.tfvars" || name.ends_with(".auto.tfvars");
        if (auto || name.ends_with(".tfvars") && named.contains(path.as_str()))
            && let Some(file) = vars_file(repo, path, findings)
        {
            files.push(file);
        }
    }
    // A root module is one Terraform runs in: it has a Makefile or an auto-loaded tfvars.
    if makefiles.is_empty() && files.is_empty() {
        return;
    }
    let variables = module.labels("variable");
    for file in &files {
        for (key, line) in &file.keys {
            if !variables.contains(key) {
                findings.add(
                    "tf.vars",
                    file.path,
                    *line,
                    format!(
                        "{key} is not a variable of {}{}: terraform plan fails (\"Value for undeclared variable\")",
                        module.dir,
                        did_you_mean(key, variables.iter().map(String::as_str))
                    ),
                );
            }
        }
    }
    let given: BTreeSet<String> = files
        .iter()
        .flat_map(|f| f.keys.iter().map(|(k, _)| k.clone()))
        .chain(makefiles.iter().flat_map(|t| {
            var_flag()
                .captures_iter(t)
                .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()))
        }))
        .collect();
    for (file, block) in module
        .blocks()
        .filter(|(_, b)| b.identifier() == "variable")
    {
        let Some(name) = block.labels().first().map(|l| l.as_str()) else {
            continue;
        };
        if block.body().attributes().any(|a| a.key() == "default") || given.contains(name) {
            continue;
        }
        findings.add(
            "tf.vars",
            &file.path,
            model::line_in(&file.text, &format!("variable \"{name}\"")),
            format!(
                "variable {name} has no default and no value: no .tfvars of {} sets it, nor a -var/TF_VAR_{name} in its Makefile",
                module.dir
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_on};
    use super::run;

    const VARIABLES: &str = "variable \"region\" {}\n\nvariable \"zone\" {\n  default = \"a\"\n}\n";

    #[test]
    fn an_undeclared_tfvars_key_and_an_unset_variable_are_found() {
        let findings = run_on(
            &[
                ("infra/variables.tf", VARIABLES),
                (
                    "infra/terraform.tfvars",
                    "zone = \"b\"\nregoin = \"eu-west-1\"\n",
                ),
            ],
            run,
        );
        assert_eq!(
            found(&findings, "tf.vars"),
            [
                ("infra/terraform.tfvars".to_string(), 2),
                ("infra/variables.tf".to_string(), 1),
            ]
        );
        assert!(findings.0[0].message.contains("region"), "{:?}", findings.0);
    }

    #[test]
    fn values_from_tfvars_or_the_makefile_pass_and_a_module_nothing_runs_is_skipped() {
        let given_by_tfvars = run_on(
            &[
                ("infra/variables.tf", VARIABLES),
                ("infra/terraform.tfvars", "region = \"eu-west-1\"\n"),
            ],
            run,
        );
        assert!(given_by_tfvars.0.is_empty(), "{:?}", given_by_tfvars.0);
        let given_by_make = run_on(
            &[
                ("infra/variables.tf", VARIABLES),
                (
                    "infra/Makefile",
                    "plan:\n\tterraform plan -var region=eu-west-1\n",
                ),
            ],
            run,
        );
        assert!(given_by_make.0.is_empty(), "{:?}", given_by_make.0);
        let library = run_on(&[("modules/x/variables.tf", VARIABLES)], run);
        assert!(library.0.is_empty(), "{:?}", library.0);
    }
}

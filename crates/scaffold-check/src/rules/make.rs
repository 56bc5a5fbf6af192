//! make.flags: the flags of tool commands in Makefiles exist at the pinned tool version
//! (the vendored table `schemas/cli-flags.yaml`).
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::model::Repo;
use crate::{Findings, yaml};

#[derive(Debug, Deserialize)]
struct Tool {
    version: String,
    global: Vec<String>,
    commands: BTreeMap<String, Vec<String>>,
}

fn table() -> &'static BTreeMap<String, Tool> {
    static TABLE: OnceLock<BTreeMap<String, Tool>> = OnceLock::new();
    TABLE.get_or_init(|| {
        yaml::parse_one(include_str!("../../../../schemas/cli-flags.yaml"))
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    })
}

pub fn run(repo: &Repo, findings: &mut Findings) {
    for (path, text) in repo.makefiles() {
        for (index, line) in text.lines().enumerate() {
            // Recipe lines only; a shell line may hold several commands.
            if !line.starts_with('\t') {
                continue;
            }
            for command in line.split(['&', '|', ';']) {
                let words: Vec<&str> = command
                    .split_whitespace()
                    .filter(|w| !w.starts_with('@'))
                    .collect();
                check_command(&words, path, index + 1, findings);
            }
        }
    }
}

fn check_command(words: &[&str], path: &str, line: usize, findings: &mut Findings) {
    let Some((tool_name, tool)) = words.first().and_then(|w| table().get_key_value(*w)) else {
        return;
    };
    let positional: Vec<&str> = words[1..]
        .iter()
        .take_while(|w| !w.starts_with('-'))
        .copied()
        .collect();
    // The longest listed command the positional words start with.
    let Some((command, flags)) = tool
        .commands
        .iter()
        .filter(|(c, _)| {
            let parts: Vec<&str> = c.split(' ').collect();
            positional.len() >= parts.len() && positional[..parts.len()] == parts[..]
        })
        .max_by_key(|(c, _)| c.len())
    else {
        return;
    };
    for word in &words[1..] {
        if !word.starts_with('-') || word.starts_with("$(") {
            continue;
        }
        let flag = word.split('=').next().unwrap_or(word);
        if !flags.iter().chain(&tool.global).any(|f| f == flag) {
            findings.add(
                "make.flags",
                path,
                line,
                format!(
                    "`{tool_name} {command}` has no flag {flag} in {tool_name} {}",
                    tool.version
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{found, run_on};
    use super::run;

    #[test]
    fn a_flag_the_pinned_tool_lacks_is_reported_at_its_line() {
        let makefile =
            "plan:\n\tterraform init -upgrade\n\tterraform plan -var-file=x.tfvars -bogus\n";
        let findings = run_on(&[("infra/Makefile", makefile)], run);
        assert_eq!(
            found(&findings, "make.flags"),
            [("infra/Makefile".to_string(), 3)]
        );
        assert!(findings.0[0].message.contains("-bogus"), "{:?}", findings.0);
    }

    #[test]
    fn known_flags_global_flags_and_unlisted_commands_pass() {
        let makefile = "all:\n\tterraform -chdir=x plan -out=p && kops update cluster --yes --name n\n\tkubectl apply --whatever\nx: -not-a-recipe\n";
        let findings = run_on(&[("Makefile", makefile)], run);
        assert!(findings.0.is_empty(), "{:?}", findings.0);
    }
}

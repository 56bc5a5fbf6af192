//! Cross-object references the API server accepts but the controllers then fail on:
//! ref.node-class.
use super::Context;
use crate::check::{Findings, yaml};

pub fn run(context: &Context, findings: &mut Findings) {
    node_classes(context, findings);
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
            yaml::line_of_path(&pool.doc, &path),
            format!("NodePool {} uses EC2NodeClass {name}, which is not in the repo ({known}): it launches no node", pool.name),
        );
    }
}

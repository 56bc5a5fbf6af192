//! `scaffold blueprint test`: render each answer set in the blueprint's `tests/` and run
//! the built-in checks on the result. Pure: a case in, a verdict out.
use serde::Deserialize;
use serde_json::{Map, Value as Json};

use crate::answers::{self, Sources};
use crate::blueprint::Blueprint;
use crate::generate;
use crate::plan::Plan;
use crate::render::Renderer;

pub struct Verdict {
    pub name: String,
    pub problems: Vec<String>,
    pub files: usize,
}

/// A case file is either the answers themselves, or `answers:` plus `expect_error:` (a
/// text the error must contain) for a case that must be refused.
pub fn run_case(
    blueprint: &Blueprint,
    renderer: &Renderer,
    name: &str,
    text: &[u8],
) -> (Verdict, Option<Plan>) {
    let mut verdict = Verdict {
        name: name.to_string(),
        problems: Vec::new(),
        files: 0,
    };
    let parsed: serde_yaml::Value = match serde_yaml::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            verdict.problems.push(format!("not YAML: {e}"));
            return (verdict, None);
        }
    };
    let (values, expect_error) = match &parsed {
        serde_yaml::Value::Mapping(map)
            if map.contains_key("answers") || map.contains_key("expect_error") =>
        {
            (
                map.get("answers")
                    .cloned()
                    .unwrap_or(serde_yaml::Value::Null),
                map.get("expect_error")
                    .and_then(|v| v.as_str())
                    .map(String::from),
            )
        }
        other => (other.clone(), None),
    };
    let values = match values {
        serde_yaml::Value::Null => Default::default(),
        serde_yaml::Value::Mapping(map) => map
            .into_iter()
            .filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), v)))
            .collect(),
        _ => {
            verdict.problems.push("answers must be a mapping".into());
            return (verdict, None);
        }
    };
    let mut builtins = Map::new();
    builtins.insert(
        "target_dir_name".into(),
        Json::String(name.trim_end_matches(".yaml").to_string()),
    );
    let result = answers::gather(
        blueprint,
        renderer,
        Sources {
            set: Vec::new(),
            values,
            prompter: None,
            builtins,
        },
    )
    .and_then(|answers| {
        let record = generate::record_for(blueprint, &answers, Map::new());
        generate::render(blueprint, renderer, &answers, &record)
    });
    match (result, expect_error) {
        (Ok(_), Some(expected)) => verdict.problems.push(format!(
            "rendered, but an error containing `{expected}` was expected"
        )),
        (Err(e), Some(expected)) if e.to_string().contains(&expected) => {}
        (Err(e), _) => verdict.problems.push(e.to_string()),
        (Ok(rendered), None) => {
            verdict.files = rendered.plan.files.len();
            verdict.problems = check(&rendered.plan);
            return (verdict, Some(rendered.plan));
        }
    }
    (verdict, None)
}

/// The built-in checks: YAML and JSON files parse; Kubernetes objects carry apiVersion and
/// kind and no Flux API that Flux 2.8 removed; HelmReleases pin an exact chart version.
pub fn check(plan: &Plan) -> Vec<String> {
    let removed_flux = regex::Regex::new(
        r"^(source|kustomize|helm|notification|image)\.toolkit\.fluxcd\.io/v[0-9]+beta[0-9]+$",
    )
    .expect("static regex");
    let exact = regex::Regex::new(r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$")
        .expect("static regex");
    let mut problems = Vec::new();
    for (path, bytes) in &plan.files {
        let path = path.as_str();
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        if path.ends_with(".json") {
            if let Err(e) = serde_json::from_str::<Json>(text) {
                problems.push(format!("{path}: not JSON: {e}"));
            }
            continue;
        }
        // Go templates (kops, Helm) are YAML only once rendered by their own tools.
        if !(path.ends_with(".yaml") || path.ends_with(".yml")) || text.contains("{{") {
            continue;
        }
        for document in serde_yaml::Deserializer::from_str(text) {
            let value = match serde_yaml::Value::deserialize(document) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(format!("{path}: not YAML: {e}"));
                    break;
                }
            };
            let api = value
                .get("apiVersion")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let kind = value
                .get("kind")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            if api.is_empty() != kind.is_empty() {
                problems.push(format!("{path}: an object needs both apiVersion and kind"));
            }
            if removed_flux.is_match(api) {
                problems.push(format!("{path}: {kind} uses {api}, which Flux 2.8 removed"));
            }
            if kind == "HelmRelease"
                && let Some(version) = value
                    .get("spec")
                    .and_then(|s| s.get("chart"))
                    .and_then(|c| c.get("spec"))
                    .and_then(|s| s.get("version"))
            {
                let version = version.as_str().unwrap_or_default();
                if !exact.is_match(version) {
                    problems.push(format!(
                        "{path}: HelmRelease chart version `{version}` is not an exact version"
                    ));
                }
            }
        }
    }
    for broken in crate::references::check(plan) {
        problems.push(format!("{}: {}", broken.file.as_str(), broken.message));
    }
    problems
}

//! `scaffold blueprint test`: render each answer set in the blueprint's `tests/` and run
//! the built-in checks on the result. Pure: a case in, a verdict out.
use serde_json::{Map, Value as Json};

use crate::answers::{self, Sources};
use crate::blueprint::Blueprint;
use crate::generate;
use crate::plan::Plan;
use crate::render::Renderer;

pub struct Verdict {
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
        problems: Vec::new(),
        files: 0,
    };
    let parsed: Json = match crate::yaml::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            verdict.problems.push(format!("not YAML: {e}"));
            return (verdict, None);
        }
    };
    let (values, expect_error) = match &parsed {
        Json::Object(map) if map.contains_key("answers") || map.contains_key("expect_error") => (
            map.get("answers").cloned().unwrap_or(Json::Null),
            map.get("expect_error")
                .and_then(|v| v.as_str())
                .map(String::from),
        ),
        other => (other.clone(), None),
    };
    let values = match values {
        Json::Null => Default::default(),
        Json::Object(map) => map.into_iter().collect(),
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
            recorded_environments: Default::default(),
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

/// The built-in checks: the error-severity rules of `scaffold check`, run on the rendered
/// plan in memory, each finding as `FILE:LINE: [RULE] message`.
pub fn check(plan: &Plan) -> Vec<String> {
    let files = plan
        .files
        .iter()
        .map(|(path, bytes)| {
            (
                path.as_str().to_string(),
                String::from_utf8(bytes.clone()).ok(),
            )
        })
        .collect();
    let repo = crate::check::Repo::from_files(files);
    crate::check::run(&repo, &crate::check::Filter::default())
        .into_iter()
        .filter(|d| d.severity == crate::diagnostic::Severity::Error)
        .map(|d| format!("{}: [{}] {}", d.location(), d.rule, d.message))
        .collect()
}

//! `scaffold blueprint test`: render each answer set in the blueprint's `tests/` and run
//! the built-in checks on the result. Pure: a case in, a verdict out.
use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::answers::{self, Sources};
use crate::blueprint::Blueprint;
use crate::diagnostic::{Diagnostic, Severity};
use crate::error::Error;
use crate::generate;
use crate::plan::Plan;
use crate::render::Renderer;

/// `blueprint test`'s own rule ids, beside `check`'s (whose error findings a case must not
/// have) and lint's `blueprint.render`.
pub mod rule {
    /// The case file is not YAML, or its answers are not a mapping.
    pub const CASE: &str = "blueprint.test-case";
    /// The case expects an error (`expect_error`) that did not happen.
    pub const EXPECT_ERROR: &str = "blueprint.test-expect-error";
    /// The rendering could not be written as `new` writes it.
    pub const WRITE: &str = "blueprint.test-write";
}

pub struct Verdict {
    pub problems: Vec<Diagnostic>,
    pub files: usize,
}

impl Verdict {
    /// A problem with case `name` as a whole, reported at its file.
    pub fn add(&mut self, rule: &'static str, name: &str, message: impl Into<String>) {
        let file = format!("tests/{name}");
        let problem = Diagnostic::new(rule, Severity::Error, file, (0, 0), message);
        self.problems.push(problem);
    }

    /// A rendering that failed: at the blueprint file and place it names, if it names one.
    fn failed(&mut self, name: &str, error: &Error) {
        match error {
            Error::Located(at) => self.problems.push(Diagnostic::new(
                crate::lint::rule::RENDER,
                Severity::Error,
                at.file.clone(),
                (at.line, at.column),
                at.message.clone(),
            )),
            other => self.add(crate::lint::rule::RENDER, name, other.to_string()),
        }
    }
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
            verdict.add(rule::CASE, name, format!("not YAML: {e}"));
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
            verdict.add(rule::CASE, name, "answers must be a mapping");
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
        (Ok(_), Some(expected)) => verdict.add(
            rule::EXPECT_ERROR,
            name,
            format!("rendered, but an error containing `{expected}` was expected"),
        ),
        (Err(e), Some(expected)) if e.to_string().contains(&expected) => {}
        (Err(e), _) => verdict.failed(name, &e),
        (Ok(rendered), None) => {
            verdict.files = rendered.plan.files.len();
            verdict.problems = check(&rendered.plan, blueprint.catalog.crd_providers());
            return (verdict, Some(rendered.plan));
        }
    }
    (verdict, None)
}

/// The built-in checks: the error-severity rules of `scaffold check`, run on the rendered
/// plan in memory, knowing the CRDs the blueprint's catalog says its charts install.
pub fn check(plan: &Plan, crd_providers: BTreeMap<String, Vec<String>>) -> Vec<Diagnostic> {
    let repo = crate::check::Repo::from_plan(plan).with_crd_providers(crd_providers);
    crate::check::run(&repo, &crate::check::Filter::default())
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

//! `scaffold blueprint test`: render each answer set in the blueprint's `tests/` and run
//! the built-in checks on the result. Pure: a case in, a verdict out.

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
    /// The case expects a finding (`expect_findings`) that did not appear.
    pub const EXPECT_FINDING: &str = "blueprint.test-expect-finding";
}

pub struct Verdict {
    pub problems: Vec<Diagnostic>,
    pub files: usize,
    /// The error a case that expects one was refused with.
    pub refused: Option<String>,
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
        let located = |at: &crate::error::Located| {
            Diagnostic::new(
                crate::lint::rule::RENDER,
                Severity::Error,
                at.file.clone(),
                (at.line, at.column),
                at.message.clone(),
            )
        };
        match error {
            Error::Located(at) => self.problems.push(located(at)),
            Error::LocatedMany(places) => self.problems.extend(places.iter().map(located)),
            other => self.add(crate::lint::rule::RENDER, name, other.to_string()),
        }
    }
}

/// A finding a case expects (`RULE@PATH` in `expect_findings`): check's error `rule` in
/// the rendered file `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExpectedFinding {
    rule: String,
    path: String,
}

impl ExpectedFinding {
    fn parse(text: &str) -> Option<ExpectedFinding> {
        let (rule, path) = text.split_once('@')?;
        (!rule.is_empty() && !path.is_empty()).then(|| ExpectedFinding {
            rule: rule.to_string(),
            path: path.to_string(),
        })
    }

    fn matches(&self, finding: &Diagnostic) -> bool {
        finding.rule == self.rule && finding.file == self.path
    }
}

/// The case's `expect_findings`, or why they cannot be read.
fn expected_findings(case: &Json) -> Result<Vec<ExpectedFinding>, String> {
    let Some(list) = case.get("expect_findings") else {
        return Ok(Vec::new());
    };
    let Some(items) = list.as_array() else {
        return Err("expect_findings must be a list of RULE@PATH".into());
    };
    items
        .iter()
        .map(|item| {
            item.as_str().and_then(ExpectedFinding::parse).ok_or_else(|| {
                format!("expect_findings: {item} is not RULE@PATH (e.g. order.crd@infrastructure/addons/x.yaml)")
            })
        })
        .collect()
}

/// Takes the expected findings out of `problems`; an expectation nothing matched is a
/// problem of its own.
fn settle_expected(verdict: &mut Verdict, name: &str, expected: &[ExpectedFinding]) {
    let mut unmet = Vec::new();
    for expectation in expected {
        let before = verdict.problems.len();
        verdict.problems.retain(|p| !expectation.matches(p));
        if verdict.problems.len() == before {
            unmet.push(expectation);
        }
    }
    for expectation in unmet {
        verdict.add(
            rule::EXPECT_FINDING,
            name,
            format!(
                "expected {} in {}, and check found no such error there",
                expectation.rule, expectation.path
            ),
        );
    }
}

/// The error a case must be refused with: its text contains `text`, and with a `key`, it
/// is about that answer (`expect_error: TEXT` or `expect_error: {key: KEY, text: TEXT}`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ExpectedError {
    key: Option<String>,
    text: String,
}

impl ExpectedError {
    fn of(value: &Json) -> Result<Self, String> {
        let text = |v: Option<&Json>| v.and_then(Json::as_str).map(String::from);
        match value {
            Json::String(expected) => Ok(ExpectedError {
                key: None,
                text: expected.clone(),
            }),
            Json::Object(map) if map.keys().all(|k| k == "key" || k == "text") => {
                Ok(ExpectedError {
                    key: Some(
                        text(map.get("key")).ok_or("expect_error: `key` must name an answer")?,
                    ),
                    text: text(map.get("text")).unwrap_or_default(),
                })
            }
            _ => Err("expect_error must be a text, or {key: ANSWER, text: TEXT}".into()),
        }
    }

    fn matches(&self, error: &Error) -> bool {
        self.key
            .as_deref()
            .is_none_or(|key| error.answer_key() == Some(key))
            && error.to_string().contains(&self.text)
    }
}

impl std::fmt::Display for ExpectedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.key {
            Some(key) => write!(f, "an error on `{key}` containing `{}`", self.text),
            None => write!(f, "an error containing `{}`", self.text),
        }
    }
}

/// A case file is either the answers themselves, or `answers:` plus `expect_error:` (a
/// text the error must contain) for a case that must be refused, and/or
/// `expect_findings:` (check errors the rendering must have, as `RULE@PATH`).
pub fn run_case(
    blueprint: &Blueprint,
    renderer: &Renderer,
    name: &str,
    text: &[u8],
) -> (Verdict, Option<Plan>) {
    let mut verdict = Verdict {
        problems: Vec::new(),
        files: 0,
        refused: None,
    };
    let parsed: Json = match crate::yaml::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            verdict.add(rule::CASE, name, format!("not YAML: {e}"));
            return (verdict, None);
        }
    };
    let expect_findings = match expected_findings(&parsed) {
        Ok(list) => list,
        Err(message) => {
            verdict.add(rule::CASE, name, message);
            return (verdict, None);
        }
    };
    let (values, expect_error) = match &parsed {
        Json::Object(map)
            if map.contains_key("answers")
                || map.contains_key("expect_error")
                || map.contains_key("expect_findings") =>
        {
            (
                map.get("answers").cloned().unwrap_or(Json::Null),
                match map.get("expect_error").map(ExpectedError::of).transpose() {
                    Ok(expected) => expected,
                    Err(message) => {
                        verdict.add(rule::CASE, name, message);
                        return (verdict, None);
                    }
                },
            )
        }
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
            format!("rendered, but {expected} was expected"),
        ),
        (Err(e), Some(expected)) if expected.matches(&e) => verdict.refused = Some(e.to_string()),
        (Err(e), Some(expected)) if expected.key.is_some() => verdict.add(
            rule::EXPECT_ERROR,
            name,
            format!("refused with `{e}`, but {expected} was expected"),
        ),
        (Err(e), _) => verdict.failed(name, &e),
        (Ok(rendered), None) => {
            verdict.files = rendered.plan.files.len();
            verdict.problems = check(&rendered.plan, blueprint.catalog.facts());
            settle_expected(&mut verdict, name, &expect_findings);
            return (verdict, Some(rendered.plan));
        }
    }
    (verdict, None)
}

/// The built-in checks: the error-severity rules of `scaffold check`, run on the rendered
/// plan in memory, knowing the CRDs the blueprint's catalog says its charts install.
pub fn check(plan: &Plan, catalog: crate::catalog::CatalogFacts) -> Vec<Diagnostic> {
    let repo = crate::check::Repo::from_plan(plan).with_catalog(catalog);
    crate::check::run(&repo, &crate::check::Filter::default())
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

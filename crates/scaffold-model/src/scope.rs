//! Which names each of a manifest's templates may read, checked when a blueprint loads:
//! a question reads only the questions asked before it (and the built-ins of defaults),
//! checks, layers and next steps read any answer. A name outside its scope would read as
//! undefined, and Tera treats undefined as false in `if` and as null in filters, so it is
//! an error here, with a "did you mean". Pure.
use crate::error::Located;
use crate::manifest::{Delimiters, Manifest, Question};
use crate::render;
use crate::suggest::did_you_mean;
use crate::yaml::Places;

/// Built-ins a question's default and conditions may read besides earlier answers.
pub const QUESTION_BUILTINS: &[&str] = &["target_dir_name", "default_addons"];

/// Every manifest template that reads a name out of its scope or does not parse, located in
/// `text` (the manifest of the layer being resolved, named `file`).
pub fn manifest_findings(manifest: &Manifest, text: &str, file: &str) -> Vec<Located> {
    let delimiters = manifest.delimiters.clone().unwrap_or_default();
    let Ok(mut scanner) = render::Scanner::new(&delimiters) else {
        return Vec::new(); // bad delimiters are reported when the renderer is built
    };
    let keys: Vec<&str> = manifest.questions.iter().map(|q| q.key.as_str()).collect();
    let order = keys.join(", ");
    let mut found = Vec::new();
    // Parsed only when something is reported: the check costs less than the parse.
    let parsed = std::cell::OnceCell::new();
    let places = || parsed.get_or_init(|| Places::of(text));
    for (index, question) in manifest.questions.iter().enumerate() {
        let earlier = &keys[..index];
        let allowed: Vec<&str> = earlier.iter().chain(QUESTION_BUILTINS).copied().collect();
        for (field, source) in question_templates(question, &delimiters) {
            // Located only when reported: searching the text costs more than the check.
            let at = || question_place(places(), &question.key, field);
            let message = |m: String| format!("question `{}`: `{field}` {m}", question.key);
            match scanner.variables(&source) {
                Err(e) => found.push(Located::new(
                    file,
                    at(),
                    message(format!("does not parse: {}", e.message)),
                )),
                Ok(names) => {
                    for name in names.iter().filter(|n| !allowed.contains(&n.as_str())) {
                        found.push(Located::new(
                            file,
                            at(),
                            message(out_of_order(name, &question.key, &keys, &allowed, &order)),
                        ));
                    }
                }
            }
        }
        for (field, name) in question_references(question) {
            if !earlier.contains(&name) {
                let at = question_place(places(), &question.key, field);
                found.push(Located::new(
                    file,
                    at,
                    format!(
                        "question `{}`: `{field}` {}",
                        question.key,
                        out_of_order(name, &question.key, &keys, earlier, &order)
                    ),
                ));
            }
        }
    }
    let all: Vec<&str> = keys.iter().chain(QUESTION_BUILTINS).copied().collect();
    let mut any_answer = |what: String, at: &dyn Fn() -> (usize, usize), source: &str| match scanner
        .variables(source)
    {
        Err(e) => found.push(Located::new(
            file,
            at(),
            format!("{what} does not parse: {}", e.message),
        )),
        Ok(names) => {
            for name in names.iter().filter(|n| !all.contains(&n.as_str())) {
                found.push(Located::new(
                    file,
                    at(),
                    format!(
                        "{what} reads `{name}`, which is not a question{}",
                        did_you_mean(name, all.iter().copied())
                    ),
                ));
            }
        }
    };
    for check in &manifest.checks {
        let at = || {
            places()
                .item_field("checks", "key", &check.key, "expr")
                .unwrap_or((1, 1))
        };
        any_answer(
            format!("check on `{}`: `expr`", check.key),
            &at,
            &condition(&delimiters, &check.expr),
        );
        any_answer(
            format!("check on `{}`: `error`", check.key),
            &at,
            &check.error,
        );
    }
    for (layer, dir) in &manifest.layers {
        any_answer(
            format!("layer `{layer}`"),
            &|| places().section_key("layers", layer),
            dir,
        );
    }
    if let Some(next) = &manifest.next_steps {
        any_answer("next_steps".into(), &|| places().at(&["next_steps"]), next);
    }
    found
}

fn out_of_order(name: &str, key: &str, keys: &[&str], allowed: &[&str], order: &str) -> String {
    if keys.contains(&name) {
        format!(
            "reads `{name}`, which is asked after `{key}` (order: {order}); move `{key}` below it, e.g. with `after: {name}`"
        )
    } else {
        // Suggest among every question: the closest may be asked later.
        format!(
            "reads `{name}`, which is not a question asked before `{key}`{}",
            did_you_mean(name, allowed.iter().chain(keys).copied())
        )
    }
}

/// The question's own templates, as (field, source); `when` as the condition it is.
fn question_templates(question: &Question, delimiters: &Delimiters) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(serde_json::Value::String(default)) = &question.default {
        out.push(("default", default.clone()));
    }
    if let Some(when) = &question.when {
        out.push(("when", condition(delimiters, when)));
    }
    for (field, value) in [
        ("regex", &question.regex),
        ("error", &question.error),
        ("item_regex", &question.item_regex),
        ("item_error", &question.item_error),
        ("value_regex", &question.value_regex),
        ("value_error", &question.value_error),
    ] {
        if let Some(source) = value {
            out.push((field, source.clone()));
        }
    }
    out
}

/// Other questions a question names outright (`not_overlapping` lists networks, not keys).
fn question_references(question: &Question) -> Vec<(&'static str, &str)> {
    question
        .keys_from
        .iter()
        .map(|list| ("keys_from", list.as_str()))
        .collect()
}

/// A Tera expression as the condition the renderer evaluates.
fn condition(delimiters: &Delimiters, expr: &str) -> String {
    let [open, close] = &delimiters.block;
    format!("{open} if {expr} {close}true{open} endif {close}")
}

/// Where to report a question's field: in its own item, or under `defaults:` when this
/// layer only changes the default.
fn question_place(places: &Places, key: &str, field: &str) -> (usize, usize) {
    match places.item_field("questions", "key", key, field) {
        Some(at) => at,
        None if field == "default" => places.section_key("defaults", key),
        None => (1, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Manifest {
        crate::yaml::from_str(text).expect("manifest")
    }

    #[test]
    fn a_question_reads_only_earlier_questions() {
        let text = "name: x\nversion: 1.0.0\nquestions:\n  - key: a\n    prompt: A\n    type: bool\n    when: b\n  - key: b\n    prompt: B\n    type: bool\n";
        let found = manifest_findings(&manifest(text), text, "blueprint.yaml");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].column), (7, 5));
        assert!(
            found[0].message.contains("asked after `a` (order: a, b)"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_misspelt_name_gets_a_suggestion() {
        let text = "name: x\nversion: 1.0.0\nquestions:\n  - key: region\n    prompt: R\n    type: string\n  - key: zone\n    prompt: Z\n    type: string\n    default: \"[[ regoin ]]a\"\n";
        let found = manifest_findings(&manifest(text), text, "blueprint.yaml");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].column), (10, 5));
        assert!(
            found[0].message.ends_with("(did you mean `region`?)"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn checks_read_any_answer_and_are_checked_too() {
        let text = "name: x\nversion: 1.0.0\nquestions:\n  - key: a\n    prompt: A\n    type: int\nchecks:\n  - key: a\n    expr: \"aa > 1\"\n    error: too small\n";
        let found = manifest_findings(&manifest(text), text, "blueprint.yaml");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].line, found[0].column), (9, 5));
        assert!(found[0].message.contains("(did you mean `a`?)"));
    }
}

//! One Tera engine per run. Delimiters are moved to `[[ ]]`, `[% %]` and `[# #]` so Go
//! templates, Helm, GitHub Actions and Flux/Terraform `${VAR}` pass through untouched.
//! Undefined variables are errors. Pure: strings in, strings out.
use serde_json::Value as Json;
use tera::{Context, Delimiters, Kwargs, State, Tera, TeraResult, Value};

use crate::error::{Error, Result};

pub struct Renderer {
    tera: Tera,
}

impl Renderer {
    /// `templates`: (name, source) pairs, addressable by name from `include`.
    pub fn new<'a>(templates: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut tera = Tera::default();
        tera.set_delimiters(Delimiters {
            block_start: "[%".into(),
            block_end: "%]".into(),
            variable_start: "[[".into(),
            variable_end: "]]".into(),
            comment_start: "[#".into(),
            comment_end: "#]".into(),
        })
        .map_err(|e| Error::Blueprint(e.to_string()))?;
        tera.autoescape_on(Vec::<&'static str>::new());
        tera.register_filter("to_yaml", to_yaml);
        tera.register_filter("to_json", to_json);
        tera.register_filter("to_hcl", to_hcl);
        tera.register_filter("upper_snake", |s: &str, _: Kwargs, _: &State| {
            crate::catalog::upper_snake(s)
        });
        tera.add_raw_templates(templates)
            .map_err(|e| Error::Blueprint(format!("does not parse: {}", flatten(&e))))?;
        Ok(Renderer { tera })
    }

    pub fn render(&self, name: &str, context: &Json) -> Result<String> {
        self.tera
            .render(name, &to_context(context))
            .map_err(|e| Error::Blueprint(format!("`{name}` does not render: {}", flatten(&e))))
    }

    /// A one-off template (a default, a condition, a path), named for messages.
    pub fn render_str(&self, what: &str, source: &str, context: &Json) -> Result<String> {
        if !source.contains("[[") && !source.contains("[%") {
            return Ok(source.to_string());
        }
        self.tera
            .render_str(source, &to_context(context), false)
            .map_err(|e| {
                Error::Blueprint(format!(
                    "{what} `{source}` does not render: {}",
                    flatten(&e)
                ))
            })
    }

    /// Evaluates a Tera expression as a condition.
    pub fn truth(&self, what: &str, expr: &str, context: &Json) -> Result<bool> {
        let out = self.render_str(what, &format!("[% if {expr} %]true[% endif %]"), context)?;
        Ok(out == "true")
    }
}

fn to_context(json: &Json) -> Context {
    let mut context = Context::new();
    if let Json::Object(map) = json {
        for (key, value) in map {
            context.insert(key.clone(), value);
        }
    }
    context
}

/// Tera's reports span lines; one line reads better in an error message.
fn flatten(err: &tera::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn json_of(value: &Value) -> TeraResult<Json> {
    serde_json::to_value(value).map_err(|e| tera::Error::message(e.to_string()))
}

fn to_yaml(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    let text = serde_yaml::to_string(&json_of(&value)?)
        .map_err(|e| tera::Error::message(e.to_string()))?;
    Ok(text.trim_end().to_string())
}

fn to_json(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    serde_json::to_string(&json_of(&value)?).map_err(|e| tera::Error::message(e.to_string()))
}

fn to_hcl(value: Value, _: Kwargs, _: &State) -> TeraResult<String> {
    let mut out = String::new();
    write_hcl(&json_of(&value)?, 0, &mut out);
    Ok(out)
}

/// A Terraform literal. Strings keep `${...}` as interpolation; other `"` and `\` are escaped.
pub fn write_hcl(value: &Json, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth + 1);
    let close = "  ".repeat(depth);
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(&b.to_string()),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => out.push_str(&hcl_string(s)),
        Json::Array(items) if items.is_empty() => out.push_str("[]"),
        Json::Array(items) => {
            out.push_str("[\n");
            for item in items {
                out.push_str(&pad);
                write_hcl(item, depth + 1, out);
                out.push_str(",\n");
            }
            out.push_str(&close);
            out.push(']');
        }
        Json::Object(map) if map.is_empty() => out.push_str("{}"),
        Json::Object(map) => {
            out.push_str("{\n");
            for (key, item) in map {
                out.push_str(&pad);
                if is_identifier(key) {
                    out.push_str(key);
                } else {
                    out.push_str(&hcl_string(key));
                }
                out.push_str(" = ");
                write_hcl(item, depth + 1, out);
                out.push('\n');
            }
            out.push_str(&close);
            out.push('}');
        }
    }
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn hcl_string(s: &str) -> String {
    let mut out = String::from("\"");
    let mut rest = s;
    while !rest.is_empty() {
        // Copy an interpolation `${ ... }` verbatim: its inside is an expression.
        if let Some(body) = rest.strip_prefix("${")
            && let Some(end) = body.find('}')
        {
            out.push_str("${");
            out.push_str(&body[..=end]);
            rest = &body[end + 1..];
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '%' if rest.starts_with("%{") => out.push_str("%%"),
            _ => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hcl_keeps_interpolation_and_quotes_keys() {
        let mut out = String::new();
        write_hcl(
            &json!({"region": "${local.region}", "a.b/c": ["x\"y", 1, true]}),
            0,
            &mut out,
        );
        assert_eq!(
            out,
            "{\n  region = \"${local.region}\"\n  \"a.b/c\" = [\n    \"x\\\"y\",\n    1,\n    true,\n  ]\n}"
        );
    }

    #[test]
    fn delimiters_leave_go_and_flux_syntax_alone() {
        let r = Renderer::new([("t", "{{ .x }} ${VAR} ${{ y }} [[ name ]]")]).expect("parses");
        assert_eq!(
            r.render("t", &json!({"name": "n"})).expect("renders"),
            "{{ .x }} ${VAR} ${{ y }} n"
        );
    }

    #[test]
    fn undefined_variables_are_errors() {
        let r = Renderer::new([("t", "[[ nope ]]")]).expect("parses");
        let err = r.render("t", &json!({})).expect_err("undefined");
        assert!(err.to_string().contains("nope"), "{err}");
    }
}

//! Evaluating pipelines: operands (fields, variables, literals), the functions kops templates
//! use (text/template built-ins and the sprig subset), and printing values.
use serde_json::Value as Json;

use super::value::{RenderError, UNKNOWN, V, Vars};

pub(super) fn truthy(v: &V) -> bool {
    match v {
        V::Unknown => true,
        V::J(j) => match j {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Number(n) => n.as_f64() != Some(0.0),
            Json::String(s) => !s.is_empty(),
            Json::Array(a) => !a.is_empty(),
            Json::Object(m) => !m.is_empty(),
        },
    }
}

pub(super) fn print(v: &V) -> String {
    match v {
        V::Unknown => "UNKNOWN".into(),
        V::J(Json::String(s)) => s.clone(),
        V::J(Json::Null) => "<no value>".into(),
        V::J(Json::Array(a)) => format!(
            "[{}]",
            a.iter()
                .map(|i| print(&V::J(i.clone())))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        V::J(other) => other.to_string(),
    }
}

/// Splits a pipeline into words, keeping quoted strings and parenthesized groups whole.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    let mut quote = false;
    for c in text.chars() {
        match c {
            '"' => {
                quote = !quote;
                current.push(c);
            }
            '(' if !quote => {
                depth += 1;
                current.push(c);
            }
            ')' if !quote => {
                depth -= 1;
                current.push(c);
            }
            c if c.is_whitespace() && !quote && depth == 0 => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

pub(super) fn eval(pipe: &str, dot: &V, vars: &Vars, line: usize) -> Result<V, RenderError> {
    let mut result: Option<V> = None;
    for command in split_pipes(pipe) {
        let mut args: Vec<String> = words(&command);
        if args.is_empty() {
            continue;
        }
        let head = args.remove(0);
        let mut values = Vec::new();
        for a in &args {
            values.push(operand(a, dot, vars, line)?);
        }
        if let Some(previous) = result.take() {
            values.push(previous);
        }
        result = Some(if is_function(&head) {
            call(&head, values, line)?
        } else {
            operand(&head, dot, vars, line)?
        });
    }
    Ok(result.unwrap_or(V::J(Json::Null)))
}

fn split_pipes(pipe: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let (mut depth, mut quote) = (0, false);
    for c in pipe.chars() {
        match c {
            '"' => quote = !quote,
            '(' if !quote => depth += 1,
            ')' if !quote => depth -= 1,
            '|' if !quote && depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out
}

fn is_function(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !matches!(word, "true" | "false" | "nil")
}

fn operand(word: &str, dot: &V, vars: &Vars, line: usize) -> Result<V, RenderError> {
    if let Some(inner) = word.strip_prefix('(').and_then(|w| w.strip_suffix(')')) {
        return eval(inner, dot, vars, line);
    }
    if let Some(s) = word.strip_prefix('"').and_then(|w| w.strip_suffix('"')) {
        return Ok(V::J(Json::String(
            s.replace("\\n", "\n").replace("\\\"", "\""),
        )));
    }
    match word {
        "true" => return Ok(V::J(Json::Bool(true))),
        "false" => return Ok(V::J(Json::Bool(false))),
        "nil" => return Ok(V::J(Json::Null)),
        _ => {}
    }
    if let Ok(n) = word.parse::<i64>() {
        return Ok(V::J(Json::from(n)));
    }
    let (start, fields) = if let Some(rest) = word.strip_prefix('$') {
        let (name, fields) = rest.split_once('.').map_or((rest, ""), |(n, f)| (n, f));
        let name = format!("${name}");
        let value: V = vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| RenderError {
                line,
                message: format!("undefined variable {name}"),
            })?;
        (value, fields)
    } else if let Some(fields) = word.strip_prefix('.') {
        (dot.clone(), fields)
    } else {
        return Ok(V::Unknown);
    };
    fields
        .split('.')
        .filter(|f| !f.is_empty())
        .try_fold(start, |v, field| field_of(&v, field, line))
}

/// A value from the data: the marker of a Terraform output is unknown.
fn wrap(value: &Json) -> V {
    match value {
        Json::String(s) if s == UNKNOWN => V::Unknown,
        other => V::J(other.clone()),
    }
}

fn field_of(v: &V, field: &str, line: usize) -> Result<V, RenderError> {
    match v {
        V::Unknown => Ok(V::Unknown),
        V::J(Json::Object(m)) => m.get(field).map(wrap).ok_or_else(|| RenderError {
            line,
            message: format!("map has no entry for key \"{field}\""),
        }),
        V::J(other) => Err(RenderError {
            line,
            message: format!("can't evaluate field {field} in {other}"),
        }),
    }
}

fn text(v: &V) -> String {
    print(v)
}

/// The functions this engine implements; any other is refused, not approximated.
const FUNCTIONS: &[&str] = &[
    "index",
    "list",
    "not",
    "and",
    "or",
    "eq",
    "ne",
    "fail",
    "trimPrefix",
    "trimSuffix",
    "lower",
    "upper",
    "quote",
    "default",
    "printf",
    "has",
    "toString",
    "toJson",
];

fn call(name: &str, args: Vec<V>, line: usize) -> Result<V, RenderError> {
    if !FUNCTIONS.contains(&name) {
        return Err(RenderError {
            line,
            message: format!(
                "function {name} is not one check's template engine implements ({}): the template is not checked",
                FUNCTIONS.join(", ")
            ),
        });
    }
    let any_unknown = args.iter().any(|a| matches!(a, V::Unknown));
    let s = |i: usize| args.get(i).map(text).unwrap_or_default();
    Ok(match name {
        "index" => {
            let mut it = args.into_iter();
            let mut value = it.next().unwrap_or(V::Unknown);
            for key in it {
                value = match (&value, key) {
                    (V::Unknown, _) | (_, V::Unknown) => V::Unknown,
                    (V::J(Json::Array(a)), V::J(k)) => k
                        .as_u64()
                        .and_then(|i| a.get(i as usize))
                        .map_or(V::J(Json::Null), wrap),
                    // Go's index returns the zero value for a missing map key (no missingkey error).
                    (V::J(Json::Object(m)), V::J(Json::String(k))) => {
                        m.get(&k).map_or(V::J(Json::Null), wrap)
                    }
                    (V::J(other), V::J(k)) => {
                        return Err(RenderError {
                            line,
                            message: format!("can't index {other} with {k}"),
                        });
                    }
                };
            }
            value
        }
        "list" => V::J(Json::Array(
            args.into_iter()
                .map(|a| match a {
                    V::J(j) => j,
                    V::Unknown => Json::String("UNKNOWN".into()),
                })
                .collect(),
        )),
        "not" => V::J(Json::Bool(!args.first().is_some_and(truthy))),
        "and" => args
            .into_iter()
            .find(|a| !truthy(a))
            .unwrap_or(V::J(Json::Bool(true))),
        "or" => args
            .into_iter()
            .find(truthy)
            .unwrap_or(V::J(Json::Bool(false))),
        // sprig's `has NEEDLE LIST`. A list not known yet (a Terraform output) holds
        // nothing: what a template guards with `not (has ...)` is then rendered and checked.
        "has" => V::J(Json::Bool(match args.get(1) {
            Some(V::J(Json::Array(items))) => items.iter().any(|item| print(&wrap(item)) == s(0)),
            _ => false,
        })),
        _ if any_unknown && name != "fail" && name != "default" => V::Unknown,
        "eq" => V::J(Json::Bool(s(0) == s(1))),
        "ne" => V::J(Json::Bool(s(0) != s(1))),
        "fail" => {
            return Err(RenderError {
                line,
                message: format!("fail: {}", s(0)),
            });
        }
        "trimPrefix" => V::J(Json::String(
            s(1).strip_prefix(&s(0)).map_or(s(1), str::to_string),
        )),
        "trimSuffix" => V::J(Json::String(
            s(1).strip_suffix(&s(0)).map_or(s(1), str::to_string),
        )),
        "lower" => V::J(Json::String(s(0).to_lowercase())),
        "upper" => V::J(Json::String(s(0).to_uppercase())),
        "quote" => V::J(Json::String(format!("\"{}\"", s(0)))),
        "toString" => V::J(Json::String(s(0))),
        // sprig's toJson: the value as compact JSON text.
        "toJson" => V::J(Json::String(match args.first() {
            Some(V::J(value)) => value.to_string(),
            _ => String::new(),
        })),
        "default" => match args.get(1) {
            Some(v) if truthy(v) => v.clone(),
            _ => args.first().cloned().unwrap_or(V::J(Json::Null)),
        },
        "printf" => {
            let mut out = String::new();
            let mut rest = args.iter().skip(1);
            let format = s(0);
            let mut chars = format.chars();
            while let Some(c) = chars.next() {
                if c == '%' {
                    match chars.next() {
                        Some('%') => out.push('%'),
                        Some(_) => out.push_str(&rest.next().map(text).unwrap_or_default()),
                        None => out.push('%'),
                    }
                } else {
                    out.push(c);
                }
            }
            V::J(Json::String(out))
        }
        _ => unreachable_function(name, line)?,
    })
}

fn unreachable_function(name: &str, line: usize) -> Result<V, RenderError> {
    Err(RenderError {
        line,
        message: format!("function {name} is listed but not implemented"),
    })
}

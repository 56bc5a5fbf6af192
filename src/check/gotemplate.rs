//! The subset of Go `text/template` (with the sprig functions kops templates use) needed to
//! render a kops cluster template as `kops toolbox template` does, with `missingkey=error`.
//! Values not known offline (Terraform outputs) are [`V::Unknown`]: any field of them is
//! unknown too, they range zero times and print as `UNKNOWN`.
use serde_json::Value as Json;

#[derive(Debug, Clone)]
pub enum V {
    J(Json),
    Unknown,
}

/// Why a template does not render, at the line of the action.
#[derive(Debug, Clone)]
pub struct RenderError {
    pub line: usize,
    pub message: String,
}

#[derive(Debug)]
enum Node {
    Text(String),
    Print(String, usize),
    Range {
        vars: Vec<String>,
        pipe: String,
        body: Vec<Node>,
        other: Vec<Node>,
        line: usize,
    },
    If {
        pipe: String,
        body: Vec<Node>,
        other: Vec<Node>,
        line: usize,
    },
}

/// Renders `template` with `data` as the root (`.` and `$`).
pub fn render(template: &str, data: &Json) -> Result<String, RenderError> {
    let tokens = lex(template)?;
    let mut pos = 0;
    let (nodes, end) = parse(&tokens, &mut pos)?;
    if let Some((word, line)) = end {
        return Err(RenderError {
            line,
            message: format!("unexpected {{{{{word}}}}}"),
        });
    }
    let mut out = String::new();
    let root = V::J(data.clone());
    let mut vars = vec![("$".to_string(), root.clone())];
    exec(&nodes, &root, &mut vars, &mut out)?;
    Ok(out)
}

enum Token {
    Text(String),
    Action(String, usize),
}

fn lex(text: &str) -> Result<Vec<Token>, RenderError> {
    let mut tokens = Vec::new();
    let mut rest = text;
    let mut line = 1;
    while let Some(start) = rest.find("{{") {
        let mut before = rest[..start].to_string();
        line += before.matches('\n').count();
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(RenderError {
                line,
                message: "unclosed action".into(),
            });
        };
        let mut inner = &after[..end];
        if let Some(stripped) = inner.strip_prefix('-') {
            inner = stripped;
            before = before.trim_end().to_string();
        }
        let mut trim_next = false;
        if let Some(stripped) = inner.strip_suffix('-') {
            inner = stripped;
            trim_next = true;
        }
        tokens.push(Token::Text(before));
        let inner_trimmed = inner.trim();
        if !inner_trimmed.starts_with("/*") {
            tokens.push(Token::Action(inner_trimmed.to_string(), line));
        }
        line += inner.matches('\n').count();
        rest = &after[end + 2..];
        if trim_next {
            let trimmed = rest.trim_start();
            line += rest[..rest.len() - trimmed.len()].matches('\n').count();
            rest = trimmed;
        }
    }
    tokens.push(Token::Text(rest.to_string()));
    Ok(tokens)
}

type End = Option<(String, usize)>;

/// Parses until `{{end}}` or `{{else}}` (returned as the end word).
fn parse(tokens: &[Token], pos: &mut usize) -> Result<(Vec<Node>, End), RenderError> {
    let mut nodes = Vec::new();
    while *pos < tokens.len() {
        let token = &tokens[*pos];
        *pos += 1;
        match token {
            Token::Text(t) => nodes.push(Node::Text(t.clone())),
            Token::Action(a, line) => {
                let (word, rest) = a
                    .split_once(char::is_whitespace)
                    .unwrap_or((a.as_str(), ""));
                match word {
                    "end" | "else" => return Ok((nodes, Some((word.to_string(), *line)))),
                    "range" | "if" | "with" => {
                        let (body, end) = parse(tokens, pos)?;
                        let other = match end {
                            Some((w, _)) if w == "else" => {
                                let (other, end) = parse(tokens, pos)?;
                                if end.is_none() {
                                    return Err(RenderError {
                                        line: *line,
                                        message: format!("{word} without end"),
                                    });
                                }
                                other
                            }
                            Some(_) => Vec::new(),
                            None => {
                                return Err(RenderError {
                                    line: *line,
                                    message: format!("{word} without end"),
                                });
                            }
                        };
                        let rest = rest.trim().to_string();
                        if word == "range" {
                            let (vars, pipe) = match rest.split_once(":=") {
                                Some((vars, pipe)) => (
                                    vars.split(',').map(|v| v.trim().to_string()).collect(),
                                    pipe.trim().to_string(),
                                ),
                                None => (Vec::new(), rest),
                            };
                            nodes.push(Node::Range {
                                vars,
                                pipe,
                                body,
                                other,
                                line: *line,
                            });
                        } else {
                            nodes.push(Node::If {
                                pipe: rest,
                                body,
                                other,
                                line: *line,
                            });
                        }
                    }
                    _ => nodes.push(Node::Print(a.clone(), *line)),
                }
            }
        }
    }
    Ok((nodes, None))
}

type Vars = Vec<(String, V)>;

fn exec(nodes: &[Node], dot: &V, vars: &mut Vars, out: &mut String) -> Result<(), RenderError> {
    let depth = vars.len();
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Print(action, line) => {
                if let Some((var, pipe)) = action
                    .split_once(":=")
                    .filter(|(v, _)| v.trim().starts_with('$'))
                {
                    let value = eval(pipe.trim(), dot, vars, *line)?;
                    vars.push((var.trim().to_string(), value));
                } else {
                    let value = eval(action, dot, vars, *line)?;
                    out.push_str(&print(&value));
                }
            }
            Node::If {
                pipe,
                body,
                other,
                line,
            } => {
                let value = eval(pipe, dot, vars, *line)?;
                if truthy(&value) {
                    exec(body, dot, vars, out)?;
                } else {
                    exec(other, dot, vars, out)?;
                }
            }
            Node::Range {
                vars: names,
                pipe,
                body,
                other,
                line,
            } => {
                let items: Vec<(V, V)> = match eval(pipe, dot, vars, *line)? {
                    V::J(Json::Array(a)) => a
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| (V::J(Json::from(i)), V::J(v)))
                        .collect(),
                    V::J(Json::Object(m)) => {
                        let mut entries: Vec<_> = m.into_iter().collect();
                        entries.sort_by(|a, b| a.0.cmp(&b.0));
                        entries
                            .into_iter()
                            .map(|(k, v)| (V::J(Json::String(k)), V::J(v)))
                            .collect()
                    }
                    V::J(Json::Null) | V::Unknown => Vec::new(),
                    V::J(other) => {
                        return Err(RenderError {
                            line: *line,
                            message: format!("range can't iterate over {other}"),
                        });
                    }
                };
                if items.is_empty() {
                    exec(other, dot, vars, out)?;
                }
                for (key, value) in items {
                    let mark = vars.len();
                    match names.as_slice() {
                        [v] => vars.push((v.clone(), value.clone())),
                        [k, v] => {
                            vars.push((k.clone(), key));
                            vars.push((v.clone(), value.clone()));
                        }
                        _ => {}
                    }
                    exec(body, &value, vars, out)?;
                    vars.truncate(mark);
                }
            }
        }
    }
    vars.truncate(depth);
    Ok(())
}

fn truthy(v: &V) -> bool {
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

fn print(v: &V) -> String {
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

fn eval(pipe: &str, dot: &V, vars: &Vars, line: usize) -> Result<V, RenderError> {
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
        Json::String(s) if s == crate::check::kops::UNKNOWN => V::Unknown,
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

fn call(name: &str, args: Vec<V>, line: usize) -> Result<V, RenderError> {
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
        _ => V::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_ranges_variables_and_index_and_fails_on_a_missing_key() {
        let data =
            serde_json::json!({"zones": ["a", "b"], "ids": {"a": "1", "b": "2"}, "out": null});
        let text = "{{- range $z := .zones }}\n- {{ $z }}={{ index $.ids $z }}{{ end }}\n";
        assert_eq!(render(text, &data).expect("renders"), "\n- a=1\n- b=2\n");
        let err = render("x\n{{ .missing }}", &data).expect_err("missing");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("missing"));
    }
}

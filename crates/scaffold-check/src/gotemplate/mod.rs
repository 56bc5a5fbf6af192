//! The subset of Go `text/template` (with the sprig functions kops templates use) needed to
//! render a kops cluster template as `kops toolbox template` does, with `missingkey=error`.
//! Values not known offline (Terraform outputs) are [`V::Unknown`]: any field of them is
//! unknown too, they are true and range once (unknown), and print as `UNKNOWN`.
mod eval;
mod value;

use serde_json::Value as Json;

use eval::{eval, print, truthy};
use value::Vars;
pub use value::{RenderError, UNKNOWN, V};

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
    /// `if`, or `with` (`with` also sets dot to the value in its body).
    If {
        pipe: String,
        body: Vec<Node>,
        other: Vec<Node>,
        line: usize,
        with: bool,
    },
}

/// Renders `template` with `data` as the root (`.` and `$`).
pub fn render(template: &str, data: &Json) -> Result<String, RenderError> {
    let tokens = lex(template)?;
    let mut pos = 0;
    let (nodes, end) = parse(&tokens, &mut pos)?;
    if let Some((word, _, line)) = end {
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

/// The action that ended a list of nodes: `end` or `else`, the rest of the action
/// (`if X` in `{{else if X}}`) and its line.
type End = Option<(String, String, usize)>;

/// A `range`/`if`/`with` block whose opening action has been read: its body, and its else
/// branch (an `{{else if …}}`/`{{else with …}}` chain is a nested block ending at the
/// same `{{end}}`).
fn parse_block(
    word: &str,
    rest: &str,
    line: usize,
    tokens: &[Token],
    pos: &mut usize,
) -> Result<Node, RenderError> {
    let without_end = || RenderError {
        line,
        message: format!("{word} without end"),
    };
    let (body, end) = parse(tokens, pos)?;
    let other = match end {
        Some((w, chained, else_line)) if w == "else" => {
            let chained = chained.trim();
            let (next, cond) = chained
                .split_once(char::is_whitespace)
                .unwrap_or((chained, ""));
            if chained.is_empty() {
                let (other, end) = parse(tokens, pos)?;
                match end {
                    Some((w, _, _)) if w == "end" => other,
                    Some((_, _, l)) => {
                        return Err(RenderError {
                            line: l,
                            message: format!("{word} has a second else"),
                        });
                    }
                    None => return Err(without_end()),
                }
            } else if (next == "if" || next == "with") && word != "range" {
                vec![parse_block(next, cond, else_line, tokens, pos)?]
            } else {
                return Err(RenderError {
                    line: else_line,
                    message: format!(
                        "{{{{else {chained}}}}} is not a construct check's template engine implements"
                    ),
                });
            }
        }
        Some(_) => Vec::new(),
        None => return Err(without_end()),
    };
    let rest = rest.trim().to_string();
    Ok(if word == "range" {
        let (vars, pipe) = match rest.split_once(":=") {
            Some((vars, pipe)) => (
                vars.split(',').map(|v| v.trim().to_string()).collect(),
                pipe.trim().to_string(),
            ),
            None => (Vec::new(), rest),
        };
        Node::Range {
            vars,
            pipe,
            body,
            other,
            line,
        }
    } else {
        Node::If {
            pipe: rest,
            body,
            other,
            line,
            with: word == "with",
        }
    })
}

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
                    "end" | "else" => {
                        return Ok((nodes, Some((word.to_string(), rest.to_string(), *line))));
                    }
                    "range" | "if" | "with" => {
                        nodes.push(parse_block(word, rest, *line, tokens, pos)?)
                    }
                    "define" | "template" | "block" | "break" | "continue" => {
                        return Err(RenderError {
                            line: *line,
                            message: format!(
                                "{{{{{word}}}}} is not a construct check's template engine implements: the template is not checked"
                            ),
                        });
                    }
                    _ => nodes.push(Node::Print(a.clone(), *line)),
                }
            }
        }
    }
    Ok((nodes, None))
}

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
                with,
            } => {
                let value = eval(pipe, dot, vars, *line)?;
                if truthy(&value) {
                    exec(body, if *with { &value } else { dot }, vars, out)?;
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
                    V::J(Json::Null) => Vec::new(),
                    // An unknown (Terraform) value is taken as non-empty, as `if` takes it.
                    V::Unknown => vec![(V::Unknown, V::Unknown)],
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

    #[test]
    fn with_sets_dot_and_else_if_keeps_its_condition() {
        let data = serde_json::json!({"a": {"b": "x"}, "n": 2, "empty": ""});
        assert_eq!(
            render("{{ with .a }}{{ .b }}{{ end }}", &data).expect("with"),
            "x"
        );
        assert_eq!(
            render("{{ with .empty }}no{{ else }}yes{{ end }}", &data).expect("with else"),
            "yes"
        );
        let chain = "{{ if eq .n 1 }}one{{ else if eq .n 2 }}two{{ else }}many{{ end }}";
        assert_eq!(render(chain, &data).expect("else if"), "two");
        let data = serde_json::json!({"a": {"b": "x"}, "n": 3, "empty": ""});
        assert_eq!(render(chain, &data).expect("else"), "many");
        let data = serde_json::json!({"a": {"b": "x"}, "n": 5, "empty": ""});
        assert_eq!(
            render(
                "{{ if eq .n 1 }}one{{ else if eq .n 2 }}two{{ end }}",
                &data
            )
            .expect("no branch"),
            ""
        );
    }

    #[test]
    fn unknown_functions_and_constructs_are_refused_with_their_line() {
        let data = serde_json::json!({"a": "x"});
        let err = render("ok\n{{ .a | sha256sum }}", &data).expect_err("unknown function");
        assert_eq!(err.line, 2);
        assert!(
            err.message.contains("function sha256sum"),
            "{}",
            err.message
        );
        let err = render("{{ define \"t\" }}x{{ end }}", &data).expect_err("define");
        assert!(err.message.contains("{{define}}"), "{}", err.message);
        let err =
            render("{{ range .a }}{{ else if .a }}{{ end }}", &data).expect_err("range else if");
        assert!(err.message.contains("else if"), "{}", err.message);
    }
}

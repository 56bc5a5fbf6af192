//! The subset of Go `text/template` (with the sprig functions kops templates use) needed to
//! render a kops cluster template as `kops toolbox template` does, with `missingkey=error`.
//! Values not known offline (Terraform outputs) are [`V::Unknown`]: any field of them is
//! unknown too, they are true and range once (unknown), and print as `UNKNOWN`.
mod eval;

use serde_json::Value as Json;

use eval::{eval, print, truthy};

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
}

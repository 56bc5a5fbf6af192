//! YAML for `check`, behind one module: multi-document files split at `---`, each document
//! parsed strictly (duplicate keys are errors, as in kubectl and kustomize) into JSON values,
//! with the line each document starts on so that findings can point into the file.
use serde_json::Value as Json;

/// One document of a YAML file.
#[derive(Debug, Clone)]
pub struct Doc {
    /// 1-based line of the document's first line (after its `---`).
    pub line: usize,
    /// The document's text.
    pub text: String,
    pub value: Json,
}

/// Where and why a document does not parse.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Parses every document of `text`; the first error stops the file (later documents may
/// depend on how the broken one ends).
pub fn parse(text: &str) -> Result<Vec<Doc>, ParseError> {
    let mut docs = Vec::new();
    for (line, chunk) in split(text) {
        let value: serde_yaml::Value = match serde_yaml::from_str(&chunk) {
            Ok(v) => v,
            Err(e) => {
                let message = first_line(&e.to_string());
                let (l, c) = duplicate_line(&chunk, &message).unwrap_or_else(|| {
                    e.location()
                        .map_or((1, 0), |loc| (loc.line(), loc.column()))
                });
                return Err(ParseError {
                    line: line + l - 1,
                    column: c,
                    message,
                });
            }
        };
        let value = serde_json::to_value(&value).map_err(|e| ParseError {
            line,
            column: 0,
            message: e.to_string(),
        })?;
        if !value.is_null() {
            docs.push(Doc {
                line,
                text: chunk,
                value,
            });
        }
    }
    Ok(docs)
}

/// Parses a single-document YAML text (a values file) into JSON.
pub fn parse_one(text: &str) -> Result<Json, ParseError> {
    Ok(parse(text)?
        .into_iter()
        .next()
        .map_or(Json::Null, |d| d.value))
}

/// serde_yaml places a duplicate key at its mapping; point at the second occurrence instead.
fn duplicate_line(chunk: &str, message: &str) -> Option<(usize, usize)> {
    let key = message
        .strip_prefix("duplicate entry with key \"")?
        .strip_suffix('"')?;
    chunk
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            (t.starts_with(&format!("{key}:")) || t.starts_with(&format!("\"{key}\":")))
                .then_some((i + 1, l.len() - t.len() + 1))
        })
        .nth(1)
}

fn first_line(message: &str) -> String {
    let message = message.lines().next().unwrap_or_default();
    // serde_yaml appends " at line L column C"; the location is reported separately.
    match message.find(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// Splits at document markers (`---` at the start of a line), keeping each chunk's first line.
fn split(text: &str) -> Vec<(usize, String)> {
    let mut chunks = Vec::new();
    let mut start = 1;
    let mut current = String::new();
    for (index, line) in text.lines().enumerate() {
        let marker = line == "---" || line.starts_with("--- ") || line == "...";
        if marker {
            chunks.push((start, std::mem::take(&mut current)));
            start = index + 2;
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    chunks.push((start, current));
    chunks
}

/// The 1-based line in `doc` of the first line containing `needle` (after `after`, if found),
/// else the document's first line: used to point at a field inside an object.
pub fn line_of(doc: &Doc, needle: &str) -> usize {
    doc.text
        .lines()
        .position(|l| l.contains(needle))
        .map_or(doc.line, |i| doc.line + i)
}

/// The line of the value at a path of keys: each key is looked for after the previous one.
pub fn line_of_path(doc: &Doc, path: &[String]) -> usize {
    let lines: Vec<&str> = doc.text.lines().collect();
    let mut at = 0;
    for key in path.iter().filter(|k| k.parse::<usize>().is_err()) {
        let needle = format!("{key}:");
        let quoted = format!("\"{key}\":");
        if let Some(i) = lines[at..].iter().position(|l| {
            let t = l.trim_start().trim_start_matches("- ");
            t.starts_with(&needle) || t.starts_with(&quoted)
        }) {
            at += i;
        }
    }
    doc.line + at
}

/// A string at a `/`-separated path of keys (array indices as numbers).
pub fn str_at<'a>(value: &'a Json, path: &str) -> Option<&'a str> {
    at(value, path).and_then(Json::as_str)
}

pub fn at<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('/')
        .filter(|k| !k.is_empty())
        .try_fold(value, |v, key| match v {
            Json::Object(map) => map.get(key),
            Json::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_keep_their_lines_and_duplicates_fail() {
        let docs = parse("a: 1\n---\n# c\nb: 2\n").expect("parses");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].line, 3);
        let err = parse("x: 1\n---\na: 1\na: 2\n").expect_err("duplicate");
        assert!(err.message.contains("duplicate"), "{}", err.message);
        assert_eq!(err.line, 4);
    }
}

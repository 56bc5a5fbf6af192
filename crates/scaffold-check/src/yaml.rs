//! YAML for `check`, on the crate's one YAML layer (`scaffold_support::yaml`): every document of a
//! file parsed strictly (duplicate keys are errors at their second occurrence, as in kubectl
//! and kustomize) into its JSON value, keeping the node tree so that findings point at the
//! line of the key, item or value they are about.
use std::sync::Arc;

use serde_json::Value as Json;

use scaffold_support::yaml::{self as layer, Node};

/// One document of a YAML file.
#[derive(Debug, Clone)]
pub struct Doc {
    /// 1-based line of the document's first line (after its `---`).
    pub line: usize,
    /// The document with the place of every key and value (shared: objects and each
    /// environment's view copy their documents).
    pub node: Arc<Node>,
    /// Its JSON value, shared like the node: an object, its file's document and every
    /// environment's view hold the one value (copies were most of a model's memory).
    pub value: Arc<Json>,
}

/// Where and why a file does not parse (YAML, JSON or HCL).
#[derive(Debug, Clone)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl From<layer::Error> for ParseError {
    fn from(e: layer::Error) -> ParseError {
        ParseError {
            line: e.line,
            column: e.column,
            message: e.message,
        }
    }
}

/// Parses every document of `text` (documents without content are left out); the first
/// error stops the file (later documents may depend on how the broken one ends).
pub fn parse(text: &str) -> Result<Vec<Doc>, ParseError> {
    let mut docs = Vec::new();
    for document in layer::parse(text)? {
        if document.root.is_null() {
            continue;
        }
        docs.push(Doc {
            line: document.start,
            value: Arc::new(document.root.to_json()?),
            node: Arc::new(document.root),
        });
    }
    Ok(docs)
}

/// Parses a single-document YAML text (a values file) into JSON.
pub fn parse_one(text: &str) -> Result<Json, ParseError> {
    Ok(parse(text)?
        .into_iter()
        .next()
        .map_or(Json::Null, |d| Arc::unwrap_or_clone(d.value)))
}

impl Doc {
    /// The line of the value at a path of keys (array indices as numbers): its key's line,
    /// or the deepest part of the path that is written.
    pub fn line_at<S: AsRef<str>>(&self, path: &[S]) -> usize {
        self.node.locate(path).line
    }

    /// The line of the first key named `key` (depth first), else the document's first line.
    pub fn line_of_key(&self, key: &str) -> usize {
        self.node.find_key(key).map_or(self.line, |p| p.line)
    }

    /// The line of the first scalar reading `text` (a list item, a value or a key), else
    /// the document's first line.
    pub fn line_of_scalar(&self, text: &str) -> usize {
        self.node.find_scalar(text).map_or(self.line, |p| p.line)
    }

    /// The line of the first `key: value` entry, else the document's first line.
    pub fn line_of_entry(&self, key: &str, value: &str) -> usize {
        self.node
            .find_entry(key, value)
            .map_or(self.line, |p| p.line)
    }

    /// The line of the first node for which `found` holds, else the document's first line.
    pub fn line_where(&self, found: &dyn Fn(&Node) -> bool) -> usize {
        self.node.find(found).map_or(self.line, |n| n.pos.line)
    }
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
        let docs = parse("a: 1\n---\n# c\nb: 2\n---\n---\nc: [x, y]\n").expect("parses");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[1].line, 3);
        assert_eq!(docs[1].line_of_key("b"), 4);
        assert_eq!(docs[2].line_of_scalar("y"), 7);
        let err = parse("x: 1\n---\na: 1\na: 2\n").expect_err("duplicate");
        assert!(err.message.contains("duplicate"), "{}", err.message);
        assert_eq!((err.line, err.column), (4, 1));
    }

    #[test]
    fn lines_of_keys_entries_and_paths() {
        let doc = parse(
            "kind: Kustomization\nspec:\n  dependsOn:\n    - name: a\n    - name: b\n  path: ./x\n",
        )
        .expect("parses")
        .remove(0);
        assert_eq!(doc.line_at(&["spec", "dependsOn", "1", "name"]), 5);
        assert_eq!(doc.line_at(&["spec", "nothing"]), 2);
        assert_eq!(doc.line_of_key("path"), 6);
        assert_eq!(doc.line_of_entry("name", "b"), 5);
        // Absent: the document's first line.
        assert_eq!(doc.line_of_key("prune"), 1);
        assert_eq!(doc.line_of_scalar("./y"), 1);
    }
}

//! The one YAML layer: every YAML text scaffold reads or writes goes through here, and no
//! other module names a YAML crate.
//!
//! - Reading: [`parse`] turns a (multi-document) text into [`Node`] trees that keep the
//!   1-based line and column of every key and value, on saphyr-parser's events. Duplicate
//!   keys are errors at their second occurrence (as in kubectl and kustomize). [`Node::to_json`]
//!   gives the JSON value, [`from_str`] deserializes a typed struct straight from the tree, so
//!   its errors carry a place.
//! - Scalars resolve as serde_yaml 0.9 resolved them (YAML 1.2 core schema: `yes`/`on` are
//!   strings, `0o17` is 15, `~` is null; a leading zero makes a string), so the values the
//!   rest of the crate sees did not change with the parser.
//! - Writing: [`to_string`] emits with serde_norway 0.9.42, the maintained fork of
//!   serde_yaml 0.9.34 whose serializer and libyaml emitter are the same code: the bytes are
//!   part of the output contract (`.scaffold/answers.yaml`, rendered values, patched files;
//!   the golden snapshots hold them). See docs/architecture.md, "YAML".
use std::collections::HashMap;
use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Unexpected, Visitor};
use serde::{Deserializer as _, Serialize};
use serde_json::Value as Json;

/// A 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl Pos {
    /// As `(line, column)`, the shape findings take.
    pub fn pair(self) -> (usize, usize) {
        (self.line, self.column)
    }

    fn of(span: &Span) -> Pos {
        Pos {
            line: span.start.line(),
            column: span.start.col() + 1,
        }
    }
}

/// Why a YAML text does not read (or a value does not write), and where: the place is kept
/// apart from the message. `line` and `column` are 1-based, 0 when there is no place (an
/// emitting error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Error {
    fn new(pos: Pos, message: impl Into<String>) -> Error {
        Error {
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }

    /// The place as `(line, column)`.
    pub fn pair(&self) -> (usize, usize) {
        (self.line, self.column)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(
                f,
                "{} at line {} column {}",
                self.message, self.line, self.column
            )
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error::new(Pos::default(), message.to_string())
    }
}

/// A scalar as written: its text, whether it was plain (unquoted, not a block scalar), and
/// its tag (`str`, `int`... for `!!str`, `!!int`; `!name` for a local tag).
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub text: String,
    pub plain: bool,
    /// Written in single or double quotes.
    pub quoted: bool,
    pub tag: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    /// Keys and values in document order (keys are unique: [`parse`] refuses duplicates).
    Map(Vec<(Node, Node)>),
}

/// A YAML value with the place it starts at.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub pos: Pos,
    pub kind: Kind,
}

/// The value a scalar resolves to, as serde_yaml 0.9 resolves it.
#[derive(Debug, Clone, PartialEq)]
enum Resolved<'a> {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Str(&'a str),
}

impl Scalar {
    fn resolve(&self) -> Result<Resolved<'_>, String> {
        let text = self.text.as_str();
        let invalid = |what: &str| format!("invalid value: string {text:?}, expected {what}");
        match self.tag.as_deref() {
            Some("str") => Ok(Resolved::Str(text)),
            Some("bool") => parse_bool(text)
                .map(Resolved::Bool)
                .ok_or_else(|| invalid("a boolean")),
            Some("int") => parse_int(text).ok_or_else(|| invalid("an integer")),
            Some("float") => parse_f64(text)
                .map(Resolved::Float)
                .ok_or_else(|| invalid("a float")),
            Some("null") => parse_null(text)
                .then_some(Resolved::Null)
                .ok_or_else(|| invalid("null")),
            _ if self.plain => Ok(resolve_plain(text)),
            _ => Ok(Resolved::Str(text)),
        }
    }

    /// Whether the scalar is null (`~`, `null`, empty, `!!null`).
    pub fn is_null(&self) -> bool {
        matches!(self.resolve(), Ok(Resolved::Null))
    }
}

fn resolve_plain(text: &str) -> Resolved<'_> {
    if text.is_empty() || parse_null(text) {
        return Resolved::Null;
    }
    if let Some(b) = parse_bool(text) {
        return Resolved::Bool(b);
    }
    if let Some(int) = parse_int(text) {
        return int;
    }
    if !digits_but_not_number(text)
        && let Some(float) = parse_f64(text)
    {
        return Resolved::Float(float);
    }
    Resolved::Str(text)
}

fn parse_null(text: &str) -> bool {
    matches!(text, "null" | "Null" | "NULL" | "~")
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Integers as serde_yaml 0.9 reads them: decimal, `0x`, `0o`, `0b`, signed; a leading zero
/// followed by digits is a string (YAML 1.2).
fn parse_int(text: &str) -> Option<Resolved<'static>> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if unsigned.starts_with(['+', '-']) {
        return None;
    }
    let (radix, digits) = if let Some(rest) = unsigned.strip_prefix("0x") {
        (16, rest)
    } else if let Some(rest) = unsigned.strip_prefix("0o") {
        (8, rest)
    } else if let Some(rest) = unsigned.strip_prefix("0b") {
        (2, rest)
    } else {
        if digits_but_not_number(text) {
            return None;
        }
        (10, unsigned)
    };
    if digits.starts_with(['+', '-']) {
        return None;
    }
    if negative {
        i64::from_str_radix(&format!("-{digits}"), radix)
            .ok()
            .map(Resolved::Signed)
    } else {
        u64::from_str_radix(digits, radix)
            .ok()
            .map(Resolved::Unsigned)
    }
}

fn parse_f64(text: &str) -> Option<f64> {
    let unsigned = match text.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => text,
    };
    match unsigned {
        ".inf" | ".Inf" | ".INF" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" if unsigned == text => return Some(f64::NAN),
        _ => {}
    }
    unsigned.parse::<f64>().ok().filter(|f| f.is_finite())
}

fn digits_but_not_number(text: &str) -> bool {
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    text.len() > 1 && text.starts_with('0') && text[1..].bytes().all(|b| b.is_ascii_digit())
}

impl Node {
    /// Where a scalar's content starts: after its quote when it is quoted (a finding about
    /// what a string says points at the string, not at its quote).
    pub fn content_pos(&self) -> Pos {
        match &self.kind {
            Kind::Scalar(s) if s.quoted => Pos {
                column: self.pos.column + 1,
                ..self.pos
            },
            _ => self.pos,
        }
    }

    /// The mapping's entries (empty for other nodes).
    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.kind {
            Kind::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The sequence's items (empty for other nodes).
    pub fn items(&self) -> &[Node] {
        match &self.kind {
            Kind::Seq(items) => items,
            _ => &[],
        }
    }

    /// The scalar's text, as written (whatever it resolves to).
    pub fn text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(s) => Some(&s.text),
            _ => None,
        }
    }

    /// The string a scalar resolves to (not a number, boolean or null written plain).
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar(s) => match s.resolve() {
                Ok(Resolved::Str(t)) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether the node is a null scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar(s) if s.is_null())
    }

    /// The entry whose key is `key` (a mapping's key and value).
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.entries()
            .iter()
            .find(|(k, _)| k.text() == Some(key))
            .map(|(k, v)| (k, v))
    }

    /// The value at `key` of a mapping, or at index `key` of a sequence.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(_) => self.entry(key).map(|(_, v)| v),
            Kind::Seq(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            Kind::Scalar(_) => None,
        }
    }

    /// Where the value at `path` is written: the place of its key (the line a reader looks
    /// at), or of the item for a sequence index. When the path leaves the document, the
    /// deepest part of it that is there; a path segment that names no key of a mapping is
    /// looked for in each item of a sequence (so `spec/items/name` finds the first item's
    /// `name`).
    pub fn locate<S: AsRef<str>>(&self, path: &[S]) -> Pos {
        let mut node = self;
        let mut at = self.pos;
        for key in path {
            let key = key.as_ref();
            match &node.kind {
                Kind::Map(_) => match node.entry(key) {
                    Some((k, v)) => {
                        at = k.pos;
                        node = v;
                    }
                    None => break,
                },
                Kind::Seq(items) => {
                    if let Some(item) = key.parse::<usize>().ok().and_then(|i| items.get(i)) {
                        at = item.pos;
                        node = item;
                    } else if let Some((k, v)) = items.iter().find_map(|item| item.entry(key)) {
                        at = k.pos;
                        node = v;
                    } else {
                        break;
                    }
                }
                Kind::Scalar(_) => break,
            }
        }
        at
    }

    /// Where `key` is written in this mapping, or `None`.
    pub fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entry(key).map(|(k, _)| k.pos)
    }

    /// The first node, depth first in document order, for which `found` holds.
    pub fn find(&self, found: &dyn Fn(&Node) -> bool) -> Option<&Node> {
        if found(self) {
            return Some(self);
        }
        match &self.kind {
            Kind::Scalar(_) => None,
            Kind::Seq(items) => items.iter().find_map(|i| i.find(found)),
            Kind::Map(entries) => entries
                .iter()
                .find_map(|(k, v)| k.find(found).or_else(|| v.find(found))),
        }
    }

    /// Every scalar under this node, keys included, in document order.
    pub fn scalars(&self) -> Vec<&Node> {
        match &self.kind {
            Kind::Scalar(_) => vec![self],
            Kind::Seq(items) => items.iter().flat_map(Node::scalars).collect(),
            Kind::Map(entries) => entries
                .iter()
                .flat_map(|(k, v)| k.scalars().into_iter().chain(v.scalars()))
                .collect(),
        }
    }

    /// Where a key named `key` is written anywhere under this node (depth first).
    pub fn find_key(&self, key: &str) -> Option<Pos> {
        match &self.kind {
            Kind::Scalar(_) => None,
            Kind::Seq(items) => items.iter().find_map(|i| i.find_key(key)),
            Kind::Map(entries) => entries.iter().find_map(|(k, v)| {
                (k.text() == Some(key))
                    .then_some(k.pos)
                    .or_else(|| v.find_key(key))
            }),
        }
    }

    /// Where an entry `key: value` (a scalar value) is written anywhere under this node
    /// (depth first): the place of its key.
    pub fn find_entry(&self, key: &str, value: &str) -> Option<Pos> {
        match &self.kind {
            Kind::Scalar(_) => None,
            Kind::Seq(items) => items.iter().find_map(|i| i.find_entry(key, value)),
            Kind::Map(entries) => entries.iter().find_map(|(k, v)| {
                (k.text() == Some(key) && v.text() == Some(value))
                    .then_some(k.pos)
                    .or_else(|| v.find_entry(key, value))
            }),
        }
    }

    /// Where a scalar reading `text` is written anywhere under this node (depth first).
    pub fn find_scalar(&self, text: &str) -> Option<Pos> {
        self.find(&|n| n.text() == Some(text)).map(|n| n.pos)
    }

    /// The JSON value, as serde_json would hold serde_yaml's value of the same text.
    pub fn to_json(&self) -> Result<Json, Error> {
        match &self.kind {
            Kind::Scalar(s) => Ok(match s.resolve().map_err(|m| Error::new(self.pos, m))? {
                Resolved::Null => Json::Null,
                Resolved::Bool(b) => Json::Bool(b),
                Resolved::Unsigned(n) => Json::from(n),
                Resolved::Signed(n) => Json::from(n),
                Resolved::Float(f) => {
                    serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
                }
                Resolved::Str(t) => Json::String(t.to_string()),
            }),
            Kind::Seq(items) => items.iter().map(Node::to_json).collect(),
            Kind::Map(entries) => entries
                .iter()
                .map(|(k, v)| Ok((k.key_string()?, v.to_json()?)))
                .collect::<Result<serde_json::Map<_, _>, Error>>()
                .map(Json::Object),
        }
    }

    /// A key as a JSON object key: strings as they are, numbers and booleans as text.
    fn key_string(&self) -> Result<String, Error> {
        let Kind::Scalar(s) = &self.kind else {
            return Err(Error::new(self.pos, "key must be a string"));
        };
        match s.resolve().map_err(|m| Error::new(self.pos, m))? {
            Resolved::Str(t) => Ok(t.to_string()),
            Resolved::Bool(b) => Ok(b.to_string()),
            Resolved::Unsigned(n) => Ok(n.to_string()),
            Resolved::Signed(n) => Ok(n.to_string()),
            Resolved::Float(f) => Ok(f.to_string()),
            Resolved::Null => Err(Error::new(self.pos, "key must be a string")),
        }
    }

    /// Whether two keys are the same key: scalars that resolve to the same value (`1` and
    /// `"1"` differ); a key that does not resolve is compared by its text. Compared in
    /// place: this runs for every pair of keys of a mapping.
    fn same_key(&self, other: &Node) -> bool {
        let (Kind::Scalar(a), Kind::Scalar(b)) = (&self.kind, &other.kind) else {
            return false;
        };
        match (a.resolve(), b.resolve()) {
            (Ok(Resolved::Str(x)), Ok(Resolved::Str(y))) => x == y,
            (Ok(Resolved::Str(_)), _) | (_, Ok(Resolved::Str(_))) => false,
            (Ok(x), Ok(y)) => format!("{x:?}") == format!("{y:?}"),
            (Err(_), Err(_)) => a.text == b.text,
            _ => false,
        }
    }

    /// The message serde_yaml gave for this duplicate key.
    fn duplicate_message(&self) -> String {
        match &self.kind {
            Kind::Scalar(s) => match s.resolve() {
                Ok(Resolved::Str(t)) => format!("duplicate entry with key {t:?}"),
                _ => format!("duplicate entry with key {}", s.text),
            },
            _ => "duplicate entry in a mapping".to_string(),
        }
    }
}

/// One document of a YAML text.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Its first line: the one after its `---` marker; for a document without one, line 1
    /// when it opens the text, else its first content.
    pub start: usize,
    pub root: Node,
}

/// Places in a one-document text that parsed before (a blueprint manifest, a catalog entry),
/// for findings about what it says: each falls back to the enclosing item, never to a
/// made-up place, and to 1:1 when the text does not parse.
pub struct Places {
    root: Option<Node>,
}

impl Places {
    pub fn of(text: &str) -> Places {
        Places {
            root: parse(text)
                .ok()
                .and_then(|docs| docs.into_iter().next())
                .map(|d| d.root),
        }
    }

    /// The root node, when the text parses.
    pub fn root(&self) -> Option<&Node> {
        self.root.as_ref()
    }

    /// Where the value at `path` is written ([`Node::locate`]).
    pub fn at<S: AsRef<str>>(&self, path: &[S]) -> (usize, usize) {
        self.root
            .as_ref()
            .map_or((1, 1), |root| root.locate(path).pair())
    }

    /// The item of the top-level list `section` whose `item_key` reads `key` (the
    /// question `- key: region` of `questions`).
    pub fn item<'a>(&'a self, section: &str, item_key: &'a str, key: &'a str) -> Option<&'a Node> {
        self.items(section, item_key, key).next()
    }

    /// Every such item, in document order.
    pub fn items<'a>(
        &'a self,
        section: &str,
        item_key: &'a str,
        key: &'a str,
    ) -> impl Iterator<Item = &'a Node> + 'a {
        self.root
            .as_ref()
            .and_then(|root| root.get(section))
            .map_or(&[][..], Node::items)
            .iter()
            .filter(move |item| item.get(item_key).and_then(Node::text) == Some(key))
    }

    /// `field:` of that item, or the item when the field is not written there.
    pub fn item_field<'a>(
        &'a self,
        section: &str,
        item_key: &'a str,
        key: &'a str,
        field: &str,
    ) -> Option<(usize, usize)> {
        let item = self.item(section, item_key, key)?;
        Some(item.key_pos(field).unwrap_or(item.pos).pair())
    }

    /// `key:` of the top-level mapping `section:` (`defaults:` → `region:`), or the item
    /// reading `key` of the top-level list `section:`; `None` when it is not there.
    pub fn section_entry(&self, section: &str, key: &str) -> Option<(usize, usize)> {
        let node = self.root.as_ref()?.get(section)?;
        node.key_pos(key)
            .or_else(|| {
                node.items()
                    .iter()
                    .find(|item| item.text() == Some(key))
                    .map(|item| item.pos)
            })
            .map(Pos::pair)
    }

    /// [`Places::section_entry`], else the section, else 1:1.
    pub fn section_key(&self, section: &str, key: &str) -> (usize, usize) {
        self.section_entry(section, key)
            .unwrap_or_else(|| self.at(&[section]))
    }
}

/// Parses every document of `text`; the first error stops it (later documents may depend on
/// how the broken one ends). A text without content has no document.
pub fn parse(text: &str) -> Result<Vec<Document>, Error> {
    match parse_until_error(text) {
        (documents, None) => Ok(documents),
        (_, Some(error)) => Err(error),
    }
}

/// The documents before the first error, and the error: for readers that take what parses
/// (a later document may be broken without spoiling the earlier ones).
pub fn parse_until_error(text: &str) -> (Vec<Document>, Option<Error>) {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    while let Some(event) = parser.next_event() {
        match event
            .map_err(scan_error)
            .and_then(|(event, span)| builder.event(event, span))
        {
            Ok(false) => {}
            Ok(true) => break,
            Err(error) => return (builder.documents, Some(error)),
        }
    }
    (builder.documents, None)
}

/// Parses a text that holds at most one document (serde_yaml's rule for `from_str`).
pub fn parse_one(text: &str) -> Result<Option<Node>, Error> {
    let mut documents = parse(text)?.into_iter();
    let first = documents.next();
    if let Some(second) = documents.next() {
        return Err(Error::new(
            Pos {
                line: second.start,
                column: 1,
            },
            "deserializing from YAML containing more than one document is not supported",
        ));
    }
    Ok(first.map(|d| d.root))
}

/// A single-document text as a JSON value (`null` when it is empty).
pub fn to_json(text: &str) -> Result<Json, Error> {
    parse_one(text)?.map_or(Ok(Json::Null), |n| n.to_json())
}

/// Deserializes a typed value from a single-document text; errors carry the place.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    match parse_one(text)? {
        Some(node) => from_node(&node),
        None => T::deserialize(Empty),
    }
}

/// [`from_str`] over bytes that must be UTF-8.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            Pos { line: 1, column: 1 },
            format!("the text is not UTF-8: {e}"),
        )
    })?;
    from_str(text)
}

/// Deserializes a typed value from a node.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, Error> {
    T::deserialize(De {
        node,
        path: Path::Root,
    })
}

/// The YAML text of a value, byte for byte what scaffold has always written (serde_yaml
/// 0.9's bytes).
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    serde_norway::to_string(value).map_err(|e| Error::new(Pos::default(), e.to_string()))
}

fn scan_error(e: ScanError) -> Error {
    Error::new(
        Pos {
            line: e.marker().line(),
            column: e.marker().col() + 1,
        },
        e.info().to_string(),
    )
}

/// Builds nodes from saphyr-parser's events.
#[derive(Default)]
struct Builder {
    documents: Vec<Document>,
    /// The line of the current document's start.
    start: usize,
    /// Open collections: the node, and for a mapping a key waiting for its value.
    stack: Vec<(Node, Option<Node>)>,
    anchors: HashMap<usize, Node>,
    /// Open collections' anchors, to record once they close.
    open_anchors: Vec<usize>,
}

impl Builder {
    /// Takes one event; `true` at the end of the stream.
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<bool, Error> {
        let pos = Pos::of(&span);
        match event {
            Event::StreamEnd => return Ok(true),
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
            Event::DocumentStart(explicit) => {
                self.start = match (explicit, self.documents.is_empty()) {
                    (true, _) => pos.line + 1,
                    (false, true) => 1,
                    (false, false) => pos.line,
                };
                self.anchors.clear();
            }
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| Error::new(pos, "unknown anchor"))?;
                // The alias's place is where it is written, not where its anchor is.
                self.add(Node { pos, ..node })?;
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.map(|t| {
                    if t.is_yaml_core_schema() {
                        t.suffix.clone()
                    } else {
                        t.to_string()
                    }
                });
                let node = Node {
                    pos,
                    kind: Kind::Scalar(Scalar {
                        text: text.into_owned(),
                        plain: style == ScalarStyle::Plain,
                        quoted: matches!(
                            style,
                            ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted
                        ),
                        tag,
                    }),
                };
                if anchor > 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                self.add(node)?;
            }
            Event::SequenceStart(anchor, _) => {
                self.open_anchors.push(anchor);
                self.stack.push((
                    Node {
                        pos,
                        kind: Kind::Seq(Vec::new()),
                    },
                    None,
                ));
            }
            Event::MappingStart(anchor, _) => {
                self.open_anchors.push(anchor);
                self.stack.push((
                    Node {
                        pos,
                        kind: Kind::Map(Vec::new()),
                    },
                    None,
                ));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, _) = self
                    .stack
                    .pop()
                    .ok_or_else(|| Error::new(pos, "unbalanced collection"))?;
                if let Some(anchor) = self.open_anchors.pop().filter(|a| *a > 0) {
                    self.anchors.insert(anchor, node.clone());
                }
                self.add(node)?;
            }
        }
        Ok(false)
    }

    /// Puts a finished node in its parent, or makes it the document's root.
    fn add(&mut self, node: Node) -> Result<(), Error> {
        let Some((parent, pending)) = self.stack.last_mut() else {
            self.documents.push(Document {
                start: self.start,
                root: node,
            });
            return Ok(());
        };
        match &mut parent.kind {
            Kind::Seq(items) => items.push(node),
            Kind::Map(entries) => match pending.take() {
                None => {
                    if entries.iter().any(|(k, _)| k.same_key(&node)) {
                        return Err(Error::new(node.pos, node.duplicate_message()));
                    }
                    *pending = Some(node);
                }
                Some(key) => entries.push((key, node)),
            },
            Kind::Scalar(_) => {}
        }
        Ok(())
    }
}

/// An empty text: `null` for whoever accepts it, as serde_yaml read it.
struct Empty;

impl<'de> de::Deserializer<'de> for Empty {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_none()
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Error> {
        Err(Error::new(
            Pos { line: 1, column: 1 },
            "EOF while parsing a value",
        ))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// Where a value is in its document, as serde_yaml named it in messages: `.` for the
/// root, `chart.version`, `questions[2].key`.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root,
    Seq(&'p Path<'p>, usize),
    Map(&'p Path<'p>, &'p str),
    Unknown(&'p Path<'p>),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parent = |f: &mut fmt::Formatter<'_>, p: &Path<'_>| match p {
            Path::Root => Ok(()),
            p => write!(f, "{p}."),
        };
        match self {
            Path::Root => f.write_str("."),
            Path::Seq(p, index) => write!(f, "{p}[{index}]"),
            Path::Map(p, key) => {
                parent(f, p)?;
                f.write_str(key)
            }
            Path::Unknown(p) => {
                parent(f, p)?;
                f.write_str("?")
            }
        }
    }
}

/// Deserializes the node at a path; an error takes the place (and path) of the innermost
/// node it comes from.
struct De<'de, 'p> {
    node: &'de Node,
    path: Path<'p>,
}

impl De<'_, '_> {
    fn place(&self, mut error: Error) -> Error {
        if error.line == 0 {
            error.line = self.node.pos.line;
            error.column = self.node.pos.column;
            if !matches!(self.path, Path::Root) {
                error.message = format!("{}: {}", self.path, error.message);
            }
        }
        error
    }
}

impl<'de> de::Deserializer<'de> for De<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => match s.resolve() {
                Err(message) => Err(de::Error::custom(message)),
                Ok(Resolved::Null) => visitor.visit_unit(),
                Ok(Resolved::Bool(b)) => visitor.visit_bool(b),
                Ok(Resolved::Unsigned(n)) => visitor.visit_u64(n),
                Ok(Resolved::Signed(n)) => visitor.visit_i64(n),
                Ok(Resolved::Float(f)) => visitor.visit_f64(f),
                Ok(Resolved::Str(t)) => visitor.visit_borrowed_str(t),
            },
            Kind::Seq(items) => visitor.visit_seq(Items {
                items: items.iter().enumerate(),
                path: &self.path,
            }),
            Kind::Map(entries) => visitor.visit_map(Entries {
                entries: entries.iter(),
                value: None,
                path: &self.path,
            }),
        };
        result.map_err(|e| self.place(e))
    }

    /// Any scalar reads as a string, whatever it would resolve to (serde_yaml did so).
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.node.kind {
            Kind::Scalar(s) => visitor
                .visit_borrowed_str(&s.text)
                .map_err(|e| self.place(e)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.node.is_null() {
            return visitor.visit_none().map_err(|e| self.place(e));
        }
        let (node, path) = (self.node, self.path);
        visitor
            .visit_some(De { node, path })
            .map_err(|e| self.place(e))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (node, path) = (self.node, self.path);
        visitor
            .visit_newtype_struct(De { node, path })
            .map_err(|e| self.place(e))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let result = match &self.node.kind {
            Kind::Scalar(s) => visitor.visit_enum(s.text.as_str().into_deserializer()),
            Kind::Map(entries) if entries.len() == 1 => visitor.visit_enum(Variant {
                entry: &entries[0],
                path: &self.path,
            }),
            _ => Err(de::Error::invalid_type(
                Unexpected::Map,
                &"a string or a mapping with one entry",
            )),
        };
        result.map_err(|e: Error| self.place(e))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct
    }
}

struct Items<'de, 'p> {
    items: std::iter::Enumerate<std::slice::Iter<'de, Node>>,
    path: &'p Path<'p>,
}

impl<'de> de::SeqAccess<'de> for Items<'de, '_> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        let Some((index, node)) = self.items.next() else {
            return Ok(None);
        };
        seed.deserialize(De {
            node,
            path: Path::Seq(self.path, index),
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries<'de, 'p> {
    entries: std::slice::Iter<'de, (Node, Node)>,
    value: Option<(&'de Node, &'de Node)>,
    path: &'p Path<'p>,
}

impl<'de> de::MapAccess<'de> for Entries<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        // A key is read at its mapping's path (serde_yaml's naming).
        seed.deserialize(De {
            node: key,
            path: *self.path,
        })
        .map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, node)) = self.value.take() else {
            return Err(de::Error::custom("a value without its key"));
        };
        let path = match key.text() {
            Some(key) => Path::Map(self.path, key),
            None => Path::Unknown(self.path),
        };
        seed.deserialize(De { node, path })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// An externally tagged enum variant: `{variant: value}`.
struct Variant<'de, 'p> {
    entry: &'de (Node, Node),
    path: &'p Path<'p>,
}

impl<'de, 'p> de::EnumAccess<'de> for Variant<'de, 'p> {
    type Error = Error;
    type Variant = De<'de, 'p>;

    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, De<'de, 'p>), Error> {
        let (key, value) = self.entry;
        let path = *self.path;
        Ok((
            seed.deserialize(De { node: key, path })?,
            De { node: value, path },
        ))
    }
}

impl<'de> de::VariantAccess<'de> for De<'de, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    fn pos(line: usize, column: usize) -> Pos {
        Pos { line, column }
    }

    #[test]
    fn nested_keys_and_sequence_items_keep_their_places() {
        let text = "spec:\n  values:\n    image:\n      tag: v1\n  items:\n    - name: a\n    - name: b\n      port: 80\n";
        let root = parse_one(text).expect("parses").expect("a document");
        assert_eq!(root.locate(&["spec", "values", "image", "tag"]), pos(4, 7));
        assert_eq!(root.locate(&["spec", "items", "1"]), pos(7, 7));
        assert_eq!(root.locate(&["spec", "items", "1", "port"]), pos(8, 7));
        // A key missing from the path: the deepest part that is there.
        assert_eq!(root.locate(&["spec", "values", "nope"]), pos(2, 3));
        // A key looked for across a sequence's items.
        assert_eq!(root.locate(&["spec", "items", "port"]), pos(8, 7));
        assert_eq!(root.find_scalar("b"), Some(pos(7, 13)));
        let flow = parse_one("list: [a, \"b\"]\n")
            .expect("parses")
            .expect("doc");
        assert_eq!(flow.locate(&["list", "1"]), pos(1, 11));
    }

    #[test]
    fn documents_keep_their_start_lines() {
        let docs = parse("a: 1\n---\n# c\nb: 2\n---\n...\n").expect("parses");
        assert_eq!(docs.len(), 3);
        assert_eq!(docs[0].start, 1);
        assert_eq!(docs[1].start, 3);
        assert_eq!(docs[2].start, 6);
        assert_eq!(docs[1].root.locate(&["b"]), pos(4, 1));
        assert!(matches!(&docs[2].root.kind, Kind::Scalar(s) if s.is_null()));
        assert!(parse("").expect("parses").is_empty());
        assert!(parse("# only a comment\n").expect("parses").is_empty());
    }

    #[test]
    fn a_duplicate_key_fails_at_its_second_occurrence() {
        let err = parse("x: 1\n---\na: 1\nb:\n  c: 1\n  c: 2\n").expect_err("duplicate");
        assert_eq!((err.line, err.column), (6, 3));
        assert_eq!(err.message, "duplicate entry with key \"c\"");
        // `1` and `"1"` are different keys.
        assert!(parse("1: a\n\"1\": b\n").is_ok());
    }

    #[test]
    fn a_parse_error_has_its_line_and_column_apart_from_the_message() {
        let err = parse("a: 1\nb: [1, 2\n").expect_err("unclosed");
        assert_eq!(err.line, 3, "{err:?}");
        assert!(!err.message.contains("line"), "{}", err.message);
        let err = parse("a: 1\n  b: 2\n").expect_err("bad indentation");
        assert_eq!((err.line, err.column), (2, 4), "{err:?}");
    }

    #[test]
    fn scalars_resolve_as_serde_yaml_0_9_did() {
        let value = to_json(
            "a: yes\nb: on\nc: 0o17\nd: ~\ne: 0x1F\nf: 012\ng: -5\nh: 1.5\ni: true\nj: \"true\"\nk: !!str 5\nl:\nm: .inf\nn: 1e3\no: +3\np: Null\n",
        )
        .expect("parses");
        assert_eq!(
            value,
            json!({"a": "yes", "b": "on", "c": 15, "d": null, "e": 31, "f": "012", "g": -5,
                   "h": 1.5, "i": true, "j": "true", "k": "5", "l": null, "m": null, "n": 1000.0,
                   "o": 3, "p": null})
        );
        assert_eq!(
            to_json("1: a\ntrue: b\n").expect("parses"),
            json!({"1": "a", "true": "b"})
        );
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Typed {
        name: String,
        #[serde(default)]
        count: Option<u32>,
        #[serde(default)]
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
        Slow,
    }

    #[test]
    fn typed_values_read_with_places_in_their_errors() {
        let typed: Typed = from_str("name: 1.10\ncount: 3\nmode: slow\n").expect("reads");
        // A scalar read as a string keeps its text.
        assert_eq!(typed.name, "1.10");
        assert_eq!(typed.mode, Some(Mode::Slow));
        let err = from_str::<Typed>("name: x\ncolour: red\n").expect_err("unknown field");
        assert_eq!((err.line, err.column), (2, 1));
        assert!(
            err.message.starts_with("unknown field `colour`"),
            "{}",
            err.message
        );
        let err = from_str::<Typed>("name: x\ncount: many\n").expect_err("not a number");
        assert_eq!((err.line, err.column), (2, 8));
        // The path as serde_yaml named it.
        assert_eq!(
            err.message,
            "count: invalid type: string \"many\", expected u32"
        );
        let err =
            from_str::<Vec<Typed>>("- name: x\n- name: y\n  mode: quick\n").expect_err("variant");
        assert_eq!((err.line, err.column), (3, 9));
        assert!(
            err.message
                .starts_with(".[1].mode: unknown variant `quick`"),
            "{}",
            err.message
        );
        let err = from_str::<Typed>("count: 1\n").expect_err("missing");
        assert_eq!((err.line, err.column), (1, 1));
        assert_eq!(err.message, "missing field `name`");
        assert_eq!(err.to_string(), "missing field `name` at line 1 column 1");
        let err = from_str::<Json>("a: 1\n---\nb: 2\n").expect_err("two documents");
        assert_eq!(err.line, 3, "the second document's first line");
        assert_eq!(from_str::<Json>("").expect("empty"), Json::Null);
        assert_eq!(from_str::<Option<Typed>>("").expect("empty"), None);
    }

    #[test]
    fn aliases_read_as_their_anchors() {
        let value = to_json("a: &x {b: 1}\nc: *x\n").expect("parses");
        assert_eq!(value, json!({"a": {"b": 1}, "c": {"b": 1}}));
    }

    #[test]
    fn emits_what_serde_yaml_emits() {
        let text =
            to_string(&json!({"a": "yes", "b": [1, "2"], "c": null, "d": "x: y"})).expect("emits");
        // serde_yaml writes YAML 1.1 booleans such as `yes` plain (render.rs quotes them).
        assert_eq!(text, "a: yes\nb:\n- 1\n- '2'\nc: null\nd: 'x: y'\n");
    }
}

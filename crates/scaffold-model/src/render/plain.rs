//! Templates that only substitute values (`[[ name ]]`, `[[ addon.name ]]`): no tags,
//! comments, filters or whitespace control. Most files of a large blueprint are such.
//! They are rendered here by copying text and values, without compiling them in Tera:
//! compiling was ~100 µs of a small file's ~120 µs (BENCHMARKS.md, round two).
//!
//! The output is Tera's. Anything this module is not sure of (a name Tera reserves, a
//! value that is not a string, bool or integer, a name that is not there) answers `None`,
//! and the caller asks Tera, which renders it or reports the error as it always did. A
//! test compares both on random templates.
use std::borrow::Cow;

use tera::{Context, Value};

use crate::manifest::Delimiters;

/// Names Tera's parser gives a meaning of its own (tera 2.4 `parsing/parser.rs`).
const RESERVED: &[&str] = &[
    "true", "True", "false", "False", "loop", "self", "and", "or", "not", "is", "in", "continue",
    "break", "none", "None", "null",
];

/// One piece of a plain template: text as it is, or the dotted name of a value.
#[derive(Debug, PartialEq)]
enum Part<'t> {
    Text(&'t str),
    Value(&'t str),
}

/// The pieces of `text`, or None when it is not plain: it opens a tag or a comment, or a
/// variable holds more than a dotted name. One pass: every place outside a variable where
/// an opening delimiter could start is looked at once (Tera's delimiters are two bytes).
fn parts<'t>(text: &'t str, delimiters: &Delimiters) -> Option<Vec<Part<'t>>> {
    let [open, close] = &delimiters.variable;
    let (open, block, comment) = (
        open.as_bytes(),
        delimiters.block[0].as_bytes(),
        delimiters.comment[0].as_bytes(),
    );
    let (a, b, c) = (*open.first()?, *block.first()?, *comment.first()?);
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let (mut from, mut text_start) = (0, 0);
    while let Some(found) = memchr::memchr3(a, b, c, &bytes[from..]) {
        let at = from + found;
        let rest = &bytes[at..];
        if begins(rest, block) || begins(rest, comment) {
            return None;
        }
        if !begins(rest, open) {
            from = at + 1;
            continue;
        }
        if at > text_start {
            parts.push(Part::Text(&text[text_start..at]));
        }
        let inner = &text[at + open.len()..];
        let end = delimiter_positions(inner.as_bytes(), close.as_bytes()).next()?;
        parts.push(Part::Value(dotted_name(&inner[..end])?));
        from = at + open.len() + end + close.len();
        text_start = from;
    }
    if text_start < text.len() {
        parts.push(Part::Text(&text[text_start..]));
    }
    Some(parts)
}

/// Whether `bytes` starts with `delimiter`: compared in place (two bytes), not by a call
/// per place a delimiter's first byte is found.
fn begins(bytes: &[u8], delimiter: &[u8]) -> bool {
    delimiter.len() <= bytes.len() && delimiter.iter().zip(bytes).all(|(d, b)| d == b)
}

/// Where `delimiter` (two bytes) starts in `bytes`: a memchr for its first byte, which
/// is cheaper than building a substring searcher for each template or variable.
pub fn delimiter_positions<'b>(
    bytes: &'b [u8],
    delimiter: &'b [u8],
) -> impl Iterator<Item = usize> + 'b {
    let first = delimiter.first().copied();
    first
        .into_iter()
        .flat_map(move |first| memchr::memchr_iter(first, bytes))
        .filter(move |at| begins(&bytes[*at..], delimiter))
}

/// The name inside a variable tag (`␣addon.name␣`), if it is only that: ASCII
/// identifiers joined by dots, none of them reserved, no whitespace control.
fn dotted_name(inner: &str) -> Option<&str> {
    let name = inner.trim_matches(|c: char| c.is_ascii_whitespace());
    let identifier = |segment: &str| {
        let mut bytes = segment.bytes();
        bytes
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !RESERVED.contains(&segment)
    };
    name.split('.').all(identifier).then_some(name)
}

/// `text` rendered in `context`, or None when Tera must render it.
pub fn render(text: &str, delimiters: &Delimiters, context: &Context) -> Option<String> {
    let parts = parts(text, delimiters)?;
    let mut pieces: Vec<Cow<'_, str>> = Vec::with_capacity(parts.len());
    for part in &parts {
        pieces.push(match part {
            Part::Text(text) => Cow::Borrowed(*text),
            Part::Value(name) => scalar(lookup(context, name)?)?,
        });
    }
    let mut out = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for piece in &pieces {
        out.push_str(piece);
    }
    Some(out)
}

/// The top-level names `text` reads, or None when it is not plain.
pub fn variables(text: &str, delimiters: &Delimiters) -> Option<Vec<String>> {
    let mut names: Vec<String> = parts(text, delimiters)?
        .into_iter()
        .filter_map(|part| match part {
            Part::Value(name) => Some(name.split('.').next().unwrap_or(name).to_string()),
            Part::Text(_) => None,
        })
        .collect();
    names.sort();
    names.dedup();
    Some(names)
}

/// Whether `text` is plain (renders here whenever its values are scalars).
pub fn is_plain(text: &str, delimiters: &Delimiters) -> bool {
    parts(text, delimiters).is_some()
}

fn lookup<'c>(context: &'c Context, name: &'c str) -> Option<&'c Value> {
    match name.split_once('.') {
        None => context.get(name),
        Some((first, path)) => {
            let value = context.get(first)?;
            // `get_from_path` answers a `none` value for any path below it; Tera errors.
            if value.is_none() {
                return None;
            }
            value.get_from_path(path)
        }
    }
}

/// A value as Tera writes it, for the kinds whose text is certain.
fn scalar(value: &Value) -> Option<Cow<'_, str>> {
    if let Some(text) = value.as_str() {
        return Some(Cow::Borrowed(text));
    }
    if value.is_bool() || value.is_i64() || value.is_u64() {
        return Some(Cow::Owned(value.to_string()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn context() -> Context {
        let mut context = Context::new();
        context.insert("name", "acme");
        context.insert("count", &3);
        context.insert("on", &true);
        context.insert("empty", "");
        context.insert("list", &json!(["a", "b"]));
        context.insert("ratio", &0.5);
        context.insert("nothing", &json!(null));
        context.insert(
            "addon",
            &json!({"name": "karpenter", "chart": {"version": "1.2.3"}, "n": 2}),
        );
        context
    }

    /// The engine rendering uses (`render::engine`: delimiters, no autoescape, filters).
    fn tera_render(text: &str, delimiters: &Delimiters, context: &Context) -> Option<String> {
        let mut tera = crate::render::engine(delimiters).expect("engine");
        tera.add_raw_template("t", text).ok()?;
        tera.render("t", context).ok()
    }

    #[test]
    fn plain_templates_render_as_tera_renders_them() {
        let d = Delimiters::default();
        let c = context();
        for text in [
            "",
            "no tags at all\n",
            "n: [[ name ]]-[[count]] [[ on ]]\n",
            "[[addon.name]]@[[ addon.chart.version ]] x[[ addon.n ]]",
            "a ]] b [ c ] [[ empty ]]",
            "[[\n name\t]]",
            "tail [[ name ]]",
        ] {
            let ours = render(text, &d, &c);
            assert!(ours.is_some(), "{text:?} is plain");
            assert_eq!(ours, tera_render(text, &d, &c), "{text:?}");
        }
    }

    #[test]
    fn what_only_tera_knows_goes_to_tera() {
        let d = Delimiters::default();
        let c = context();
        for text in [
            "[% if on %]x[% endif %]",
            "[# note #]",
            "[[ name | upper ]]",
            "[[- name ]]",
            "[[ name -]]",
            "[[ true ]]",
            "[[ loop ]]",
            "[[ addon.0 ]]",
            "[[ 'text' ]]",
            "[[ a b ]]",
            "[[ name ",
            "[[ name.é ]]",
        ] {
            assert_eq!(render(text, &d, &c), None, "{text:?}");
        }
        // Plain, but the value's text is Tera's to write, or there is no value.
        for text in [
            "[[ list ]]",
            "[[ ratio ]]",
            "[[ nothing ]]",
            "[[ nothing.x ]]",
            "[[ missing ]]",
            "[[ addon.missing ]]",
            "[[ addon.chart ]]",
        ] {
            assert!(is_plain(text, &d), "{text:?}");
            assert_eq!(render(text, &d, &c), None, "{text:?}");
        }
    }

    #[test]
    fn other_delimiters_are_honoured() {
        let d = Delimiters {
            variable: ["{{".into(), "}}".into()],
            block: ["{%".into(), "%}".into()],
            comment: ["{#".into(), "#}".into()],
        };
        let c = context();
        assert_eq!(
            render("x: {{ name }} [[ kept ]]", &d, &c).as_deref(),
            Some("x: acme [[ kept ]]")
        );
        assert_eq!(render("{% raw %}", &d, &c), None);
    }

    #[test]
    fn variables_are_the_first_names_as_tera_finds_them() {
        let d = Delimiters::default();
        let text = "[[ b ]] [[ addon.x.y ]] [[ b ]]";
        let mut tera = crate::render::engine(&d).expect("engine");
        tera.add_raw_template("t", text).expect("compiles");
        let mut theirs: Vec<String> = tera
            .get_template_variables("t")
            .expect("known")
            .into_iter()
            .map(String::from)
            .collect();
        theirs.sort();
        assert_eq!(variables(text, &d), Some(theirs));
        assert_eq!(
            variables("[[ b ]] [[ a.x ]] [[ b ]]", &d),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(variables("[% if a %][% endif %]", &d), None);
    }

    /// Random templates over an alphabet rich in delimiter characters: whenever this
    /// module renders one, Tera renders the same text.
    #[test]
    fn random_templates_render_as_tera_renders_them() {
        let d = Delimiters::default();
        let c = context();
        let alphabet: &[&str] = &[
            "[",
            "]",
            "[[",
            "]]",
            " ",
            "\n",
            "\t",
            "-",
            ".",
            "%",
            "#",
            "{",
            "}",
            "name",
            "addon",
            "count",
            "on",
            "x",
            "_",
            "0",
            "é",
            "'",
            "|",
            "\r\n",
            "[[ name ]]",
            "[[ addon.name ]]",
        ];
        let mut seed: u64 = 0x5eed;
        let mut next = || {
            // xorshift64: deterministic, no dependency.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut rendered = 0;
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            if let Some(ours) = render(&text, &d, &c) {
                rendered += 1;
                assert_eq!(Some(ours), tera_render(&text, &d, &c), "{text:?}");
            }
        }
        assert!(
            rendered > 1_000,
            "only {rendered} random templates were plain"
        );
    }
}

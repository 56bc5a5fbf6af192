//! Helm's `--set` / `--set-string` expressions (`a.b=1,c[0]=x,d={e,f}`) into a values tree,
//! typed as Helm types them (helm/helm `pkg/strvals/parser.go`, `typedVal`): `true`, `false`
//! and `null` (any case) and base-10 integers without a leading zero become booleans, null
//! and integers; everything else (`6.10`, `1e3`, `0x1F`, `010`, `on`) stays a string.
//! `--set-string` keeps every value a string. The flag names belong to the CLI: errors here
//! name only the expression.
use serde_json::{Map, Value as Json};

/// How scalar values are typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typing {
    /// Helm's `--set`: booleans, null and plain integers are typed, the rest are strings.
    Helm,
    /// Helm's `--set-string`: every value is a string.
    Strings,
}

/// Helm caps list indexes so that `a[99999999]=x` cannot allocate a huge list.
const MAX_INDEX: usize = 65_536;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Applies one expression (one or more comma-separated `KEY=VALUE` pairs) to `values`.
pub fn apply(values: &mut Map<String, Json>, expr: &str, typing: Typing) -> Result<(), String> {
    for pair in split_unescaped(expr, ',', true) {
        let Some((key, value)) = split_once_unescaped(&pair, '=') else {
            return Err(format!("`{pair}` is not KEY=VALUE"));
        };
        let path = parse_key(&key).map_err(|why| format!("`{pair}`: {why}"))?;
        let value = parse_value(&value, typing);
        let mut root = Json::Object(std::mem::take(values));
        let result = set(&mut root, &path, value);
        if let Json::Object(map) = root {
            *values = map;
        }
        result.map_err(|why| format!("`{pair}`: {why}"))?;
    }
    Ok(())
}

/// Helm's typing of one unquoted scalar.
pub fn typed(text: &str) -> Json {
    if text.eq_ignore_ascii_case("true") {
        return Json::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Json::Bool(false);
    }
    if text.eq_ignore_ascii_case("null") {
        return Json::Null;
    }
    if text == "0" {
        return Json::from(0_i64);
    }
    // Go's strconv.ParseInt(s, 10, 64): an optional sign, then ASCII digits only.
    if !text.starts_with('0') {
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(number) = text.parse::<i64>()
        {
            return Json::from(number);
        }
    }
    Json::String(text.to_string())
}

fn parse_value(text: &str, typing: Typing) -> Json {
    let scalar = |s: &str| match typing {
        Typing::Helm => typed(&unescape(s)),
        Typing::Strings => Json::String(unescape(s)),
    };
    match text.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some("") => Json::Array(Vec::new()),
        Some(inner) => Json::Array(
            split_unescaped(inner, ',', false)
                .iter()
                .map(|s| scalar(s))
                .collect(),
        ),
        None => scalar(text),
    }
}

/// `a.b[0].c` → [a, b, 0, c]; `\.` keeps a dot inside a key.
fn parse_key(key: &str) -> Result<Vec<Segment>, String> {
    let mut path = Vec::new();
    for part in split_unescaped(key, '.', false) {
        let (name, mut rest) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part.as_str(), ""),
        };
        if name.is_empty() {
            return Err("empty segment in the key".into());
        }
        path.push(Segment::Key(unescape(name)));
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("unclosed `[` in `{part}`"))?;
            let index: usize = rest[1..close]
                .parse()
                .map_err(|_| format!("`{}` is not a list index", &rest[1..close]))?;
            if index > MAX_INDEX {
                return Err(format!("index {index} is larger than {MAX_INDEX}"));
            }
            path.push(Segment::Index(index));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected `{rest}` after an index"));
            }
        }
    }
    if path.is_empty() {
        return Err("empty key".into());
    }
    Ok(path)
}

fn set(target: &mut Json, path: &[Segment], value: Json) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return Ok(());
    };
    let slot = match first {
        Segment::Key(key) => {
            if !target.is_object() {
                *target = Json::Object(Map::new());
            }
            let Json::Object(map) = target else {
                return Err("not a map".into());
            };
            map.entry(key.clone()).or_insert(Json::Null)
        }
        Segment::Index(index) => {
            if !target.is_array() {
                *target = Json::Array(Vec::new());
            }
            let Json::Array(list) = target else {
                return Err("not a list".into());
            };
            if list.len() <= *index {
                list.resize(index + 1, Json::Null);
            }
            &mut list[*index]
        }
    };
    set(slot, rest, value)
}

/// Splits on `sep` where it is not escaped with `\` (and, with `braces`, not inside `{…}`);
/// escapes are kept for the later steps.
fn split_unescaped(text: &str, sep: char, braces: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                current.push(c);
                current.extend(chars.next());
            }
            '{' if braces => {
                depth += 1;
                current.push(c);
            }
            '}' if braces => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if c == sep && depth == 0 => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    parts
}

fn split_once_unescaped(text: &str, sep: char) -> Option<(String, String)> {
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            c if c == sep && !escaped => {
                return Some((text[..at].to_string(), text[at + 1..].to_string()));
            }
            _ => escaped = false,
        }
    }
    None
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(exprs: &[&str], typing: Typing) -> Json {
        let mut values = Map::new();
        for expr in exprs {
            apply(&mut values, expr, typing).expect("parses");
        }
        Json::Object(values)
    }

    #[test]
    fn types_only_what_helm_types() {
        let got = parse(
            &[
                "tag=6.10",
                "exp=1e3",
                "hex=0x1F",
                "oct=010",
                "word=on",
                "int=42",
                "neg=-7",
                "zero=0",
                "yes=TRUE",
                "no=false",
                "gone=null",
                "empty=",
                "float=1.5",
            ],
            Typing::Helm,
        );
        assert_eq!(
            got,
            json!({"tag": "6.10", "exp": "1e3", "hex": "0x1F", "oct": "010", "word": "on",
                   "int": 42, "neg": -7, "zero": 0, "yes": true, "no": false, "gone": null,
                   "empty": "", "float": "1.5"})
        );
    }

    #[test]
    fn set_string_keeps_strings() {
        let got = parse(&["a=42,b=true,c={1,x}"], Typing::Strings);
        assert_eq!(got, json!({"a": "42", "b": "true", "c": ["1", "x"]}));
    }

    #[test]
    fn nests_keys_indexes_lists_and_escapes() {
        let got = parse(
            &[
                "image.tag=1.2.3,replicas=2",
                "args[1]=--v=2",
                "list={a,b,3}",
                r"annotations.example\.com/x=a\,b",
                "a.b[0].c=x",
            ],
            Typing::Helm,
        );
        assert_eq!(
            got,
            json!({"image": {"tag": "1.2.3"}, "replicas": 2, "args": [null, "--v=2"],
                   "list": ["a", "b", 3], "annotations": {"example.com/x": "a,b"},
                   "a": {"b": [{"c": "x"}]}})
        );
    }

    #[test]
    fn later_expressions_merge_into_earlier_ones() {
        let got = parse(&["a.b=1", "a.c=2", "a.b=3"], Typing::Helm);
        assert_eq!(got, json!({"a": {"b": 3, "c": 2}}));
    }

    #[test]
    fn rejects_what_helm_rejects() {
        for bad in ["novalue", "a..b=1", "a[x]=1", "a[1=2", "a[70000]=1", "=1"] {
            let mut values = Map::new();
            assert!(apply(&mut values, bad, Typing::Helm).is_err(), "{bad}");
        }
    }
}

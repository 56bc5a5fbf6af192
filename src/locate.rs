//! Line and column of things in a blueprint's text files (the manifest, templates, catalog
//! entries), for findings. serde_yaml keeps no positions, so these search the text; each
//! falls back to the enclosing item, never to a made-up place. Pure.
use regex::Regex;

/// 1-based line and column of byte offset `at`.
pub fn position(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, column)
}

/// The first occurrence of `needle` (1:1 when absent).
pub fn locate(text: &str, needle: &str) -> (usize, usize) {
    text.find(needle)
        .map(|at| position(text, at))
        .unwrap_or((1, 1))
}

/// Where a template reads `var`: its first whole-word use after an opening delimiter on
/// the same line.
pub fn variable(text: &str, var: &str, variable_start: &str, block_start: &str) -> (usize, usize) {
    let Ok(word) = Regex::new(&format!(r"\b{}\b", regex::escape(var))) else {
        return (1, 1);
    };
    for m in word.find_iter(text) {
        let line_start = text[..m.start()].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let before = &text[line_start..m.start()];
        if before.contains(variable_start) || before.contains(block_start) {
            return position(text, m.start());
        }
    }
    locate(text, var)
}

/// `field:` inside the list item `- ITEM_KEY: KEY` of the top-level `section:`; the item
/// itself when the field is not written there.
pub fn item_field(
    text: &str,
    section: &str,
    item_key: &str,
    key: &str,
    field: &str,
) -> Option<(usize, usize)> {
    let from = Regex::new(&format!(r"(?m)^{}:", regex::escape(section)))
        .ok()?
        .find(text)?
        .end();
    let start = Regex::new(&format!(
        r#"(?m)^(\s*)-\s*{}:\s*["']?{}["']?\s*$"#,
        regex::escape(item_key),
        regex::escape(key)
    ))
    .ok()?
    .captures_at(text, from)?;
    let whole = start.get(0)?;
    let indent = start
        .get(1)
        .map(|m| m.as_str().trim_start_matches('\n'))
        .unwrap_or("");
    let rest = &text[whole.end()..];
    // The item ends at the next sibling item or a less indented line.
    let end = Regex::new(&format!(r"(?m)^({indent}-|\S)"))
        .ok()
        .and_then(|re| re.find(rest))
        .map(|m| whole.end() + m.start())
        .unwrap_or(text.len());
    let item_at = whole.start() + whole.as_str().len() - whole.as_str().trim_start().len();
    let field_at = Regex::new(&format!(r"(?m)^\s*(-\s*)?{}:", regex::escape(field)))
        .ok()
        .and_then(|re| re.find(&text[item_at..end]))
        .map(|m| item_at + m.start() + m.as_str().len() - m.as_str().trim_start().len());
    Some(position(text, field_at.unwrap_or(item_at)))
}

/// `key:` under the top-level mapping `section:` (e.g. `defaults:` → `region:`), else the
/// section, else 1:1.
pub fn section_key(text: &str, section: &str, key: &str) -> (usize, usize) {
    let Some(start) = Regex::new(&format!(r"(?m)^{}:", regex::escape(section)))
        .ok()
        .and_then(|re| re.find(text))
    else {
        return (1, 1);
    };
    let rest = &text[start.end()..];
    let end = Regex::new(r"(?m)^\S")
        .ok()
        .and_then(|re| re.find(rest))
        .map(|m| start.end() + m.start())
        .unwrap_or(text.len());
    let body = &text[start.end()..end];
    let found = Regex::new(&format!(
        r#"(?m)(^\s+|-\s*|\[\s*|,\s*)["']?{}["']?\s*(:|,|\]|$)"#,
        regex::escape(key)
    ))
    .ok()
    .and_then(|re| re.captures(body))
    .and_then(|c| {
        c.get(0)
            .map(|m| (m, c.get(1).map_or(0, |p| p.as_str().len())))
    });
    match found {
        Some((m, lead)) => position(text, start.end() + m.start() + lead),
        None => position(text, start.start()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = "name: x\nquestions:\n  - key: a\n    prompt: A\n    when: b\n  - key: b\n    prompt: B\ndefaults:\n  region: x\nremove_files:\n  - files/a.yaml\n  - \"files/b/**\"\n";

    #[test]
    fn finds_fields_of_questions_and_sections() {
        let question = |key, field| item_field(MANIFEST, "questions", "key", key, field);
        assert_eq!(question("a", "when"), Some((5, 5)));
        assert_eq!(question("b", "when"), Some((6, 3)));
        assert_eq!(section_key(MANIFEST, "defaults", "region"), (9, 3));
        assert_eq!(section_key(MANIFEST, "remove_files", "files/b/**"), (12, 5));
        assert_eq!(question("zzz", "when"), None);
    }

    #[test]
    fn finds_a_variable_inside_delimiters() {
        let text = "team: x\nowner: [[ team ]]\n";
        assert_eq!(variable(text, "team", "[[", "[%"), (2, 11));
    }
}

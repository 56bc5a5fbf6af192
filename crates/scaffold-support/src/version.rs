//! Blueprint versions and the ranges `extends_version` pins a base to. Versions are
//! `MAJOR.MINOR.PATCH` (a leading `v` and a pre-release suffix are ignored). Pure.
use crate::error::{Error, Result};

pub type Version = (u64, u64, u64);

/// `1.2.3` → (1, 2, 3); missing or non-numeric parts count as 0.
pub fn tuple(version: &str) -> Version {
    let mut parts = version.trim().trim_start_matches('v').split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or(0)
    });
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// Whether `version` is written out as MAJOR.MINOR.PATCH (an optional `-pre` suffix), as
/// a blueprint's `version` must be: `0.1` would compare equal to `0.1.0` and `0.1.9` alike
/// in nobody's mind.
pub fn is_exact(version: &str) -> bool {
    let core = version.split_once('-').map_or(version, |(core, _)| core);
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// `version` completed to three parts (`0.1` → `0.1.0`), for a suggestion.
pub fn completed(version: &str) -> String {
    let (major, minor, patch) = tuple(version);
    format!("{major}.{minor}.{patch}")
}

/// Whether `version` satisfies `range`: comma-separated clauses, each `>=V`, `>V`, `<=V`,
/// `<V`, `=V`, `^V` (same major, or same minor below 1.0) or `~V` (same minor).
pub fn matches(range: &str, version: &str) -> Result<bool> {
    let have = tuple(version);
    for clause in range.split(',').map(str::trim) {
        let (op, rest) = match clause.find(|c: char| c.is_ascii_digit() || c == 'v') {
            Some(i) => clause.split_at(i),
            None => ("", clause),
        };
        if rest.is_empty() || tuple(rest) == (0, 0, 0) && !rest.starts_with('0') {
            return Err(Error::input(format!(
                "extends_version: `{clause}` is not a version clause (e.g. `>=1.2, <2`, `^1.4`, `~1.4.0`)"
            )));
        }
        let want = tuple(rest);
        let ok = match op.trim() {
            ">=" => have >= want,
            ">" => have > want,
            "<=" => have <= want,
            "<" => have < want,
            "=" | "" => have == want,
            "^" if want.0 == 0 => have.0 == 0 && have.1 == want.1 && have >= want,
            "^" => have.0 == want.0 && have >= want,
            "~" => have.0 == want.0 && have.1 == want.1 && have >= want,
            other => {
                return Err(Error::input(format!(
                    "extends_version: unknown operator `{other}` in `{clause}` (use >=, >, <=, <, =, ^ or ~)"
                )));
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let yes = |r: &str, v: &str| matches(r, v).expect("valid range");
        assert!(yes(">=1.2, <2", "1.9.0"));
        assert!(!yes(">=1.2, <2", "2.0.0"));
        assert!(yes("^0.3", "0.3.7"));
        assert!(!yes("^0.3", "0.4.0"));
        assert!(yes("~1.4.0", "1.4.9"));
        assert!(!yes("~1.4.0", "1.5.0"));
        assert!(yes("1.0.0", "1.0.0"));
        assert!(matches("!1", "1.0.0").is_err());
    }
}

//! "Did you mean …?" for names a user or a blueprint got wrong: the close candidates by edit
//! distance. A leaf: every layer that reports an unknown name uses it. Pure.

/// ` (did you mean `x`?)` for the closest candidate, or nothing.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, c)| *d <= 2.max(name.len() / 3) || c.contains(name) || name.contains(*c))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

/// Up to `n` candidates within three edits of `name` (or containing it, or contained in it),
/// closest first, ties by name.
pub fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|known| (strsim::levenshtein(name, known), known))
        .filter(|(d, known)| *d <= 3 || known.contains(name) || name.contains(*known))
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, known)| known).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name() {
        assert_eq!(
            did_you_mean("regoin", ["region", "name", "zone"]),
            " (did you mean `region`?)"
        );
        assert_eq!(did_you_mean("zzzzzz", ["region"]), "");
        assert_eq!(
            closest(
                "extrnal-dns",
                ["external-dns", "cert-manager", "external-secrets"],
                3
            ),
            ["external-dns"]
        );
    }
}

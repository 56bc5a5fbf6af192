//! A question's pattern (`regex`, `item_regex`, `value_regex`), checked by lint and matched
//! against answers. The syntax and the matches are the `regex` crate's (the same parser and
//! NFA, which `regex` wraps), but each pattern here is matched once or twice, so it is
//! compiled to a Thompson NFA only and run by a PikeVM: `regex::Regex::new` also builds the
//! reverse NFA and the lazy DFA, and each compiler zeroes its own 10,000-entry UTF-8 cache,
//! which was 7.5 % of the default blueprint's `new --dry-run` (BENCHMARKS.md, round two,
//! fourth step). One compiler per thread keeps that cache for every pattern.
use regex_automata::nfa::thompson::{self, pikevm::PikeVM};

/// `regex::Regex::new`'s default limit on a compiled pattern.
const SIZE_LIMIT: usize = 10 << 20;

thread_local! {
    static COMPILER: thompson::Compiler = {
        let mut compiler = thompson::Compiler::new();
        compiler.configure(
            thompson::Config::new()
                .nfa_size_limit(Some(SIZE_LIMIT))
                .which_captures(thompson::WhichCaptures::Implicit),
        );
        compiler
    };
}

/// `pattern` compiled, or what is wrong with it in `regex`'s words (the syntax error's
/// text, as `regex::Error` shows it).
pub fn compile(pattern: &str) -> Result<PikeVM, String> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    let nfa = COMPILER.with(|compiler| {
        compiler
            .build_from_hir(&hir)
            .map_err(|e| match e.size_limit() {
                Some(limit) => format!("Compiled regex exceeds size limit of {limit} bytes."),
                None => e.to_string(),
            })
    })?;
    PikeVM::new_from_nfa(nfa).map_err(|e| e.to_string())
}

/// Each pattern compiled once per run: every environment's answers are checked against
/// the same patterns (compiling was 7 % of a ten-environment `new`'s CPU, BENCHMARKS.md
/// round three e), on every core (once per thread, it was still 6.7 % of a
/// three-environment dry run's samples: round three g). A run meets a few dozen patterns.
static COMPILED: std::sync::Mutex<std::collections::BTreeMap<String, Result<PikeVM, String>>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Whether `pattern` matches anywhere in `text` (as `regex::Regex::is_match`).
pub fn is_match(pattern: &str, text: &str) -> Result<bool, String> {
    let known = COMPILED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(pattern)
        .cloned();
    let vm = match known {
        Some(vm) => vm,
        // Compiled with the lock released: another thread may compile it too, and the
        // first one in is kept (both are the same pattern's).
        None => {
            let vm = compile(pattern);
            let mut map = COMPILED
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            map.entry(pattern.to_string()).or_insert(vm).clone()
        }
    }?;
    let mut cache = vm.create_cache();
    Ok(vm.is_match(&mut cache, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same answers as `regex::Regex` for patterns of the kinds blueprints use
    /// (anchors, bounded repeats, Unicode classes, flags) and the same text for errors.
    /// A pattern is compiled once per thread: asked again, it answers as the first time,
    /// a bad one with the same error.
    #[test]
    fn a_pattern_asked_again_answers_the_same() {
        for _ in 0..3 {
            assert_eq!(is_match(r"^[a-z]+$", "abc"), Ok(true));
            assert_eq!(is_match(r"^[a-z]+$", "ab1"), Ok(false));
            assert_eq!(
                is_match("a(", "a"),
                Err(compile("a(").err().unwrap_or_default())
            );
            assert!(is_match("a(", "a").is_err());
        }
    }

    #[test]
    fn matches_and_refuses_as_the_regex_crate_does() {
        let patterns = [
            r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$",
            r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$",
            r"^(https|ssh)://[^\s/]+/\S+$",
            r"^\w+$",
            r"(?i)^prod$",
            r"\bdev\b",
            r"^1\.[0-9]{2}\.[0-9]+$",
            r"^\p{Greek}+$",
            "",
        ];
        let texts = [
            "",
            "a",
            "my-cluster",
            "-bad",
            "example.com",
            "a.b.co",
            "https://github.com/o/r",
            "ssh://h/x y",
            "héllo",
            "PROD",
            "Prod",
            "a dev b",
            "devops",
            "1.33.2",
            "1.3.2",
            "αβγ",
            "a\u{0}b",
            "line\nbreak",
        ];
        for pattern in patterns {
            let reference = regex::Regex::new(pattern).expect("compiles");
            for text in texts {
                assert_eq!(
                    is_match(pattern, text),
                    Ok(reference.is_match(text)),
                    "{pattern:?} on {text:?}"
                );
            }
        }
        for bad in ["(", "[z-a]", r"\p{Nope}", "a{3,2}", "x{1000000}"] {
            let reference = regex::Regex::new(bad).expect_err("refused").to_string();
            let ours = compile(bad).err().unwrap_or_default();
            assert_eq!(
                ours.lines().last().map(str::trim),
                reference.lines().last().map(str::trim),
                "{bad:?}"
            );
        }
    }
}

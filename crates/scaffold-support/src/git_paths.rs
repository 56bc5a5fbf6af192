//! The paths and special files git itself rejects (read-tree's `verify_path` and fsck's
//! rules, git's path.c, utf8.c and fsck.c), so a blueprint never renders a file that
//! `git fsck` or a push to a host with `receive.fsckObjects` refuses.
//! - a segment that is `.git` on any filesystem: any case, with the code points HFS+
//!   ignores, or as NTFS reads it (trailing dots and spaces, `:stream`, the 8.3 `git~1`);
//! - `.gitmodules` with a URL or path that looks like a command-line option or holds a
//!   newline, or a submodule name that climbs out with `..`;
//! - `.gitattributes` with a line over 2,048 bytes or larger than 100 MB.
//! - a branch name `git check-ref-format --branch` refuses (refs.c, `check_refname_format`).

/// What is wrong with one path segment, if anything.
pub fn segment_rule(segment: &str) -> Option<&'static str> {
    if is_dotgit(segment) {
        return Some(
            "is .git as Windows (NTFS) or macOS (HFS+) reads it; git refuses every such spelling",
        );
    }
    if segment.chars().any(|c| c.is_control()) {
        return Some("holds a control character");
    }
    None
}

/// Whether `name` is a branch name git accepts (refs.c `check_refname_format` on
/// `refs/heads/NAME`, as libgit2's `git_branch_name_is_valid`), and not an option (`-x`).
pub fn is_valid_branch(name: &str) -> bool {
    let bad_char = |c: char| {
        c.is_ascii_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')
    };
    !name.is_empty()
        && name != "HEAD"
        && !name.starts_with('-')
        && !name.ends_with('.')
        && !name.contains("..")
        && !name.contains("@{")
        && !name.chars().any(bad_char)
        && name
            .split('/')
            .all(|c| !c.is_empty() && !c.starts_with('.') && !c.ends_with(".lock"))
}

/// `.git` as git's `is_hfs_dotgit` and `is_ntfs_dotgit` read a name.
fn is_dotgit(segment: &str) -> bool {
    if segment.is_ascii() {
        // No HFS-ignorable code point is ASCII: compare in place (every rendered path's
        // segments pass here).
        let base = segment.split(':').next().unwrap_or_default();
        let trimmed = base.trim_end_matches([' ', '.']);
        return trimmed.eq_ignore_ascii_case(".git") || trimmed.eq_ignore_ascii_case("git~1");
    }
    let visible: String = segment.chars().filter(|c| !hfs_ignorable(*c)).collect();
    let lower = visible.to_lowercase();
    if lower == ".git" || lower == "git~1" {
        return true;
    }
    // NTFS drops trailing dots and spaces, and `name:stream` is `name`.
    let base = lower.split(':').next().unwrap_or_default();
    let trimmed = base.trim_end_matches([' ', '.']);
    trimmed == ".git" || trimmed == "git~1"
}

/// Code points HFS+ ignores when it compares names (git's utf8.c `next_hfs_char`).
fn hfs_ignorable(c: char) -> bool {
    matches!(c as u32, 0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff)
}

/// The name as git compares special files: case-insensitive, HFS-ignorable code points
/// and NTFS's trailing dots and spaces dropped.
fn special_name(last: &str) -> String {
    let visible: String = last.chars().filter(|c| !hfs_ignorable(*c)).collect();
    visible
        .to_lowercase()
        .trim_end_matches([' ', '.'])
        .to_string()
}

/// What git's fsck would reject in a file's contents, by its path.
pub fn content_rule(path: &str, contents: &[u8]) -> Option<String> {
    let last = path.rsplit('/').next().unwrap_or(path);
    if last.is_ascii() && !last.starts_with('.') {
        return None; // every special name starts with a dot; only HFS hides one
    }
    match special_name(last).as_str() {
        ".gitattributes" => {
            if contents.len() > 100 * 1024 * 1024 {
                return Some(".gitattributes is larger than 100 MB (git ignores it; fsck: gitattributesLarge)".into());
            }
            contents
                .split(|b| *b == b'\n')
                .position(|line| line.len() > 2048)
                .map(|n| {
                    format!(
                        ".gitattributes line {} is longer than 2048 bytes (git ignores it; fsck: gitattributesLineLength)",
                        n + 1
                    )
                })
        }
        ".gitmodules" => gitmodules_rule(&String::from_utf8_lossy(contents)),
        _ => None,
    }
}

fn gitmodules_rule(text: &str) -> Option<String> {
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(name) = line
            .strip_prefix("[submodule")
            .and_then(|rest| rest.trim().strip_suffix(']'))
        {
            let name = name.trim().trim_matches('"');
            if name.split(['/', '\\']).any(|part| part == "..") {
                return Some(format!(
                    ".gitmodules line {}: submodule name `{name}` climbs out with `..` (fsck: gitmodulesName)",
                    n + 1
                ));
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_lowercase(), value.trim().trim_matches('"'));
        let rule = match key.as_str() {
            "url" if value.starts_with('-') => {
                "looks like a command-line option (fsck: gitmodulesUrl)"
            }
            "url" if value.contains("\\n") || value.contains('\r') => {
                "holds a newline (fsck: gitmodulesUrl)"
            }
            "path" if value.starts_with('-') => {
                "looks like a command-line option (fsck: gitmodulesPath)"
            }
            _ => continue,
        };
        return Some(format!(
            ".gitmodules line {}: {key} `{value}` {rule}",
            n + 1
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_dot_git_is_refused() {
        for name in [
            ".git",
            ".GIT",
            ".Git.",
            ".git ",
            ".git. . ",
            "git~1",
            "GIT~1",
            ".git::$INDEX_ALLOCATION",
            ".g\u{200c}it",
            "\u{feff}.git",
            ".gi\u{206f}t",
        ] {
            assert!(segment_rule(name).is_some(), "{name:?}");
        }
        for name in [".github", ".gitignore", "git", ".gitx", "x.git", "git~2"] {
            assert_eq!(segment_rule(name), None, "{name:?}");
        }
    }

    #[test]
    fn special_files_follow_fsck() {
        assert!(
            content_rule(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = a\n\turl = --upload-pack=evil\n"
            )
            .is_some()
        );
        assert!(
            content_rule(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = -a\n\turl = https://x/y\n"
            )
            .is_some()
        );
        assert!(content_rule(".gitmodules", b"[submodule \"../../x\"]\n\tpath = a\n").is_some());
        assert_eq!(
            content_rule(
                ".gitmodules",
                b"[submodule \"a\"]\n\tpath = a\n\turl = https://example.org/a.git\n"
            ),
            None
        );
        let long = format!("*.txt {}\n", "a".repeat(2050));
        assert!(content_rule("sub/.gitattributes", long.as_bytes()).is_some());
        assert!(content_rule(".GITATTRIBUTES ", long.as_bytes()).is_some());
        assert_eq!(content_rule(".gitattributes", b"*.sh text eol=lf\n"), None);
        assert_eq!(content_rule("notes.txt", long.as_bytes()), None);
    }

    #[test]
    fn branch_names_follow_git() {
        for name in [
            "main",
            "release/1.2",
            "feature/x-y",
            "a.b",
            "@",
            "HEAD",
            "-x",
            "a..b",
            "a/.b",
            "a.lock",
            "a/b.lock/c",
            "a/",
            "/a",
            "a//b",
            "a.",
            "a@{b",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a\tb",
            "caf\u{e9}",
            "a@b",
            "x/@",
            "",
        ] {
            let git = !name.starts_with('-') && git2::Branch::name_is_valid(name).unwrap_or(false);
            assert_eq!(is_valid_branch(name), git, "{name:?}");
        }
    }
}

//! Changing an existing repo: from the rendering it was made from (`old`), the rendering
//! it should now have (`new`) and the files as they are, the writes and deletions that
//! get it there without undoing anything the user wrote. Pure: file reads are injected.
use std::collections::BTreeSet;

use similar::TextDiff;

use crate::error::{Error, Problem, Result};
use crate::merge::{Hunk, conflicts, first_difference, merge3};
use crate::plan::{Plan, RelPath};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Write {
        path: RelPath,
        contents: Vec<u8>,
        before: Option<Vec<u8>>,
    },
    Delete {
        path: RelPath,
        before: Vec<u8>,
    },
}

impl Change {
    pub fn path(&self) -> &RelPath {
        match self {
            Change::Write { path, .. } | Change::Delete { path, .. } => path,
        }
    }
}

/// What both the user and the new rendering changed, so scaffold cannot decide alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub path: RelPath,
    pub kind: ConflictKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConflictKind {
    /// Both changed the same lines: the hunks, the file with git-style markers, and the
    /// file as it is.
    Lines {
        hunks: Vec<Hunk>,
        marked: Vec<u8>,
        before: Vec<u8>,
    },
    /// Both changed a file that is not text.
    Binary,
    /// New in the rendering, but a file with other content is already there.
    Exists,
    /// Gone from the rendering, but the user edited it.
    EditedButRemoved,
    /// Changed in the rendering, but the user deleted it.
    DeletedButChanged,
}

impl Conflict {
    /// Why, in the words the refusal uses.
    pub fn why(&self) -> &'static str {
        match self.kind {
            ConflictKind::Lines { .. } | ConflictKind::Binary => {
                "your edits and scaffold's change touch the same lines"
            }
            ConflictKind::Exists => "exists with other content; move it away first",
            ConflictKind::EditedButRemoved => {
                "was edited since scaffold wrote it and would be removed; undo or move your edits first"
            }
            ConflictKind::DeletedButChanged => {
                "was deleted, but scaffold needs to change it; restore it from git first"
            }
        }
    }
}

/// The clean changes and the conflicts of going from `old` to `new`.
#[derive(Debug, Default)]
pub struct Merge {
    pub changes: Vec<Change>,
    pub conflicts: Vec<Conflict>,
}

/// The changes from `old` to `new`, refused (with nothing changed) at the first conflict.
pub fn changes(
    old: &Plan,
    new: &Plan,
    read: impl Fn(&RelPath) -> Result<Option<Vec<u8>>>,
) -> Result<Vec<Change>> {
    let merge = merge(old, new, &read, "scaffold")?;
    let Some(conflict) = merge.conflicts.first() else {
        return Ok(merge.changes);
    };
    let text = |bytes: Option<&Vec<u8>>| {
        String::from_utf8_lossy(bytes.map_or(&[][..], |b| b)).into_owned()
    };
    let disk = read(&conflict.path)?;
    let hunk = match &conflict.kind {
        ConflictKind::Lines { hunks, .. } => hunks.first().cloned(),
        ConflictKind::Exists => {
            first_difference(&text(disk.as_ref()), &text(new.files.get(&conflict.path)))
        }
        ConflictKind::EditedButRemoved => {
            first_difference(&text(disk.as_ref()), &text(old.files.get(&conflict.path))).map(|h| {
                Hunk {
                    base: h.theirs,
                    theirs: String::new(),
                    ..h
                }
            })
        }
        ConflictKind::Binary | ConflictKind::DeletedButChanged => None,
    };
    Err(refusal(&conflict.path, conflict.why(), hunk))
}

/// A refusal naming the file and, where there is one, the first hunk: what scaffold wrote,
/// what is there now and what scaffold would write, so the user can act on it.
fn refusal(path: &RelPath, why: &str, hunk: Option<Hunk>) -> Error {
    let Some(hunk) = hunk else {
        return Error::refused(
            Problem::new(format!("{}: {why}", path.as_str())).fix("nothing was changed"),
        );
    };
    let mut message = format!(
        "{}:{}: {why}; nothing was changed",
        path.as_str(),
        hunk.line
    );
    let sides = [
        ("scaffold wrote (base)", &hunk.base),
        ("yours (now on disk)", &hunk.ours),
        ("scaffold would write (new)", &hunk.theirs),
    ];
    for (label, side) in sides {
        let lines: Vec<&str> = side.lines().collect();
        if label.ends_with("(base)") && lines.is_empty() {
            continue;
        }
        message.push_str(&format!("\n  {label}:"));
        if lines.is_empty() {
            message.push_str("\n    (nothing)");
        }
        for line in lines.iter().take(12) {
            message.push_str(&format!("\n    | {line}"));
        }
        if lines.len() > 12 {
            message.push_str(&format!("\n    … {} more line(s)", lines.len() - 12));
        }
    }
    Error::refused(message)
}

/// Every change from `old` to `new` onto the files as `read` finds them; `label` names the
/// new rendering in conflict markers.
pub fn merge(
    old: &Plan,
    new: &Plan,
    read: impl Fn(&RelPath) -> Result<Option<Vec<u8>>>,
    label: &str,
) -> Result<Merge> {
    let paths: BTreeSet<&RelPath> = old.files.keys().chain(new.files.keys()).collect();
    let mut out = Merge::default();
    for path in paths {
        let (before, after) = (old.files.get(path), new.files.get(path));
        if before == after {
            continue;
        }
        let disk = read(path)?;
        let mut conflict = |kind| {
            out.conflicts.push(Conflict {
                path: path.clone(),
                kind,
            })
        };
        match (before, after, disk) {
            (None, Some(after), None) => out.changes.push(Change::Write {
                path: path.clone(),
                contents: after.clone(),
                before: None,
            }),
            // Already on disk as scaffold would write it, but maybe not committed: still a
            // change, so the commit holds it and an uncommitted copy is refused as dirty.
            (None, Some(after), Some(disk)) if &disk == after => out.changes.push(Change::Write {
                path: path.clone(),
                contents: after.clone(),
                before: Some(disk),
            }),
            (None, Some(_), Some(_)) => conflict(ConflictKind::Exists),
            (Some(_), None, None) => {}
            (Some(before), None, Some(disk)) if &disk == before => {
                out.changes.push(Change::Delete {
                    path: path.clone(),
                    before: disk,
                })
            }
            (Some(_), None, Some(_)) => conflict(ConflictKind::EditedButRemoved),
            (Some(_), Some(_), None) => conflict(ConflictKind::DeletedButChanged),
            (Some(before), Some(after), Some(disk)) => {
                let texts = (
                    std::str::from_utf8(before),
                    std::str::from_utf8(&disk),
                    std::str::from_utf8(after),
                );
                match texts {
                    (Ok(b), Ok(d), Ok(a)) => match merge3(b, d, a) {
                        Some(merged) if merged.as_bytes() == disk => {}
                        Some(merged) => out.changes.push(Change::Write {
                            path: path.clone(),
                            contents: merged.into_bytes(),
                            before: Some(disk),
                        }),
                        None => {
                            let found = conflicts(b, d, a, label);
                            conflict(ConflictKind::Lines {
                                hunks: found.hunks,
                                marked: found.marked.into_bytes(),
                                before: disk,
                            });
                        }
                    },
                    _ if &disk == before => out.changes.push(Change::Write {
                        path: path.clone(),
                        contents: after.clone(),
                        before: Some(disk),
                    }),
                    _ if &disk == after => {}
                    _ => conflict(ConflictKind::Binary),
                }
            }
            (None, None, _) => {}
        }
    }
    Ok(out)
}

/// A unified diff of the changes, for `--dry-run`.
pub fn unified_diff(changes: &[Change]) -> String {
    let mut out = String::new();
    for change in changes {
        let (before, after) = match change {
            Change::Write {
                contents, before, ..
            } => (before.clone().unwrap_or_default(), contents.clone()),
            Change::Delete { before, .. } => (before.clone(), Vec::new()),
        };
        let (before, after) = (
            String::from_utf8_lossy(&before),
            String::from_utf8_lossy(&after),
        );
        let path = change.path().as_str();
        let old_name = if matches!(change, Change::Write { before: None, .. }) {
            "/dev/null".to_string()
        } else {
            format!("a/{path}")
        };
        let new_name = if matches!(change, Change::Delete { .. }) {
            "/dev/null".to_string()
        } else {
            format!("b/{path}")
        };
        out.push_str(
            &TextDiff::from_lines(before.as_ref(), after.as_ref())
                .unified_diff()
                .header(&old_name, &new_name)
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_conflict_is_collected_and_clean_changes_kept() {
        let old = Plan::of_texts(&[
            ("edited-removed", "a\n"),
            ("deleted-changed", "a\n"),
            ("lines", "a\nb\n"),
            ("clean", "a\n"),
        ]);
        let new = Plan::of_texts(&[
            ("exists", "new\n"),
            ("deleted-changed", "b\n"),
            ("lines", "a\nB\n"),
            ("clean", "a\nc\n"),
        ]);
        let disk = Plan::of_texts(&[
            ("exists", "mine\n"),
            ("edited-removed", "a\nmine\n"),
            ("lines", "a\nmine\n"),
            ("clean", "# mine\na\n"),
        ]);
        let merge = merge(&old, &new, |p| Ok(disk.files.get(p).cloned()), "new").expect("merge");
        let kinds: Vec<(&str, &str)> = merge
            .conflicts
            .iter()
            .map(|c| {
                let kind = match &c.kind {
                    ConflictKind::Lines { hunks, .. } => {
                        assert_eq!(hunks.len(), 1);
                        assert_eq!(hunks[0].line, 2);
                        "lines"
                    }
                    ConflictKind::Exists => "exists",
                    ConflictKind::EditedButRemoved => "edited-removed",
                    ConflictKind::DeletedButChanged => "deleted-changed",
                    ConflictKind::Binary => "binary",
                };
                (c.path.as_str(), kind)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("deleted-changed", "deleted-changed"),
                ("edited-removed", "edited-removed"),
                ("exists", "exists"),
                ("lines", "lines"),
            ]
        );
        assert_eq!(
            merge.changes,
            [Change::Write {
                path: RelPath::new("clean").expect("path"),
                contents: b"# mine\na\nc\n".to_vec(),
                before: Some(b"# mine\na\n".to_vec()),
            }]
        );
    }
}

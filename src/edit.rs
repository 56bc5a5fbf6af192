//! Changing an existing repo: from the rendering it was made from (`old`), the rendering
//! it should now have (`new`) and the files as they are, the writes and deletions that
//! get it there without undoing anything the user wrote. Pure: file reads are injected.
use std::collections::BTreeSet;

use similar::TextDiff;

use crate::error::{Error, Result};
use crate::merge::{Hunk, conflict, first_difference, merge3};
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

pub fn changes(
    old: &Plan,
    new: &Plan,
    read: impl Fn(&RelPath) -> Result<Option<Vec<u8>>>,
) -> Result<Vec<Change>> {
    let paths: BTreeSet<&RelPath> = old.files.keys().chain(new.files.keys()).collect();
    let mut out = Vec::new();
    for path in paths {
        let (before, after) = (old.files.get(path), new.files.get(path));
        if before == after {
            continue;
        }
        let disk = read(path)?;
        let refuse =
            |why: &str| Error::Refused(format!("{}: {why}; nothing was changed", path.as_str()));
        match (before, after, disk) {
            (None, Some(after), None) => out.push(Change::Write {
                path: path.clone(),
                contents: after.clone(),
                before: None,
            }),
            (None, Some(after), Some(disk)) if &disk == after => {}
            (None, Some(after), Some(disk)) => {
                return Err(refuse_at(
                    path,
                    "exists with other content; move it away first",
                    first_difference(&lossy(&disk), &lossy(after)),
                ));
            }
            (Some(_), None, None) => {}
            (Some(before), None, Some(disk)) if &disk == before => out.push(Change::Delete {
                path: path.clone(),
                before: disk,
            }),
            (Some(before), None, Some(disk)) => {
                let edit = first_difference(&lossy(&disk), &lossy(before)).map(|h| Hunk {
                    base: h.theirs,
                    theirs: Vec::new(),
                    ..h
                });
                return Err(refuse_at(
                    path,
                    "was edited since scaffold wrote it and would be removed; undo or move your edits first",
                    edit,
                ));
            }
            (Some(_), Some(_), None) => {
                return Err(refuse(
                    "was deleted, but scaffold needs to change it; restore it from git first",
                ));
            }
            (Some(before), Some(after), Some(disk)) => {
                let texts = (
                    std::str::from_utf8(before),
                    std::str::from_utf8(&disk),
                    std::str::from_utf8(after),
                );
                let merged = match texts {
                    (Ok(b), Ok(d), Ok(a)) => merge3(b, d, a).map(String::into_bytes),
                    _ if &disk == before => Some(after.clone()),
                    _ => None,
                };
                match merged {
                    Some(merged) if merged == disk => {}
                    Some(merged) => out.push(Change::Write {
                        path: path.clone(),
                        contents: merged,
                        before: Some(disk),
                    }),
                    None => {
                        return Err(refuse_at(
                            path,
                            "your edits and scaffold's change touch the same lines",
                            conflict(&lossy(before), &lossy(&disk), &lossy(after)),
                        ));
                    }
                }
            }
            (None, None, _) => {}
        }
    }
    Ok(out)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A refusal that shows where: `path:line`, then the lines scaffold wrote (base), the
/// lines there now (yours) and the lines scaffold would write (new).
fn refuse_at(path: &RelPath, why: &str, hunk: Option<Hunk>) -> Error {
    let Some(hunk) = hunk else {
        return Error::Refused(format!("{}: {why}; nothing was changed", path.as_str()));
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
    for (label, lines) in sides {
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
    Error::Refused(message)
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

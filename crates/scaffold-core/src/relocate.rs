//! Files a blueprint moved between versions (`moves:` of its migrations): `update` renames
//! them in the repo's base and reads the user's file at its old path for its new one, so
//! the three-way merge carries hand edits to the new place; the old paths are then deleted.
//! Files the user added below a moved directory move with it. Pure but for the injected
//! reads (and [`Relocation::left_behind`], which lists what git does not track).
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::edit::{Change, Merge};
use crate::error::Result;
use crate::plan::{Plan, RelPath};

#[derive(Debug, Default)]
pub struct Relocation {
    /// New path → old path, for every file that moves.
    from: BTreeMap<RelPath, RelPath>,
    /// The old paths.
    away: BTreeSet<RelPath>,
    /// The moves as declared (old → new), for the report.
    declared: Vec<(String, String)>,
}

impl Relocation {
    /// The moves of `moves` (a path, or a directory ending in `/`, → its new place) that
    /// apply to `paths` (the base's and the tracked files).
    pub fn new<'a>(
        moves: &[(String, String)],
        paths: impl Iterator<Item = &'a str>,
    ) -> std::result::Result<Self, String> {
        let mut relocation = Relocation::default();
        let paths: BTreeSet<&str> = paths.collect();
        for (from, to) in moves {
            let mut any = false;
            for path in &paths {
                let new = if from.ends_with('/') {
                    match path.strip_prefix(from.as_str()) {
                        Some(rest) => format!("{}/{rest}", to.trim_end_matches('/')),
                        None => continue,
                    }
                } else if path == from {
                    to.clone()
                } else {
                    continue;
                };
                let (old, new) = (
                    RelPath::new(path).map_err(|e| format!("migrations moves: {e}"))?,
                    RelPath::new(&new).map_err(|e| format!("migrations moves `{from}`: {e}"))?,
                );
                relocation.away.insert(old.clone());
                relocation.from.insert(new, old);
                any = true;
            }
            if any {
                relocation.declared.push((from.clone(), to.clone()));
            }
        }
        Ok(relocation)
    }

    /// The base as if its files had always been at their new paths.
    pub fn rename(&self, plan: &mut Plan) {
        for (new, old) in &self.from {
            if let Some(bytes) = plan.files.remove(old) {
                plan.files.insert(new.clone(), bytes);
            }
            if plan.executable.remove(old) {
                plan.executable.insert(new.clone());
            }
        }
    }

    /// The user's file for `path`: a moved file is read at its old place until it exists at
    /// the new one; an old place reads as empty (its file has moved).
    pub fn read(
        &self,
        path: &RelPath,
        read: impl Fn(&RelPath) -> Result<Option<Vec<u8>>>,
    ) -> Result<Option<Vec<u8>>> {
        if let Some(old) = self.from.get(path) {
            return match read(path)? {
                Some(bytes) => Ok(Some(bytes)),
                None => read(old),
            };
        }
        if self.away.contains(path) {
            return Ok(None);
        }
        read(path)
    }

    /// Completes the merge: a moved file the merge left alone is written at its new path
    /// as it is, its old path deleted (unless the new rendering writes a file there), and a
    /// deletion of a new path that was never written dropped.
    pub fn complete(
        &self,
        merge: &mut Merge,
        read: impl Fn(&RelPath) -> Result<Option<Vec<u8>>>,
    ) -> Result<()> {
        merge.changes.retain(|change| match change {
            Change::Delete { path, .. } => !self.from.contains_key(path),
            Change::Write { .. } => true,
        });
        let touched = |merge: &Merge, path: &RelPath| {
            merge.changes.iter().any(|c| c.path() == path)
                || merge.conflicts.iter().any(|c| &c.path == path)
        };
        for (new, old) in &self.from {
            let Some(bytes) = read(old)? else { continue };
            if !touched(merge, new) && read(new)?.is_none() {
                merge.changes.push(Change::Write {
                    path: new.clone(),
                    contents: bytes.clone(),
                    before: None,
                });
            }
            if !touched(merge, old) {
                merge.changes.push(Change::Delete {
                    path: old.clone(),
                    before: bytes,
                });
            }
        }
        Ok(())
    }

    /// One line per declared move that applied, for the commit message.
    pub fn lines(&self) -> Vec<String> {
        self.declared
            .iter()
            .map(|(from, to)| format!("- moved {from} → {to}"))
            .collect()
    }

    /// What git does not track below a moved directory (`.terraform/`, generated files):
    /// it stays where it is, and the user is told.
    pub fn left_behind(&self, root: &Path, tracked: &[String]) -> Vec<String> {
        let tracked: BTreeSet<&str> = tracked.iter().map(String::as_str).collect();
        self.declared
            .iter()
            .filter(|(from, _)| from.ends_with('/'))
            .filter_map(|(from, to)| {
                let dir = root.join(from);
                let left: Vec<String> = std::fs::read_dir(&dir)
                    .ok()?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| {
                        let path = format!("{from}{name}");
                        !tracked.contains(path.as_str())
                            && !tracked.iter().any(|t| t.starts_with(&format!("{path}/")))
                    })
                    .collect();
                (!left.is_empty()).then(|| {
                    format!(
                        "{from}: {} git does not track stay there; move them to {to} (or re-create them there: terraform init -reconfigure, make output), then delete {from}",
                        left.join(", ")
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_directory_takes_its_files_and_the_users_own_along() {
        let moves = vec![
            ("roots/".to_string(), "envs/prod/roots/".to_string()),
            ("README.md".to_string(), "envs/prod/README.md".to_string()),
        ];
        let relocation = Relocation::new(
            &moves,
            ["roots/main.tf", "roots/mine.tf", "README.md", "other.txt"].into_iter(),
        )
        .expect("moves");
        let mut base = Plan::of_texts(&[("roots/main.tf", "a\n"), ("README.md", "r\n")]);
        relocation.rename(&mut base);
        let paths: Vec<&str> = base.files.keys().map(RelPath::as_str).collect();
        assert_eq!(paths, ["envs/prod/README.md", "envs/prod/roots/main.tf"]);
        let disk = |p: &RelPath| -> Result<Option<Vec<u8>>> {
            Ok(match p.as_str() {
                "roots/main.tf" => Some(b"a edited\n".to_vec()),
                "roots/mine.tf" => Some(b"mine\n".to_vec()),
                "README.md" => Some(b"r\n".to_vec()),
                _ => None,
            })
        };
        let at = |p: &str| RelPath::new(p).expect("path");
        assert_eq!(
            relocation
                .read(&at("envs/prod/roots/main.tf"), disk)
                .expect("read"),
            Some(b"a edited\n".to_vec())
        );
        assert_eq!(relocation.read(&at("README.md"), disk).expect("read"), None);
        let mut merge = Merge::default();
        relocation.complete(&mut merge, disk).expect("complete");
        let mut written: Vec<String> = merge
            .changes
            .iter()
            .map(|c| match c {
                Change::Write { path, .. } => format!("write {}", path.as_str()),
                Change::Delete { path, .. } => format!("delete {}", path.as_str()),
            })
            .collect();
        written.sort();
        assert_eq!(
            written,
            [
                "delete README.md",
                "delete roots/main.tf",
                "delete roots/mine.tf",
                "write envs/prod/README.md",
                "write envs/prod/roots/main.tf",
                "write envs/prod/roots/mine.tf"
            ]
        );
        assert_eq!(relocation.lines().len(), 2);
    }
}

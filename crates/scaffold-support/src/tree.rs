//! The repo as files in memory: a `Plan` (every path with its bytes, as `new` writes or an
//! edit compares them), the `RelPath` that cannot escape the repo, and a blueprint's
//! `FileTree`. A leaf: rendering fills these, writing and git read them. Pure.
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value as Json;

use crate::error::{Error, Problem, Result};

/// Files of one tree, keyed by their path relative to the tree's root (`/`-separated).
pub type FileTree = BTreeMap<String, Vec<u8>>;

/// git's blob id of `bytes` (SHA-1 of `blob LEN\0BYTES`), in lower-case hex.
pub fn blob_id(bytes: &[u8]) -> String {
    hex(&blob_digest(bytes))
}

/// git's blob id of `bytes`, as its 20 bytes. The `sha1` crate uses the CPU's SHA
/// instructions: about 3x faster than libgit2's collision-detecting SHA-1 (`Oid::hash_object`),
/// which was 17 % of `new`'s CPU at 2,000 files (BENCHMARKS.md, round two). The content is
/// our own rendering, so detecting crafted collisions buys nothing here.
pub fn blob_digest(bytes: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A repo-relative path that cannot escape the repo: no `..`, no absolute path, no empty
/// segment, no `.git`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RelPath(String);

impl RelPath {
    pub fn new(path: &str) -> std::result::Result<Self, String> {
        if path.starts_with('/') || path.contains('\\') {
            return Err(format!("`{path}` is absolute"));
        }
        for segment in path.split('/') {
            match segment {
                "" => return Err(format!("`{path}` has an empty segment")),
                "." | ".." => return Err(format!("`{path}` escapes the repository")),
                // Case-insensitive filesystems (macOS, Windows) treat .GIT as .git.
                s if s.eq_ignore_ascii_case(".git") => {
                    return Err(format!("`{path}` writes into .git"));
                }
                s => {
                    if let Some(rule) = crate::git_paths::segment_rule(s) {
                        return Err(format!("`{path}`: `{}` {rule}", s.escape_debug()));
                    }
                }
            }
        }
        Ok(RelPath(path.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Plan {
    pub files: BTreeMap<RelPath, Vec<u8>>,
    /// Files written and committed with the executable bit (mode 755).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub executable: BTreeSet<RelPath>,
    /// The blueprint file each was rendered from (for findings).
    #[serde(skip)]
    pub sources: BTreeMap<RelPath, String>,
}

#[derive(Serialize)]
struct PlannedFile<'a> {
    path: &'a RelPath,
    bytes: usize,
}

impl Plan {
    /// The git file mode the plan gives `path`: 755 where the blueprint marks it executable.
    pub fn mode_of(&self, path: &RelPath) -> i32 {
        if self.executable.contains(path) {
            0o100755
        } else {
            0o100644
        }
    }
    pub fn add(&mut self, path: RelPath, contents: Vec<u8>) -> Result<()> {
        if self.files.contains_key(&path) {
            return Err(Error::blueprint(
                Problem::new(format!("renders `{}` twice", path.as_str()))
                    .fix("make the paths distinct"),
            ));
        }
        self.files.insert(path, contents);
        Ok(())
    }

    /// A digest of a plan's paths and bytes: git's blob id of the canonical listing
    /// `path\0len\0bytes…`, hashed as it streams by rather than copied into one buffer first
    /// (records store this value, so it must not change).
    pub fn digest(&self) -> String {
        use sha1::{Digest, Sha1};
        let lengths: Vec<String> = self.files.values().map(|c| c.len().to_string()).collect();
        let total: usize = self
            .files
            .iter()
            .zip(&lengths)
            .map(|((path, contents), len)| path.as_str().len() + 1 + len.len() + 1 + contents.len())
            .sum();
        let mut hasher = Sha1::new();
        hasher.update(format!("blob {total}\0").as_bytes());
        for ((path, contents), len) in self.files.iter().zip(&lengths) {
            hasher.update(path.as_str().as_bytes());
            hasher.update([0]);
            hasher.update(len.as_bytes());
            hasher.update([0]);
            hasher.update(contents);
        }
        hex(&hasher.finalize())
    }

    /// What `--dry-run --json` prints.
    pub fn listing(&self) -> Json {
        let files: Vec<PlannedFile<'_>> = self
            .files
            .iter()
            .map(|(path, bytes)| PlannedFile {
                path,
                bytes: bytes.len(),
            })
            .collect();
        serde_json::to_value(files).unwrap_or(Json::Null)
    }
}

#[cfg(any(test, feature = "testing"))]
impl Plan {
    /// A plan of text files, for tests.
    pub fn of_texts(files: &[(&str, &str)]) -> Self {
        let mut plan = Plan::default();
        for (path, text) in files {
            plan.add(RelPath::new(path).expect("path"), text.as_bytes().to_vec())
                .expect("add");
        }
        plan
    }
}

/// A directory of files for unit tests (a blueprint on disk, say).
#[cfg(any(test, feature = "testing"))]
pub fn temp_dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::TempDir::new().expect("dir");
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_the_blob_id_of_the_listing() {
        let plan = Plan::of_texts(&[("a/b.yaml", "one\n"), ("c.tf", ""), ("d/e/f", "x")]);
        let listing = b"a/b.yaml\x004\x00one\nc.tf\x000\x00d/e/f\x001\x00x";
        let expected = git2::Oid::hash_object(git2::ObjectType::Blob, listing).expect("hash");
        assert_eq!(plan.digest(), expected.to_string());
        let blob = git2::Oid::hash_object(git2::ObjectType::Blob, b"one\n").expect("hash");
        assert_eq!(blob_id(b"one\n"), blob.to_string());
        assert_eq!(&blob_digest(b"one\n")[..], blob.as_bytes());
    }
}

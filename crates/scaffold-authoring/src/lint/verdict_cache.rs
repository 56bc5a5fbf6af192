//! `new`'s lint verdict of a blueprint from disk, kept in the user's cache directory so an
//! unchanged blueprint is linted once, not on every `new` (issue 45: the lint of a
//! blueprint with kustomize overlays costs more than rendering it). Only a passing verdict
//! is kept (the warnings `new` shows); a blueprint with lint errors is linted every time.
//!
//! Safe by construction: the entry's name is a digest of scaffold's version, the
//! blueprint's full content digest (every file of every layer, `Blueprint::content_digest`)
//! and the built-in answers lint rendered with; the entry repeats its key and is ignored
//! when it does not parse or does not match; it is written to a temporary file and renamed
//! into place. A cache that cannot be read or written is no cache: `new` lints as before.
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::blueprint::Blueprint;

/// One cached verdict: the key it was made for and the warning lines `new` prints.
#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: String,
    warnings: Vec<String>,
}

const FORMAT: u32 = 1;

/// Where verdicts are kept (settings resolve it) and the key of this blueprint's.
pub struct VerdictCache {
    file: PathBuf,
    key: String,
}

impl VerdictCache {
    /// The entry of `blueprint` linted with `builtins` under `dir`.
    pub fn of(dir: &Path, blueprint: &Blueprint, builtins: &Map<String, Json>) -> Self {
        let key = key(
            env!("CARGO_PKG_VERSION"),
            &blueprint.content_digest,
            builtins,
        );
        VerdictCache {
            file: dir.join(format!("{key}.json")),
            key,
        }
    }

    /// The warning lines of the cached passing verdict, if there is a valid one.
    pub fn read(&self) -> Option<Vec<String>> {
        let bytes = std::fs::read(&self.file).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.format == FORMAT && entry.key == self.key).then_some(entry.warnings)
    }

    /// Keeps a passing verdict; a failure to write is ignored (the next `new` lints).
    pub fn write(&self, warnings: Vec<String>) {
        let entry = Entry {
            format: FORMAT,
            key: self.key.clone(),
            warnings,
        };
        let _ = self.try_write(&entry);
    }

    fn try_write(&self, entry: &Entry) -> std::io::Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        temp.write_all(&serde_json::to_vec(entry).map_err(std::io::Error::other)?)?;
        temp.persist(&self.file).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The key of a verdict: scaffold's version, the blueprint's content digest and lint's
/// built-in answers (the target directory's name renders into paths), each
/// length-prefixed so no two triples hash the same listing.
fn key(version: &str, content_digest: &str, builtins: &Map<String, Json>) -> String {
    let builtins = Json::Object(builtins.clone()).to_string();
    let mut listing = Vec::new();
    for part in ["scaffold lint verdict", version, content_digest, &builtins] {
        listing.extend_from_slice(format!("{}:", part.len()).as_bytes());
        listing.extend_from_slice(part.as_bytes());
    }
    crate::tree::blob_id(&listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtins(dir_name: &str) -> Map<String, Json> {
        let mut map = Map::new();
        map.insert("target_dir_name".into(), Json::String(dir_name.into()));
        map
    }

    fn cache(dir: &Path, digest: &str) -> VerdictCache {
        let key = key("1.0.0", digest, &builtins("repo"));
        VerdictCache {
            file: dir.join(format!("{key}.json")),
            key,
        }
    }

    #[test]
    fn a_written_verdict_reads_back_under_its_own_key_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = cache(dir.path(), "aaaa");
        assert_eq!(first.read(), None);
        first.write(vec!["blueprint.yaml:1:1: warning: w".into()]);
        assert_eq!(
            first.read(),
            Some(vec!["blueprint.yaml:1:1: warning: w".to_string()])
        );
        assert_eq!(cache(dir.path(), "aaab").read(), None);
    }

    #[test]
    fn every_part_of_the_key_changes_it() {
        let base = key("1.0.0", "aaaa", &builtins("repo"));
        assert_ne!(base, key("1.0.1", "aaaa", &builtins("repo")));
        assert_ne!(base, key("1.0.0", "aaab", &builtins("repo")));
        assert_ne!(base, key("1.0.0", "aaaa", &builtins("other")));
        assert_eq!(base, key("1.0.0", "aaaa", &builtins("repo")));
    }

    #[test]
    fn a_corrupt_or_foreign_entry_is_no_verdict() {
        let dir = tempfile::tempdir().expect("temp dir");
        let entry = cache(dir.path(), "aaaa");
        std::fs::write(&entry.file, b"{\"format\":1,\"key\":").expect("write");
        assert_eq!(entry.read(), None);
        let other = cache(dir.path(), "bbbb");
        other.write(Vec::new());
        std::fs::copy(&other.file, &entry.file).expect("copy");
        assert_eq!(entry.read(), None, "an entry made for another key");
    }

    #[test]
    fn an_unwritable_cache_is_no_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, b"").expect("write");
        let entry = cache(&blocked.join("under-a-file"), "aaaa");
        entry.write(Vec::new());
        assert_eq!(entry.read(), None);
    }
}

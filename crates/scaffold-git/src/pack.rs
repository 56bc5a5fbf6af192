//! One git packfile and its index, built from objects already in memory (gitformat-pack(5):
//! pack version 2, idx version 2). `new` writes its whole first commit this way.
//!
//! Why not libgit2's packbuilder (`Mempack::dump`): it searches every object for deltas,
//! which was 30 % of `new`'s CPU at 2,000 files while the files of a fresh repo share
//! little. Here each object is deflated once, as zlib's fastest level would (what `git add`
//! uses for loose objects; `crate::deflate`), and the `.idx` comes from the offsets recorded
//! on the way, so nothing is inflated or hashed a second time. `git gc` deltifies later,
//! as for any repo.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid};
use sha1::{Digest, Sha1};

use crate::error::{Error, Result};

/// Offsets at or above this go to the idx's 64-bit table.
const LARGE_OFFSET: u64 = 0x8000_0000;

pub struct PackBuilder {
    bytes: Vec<u8>,
    objects: Vec<Entry>,
    ids: HashSet<Oid>,
    /// One deflater for every object (its hash table's memory is reused).
    deflate: crate::deflate::Deflater,
}

struct Entry {
    id: Oid,
    offset: u64,
    crc: u32,
}

impl Default for PackBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PackBuilder {
    pub fn new() -> Self {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"PACK");
        bytes.extend_from_slice(&2u32.to_be_bytes());
        bytes.extend_from_slice(&0u32.to_be_bytes()); // the count, filled in by `finish`
        PackBuilder {
            bytes,
            objects: Vec::new(),
            ids: HashSet::new(),
            deflate: crate::deflate::Deflater::default(),
        }
    }

    /// Appends one whole (undeltified) object whose id the caller has computed; an object
    /// already in the pack (two files with the same bytes, two equal trees) is not repeated.
    pub fn add(&mut self, id: Oid, kind: ObjectType, data: &[u8]) {
        if !self.ids.insert(id) {
            return;
        }
        let offset = self.bytes.len();
        let code: u8 = match kind {
            ObjectType::Commit => 1,
            ObjectType::Tree => 2,
            ObjectType::Tag => 4,
            _ => 3,
        };
        // Type and size: 4 size bits in the first byte, then 7 per byte, low bits first.
        let mut size = data.len();
        let mut byte = (code << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            self.bytes.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        self.bytes.push(byte);
        self.deflate.zlib(data, &mut self.bytes);
        self.objects.push(Entry {
            id,
            offset: offset as u64,
            crc: crc32fast::hash(&self.bytes[offset..]),
        });
    }

    /// The pack and idx bytes, and the pack's name (`pack-<checksum>`).
    pub fn finish(mut self) -> Finished {
        let count = u32::try_from(self.objects.len()).unwrap_or(u32::MAX);
        self.bytes[8..12].copy_from_slice(&count.to_be_bytes());
        let checksum: [u8; 20] = Sha1::digest(&self.bytes).into();
        self.bytes.extend_from_slice(&checksum);

        self.objects.sort_by_key(|entry| entry.id);
        let mut idx = Vec::with_capacity(1072 + self.objects.len() * 28);
        idx.extend_from_slice(b"\xfftOc");
        idx.extend_from_slice(&2u32.to_be_bytes());
        let mut fanout = [0u32; 256];
        for entry in &self.objects {
            fanout[entry.id.as_bytes()[0] as usize] += 1;
        }
        let mut running = 0u32;
        for slot in fanout {
            running += slot;
            idx.extend_from_slice(&running.to_be_bytes());
        }
        for entry in &self.objects {
            idx.extend_from_slice(entry.id.as_bytes());
        }
        for entry in &self.objects {
            idx.extend_from_slice(&entry.crc.to_be_bytes());
        }
        let mut large = Vec::new();
        for entry in &self.objects {
            let small = if entry.offset < LARGE_OFFSET {
                entry.offset as u32
            } else {
                large.push(entry.offset);
                0x8000_0000 | (large.len() as u32 - 1)
            };
            idx.extend_from_slice(&small.to_be_bytes());
        }
        for offset in large {
            idx.extend_from_slice(&offset.to_be_bytes());
        }
        idx.extend_from_slice(&checksum);
        let idx_checksum: [u8; 20] = Sha1::digest(&idx).into();
        idx.extend_from_slice(&idx_checksum);

        let name = format!("pack-{}", hex(&checksum));
        Finished {
            pack: self.bytes,
            idx,
            name,
        }
    }
}

pub struct Finished {
    pack: Vec<u8>,
    idx: Vec<u8>,
    name: String,
}

impl Finished {
    /// Writes `<name>.pack` and `<name>.idx` under temporary names, read-only as git leaves
    /// them, each synced to disk when `fsync` says git would sync it (by default both:
    /// `core.fsync`'s `pack` and `pack-metadata`), then renames the pack and then the idx
    /// into place, as git's `finish_tmp_packfile` (pack-write.c, v2.47.3) does: git finds a
    /// pack by its idx, so the pack is whole before anything can see it. The two syncs run
    /// side by side (the pack's on a second thread): each waits on the disk, and neither
    /// needs the other.
    pub fn write_to(&self, objects_dir: &Path, fsync: crate::durability::Fsync) -> Result<()> {
        let dir = objects_dir.join("pack");
        let pack = dir.join(format!("{}.pack", self.name));
        let idx = dir.join(format!("{}.idx", self.name));
        let written = |path: &Path, bytes: &[u8]| {
            write_read_only(path, bytes).map_err(|e| Error::io_path("write", path, e))
        };
        let synced = |path: &Path, file: std::fs::File, sync: bool| match sync {
            true => file
                .sync_all()
                .map_err(|e| Error::io_path("flush to disk", path, e)),
            false => Ok(()),
        };
        let pack_file = written(&pack, &self.pack)?;
        let (pack_synced, idx_synced) = scaffold_support::parallel::beside(
            || synced(&pack, pack_file, fsync.packs()),
            || written(&idx, &self.idx).and_then(|file| synced(&idx, file, fsync.pack_indexes())),
        );
        pack_synced.and(idx_synced)?;
        for path in [&pack, &idx] {
            std::fs::rename(temporary(path), path).map_err(|e| Error::io_path("write", path, e))?;
        }
        Ok(())
    }
}

/// Lower-case hex, as git spells ids and checksums.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Where `path` is written before it is renamed into place.
fn temporary(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.tmp", path.display()))
}

/// Writes `bytes` under `path`'s temporary name, read-only, and returns the open file for
/// the caller to sync before renaming it (a pack file is never seen half written, and
/// survives a crash once a ref names its objects). As git's `finalize_object_file`
/// (object-file.c, v2.47.3), the rename itself is not synced: git syncs no directory.
fn write_read_only(path: &Path, bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let mut file = std::fs::File::create(temporary(path))?;
    file.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o444))?;
    }
    Ok(file)
}

/// Flushes a directory's entries (a rename into it) to disk.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_the_variable_length_header() {
        // 4 bits in the first byte, then 7 per continuation byte.
        let mut pack = PackBuilder::new();
        let data = vec![b'x'; 300];
        let id = Oid::hash_object(ObjectType::Blob, &data).expect("hash");
        pack.add(id, ObjectType::Blob, &data);
        // 300 = 0b1_0010_1100: low nibble 1100 with the continuation bit, then 0b10010.
        assert_eq!(&pack.bytes[12..14], &[0x80 | (3 << 4) | 0x0c, 0x12]);
    }

    #[test]
    fn git_reads_what_is_written() {
        let dir = tempfile::TempDir::new().expect("dir");
        let repo = git2::Repository::init(dir.path()).expect("init");
        let mut pack = PackBuilder::new();
        let mut ids = Vec::new();
        for n in 0..40 {
            // Every tenth file has the same bytes: one object in the pack.
            let data = if n % 10 == 0 {
                "same\n".to_string()
            } else {
                format!("file {n}\n").repeat(n * 7)
            };
            let id = Oid::hash_object(ObjectType::Blob, data.as_bytes()).expect("hash");
            pack.add(id, ObjectType::Blob, data.as_bytes());
            ids.push((id, data));
        }
        let finished = pack.finish();
        assert_eq!(
            &finished.pack[8..12],
            &37u32.to_be_bytes(),
            "36 distinct + 1 shared"
        );
        finished
            .write_to(
                &repo.path().join("objects"),
                crate::durability::Fsync::default(),
            )
            .expect("write");
        let repo = git2::Repository::open(dir.path()).expect("reopen");
        for (id, data) in ids {
            let blob = repo.find_blob(id).expect("blob in the pack");
            assert_eq!(blob.content(), data.as_bytes());
        }
    }
}

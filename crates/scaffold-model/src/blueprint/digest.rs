//! A blueprint layer's content digest: which files count, and how their digests make
//! the layer's (`replaces` records it; build.rs computes the embedded ones with the same
//! rule, `prebuilt::tests` holds the two equal).
use crate::overrides;
use crate::tree::FileTree;

/// The file of an embedded blueprint that pins its content digest to its version (a test
/// checks it); not part of the content.
pub const VERSION_PIN: &str = "VERSION-DIGEST";

/// A layer's content digest: every file but its answer sets (`tests/`) and the version
/// pin, by path and bytes; 12 hex digits, as `replaces` records them.
pub fn layer_digest(tree: &FileTree) -> String {
    let files: Vec<(&String, &Vec<u8>)> = tree
        .iter()
        .filter(|(path, _)| in_layer_digest(path))
        .collect();
    // Each file's digest on every core: the layer's bytes are hashed in full.
    let digests = crate::parallel::map(&files, |(_, bytes)| overrides::digest(bytes));
    layer_digest_of(
        files
            .iter()
            .zip(&digests)
            .map(|((path, _), digest)| (path.as_str(), digest.as_str())),
    )
}

/// Whether `path` (layer-relative) counts in its layer's digest.
pub fn in_layer_digest(path: &str) -> bool {
    !path.starts_with("tests/") && path != VERSION_PIN
}

/// The layer digest from its counted files' digests (`overrides::digest`), in path order.
pub fn layer_digest_of<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut listing = Vec::new();
    for (path, digest) in files {
        listing.extend_from_slice(path.as_bytes());
        listing.push(0);
        listing.extend_from_slice(digest.as_bytes());
        listing.push(b'\n');
    }
    overrides::digest(&listing)
}

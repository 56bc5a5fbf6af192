// The blueprints are embedded with include_dir: rebuild whenever anything under them changes.
//
// Each embedded blueprint's manifest (`blueprints/*/blueprint.yaml`) and catalog entries
// (`blueprints/*/addons/*.yaml`) are also read here, once, into JSON: at run time, a file
// whose bytes are an embedded one's is read from that JSON instead of parsing its YAML
// (the two were a third of the default blueprint's `new --dry-run`, BENCHMARKS.md).
// serde_norway resolves scalars as scaffold-support's yaml.rs does (serde_yaml 0.9's rules); the tests
// (`prebuilt::tests`) require the same value from both for every file, so a difference
// fails them instead of changing a repo.
//
// Each embedded blueprint's layer digest (`blueprint::layer_digest`: a SHA-1 per file, then
// one of the listing) is computed here too, so a run that loads one does not hash its files
// again; `prebuilt::tests` holds it to the run-time function's value.
use std::fmt::Write as _;
use std::path::Path;

use sha1::{Digest, Sha1};

#[allow(clippy::print_stdout)] // a build script talks to cargo on stdout
fn main() {
    println!("cargo:rerun-if-changed=../../blueprints");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../blueprints");
    let mut table = String::from("&[\n");
    let mut blueprints: Vec<_> = std::fs::read_dir(&root)
        .expect("blueprints/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    blueprints.sort();
    let mut digests = String::from("&[\n");
    for blueprint in blueprints {
        if let Some(name) = blueprint.file_name().and_then(|n| n.to_str()) {
            writeln!(digests, "    ({name:?}, {:?}),", layer_digest(&blueprint)).expect("a string");
        }
        let mut files: Vec<_> = std::fs::read_dir(blueprint.join("addons"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        files.push(blueprint.join("blueprint.yaml"));
        for file in files.into_iter().filter(|f| f.is_file()) {
            let text = std::fs::read_to_string(&file).expect("an embedded blueprint file");
            // A file that does not read is left to the run-time parser, which says where.
            let Ok(value) = serde_norway::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let json = serde_json::to_string(&value).expect("JSON");
            writeln!(
                table,
                "    (include_bytes!({:?}), {:?}),",
                file.display().to_string(),
                json
            )
            .expect("a string");
        }
    }
    table.push(']');
    digests.push(']');
    #[allow(clippy::disallowed_methods)] // cargo tells a build script where to write this way
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).to_path_buf();
    std::fs::write(out.join("prebuilt_json.rs"), table).expect("written");
    std::fs::write(out.join("layer_digests.rs"), digests).expect("written");
}

/// `blueprint::layer_digest` of the blueprint in `dir`: every file but `tests/` and the
/// version pin, in path order, as `path\0<12 hex digits of its blob id>\n`; the listing's
/// blob id, cut to 12.
fn layer_digest(dir: &Path) -> String {
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    let mut listing = Vec::new();
    for (path, bytes) in files {
        if path.starts_with("tests/") || path == "VERSION-DIGEST" {
            continue;
        }
        listing.extend_from_slice(path.as_bytes());
        listing.push(0);
        listing.extend_from_slice(&blob_id(&bytes).as_bytes()[..12]);
        listing.push(b'\n');
    }
    blob_id(&listing)[..12].to_string()
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).expect("an embedded blueprint directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            walk(root, &path, files);
        } else {
            let rel = path.strip_prefix(root).expect("under the root");
            let rel: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            files.push((
                rel.join("/"),
                std::fs::read(&path).expect("an embedded file"),
            ));
        }
    }
}

fn blob_id(bytes: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

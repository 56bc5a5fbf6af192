// The blueprints are embedded with include_dir: rebuild whenever anything under them changes.
//
// Each embedded blueprint's manifest (`blueprints/*/blueprint.yaml`) and catalog entries
// (`blueprints/*/addons/*.yaml`) are also read here, once, into JSON: at run time, a file
// whose bytes are an embedded one's is read from that JSON instead of parsing its YAML
// (the two were a third of the default blueprint's `new --dry-run`, BENCHMARKS.md).
// serde_norway resolves scalars as src/yaml.rs does (serde_yaml 0.9's rules); the tests
// (`prebuilt::tests`) require the same value from both for every file, so a difference
// fails them instead of changing a repo.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=blueprints");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints");
    let mut table = String::from("&[\n");
    let mut blueprints: Vec<_> = std::fs::read_dir(&root)
        .expect("blueprints/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    blueprints.sort();
    for blueprint in blueprints {
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
    let out = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("prebuilt_json.rs");
    std::fs::write(out, table).expect("written");
}

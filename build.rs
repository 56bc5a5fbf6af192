// The blueprints are embedded with include_dir: rebuild whenever anything under them changes.
fn main() {
    println!("cargo:rerun-if-changed=blueprints");
}

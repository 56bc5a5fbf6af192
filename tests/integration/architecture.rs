//! The workspace keeps the shape docs/architecture.md states inside each crate (between
//! crates, the compiler keeps the layers): no import cycle, parent → child edges included;
//! no command importing another command or the command line; one module style; at most 16
//! entries in a crate's `src/`; no product function over 120 lines (scripts/module-graph
//! reads the `use` paths and the functions).
use std::process::Command;

use crate::support::require_tool;

#[test]
fn the_module_graph_keeps_its_rules() {
    if !require_tool("python3") {
        return;
    }
    let out = Command::new("python3")
        .arg("scripts/module-graph")
        .arg(".")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.ends_with("edges, 0 problems\n"), "{stdout}");
}

#[test]
fn the_module_graph_script_finds_cycles_commands_importing_commands_and_shapeless_trees() {
    if !require_tool("python3") {
        return;
    }
    let dir = tempfile::TempDir::new().expect("dir");
    let write = |path: &str, text: &str| {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    };
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod commands;\npub mod p;\n",
    );
    write("a.rs", "use crate::b::B;\npub struct A;\n");
    write("b.rs", "pub struct B;\nfn f() { let _ = crate::a::A; }\n");
    write("commands/mod.rs", "pub mod new;\npub mod update;\n");
    write("commands/new.rs", "pub fn run() {}\n");
    write("commands/update.rs", "use super::new::run;\n");
    // A parent using its child, which uses the parent: a cycle too.
    write(
        "p/mod.rs",
        "mod c;\npub struct Shared;\nfn f() { c::g(); }\n",
    );
    write("p/c.rs", "use super::Shared;\npub fn g() {}\n");
    // Two module styles, and a function past a screenful.
    write(
        "q.rs",
        &format!("fn long() {{\n{}}}\n", "    let _ = 1;\n".repeat(120)),
    );
    write("q/r.rs", "");
    for n in 0..12 {
        write(&format!("m{n}.rs"), "");
    }
    let out = Command::new("python3")
        .arg("scripts/module-graph")
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("cycle: a -> b, b -> a"), "{stdout}");
    assert!(
        stdout.contains("a command imports another command: commands::update -> commands::new"),
        "{stdout}"
    );
    assert!(stdout.contains("cycle: p -> p::c, p::c -> p"), "{stdout}");
    assert!(
        stdout.contains("q.rs beside q/ (one module style: q/mod.rs)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("src/ holds 19 entries (at most 16)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fn long is 122 lines (at most 120)"),
        "{stdout}"
    );
}

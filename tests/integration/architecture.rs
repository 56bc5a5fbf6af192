//! The module graph of src/ keeps the rules docs/architecture.md states: no import cycle,
//! no command importing another command or the command line, and a pure core that never
//! imports git or writing code (scripts/module-graph reads the `use` paths).
use std::process::Command;

use crate::support::require_tool;

#[test]
fn the_module_graph_keeps_its_rules() {
    if !require_tool("python3") {
        return;
    }
    let out = Command::new("python3")
        .arg("scripts/module-graph")
        .arg("src")
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
fn the_module_graph_script_finds_a_cycle_and_a_command_importing_another() {
    if !require_tool("python3") {
        return;
    }
    let dir = tempfile::TempDir::new().expect("dir");
    let write = |path: &str, text: &str| {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod commands;\n");
    write("a.rs", "use crate::b::B;\npub struct A;\n");
    write("b.rs", "pub struct B;\nfn f() { let _ = crate::a::A; }\n");
    write("commands/mod.rs", "pub mod new;\npub mod update;\n");
    write("commands/new.rs", "pub fn run() {}\n");
    write("commands/update.rs", "use super::new::run;\n");
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
}

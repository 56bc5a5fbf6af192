//! The workspace keeps the shape docs/architecture.md states inside each crate (between
//! crates, the compiler keeps the layers): no import cycle, parent → child edges included;
//! no command importing another command or the command line; one module style; at most 16
//! entries in a crate's `src/`; no product function over 120 lines (scripts/module-graph
//! reads the `use` paths and the functions).
use std::process::Command;

use crate::support::require_tool;

/// What breaks the shape today, each to be struck off as it is mended (issue 39): the test
/// fails on anything new and on any entry that no longer breaks, so the list only shrinks.
const LEFT_TO_MEND: &[&str] = &[
    "scaffold: src/commands/addon.rs: fn add",
    "scaffold-core: crates/scaffold-core/src/update.rs: fn prepare",
];

/// A problem line without what moves as code changes (line numbers, lengths, the rest of
/// a cycle after its first module).
fn problem_key(line: &str) -> String {
    if let Some((head, cycle)) = line.split_once(": cycle: ") {
        let first = cycle.split(" -> ").next().unwrap_or(cycle);
        return format!("{head}: cycle: {first}");
    }
    let without_length = line.split(" is ").next().unwrap_or(line);
    let mut parts: Vec<&str> = without_length.split(':').collect();
    parts.retain(|part| part.parse::<usize>().is_err());
    parts.join(":")
}

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
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" edges, "),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: Vec<String> = stdout
        .lines()
        .filter(|l| *l != summary)
        .map(problem_key)
        .collect();
    let new: Vec<&String> = found
        .iter()
        .filter(|k| !LEFT_TO_MEND.contains(&k.as_str()))
        .collect();
    assert!(new.is_empty(), "new shape problems: {new:#?}\n{stdout}");
    let mended: Vec<&&str> = LEFT_TO_MEND
        .iter()
        .filter(|k| !found.iter().any(|f| f == *k))
        .collect();
    assert!(
        mended.is_empty(),
        "mended: strike these off LEFT_TO_MEND: {mended:#?}"
    );
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

//! `new`'s lint verdict of a blueprint from disk is kept in the user's cache by the
//! blueprint's content digest (issue 45): an unchanged blueprint is linted once, any change
//! is linted again, and an entry that does not read back is no verdict.
use std::path::{Path, PathBuf};

use crate::support::{Env, run};

const MANIFEST: &str = "name: t\nversion: 0.1.0\nquestions:\n  - key: region\n    prompt: Region\n    type: string\n    default: eu-west-1\n";

fn blueprint(env: &Env, template: &str) -> PathBuf {
    let dir = env.path("bp");
    std::fs::create_dir_all(dir.join("files")).expect("dirs");
    std::fs::write(dir.join("blueprint.yaml"), MANIFEST).expect("manifest");
    std::fs::write(dir.join("files/region.txt.tera"), template).expect("template");
    dir
}

/// `new PARENT/out` (the same target name each time: lint renders it).
fn new(env: &Env, parent: &str, blueprint: &Path) -> crate::support::Output {
    std::fs::create_dir_all(env.path(parent)).expect("parent");
    run(env
        .scaffold()
        .args(["new", &format!("{parent}/out"), "--defaults"])
        .args(["--author", "T <t@example.org>", "--blueprint"])
        .arg(blueprint))
}

fn entries(env: &Env) -> Vec<PathBuf> {
    let dir = env.home.path().join(".cache/scaffold/lint");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn an_unchanged_blueprint_is_linted_once_and_renders_the_same() {
    let env = Env::new();
    let dir = blueprint(&env, "region = [[ region ]]\n");
    let first = new(&env, "a", &dir);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let cached = entries(&env);
    assert_eq!(cached.len(), 1, "one verdict kept: {cached:?}");
    // A verdict that says something lint would not: the second `new` shows it, so it
    // used the verdict rather than linting again.
    let text = std::fs::read_to_string(&cached[0]).expect("entry");
    let planted = text.replace("\"warnings\":[]", "\"warnings\":[\"kept verdict\"]");
    assert_ne!(planted, text, "{text}");
    std::fs::write(&cached[0], planted).expect("plant");
    let second = new(&env, "b", &dir);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(second.stderr.contains("kept verdict"), "{}", second.stderr);
    let tree = |repo: &str| env.git(&env.path(repo), &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(tree("a/out"), tree("b/out"));
}

#[test]
fn a_changed_blueprint_is_linted_again() {
    let env = Env::new();
    let dir = blueprint(&env, "region = [[ region ]]\n");
    assert_eq!(new(&env, "a", &dir).code, 0);
    std::fs::write(dir.join("files/region.txt.tera"), "region = [[ regoin ]]\n").expect("edit");
    let out = new(&env, "b", &dir);
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert!(out.stderr.contains("lint error(s) above"), "{}", out.stderr);
    assert!(!env.path("b/out").exists());
    assert_eq!(entries(&env).len(), 1, "a failing verdict is not kept");
}

#[test]
fn an_entry_that_does_not_read_back_is_no_verdict() {
    let env = Env::new();
    let dir = blueprint(&env, "region = [[ region ]]\n");
    assert_eq!(new(&env, "a", &dir).code, 0);
    let cached = entries(&env);
    std::fs::write(&cached[0], "{\"format\":1,\"key\":\"").expect("corrupt");
    // The blueprint changed under the corrupt entry's name would be linted too: here the
    // same blueprint is linted again and its verdict written anew.
    let out = new(&env, "b", &dir);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = std::fs::read_to_string(&cached[0]).expect("entry");
    assert!(text.ends_with("\"warnings\":[]}"), "{text}");
}

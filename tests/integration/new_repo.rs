//! What `scaffold new` writes: one commit on main by the configured author, a clean tree,
//! the answers record; refusals that protect existing files; --dry-run and --json.
use crate::support::{Env, answers, run};

#[test]
fn defaults_write_one_clean_commit_on_main() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "acme-platform", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("acme-platform");
    assert_eq!(
        env.git(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(env.git(&dir, &["rev-list", "--count", "HEAD"]).trim(), "1");
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    assert_eq!(
        env.git(&dir, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"])
            .trim(),
        "Test Author <test@example.org>|Test Author <test@example.org>|scaffold: new platform from blueprint default 0.5.0"
    );
    // Every file on disk is in the commit, and nothing else is left beside the repo.
    let tracked: Vec<String> = env
        .git(&dir, &["ls-files"])
        .lines()
        .map(String::from)
        .collect();
    assert!(tracked.contains(&".scaffold/answers.yaml".to_string()));
    let on_disk = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter(|e| e.as_ref().is_ok_and(|e| e.file_type().is_file()))
        .count();
    assert_eq!(on_disk, tracked.len());
    assert_eq!(
        env.listing()
            .iter()
            .filter(|p| !p.starts_with("acme-platform"))
            .count(),
        0
    );
    assert!(
        out.stdout
            .contains(&format!("{} files, commit", tracked.len())),
        "{}",
        out.stdout
    );

    let record = answers(&dir);
    assert_eq!(record["blueprint"]["name"], "default");
    assert_eq!(record["blueprint"]["version"], "0.5.0");
    assert_eq!(record["answers"]["name"], "acme-platform");
    assert_eq!(
        record["environments"]["prod"]["cluster_name"],
        "prod.acme-platform.example.com"
    );
}

#[test]
fn author_flag_wins_and_a_missing_identity_falls_back() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "a",
        "--defaults",
        "--author",
        "Ops Team <ops@example.org>",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.git(&env.path("a"), &["log", "-1", "--format=%an <%ae>"])
            .trim(),
        "Ops Team <ops@example.org>"
    );

    // No identity: refused as `git commit` refuses, naming the settings and the commands.
    let bare = Env::without_git_identity();
    let out = run(bare.scaffold().args(["new", "b", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("git does not know who you are (user.name and user.email")
            && out
                .stderr
                .contains("`git config --global user.name \"Your Name\"` and `git config --global user.email you@example.com`"),
        "{}",
        out.stderr
    );
    assert!(!bare.path("b").exists(), "a refused new left a directory");

    let out = run(env
        .scaffold()
        .args(["new", "c", "--defaults", "--author", "nobody"]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim(),
        "error: --author `nobody`: use the form \"Name <email@example.org>\""
    );
}

#[test]
fn a_non_empty_target_is_refused_and_left_alone() {
    let env = Env::new();
    std::fs::create_dir(env.path("mine")).expect("dir");
    std::fs::write(env.path("mine/notes.txt"), "keep me").expect("file");
    let out = run(env.scaffold().args(["new", "mine", "--defaults"]));
    assert_eq!(out.code, 3);
    assert_eq!(
        out.stderr.trim(),
        format!(
            "error: `mine` exists and is not empty; choose a new or empty directory (scaffold never overwrites or deletes files)"
        )
    );
    assert_eq!(env.listing(), ["mine", "mine/notes.txt"]);
    assert_eq!(
        std::fs::read_to_string(env.path("mine/notes.txt")).expect("kept"),
        "keep me"
    );

    std::fs::write(env.path("file"), "x").expect("file");
    let out = run(env.scaffold().args(["new", "file", "--defaults"]));
    assert_eq!(out.code, 3, "{}", out.stderr);
}

/// `new` writes its objects as one packfile and idx of its own (src/pack.rs): git must
/// accept them as it accepts its own, and the base ref must share the commit's tree.
#[test]
fn the_first_commit_is_one_pack_git_verifies() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "acme", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("acme");
    env.git(
        &dir,
        &["fsck", "--strict", "--no-dangling", "--no-progress"],
    );
    let packs: Vec<_> = std::fs::read_dir(dir.join(".git/objects/pack"))
        .expect("pack dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(packs.len(), 2, "one pack and its idx: {packs:?}");
    let idx = packs
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .expect("an idx");
    let verified = env.git(&dir, &["verify-pack", "-v", idx.to_str().expect("utf-8")]);
    let objects = env
        .git(&dir, &["rev-list", "--objects", "--all"])
        .lines()
        .count();
    assert!(
        verified.contains(&format!("non delta: {objects} objects")),
        "every object undeltified and nothing else in the pack: {verified}"
    );
    // No loose objects beside the pack.
    let loose = env.git(&dir, &["count-objects", "-v"]);
    assert!(loose.contains("count: 0\n"), "{loose}");
    assert_eq!(
        env.git(&dir, &["rev-parse", "HEAD^{tree}"]),
        env.git(&dir, &["rev-parse", "refs/scaffold/base^{tree}"])
    );
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn an_empty_target_directory_is_used() {
    let env = Env::new();
    std::fs::create_dir(env.path("empty")).expect("dir");
    let out = run(env.scaffold().args(["new", "empty", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&env.path("empty"), &["status", "--porcelain"]), "");
}

#[test]
fn dry_run_lists_and_writes_nothing() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "dry", "--defaults", "--dry-run"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.lines().any(|l| l == ".scaffold/answers.yaml"),
        "{}",
        out.stdout
    );
    assert!(env.listing().is_empty(), "{:?}", env.listing());

    let out = run(env
        .scaffold()
        .args(["new", "dry", "--defaults", "--dry-run", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let files = plan["files"].as_array().expect("files");
    assert!(
        files
            .iter()
            .any(|f| f["path"] == ".scaffold/answers.yaml" && f["bytes"].as_u64() > Some(0))
    );
    assert!(env.listing().is_empty());
}

#[test]
fn json_summary_names_the_commit() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "j", "--defaults", "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let head = env.git(&env.path("j"), &["rev-parse", "HEAD"]);
    assert_eq!(summary["commit"].as_str(), Some(head.trim()));
}

#[test]
fn unknown_blueprint_is_an_input_error() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "x", "--defaults", "--blueprint", "nope"]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim(),
        "error: unknown blueprint `nope`: use one of default or a path to a directory with a blueprint.yaml"
    );
    assert!(env.listing().is_empty());
}

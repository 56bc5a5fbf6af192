//! Criterion benches of the pipeline's stages on the embedded default blueprint:
//! `render` (compile the templates), `plan` (answers → every file rendered in memory),
//! `commit` (stage the plan and commit it), and the `add-addon` and `check` commands
//! (the release binary on a fresh copy of a repo per iteration). Side-by-side timings
//! against peers and the filesystem floor are `scripts/bench-compare`.
//!
//!     cargo bench --bench pipeline [-- FILTER]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::Map;

use scaffold_core::publish::{Ready, fill_and_commit};
use scaffold_core::write;
use scaffold_git::git;
use scaffold_model::answers::{self, Sources};
use scaffold_model::blueprint::Blueprint;
use scaffold_model::generate;

const AUTHOR: &str = "B <b@example.org>";

fn default_answers(
    blueprint: &Blueprint,
    renderer: &scaffold_model::render::Renderer,
) -> answers::Answers {
    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), "demo".into());
    answers::gather(
        blueprint,
        renderer,
        Sources {
            set: Vec::new(),
            values: Default::default(),
            prompter: None,
            builtins,
            recorded_environments: Default::default(),
        },
    )
    .expect("default answers")
}

fn render_and_plan(c: &mut Criterion) {
    let blueprint = Blueprint::load("default").expect("default blueprint");
    c.bench_function("render/compile templates (default)", |b| {
        b.iter(|| generate::renderer_for(&blueprint).expect("compiles"))
    });
    let renderer = generate::renderer_for(&blueprint).expect("compiles");
    let answers = default_answers(&blueprint, &renderer);
    let record = generate::record_for(&blueprint, &answers, Map::new());
    c.bench_function("plan/default --defaults", |b| {
        b.iter(|| generate::render(&blueprint, &renderer, &answers, &record).expect("renders"))
    });
}

fn commit(c: &mut Criterion) {
    let blueprint = Blueprint::load("default").expect("default blueprint");
    let renderer = generate::renderer_for(&blueprint).expect("compiles");
    let answers = default_answers(&blueprint, &renderer);
    let record = generate::record_for(&blueprint, &answers, Map::new());
    let plan = generate::render(&blueprint, &renderer, &answers, &record)
        .expect("renders")
        .plan;
    let scratch = tempfile::tempdir().expect("scratch");
    let mut n = 0u32;
    // Each iteration writes a fresh directory (never a delete between timed runs).
    c.bench_function("commit/stage + commit (default, 93 files)", |b| {
        b.iter_batched(
            || {
                n += 1;
                scratch.path().join(format!("r{n}"))
            },
            |target| {
                let staged = write::staging_dir(&target).expect("staging");
                fill_and_commit(&staged, &plan, || ready(staged.path()), "bench").expect("commits");
                staged.finish().expect("moves into place");
            },
            BatchSize::PerIteration,
        )
    });
}

fn scaffold(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_scaffold"));
    command
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(std::process::Stdio::null());
    command
}

fn run(mut command: Command) {
    let status = command.status().expect("runs");
    assert!(status.success(), "{command:?} failed");
}

/// A repo made by `scaffold new --defaults`, and the same repo grown by `extra` user
/// files committed beside it.
fn repo(scratch: &Path, name: &str, extra: usize) -> PathBuf {
    let dir = scratch.join(name);
    let mut new = scaffold(scratch);
    new.args(["new", "--defaults", "--author", AUTHOR])
        .arg(&dir);
    run(new);
    if extra > 0 {
        for i in 0..extra {
            let file = dir.join(format!("extra/g{}/f{i}.yaml", i % 20));
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            std::fs::write(&file, format!("name: f{i}\nreplicas: 3\n").repeat(20)).expect("write");
        }
        let mut git = Command::new("git");
        git.current_dir(&dir)
            .env("HOME", scratch)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["-c", "user.name=B", "-c", "user.email=b@example.org"])
            .args(["commit", "-q", "-m", "grown"]);
        let mut add = Command::new("git");
        add.current_dir(&dir).args(["add", "-A"]);
        run(add);
        run(git);
    }
    dir
}

fn commands(c: &mut Criterion) {
    let scratch = tempfile::tempdir().expect("scratch");
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let small = repo(scratch.path(), "default", 0);
    let grown = repo(scratch.path(), "grown", 1907);
    let mut n = 0u32;
    for (label, source) in [("default repo", &small), ("2000-file repo", &grown)] {
        c.bench_function(&format!("add-addon/velero ({label})"), |b| {
            b.iter_batched(
                || {
                    n += 1;
                    let copy = scratch.path().join(format!("c{n}"));
                    run({
                        let mut cp = Command::new("cp");
                        cp.arg("-a").arg(source).arg(&copy);
                        cp
                    });
                    // A copy's index has stale stat data (new inodes), so any status
                    // would re-read every file; a repo in use has a fresh index.
                    run({
                        let mut refresh = Command::new("git");
                        refresh
                            .current_dir(&copy)
                            .args(["update-index", "-q", "--refresh"]);
                        refresh
                    });
                    copy
                },
                |copy| {
                    let mut add = scaffold(&home);
                    add.args(["add-addon", "velero", "--author", AUTHOR, "-C"])
                        .arg(&copy);
                    run(add);
                },
                BatchSize::PerIteration,
            )
        });
    }
    // check only reads the repo, so every iteration runs on the same one (the whole
    // command: load the vendored schemas, model the repo, run every rule).
    c.bench_function("check (default repo)", |b| {
        b.iter(|| {
            let mut check = scaffold(&home);
            check.arg("check").arg(&small);
            run(check);
        })
    });
    // Every catalog addon (the all-addons answer set): every vendored chart's values and
    // both provider schemas are loaded (issue 25: at most 150 ms).
    let every = scratch.path().join("every-addon");
    let mut new = scaffold(scratch.path());
    new.args(["new", "--defaults", "--author", AUTHOR, "--values"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/blueprints/default/tests/all-addons.yaml"
        ))
        .arg(&every);
    run(new);
    c.bench_function("check (every addon)", |b| {
        b.iter(|| {
            let mut check = scaffold(&home);
            check.arg("check").arg(&every);
            run(check);
        })
    });
    // Ten environments of the default blueprint, each judged on its own view (issue 26:
    // at most 250 ms).
    let ten = scratch.path().join("ten-environments");
    let mut new = scaffold(scratch.path());
    new.args(["new", "--defaults", "--author", AUTHOR, "--set"])
        .arg(format!(
            "environments={}",
            (0..10)
                .map(|i| format!("env{i}"))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .arg(&ten);
    run(new);
    c.bench_function("check (ten environments)", |b| {
        b.iter(|| {
            let mut check = scaffold(&home);
            check.arg("check").arg(&ten);
            run(check);
        })
    });
    diff_against_check(c, scratch.path(), &home);
}

/// issue 44: `diff` of two revisions of a three-environment repo within 2x the time of
/// `check` on one revision (both the whole command, on the same repo).
fn diff_against_check(c: &mut Criterion, scratch: &Path, home: &Path) {
    let three = scratch.join("three-environments");
    let mut new = scaffold(scratch);
    new.args(["new", "--defaults", "--author", AUTHOR, "--set"])
        .arg("environments=dev,staging,prod")
        .arg(&three);
    run(new);
    let overlay = three.join("environments/dev/infrastructure/addons/reloader/release.yaml");
    let text = std::fs::read_to_string(&overlay).expect("overlay");
    std::fs::write(&overlay, text.replacen("version: \"2.", "version: \"3.", 1)).expect("bump");
    let mut commit = Command::new("git");
    commit
        .current_dir(&three)
        .env("HOME", scratch)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", "user.name=B", "-c", "user.email=b@example.org"])
        .args(["commit", "-qam", "bump reloader in dev"]);
    run(commit);
    c.bench_function("check (three environments)", |b| {
        b.iter(|| {
            let mut check = scaffold(home);
            check.arg("check").arg(&three);
            run(check);
        })
    });
    c.bench_function("diff HEAD~1 HEAD (three environments)", |b| {
        b.iter(|| {
            let mut diff = scaffold(home);
            diff.args(["diff", "HEAD~1", "HEAD", "--repo"]).arg(&three);
            run(diff);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = render_and_plan, commit, commands
}
criterion_main!(benches);

/// What `new`'s second thread has once it has hashed the blobs: the repository
/// (`publish::Asked` makes it while `new` renders; here, in the timed run), the author, no
/// hooks. Synced as git syncs by default (`core.fsync` unset): the pack and its idx.
fn ready(root: &Path) -> scaffold_support::error::Result<Ready> {
    Ok(Ready {
        repo: git::init(root)?,
        committing: git::Committing {
            author: git::Author::parse(AUTHOR)?,
            fsync: scaffold_git::durability::Fsync::default(),
        },
        hooks: None,
    })
}

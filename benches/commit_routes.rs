//! Two ways to commit a planned tree of N files, measured on the same plan (N = 93 and
//! 2,000 synthetic files of ~1.7 KB):
//!
//! - `git::commit`: the route `scaffold new` takes (`scaffold_core::publish::fill_and_commit`): blobs
//!   hashed and packed on a second core while the files are written, then trees and commits
//!   added, all written by `crates/scaffold-git/src/pack.rs` as one packfile without deltas with its `.idx`, and
//!   index entries whose stat data comes from the files just written;
//! - `packbuilder`: the route before it, kept here for comparison: every object into a
//!   libgit2 mempack, dumped through libgit2's packbuilder (which searches for deltas) and
//!   indexed by libgit2's indexer (which inflates and hashes every object again).
//!
//! Both write the files with `write::fill`. Before timing, each route's result is
//! checked with `git fsck --strict` and a clean `git status`. This is the evidence for the
//! git side of the performance targets (BENCHMARKS.md).
//!
//!     cargo bench --bench commit_routes
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use git2::{IndexEntry, IndexTime, Repository, RepositoryInitOptions, Signature};

use scaffold_core::publish::{Ready, fill_and_commit};
use scaffold_core::write;
use scaffold_git::git;
use scaffold_model::plan::{Plan, RelPath};

fn synthetic_plan(n: usize) -> Plan {
    let mut plan = Plan::default();
    for i in 0..n {
        let path = format!("g{}/s{}/f{i}.yaml", i % 10, (i / 10) % 10);
        let mut text = String::new();
        for k in 0..(40 + i % 40) {
            text.push_str(&format!(
                "key{k}: value-{i}-{k} # a line of about forty bytes\n"
            ));
        }
        plan.add(RelPath::new(&path).expect("path"), text.into_bytes())
            .expect("distinct");
    }
    plan
}

/// The earlier route: objects into a mempack dumped through the packbuilder; stat from disk.
fn commit_packbuilder(dir: &Path, plan: &Plan) -> git2::Oid {
    let mut options = RepositoryInitOptions::new();
    options.initial_head("main");
    let repo = Repository::init_opts(dir, &options).expect("init");
    let odb = repo.odb().expect("odb");
    let mempack = odb.add_new_mempack_backend(1000).expect("mempack");
    let mut index = repo.index().expect("index");
    for (path, contents) in &plan.files {
        let meta = std::fs::symlink_metadata(dir.join(path.as_str())).expect("written");
        let entry = IndexEntry {
            ctime: IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32),
            mtime: IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            mode: 0o100644,
            uid: meta.uid(),
            gid: meta.gid(),
            file_size: meta.size() as u32,
            id: git2::Oid::ZERO_SHA1,
            flags: 0,
            flags_extended: 0,
            path: path.as_str().as_bytes().to_vec(),
        };
        index.add_frombuffer(&entry, contents).expect("blob");
    }
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let signature = Signature::now("B", "b@example.org").expect("signature");
    let commit = repo
        .commit(None, &signature, &signature, "bench", &tree, &[])
        .expect("commit");
    let mut pack = git2::Buf::new();
    mempack.dump(&repo, &mut pack).expect("dump");
    let mut writer = odb.packwriter().expect("packwriter");
    std::io::Write::write_all(&mut writer, &pack).expect("pack");
    writer.commit().expect("pack written");
    mempack.reset().expect("reset");
    repo.reference("refs/heads/main", commit, true, "bench")
        .expect("main");
    index.write().expect("index written");
    commit
}

fn assert_clean(dir: &Path) {
    let fsck = Command::new("git")
        .current_dir(dir)
        .args(["fsck", "--strict", "--no-progress"])
        .output()
        .expect("git fsck");
    assert!(fsck.status.success(), "fsck: {fsck:?}");
    let status = Command::new("git")
        .current_dir(dir)
        .args(["status", "--porcelain"])
        .output()
        .expect("git status");
    assert!(
        status.status.success() && status.stdout.is_empty(),
        "status: {status:?}"
    );
}

fn routes(c: &mut Criterion) {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut n = 0u32;
    let mut fresh = || {
        n += 1;
        scratch.path().join(format!("r{n}"))
    };
    for files in [93, 2000] {
        let plan = synthetic_plan(files);
        for route in ["git::commit", "packbuilder"] {
            let run = |target: &Path| {
                let staged = write::staging_dir(target).expect("staging");
                match route {
                    "git::commit" => {
                        fill_and_commit(&staged, &plan, || ready(staged.path()), "bench")
                            .expect("commits");
                    }
                    _ => {
                        write::fill(&staged, &plan).expect("written");
                        commit_packbuilder(staged.path(), &plan);
                    }
                }
                staged.finish().expect("in place");
            };
            let check = fresh();
            run(&check);
            assert_clean(&check);
            c.bench_function(&format!("commit/{route} ({files} files)"), |b| {
                b.iter_batched(&mut fresh, |target| run(&target), BatchSize::PerIteration)
            });
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = routes
}
criterion_main!(benches);

/// What `new`'s second thread has once it has hashed the blobs: the repository
/// (`publish::Asked` makes it while `new` renders; here, in the timed run), the author, no
/// hooks. Synced as git syncs by default (`core.fsync` unset): the pack and its idx.
fn ready(root: &Path) -> scaffold_support::error::Result<Ready> {
    Ok(Ready {
        repo: git::init(root)?,
        committing: git::Committing {
            author: git::Author::parse("B <b@example.org>")?,
            fsync: scaffold_git::durability::Fsync::default(),
        },
        hooks: None,
    })
}

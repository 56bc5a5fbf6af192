//! scaffold update: a blueprint edited in place, changed answers, no-ops, conflicts (refused
//! with hunks, or written as markers), the pristine base under refs/scaffold/base and how a
//! clone gets it, and a newer `default` shadowing the embedded one.
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Env, Output, answer, run};

const TEAM_V1: &str =
    "# Team notes\n\nowner: platform\nreview: weekly\n\nsection two\nkeep: this\n";
const TEAM_V2: &str = "# Team notes\n\nowner: platform\nreview: monthly\noncall: [[ oncall ]]\n\nsection two\nkeep: this\n";

/// A blueprint `team` extending the default, at 0.1.0 or (edited in place) 0.2.0: a new
/// question with a default, a removed question, changed and new lines, a new file, a
/// removed file and a chart version bump.
pub(crate) fn team_blueprint(root: &Path, version: &str) -> PathBuf {
    let dir = root.join("team");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("files/docs")).expect("mkdir");
    fs::create_dir_all(dir.join("addons")).expect("mkdir");
    let v2 = version == "0.2.0";
    let question = if v2 {
        "questions:\n  - key: oncall\n    prompt: On-call rotation\n    type: string\n    default: pager\n"
    } else {
        "questions:\n  - key: legacy\n    prompt: Legacy setting\n    type: string\n    default: old\n"
    };
    fs::write(
        dir.join("blueprint.yaml"),
        format!("name: team\nversion: {version}\ndescription: Team platform.\nextends: default\n{question}"),
    )
    .expect("manifest");
    fs::write(
        dir.join("files/docs/team.md.tera"),
        if v2 { TEAM_V2 } else { TEAM_V1 },
    )
    .expect("team.md");
    if v2 {
        fs::write(dir.join("files/docs/new.md"), "new in 0.2.0\n").expect("new.md");
    } else {
        fs::write(dir.join("files/docs/old.md"), "gone in 0.2.0\n").expect("old.md");
    }
    let catalog = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default/addons/metrics-server.yaml"),
    )
    .expect("catalog entry");
    let chart = if v2 { "3.13.2" } else { "3.13.1" };
    fs::write(
        dir.join("addons/metrics-server.yaml"),
        catalog.replace("version: 3.13.1", &format!("version: {chart}")),
    )
    .expect("entry");
    dir
}

struct Repo {
    env: Env,
    bps: tempfile::TempDir,
    dir: PathBuf,
}

impl Repo {
    /// `scaffold new p` from `team` 0.1.0 (found by name on the search path).
    fn team() -> Self {
        let env = Env::new();
        let bps = tempfile::TempDir::new().expect("bps");
        team_blueprint(bps.path(), "0.1.0");
        let repo = Repo {
            dir: env.path("p"),
            env,
            bps,
        };
        let out = run(repo
            .env
            .scaffold()
            .env("SCAFFOLD_BLUEPRINT_PATH", repo.bps.path())
            .args(["new", "p", "--defaults", "--blueprint", "team"])
            .args(["--set", "addons=metrics-server"]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        repo
    }

    fn scaffold(&self, args: &[&str]) -> Output {
        run(self
            .env
            .scaffold()
            .current_dir(&self.dir)
            .env("SCAFFOLD_BLUEPRINT_PATH", self.bps.path())
            .args(args))
    }

    fn git(&self, args: &[&str]) -> String {
        self.env.git(&self.dir, args)
    }

    fn read(&self, path: &str) -> String {
        fs::read_to_string(self.dir.join(path)).expect("read")
    }

    /// Edits a file with `edit` and commits it as the user.
    fn edit(&self, path: &str, edit: impl Fn(&str) -> String) {
        let text = self.read(path);
        let edited = edit(&text);
        assert_ne!(text, edited, "{path}: the edit changes nothing");
        fs::write(self.dir.join(path), edited).expect("write");
        self.git(&["commit", "-qam", &format!("edit {path}")]);
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }

    fn base(&self) -> String {
        self.git(&["rev-parse", "refs/scaffold/base"])
    }

    /// Every tracked file and its bytes, plus HEAD and the base ref.
    fn state(&self) -> (Vec<(String, Vec<u8>)>, String, String) {
        let files = self
            .git(&["ls-files"])
            .lines()
            .map(|p| (p.to_string(), fs::read(self.dir.join(p)).expect("read")))
            .collect();
        (files, self.head(), self.base())
    }
}

const RELEASE: &str = "environments/prod/infrastructure/addons/metrics-server/release.yaml";

fn user_edits(repo: &Repo) {
    repo.edit("docs/team.md", |t| {
        t.replace("section two\n", "section two (edited)\n") + "\nmy notes: hello\n"
    });
    repo.edit(RELEASE, |t| {
        t.replace(
            "  values:\n    replicas: 2\n",
            "  values:\n    replicas: 3\n",
        )
    });
}

#[test]
fn new_stores_the_rendering_as_the_pristine_base() {
    let repo = Repo::team();
    let head_tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    let base_tree = repo.git(&["rev-parse", "refs/scaffold/base^{tree}"]);
    assert_eq!(head_tree, base_tree);
}

#[test]
fn a_blueprint_edited_in_place_updates_once_keeping_every_edit() {
    let repo = Repo::team();
    user_edits(&repo);
    team_blueprint(repo.bps.path(), "0.2.0");
    let before = repo.head();

    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        repo.read("docs/team.md"),
        "# Team notes\n\nowner: platform\nreview: monthly\noncall: pager\n\nsection two (edited)\nkeep: this\n\nmy notes: hello\n"
    );
    let release = repo.read(RELEASE);
    assert!(release.contains("version: \"3.13.2\""), "{release}");
    assert!(release.contains("    replicas: 3\n"), "{release}");
    assert_eq!(repo.read("docs/new.md"), "new in 0.2.0\n");
    assert!(!repo.dir.join("docs/old.md").exists());
    assert_eq!(answer(&repo.dir, "oncall").as_str(), Some("pager"));
    assert!(
        answer(&repo.dir, "legacy").is_null(),
        "dropped from the record"
    );

    // One commit on top of the user's, saying what moved; nothing left uncommitted.
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"]), before);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B"]).trim_end(),
        "scaffold: update team 0.1.0 → 0.2.0\n\nAnswers:\n- legacy: dropped (was old)\n- oncall: pager (new question)"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    assert_eq!(
        repo.git(&["show", "refs/scaffold/base:docs/team.md"]),
        "# Team notes\n\nowner: platform\nreview: monthly\noncall: pager\n\nsection two\nkeep: this\n"
    );

    // A second update has nothing to do.
    let state = repo.state();
    let again = repo.scaffold(&["update"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        again.stdout,
        "already up to date with blueprint team 0.2.0; nothing to do\n"
    );
    assert_eq!(repo.state(), state);
}

#[test]
fn a_conflicting_edit_is_refused_with_its_hunk_and_nothing_written() {
    let repo = Repo::team();
    repo.edit("docs/team.md", |t| {
        t.replace("review: weekly", "review: daily")
    });
    team_blueprint(repo.bps.path(), "0.2.0");
    let state = repo.state();

    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "CONFLICT docs/team.md:4: your edits and scaffold's change touch the same lines\n  base:\n    review: weekly\n  yours:\n    review: daily\n  blueprint team 0.2.0:\n    review: monthly\n    oncall: pager\n\
         error: update conflicts with your edits in docs/team.md (1 hunk(s) above); nothing was written: undo those edits, or rerun with --conflicts=markers to resolve them in the files\n"
    );
    assert_eq!(repo.state(), state, "HEAD, base and files unchanged");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    // With markers: the clean changes and the markers are written, the commit is the user's.
    let out = repo.scaffold(&["update", "--conflicts=markers"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(repo.head(), state.1);
    assert_eq!(
        repo.read("docs/team.md"),
        "# Team notes\n\nowner: platform\n<<<<<<< yours\nreview: daily\n||||||| base\nreview: weekly\n=======\nreview: monthly\noncall: pager\n>>>>>>> blueprint team 0.2.0\n\nsection two\nkeep: this\n"
    );
    assert_eq!(repo.read("docs/new.md"), "new in 0.2.0\n");
    // Resolved, then committed with the very command the message gives (from elsewhere:
    // it names the repo), the repo is up to date and the commit has the whole message.
    fs::write(
        repo.dir.join("docs/team.md"),
        "# Team notes\n\nowner: platform\nreview: daily\noncall: pager\n\nsection two\nkeep: this\n",
    )
    .expect("resolve");
    fs::write(repo.dir.join("unrelated.txt"), "my work in progress\n").expect("wip");
    let hint = out.stderr.trim_end();
    let command = &hint[hint.find("then `").expect("command") + 6..hint.len() - 1];
    let ran = std::process::Command::new("sh")
        .args(["-c", command])
        .env("HOME", repo.env.home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("sh");
    assert!(
        ran.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(
        repo.git(&["log", "-1", "--format=%B"])
            .contains("Answers:\n- legacy: dropped"),
        "{}",
        repo.git(&["log", "-1", "--format=%B"])
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "?? unrelated.txt\n");
    fs::remove_file(repo.dir.join("unrelated.txt")).expect("rm");
    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("already up to date"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_changed_answer_rerenders_every_dependent_file_and_keeps_edits() {
    let env = Env::new();
    let new = |name: &str, region: &str| {
        let zones = format!("zones={region}a,{region}b");
        let out = run(env
            .scaffold()
            .args(["new", name, "--defaults", "--set", "name=platform"])
            .args(["--set", &format!("region={region}"), "--set", &zones]));
        assert_eq!(out.code, 0, "{}", out.stderr);
        env.path(name)
    };
    let dir = new("p", "eu-west-1");
    let fresh = new("fresh", "us-east-1");
    let tfvars = "envs/prod/1-prerequisites/terraform.tfvars";
    let mine = "\n# mine: keep this\n";
    let edited = fs::read_to_string(dir.join(tfvars)).expect("read") + mine;
    fs::write(dir.join(tfvars), edited).expect("edit");
    env.git(&dir, &["commit", "-qam", "mine"]);

    let values = env.path("changes.yaml");
    fs::write(&values, "region: us-east-1\nzones: [eu-west-1a]\n").expect("values");
    // --set wins over --values, which wins over the record.
    let out = run(env.scaffold().current_dir(&dir).args([
        "update",
        "--values",
        values.to_str().expect("utf8"),
        "--set",
        "zones=us-east-1a,us-east-1b",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The blueprint's on_change says what a new region does to a running platform.
    assert!(
        out.stderr.contains("warning: region: a running platform does not move region: Terraform replaces the VPC, buckets, KMS key and DNS records in us-east-1, and the cluster in eu-west-1 keeps running"),
        "{}",
        out.stderr
    );
    assert_eq!(
        env.git(&dir, &["log", "-1", "--format=%B"]).trim_end(),
        "scaffold: update default 0.5.0 (region, zones)\n\nAnswers:\n- region: eu-west-1 → us-east-1\n- zones: eu-west-1a,eu-west-1b → us-east-1a,us-east-1b"
    );
    // Every file is what `new` makes with the new answers, plus the user's line.
    let files = env.git(&fresh, &["ls-files"]);
    assert_eq!(env.git(&dir, &["ls-files"]), files);
    for path in files.lines() {
        let want = fs::read_to_string(fresh.join(path)).expect("fresh");
        let want = if path == tfvars { want + mine } else { want };
        assert_eq!(
            fs::read_to_string(dir.join(path)).expect("updated"),
            want,
            "{path}"
        );
    }
}

#[test]
fn a_changed_answer_that_invalidates_a_recorded_one_names_it() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "p", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let head = env.git(&dir, &["rev-parse", "HEAD"]);
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["update", "--set", "region=us-east-1"]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: zones: `eu-west-1a` must be a zone of the region, such as us-east-1a (from .scaffold/answers.yaml; --set zones=… changes it)\n"
    );
    assert_eq!(env.git(&dir, &["rev-parse", "HEAD"]), head);
}

/// A copy of the embedded default with its version bumped to 0.2.0 and one chart bumped,
/// on the search path, shadows the embedded `default` by name: what a newer scaffold
/// binary with a newer embedded default looks like to a repo.
fn newer_default(root: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default");
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.expect("walk");
        let to = root
            .join("default")
            .join(entry.path().strip_prefix(&src).expect("prefix"));
        if entry.file_type().is_dir() {
            fs::create_dir_all(&to).expect("mkdir");
        } else {
            fs::copy(entry.path(), &to).expect("copy");
        }
    }
    let edit = |rel: &str, from: &str, to: &str| {
        let path = root.join("default").join(rel);
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.contains(from), "{rel}: {from}");
        fs::write(&path, text.replacen(from, to, 1)).expect("write");
    };
    edit("blueprint.yaml", "version: 0.5.0", "version: 0.6.0");
    edit(
        "addons/metrics-server.yaml",
        "version: 3.13.1",
        "version: 3.13.2",
    );
}

#[test]
fn a_newer_default_blueprint_comes_in_through_update_before_add_addon() {
    let env = Env::new();
    let out =
        run(env
            .scaffold()
            .args(["new", "p", "--defaults", "--set", "addons=metrics-server"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("p");
    let bps = tempfile::TempDir::new().expect("bps");
    newer_default(bps.path());
    let scaffold = |args: &[&str]| {
        run(env
            .scaffold()
            .current_dir(&dir)
            .env("SCAFFOLD_BLUEPRINT_PATH", bps.path())
            .args(args))
    };

    let out = scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: this repo is at blueprint default 0.5.0, but scaffold has default 0.6.0: run `scaffold update` first (it keeps your edits), or pass --blueprint with version 0.5.0\n"
    );

    let out = scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        env.git(&dir, &["log", "-1", "--format=%s"]).trim_end(),
        "scaffold: update default 0.5.0 → 0.6.0"
    );
    let release = fs::read_to_string(dir.join(RELEASE)).expect("release");
    assert!(release.contains("version: \"3.13.2\""), "{release}");

    let out = scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn a_clone_fetches_the_base_from_origin_and_says_so() {
    let repo = Repo::team();
    user_edits(&repo);
    let clone = repo.env.path("clone");
    repo.env.git(
        repo.env.work.path(),
        &["clone", "-q", repo.dir.to_str().expect("utf8"), "clone"],
    );
    team_blueprint(repo.bps.path(), "0.2.0");
    let out = run(repo
        .env
        .scaffold()
        .current_dir(&clone)
        .env("SCAFFOLD_BLUEPRINT_PATH", repo.bps.path())
        .arg("update"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "note: fetched the pristine base (refs/scaffold/base) from `origin`: a plain `git clone` leaves it behind"
        ),
        "{}",
        out.stderr
    );
    assert!(
        fs::read_to_string(clone.join(RELEASE))
            .expect("release")
            .contains("    replicas: 3\n")
    );
    assert!(
        !repo
            .env
            .git(&clone, &["for-each-ref", "refs/scaffold-fetched"])
            .contains("refs/"),
        "the fetch's temporary ref is left"
    );
}

#[test]
fn dry_run_and_dirty_files_write_nothing() {
    let repo = Repo::team();
    team_blueprint(repo.bps.path(), "0.2.0");
    let state = repo.state();
    let out = repo.scaffold(&["update", "--dry-run"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("+review: monthly\n+oncall: pager\n"),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stderr,
        "dry run: 9 file(s) would change; nothing written\n"
    );
    assert_eq!(repo.state(), state);

    fs::write(repo.dir.join("docs/team.md"), "uncommitted\n").expect("dirty");
    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "CONFLICT docs/team.md:1: your edits and scaffold's change touch the same lines\n  base:\n    # Team notes\n    \n    owner: platform\n    review: weekly\n    \n    section two\n    keep: this\n  yours:\n    uncommitted\n  blueprint team 0.2.0:\n    # Team notes\n    \n    owner: platform\n    review: monthly\n    oncall: pager\n    \n    section two\n    keep: this\n\
         error: update conflicts with your edits in docs/team.md (1 hunk(s) above); nothing was written: undo those edits, or rerun with --conflicts=markers to resolve them in the files\n"
    );
    fs::write(
        repo.dir.join("docs/team.md"),
        TEAM_V1.to_string() + "more\n",
    )
    .expect("dirty");
    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: uncommitted changes in docs/team.md: commit or stash them first (`git stash`), or pass --allow-dirty to commit them together with scaffold's change\n"
    );
    assert_eq!(repo.head(), state.1);
    assert_eq!(repo.base(), state.2);
}

#[test]
fn a_removed_file_the_user_edited_is_a_conflict() {
    let repo = Repo::team();
    repo.edit("docs/old.md", |t| t.to_string() + "mine\n");
    team_blueprint(repo.bps.path(), "0.2.0");
    let state = repo.state();
    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(
            "CONFLICT docs/old.md: was edited since scaffold wrote it and would be removed; undo or move your edits first\n"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(repo.state(), state);
}

#[test]
fn add_addon_after_an_in_place_blueprint_change_says_update_first() {
    let repo = Repo::team();
    // Same version, other content: only the stored base can tell.
    let dir = team_blueprint(repo.bps.path(), "0.2.0");
    let manifest = fs::read_to_string(dir.join("blueprint.yaml")).expect("manifest");
    fs::write(
        dir.join("blueprint.yaml"),
        manifest.replace("version: 0.2.0", "version: 0.1.0"),
    )
    .expect("manifest");
    let head = repo.head();
    let out = repo.scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // How many files differ depends on the default blueprint the team one extends.
    assert!(
        out.stderr.starts_with(
            "error: blueprint team 0.1.0 changed since this repo was last made from it ("
        ) && out
            .stderr
            .ends_with("): run `scaffold update` first (it keeps your edits)\n")
            && out.stderr.lines().count() == 1,
        "{}",
        out.stderr
    );
    assert_eq!(repo.head(), head);
    let out = repo.scaffold(&["update"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The same version with other content: the subject says so, the body the answers.
    let message = repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("scaffold: update team 0.1.0 (blueprint changed in place, ")
            && message.contains(
                " files)\n\nAnswers:\n- legacy: dropped (was old)\n- oncall: pager (new question)"
            ),
        "{message}"
    );
    let out = repo.scaffold(&["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_new_question_is_asked_on_a_terminal() {
    let repo = Repo::team();
    team_blueprint(repo.bps.path(), "0.2.0");
    let mut cmd = repo.env.scaffold();
    cmd.current_dir(&repo.dir)
        .env("SCAFFOLD_BLUEPRINT_PATH", repo.bps.path())
        .env("TERM", "xterm")
        .arg("update");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn");
    p.exp_string("On-call rotation").expect("the new question");
    p.send_line("ops").expect("send");
    // (rexpect reads bytes as Latin-1: match ASCII only.)
    p.exp_string("8 file(s) written, 1 removed, commit")
        .expect("committed");
    p.exp_eof().expect("exit");
    assert_eq!(answer(&repo.dir, "oncall").as_str(), Some("ops"));
    assert!(repo.read("docs/team.md").contains("oncall: ops\n"));
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]).trim_end(),
        "scaffold: update team 0.1.0 → 0.2.0"
    );
}

#[test]
fn renaming_the_cluster_warns_that_kops_makes_a_new_one() {
    let env = Env::new();
    let dir = env.path("p");
    let out = run(env.scaffold().args(["new", "p", "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(env.scaffold().current_dir(&dir).args([
        "update",
        "--dry-run",
        "--json",
        "--set",
        "cluster_name=blue.p.example.com",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let warnings = report["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{report}");
    let warning = warnings[0].as_str().expect("text");
    assert!(
        warning.starts_with("cluster_name: kops knows a cluster by its name (its spec is under prod.p.example.com/ in the state store), so blue.p.example.com is a new cluster")
            && warning.contains("`kops delete cluster --name prod.p.example.com --yes`"),
        "{warning}"
    );
    assert!(
        out.stderr.contains(&format!("warning: {warning}")),
        "{}",
        out.stderr
    );
    // An update that changes no answer says nothing of the kind.
    let out = run(env
        .scaffold()
        .current_dir(&dir)
        .args(["update", "--dry-run", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(report["warnings"], serde_json::json!([]));
}

#[test]
fn file_level_conflicts_with_markers_leave_the_blueprints_version_to_merge() {
    let repo = Repo::team();
    // You deleted a file the blueprint changes, and made one where the blueprint adds its own.
    fs::remove_file(repo.dir.join("docs/team.md")).expect("delete");
    fs::write(repo.dir.join("docs/new.md"), "my own notes\n").expect("mine");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "mine"]);
    team_blueprint(repo.bps.path(), "0.2.0");

    let out = repo.scaffold(&["update", "--conflicts=markers"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    // Deleted but changed: back in the blueprint's new version, as git does it.
    assert!(repo.read("docs/team.md").contains("review: monthly"));
    // Exists with other content: yours stays, the blueprint's beside it.
    assert_eq!(repo.read("docs/new.md"), "my own notes\n");
    assert_eq!(repo.read("docs/new.md.scaffold-new"), "new in 0.2.0\n");
    assert!(
        out.stderr
            .contains("the blueprint's version of docs/new.md is in docs/new.md.scaffold-new")
            && out.stderr.contains("merge each .scaffold-new copy into its file by hand, then delete it: docs/new.md.scaffold-new"),
        "{}",
        out.stderr
    );
    // The suggested commit names the restored file, never the copy.
    let hint = out.stderr.trim_end();
    let command = &hint[hint.find("then `").expect("command") + 6..hint.len() - 1];
    assert!(command.contains("'docs/team.md'"), "{command}");
    assert!(!command.contains("scaffold-new"), "{command}");
}

/// `update --dry-run A B C` prepares each repo on every core and writes nothing: one is up
/// to date, one made by an older blueprint would change, one is no repo (its exit code is
/// the run's, the worst); one summary line, or one --json document.
#[test]
fn update_dry_run_takes_a_fleet_of_repos() {
    let env = Env::new();
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/old-blueprints/default-0.2.1"
    );
    for (name, extra) in [("current", None), ("old", Some(old))] {
        let mut cmd = env.scaffold();
        cmd.args(["new", name, "--defaults", "-q"]);
        if let Some(blueprint) = extra {
            cmd.args(["--blueprint", blueprint]);
        }
        let out = run(&mut cmd);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    let heads: Vec<String> = ["current", "old"]
        .iter()
        .map(|r| env.git(&env.path(r), &["rev-parse", "HEAD"]))
        .collect();
    let repos = [env.path("current"), env.path("old"), env.path("nothere")];
    let out = run(env
        .scaffold()
        .args(["update", "--dry-run", "--blueprint", "default"])
        .args(&repos));
    let missing = run(env.scaffold().arg("update").arg("-C").arg(&repos[2]));
    assert_ne!(missing.code, 0);
    assert_eq!(out.code, missing.code, "{}{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert_eq!(
        lines[0],
        format!("{}: default 0.5.0: up to date", repos[0].display())
    );
    assert!(
        lines[1].starts_with(&format!(
            "{}: default 0.2.1 → default 0.5.0: ",
            repos[1].display()
        )) && lines[1].ends_with(" file(s) would change"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with(&format!("{}: not prepared: ", repos[2].display())),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        "update --dry-run: 3 repos: 1 up to date, 1 would change, 0 with conflicts, 1 not prepared"
    );
    for (repo, head) in ["current", "old"].iter().zip(&heads) {
        let dir = env.path(repo);
        assert_eq!(&env.git(&dir, &["rev-parse", "HEAD"]), head);
        assert_eq!(env.git(&dir, &["status", "--porcelain"]), "");
    }
    let out = run(env
        .scaffold()
        .args(["update", "--dry-run", "--json", "--blueprint", "default"])
        .args(&repos[..2]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(document["summary"]["repos"], 2);
    assert_eq!(document["summary"]["would_change"], 1);
    assert_eq!(document["repos"][1]["update"]["from"]["version"], "0.2.1");
    assert_eq!(document["repos"][1]["update"]["dry_run"], true);
    // Without --dry-run, one repo at a time.
    let out = run(env.scaffold().arg("update").args(&repos[..2]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("several only with --dry-run"),
        "{}",
        out.stderr
    );
}

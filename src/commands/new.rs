//! `scaffold new`: answers → plan → staged write → commit → summary.
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;

use serde_json::{Map, Value as Json};

use crate::answers::{self, Sources};
use crate::blueprint::Blueprint;
use crate::error::{Error, Result};
use crate::generate;
use crate::git;
use crate::outcome::ExitStatus;
use crate::prompt::Terminal;
use crate::report::{self, BlueprintId, NewReport};
use crate::settings::NewOptions;
use crate::signals;
use crate::ui::{Reporter, Verbosity};
use crate::write;

pub fn run(args: NewOptions, out: &Reporter) -> Result<ExitStatus> {
    let _lock = crate::lock::acquire_dir(&args.dir)?;
    for note in write::remove_stale(&args.dir) {
        out.note(note);
    }
    write::check_target(&args.dir)?;
    // Checked before anything is read or written; resolved with git once staged.
    if let Some(flag) = &args.author {
        git::Author::parse(flag)?;
    }
    let mut set = args.set.clone();
    let values = match &args.values {
        Some(path) => crate::flags::read_values(path)?,
        None => BTreeMap::new(),
    };
    let blueprint = Blueprint::load(&args.blueprint)?;
    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), Json::String(dir_name(&args.dir)));
    let (renderer, linted) =
        crate::lint::compile_linted(&blueprint, &builtins, args.lint_cache.as_deref())?;
    set.extend(answers::secrets(
        &blueprint,
        &args.secrets,
        crate::process_env::var,
    )?);

    let mut terminal = Terminal::new();
    let interactive =
        !args.defaults && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let answers = answers::gather(
        &blueprint,
        &renderer,
        Sources {
            set,
            values,
            prompter: if interactive {
                Some(&mut terminal)
            } else {
                None
            },
            builtins,
            recorded_environments: Default::default(),
        },
    )?;
    for warning in &answers.warnings {
        out.note(format!("warning: {warning}"));
    }
    // Lint rendered every default already: with the same answers, that is this repo.
    let rendered = match linted {
        Some(linted) if linted.answers.renders_as(&answers) => linted.rendered,
        _ => {
            let record = generate::record_for(&blueprint, &answers, Map::new());
            generate::render(&blueprint, &renderer, &answers, &record)?
        }
    };
    let plan = &rendered.plan;
    if interactive && !args.dry_run {
        let summary = format!(
            "\nblueprint {} {}, {} files in {}:\n{}",
            blueprint.manifest.name,
            blueprint.manifest.version,
            plan.files.len(),
            args.dir.display(),
            answers::review(&blueprint, &answers)
        );
        if !answers::Prompter::confirm(&mut terminal, &summary, "Write this platform repo?")? {
            return Err(Error::Interrupted(
                "declined at the review: nothing was written; run scaffold new again (--set KEY=VALUE keeps answers you are sure of)".into(),
            ));
        }
    }

    let mut report = NewReport {
        command: "new",
        dir: args.dir.display().to_string(),
        blueprint: BlueprintId {
            name: blueprint.manifest.name.clone(),
            version: blueprint.manifest.version.clone(),
        },
        dry_run: args.dry_run,
        commit: None,
        files: report::files_of(plan),
        added_dependencies: report::dependencies(&rendered.added),
    };
    if args.dry_run {
        if args.json {
            out.json(&report);
        } else {
            // One write for the listing, not one per path.
            let listing: String = plan
                .files
                .keys()
                .flat_map(|path| [path.as_str(), "\n"])
                .collect();
            out.text(&listing);
            out.note(format!(
                "dry run: {} files would be written to {}; nothing written",
                plan.files.len(),
                args.dir.display()
            ));
        }
        return Ok(ExitStatus::Success);
    }

    let message = format!(
        "scaffold: new platform from blueprint {} {}",
        blueprint.manifest.name, blueprint.manifest.version
    );
    // Said after the repo is written, rendered before: a template that fails stops the
    // run before anything is written.
    let next_steps = match &blueprint.manifest.next_steps {
        Some(template) if !args.json && out.verbosity() > Verbosity::Quiet => {
            let context = answers::context_of(&answers, &Map::new());
            Some(renderer.render_str("next_steps", template, &context)?)
        }
        _ => None,
    };
    // The plan is all that is written from here: the blueprint's sources and templates are
    // freed, and their memory returned, before the writes take more.
    drop((blueprint, renderer, answers));
    release_freed_memory();
    if let Some(note) = nested_note(&args.dir) {
        out.note(note);
    }
    // A signal waits until the repo is complete or the staging is gone, never between.
    let mut critical = signals::Critical::enter();
    let staged = write::staging_dir(&args.dir)?;
    critical.staging(staged.path().to_path_buf());
    // git is asked who commits where the repo's git directory will be, so `includeIf
    // "gitdir:…"` matches (in place: the target; else the staging beside it). Asked now,
    // answered while the files are written: the commit is the first to need it.
    let git_home = if args.dir.is_dir() {
        args.dir.as_path()
    } else {
        staged.path()
    };
    let place = crate::identity::Place::new_repo(git_home);
    place.ask_listing_ahead();
    let author = || git::resolve_author(args.author.as_deref(), &place);
    signals::test_seam("new-staged")?;
    // git's commit hooks judge the first commit as `git commit` would: one that rejects
    // fails the run before the repo moves into place, so nothing is written.
    let verify = !args.no_verify;
    let find_hooks = |root: &Path| crate::hooks::Hooks::find(root, &place, verify);
    let (commit, hooks) = fill_and_commit(&staged, plan, author, &message, find_hooks)?;
    signals::test_seam("new-committed")?;
    let in_place = args.dir.is_dir();
    staged.finish()?;
    if in_place {
        git::refresh_top_level_stat(&args.dir)?;
    }
    critical.done();
    if let Some(hooks) = hooks {
        hooks.moved_to(&args.dir).post_commit();
    }

    for path in plan.files.keys() {
        out.detail(format!("wrote {}", path.as_str()));
    }
    report.commit = Some(commit);
    if args.json {
        out.json(&report);
        return Ok(ExitStatus::Success);
    }
    out.text(&report::new_summary(&report));
    // The next commands are part of the summary, which -q trims to what was written.
    if let Some(next) = next_steps {
        out.line(format!("\n{}", next.trim_end()));
    }
    Ok(ExitStatus::Success)
}

/// Returns the memory freed so far to the system. mimalloc, the global allocator (main.rs),
/// returns freed pages only after a delay longer than a run: `new` at 2,000 files peaked
/// at 26.1 MiB with the blueprint freed and at 22.3–23.2 with its memory returned
/// (BENCHMARKS.md, round two).
#[allow(unsafe_code)] // mimalloc's C API
fn release_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer; it only hands free pages back to the system.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Writes the plan into `staged` and commits it there: the route `new` takes, and what the
/// commit benches time. The blobs are hashed and packed on a second core while the files
/// are written.
/// `author` is resolved once the files are written, just before the commit needs it;
/// `find_hooks` once the repository exists (see `git::commit`, which returns them).
pub fn fill_and_commit(
    staged: &write::Staged,
    plan: &crate::plan::Plan,
    author: impl FnOnce() -> Result<git::Author>,
    message: &str,
    find_hooks: impl FnOnce(&Path) -> Option<crate::hooks::Hooks>,
) -> Result<(String, Option<crate::hooks::Hooks>)> {
    // Blobs hold the plan's bytes; the files are what git would check out.
    let attributes = crate::attributes::work_tree_for_new(plan)?;
    let work_tree = attributes.work_tree.as_ref().unwrap_or(plan);
    if !attributes.filtered.is_empty() {
        // A filter driver runs in the repository (git-lfs keeps its objects there), on the
        // files as written: the repo exists first, the blobs follow the files. The base
        // stores what `git add` stores too (LFS pointers), as every later base does.
        let author = author()?;
        git::init(staged.path())?;
        let written = write::fill(staged, work_tree)?;
        let blob_plan =
            crate::attributes::blobs_for_new(staged.path(), plan, &attributes.filtered)?;
        let blobs = git::Blobs::of(&blob_plan)?;
        signals::test_seam("new-written")?;
        let commit = git::commit(
            staged.path(),
            &blob_plan,
            written.stats(),
            blobs,
            &author,
            message,
            find_hooks,
        )?;
        crate::pristine::store(staged.path(), plan, message, &git::base_by(&author)?)?;
        return Ok(commit);
    }
    let (written, blobs) = std::thread::scope(|s| {
        let blobs = s.spawn(|| git::Blobs::of(plan));
        let written = write::fill(staged, work_tree);
        let blobs = blobs
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (written, blobs)
    });
    let (written, blobs) = (written?, blobs?);
    signals::test_seam("new-written")?;
    git::commit(
        staged.path(),
        plan,
        written.stats(),
        blobs,
        &author()?,
        message,
        find_hooks,
    )
}

/// `new` inside another repository makes a repository of its own there: said, since the
/// outer one then sees it only as an untracked directory (not a submodule).
fn nested_note(dir: &Path) -> Option<String> {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let parent = absolute.ancestors().skip(1).find(|d| d.is_dir())?;
    let outer = git2::Repository::discover(parent).ok()?;
    let workdir = outer.workdir()?;
    Some(format!(
        "note: `{}` is inside the git repository `{}`; it becomes a repository of its own, which the outer one sees as an untracked directory (add it to that repo's .gitignore, or make it elsewhere)",
        dir.display(),
        workdir.display()
    ))
}

fn dir_name(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

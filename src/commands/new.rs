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
    let mut terminal = Terminal::new();
    let interactive =
        !args.defaults && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    // git is asked who commits while the repo renders (the answer the commit needs). Not
    // at a terminal, where the answers and the review may take minutes: asked after them.
    let asked = (!args.dry_run && !interactive)
        .then(|| crate::publish::Asked::ahead(&args.dir))
        .transpose()?;
    let prompter: Option<&mut dyn answers::Prompter> = match interactive {
        true => Some(&mut terminal),
        false => None,
    };
    let Gathered {
        blueprint,
        renderer,
        answers,
        rendered,
    } = gather(&args, prompter, out)?;
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
    crate::memory::release_freed_memory();
    if let Some(note) = crate::publish::nested_note(&args.dir) {
        out.note(note);
    }
    let target = crate::publish::NewRepo {
        dir: &args.dir,
        author: args.author.as_deref(),
        message: &message,
        verify: !args.no_verify,
    };
    let asked = asked.map_or_else(|| crate::publish::Asked::ahead(&args.dir), Ok)?;
    let commit = crate::publish::publish(&target, plan, asked)?;
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

/// What `new` writes, before anything is: the blueprint, its renderer, the answers and
/// the rendering.
struct Gathered {
    blueprint: Blueprint,
    renderer: crate::render::Renderer,
    answers: answers::Answers,
    rendered: generate::Rendered,
}

/// The blueprint loaded and linted, the answers gathered (asked at the terminal when
/// there is one), and the repo rendered.
fn gather(
    args: &NewOptions,
    prompter: Option<&mut dyn answers::Prompter>,
    out: &Reporter,
) -> Result<Gathered> {
    let values = match &args.values {
        Some(path) => crate::flags::read_values(path)?,
        None => BTreeMap::new(),
    };
    let blueprint = Blueprint::load(&args.blueprint)?;
    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), Json::String(dir_name(&args.dir)));
    let (mut renderer, linted) =
        crate::lint::compile_linted(&blueprint, &builtins, args.lint_cache.as_deref())?;
    crate::memory::purge_after_the_default_delay();
    let interactive = prompter.is_some();
    // The answers, secrets from the environment included: after the file templates
    // compile, whose errors come first.
    let gather = |renderer: &crate::render::Renderer| {
        let mut set = args.set.clone();
        set.extend(answers::secrets(
            &blueprint,
            &args.secrets,
            crate::process_env::var,
        )?);
        let sources = Sources {
            set,
            values,
            prompter,
            builtins,
            recorded_environments: Default::default(),
        };
        answers::gather(&blueprint, renderer, sources)
    };
    let answers = match interactive {
        // At a terminal, a template that does not compile is said before the first
        // question.
        true => {
            generate::compile_file_templates(&blueprint, &mut renderer)?;
            gather(&renderer)?
        }
        false => generate::gather_while_compiling(&blueprint, &mut renderer, gather)?,
    };
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
    // `new`'s staging may exist by now (`publish::Asked`): a signal here removes it.
    scaffold_core::signals::test_seam("new-rendered")?;
    Ok(Gathered {
        blueprint,
        renderer,
        answers,
        rendered,
    })
}

fn dir_name(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

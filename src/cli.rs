//! The command line: clap definitions and one short pipeline per subcommand.
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, Parser, Subcommand};
use serde_json::{Map, Value as Json, json};

use crate::answers::{self, Answers, Sources};
use crate::blueprint::Blueprint;
use crate::error::{Error, Result};
use crate::git::{self, Author};
use crate::plan::{self, Plan, RelPath};
use crate::prompt::Terminal;
use crate::render::Renderer;
use crate::write;

const VERSION: &str = env!("CARGO_PKG_VERSION");
const ANSWERS_FILE: &str = ".scaffold/answers.yaml";

#[derive(Debug, Parser)]
#[command(
    name = "scaffold",
    version,
    about = "Generate and grow GitOps platform repositories (kops + Terraform + Flux on AWS)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new platform repository into DIR and commit it.
    #[command(
        after_help = "Examples:\n  scaffold new acme-platform\n  scaffold new acme-platform --defaults --set region=us-east-1\n  scaffold new acme-platform --values answers.yaml --dry-run"
    )]
    New(NewArgs),
    /// List what a blueprint offers.
    List {
        #[command(subcommand)]
        what: ListWhat,
    },
}

#[derive(Debug, Subcommand)]
pub enum ListWhat {
    /// The addon catalog: name, chart, pinned version, namespace, layer, what it needs.
    Addons {
        /// Blueprint name or directory.
        #[arg(long, default_value = "default")]
        blueprint: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Directory to create (must not exist or be empty). Its name is the default platform name.
    pub dir: PathBuf,
    /// Blueprint: an embedded name or a directory with a blueprint.yaml.
    #[arg(long, default_value = "default")]
    pub blueprint: String,
    /// Never prompt: take defaults for every answer not given.
    #[arg(long)]
    pub defaults: bool,
    /// YAML file of answers (key: value).
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// One answer, KEY=VALUE (repeatable; wins over --values). Lists: a,b,c; maps: k=v,k2=v2.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Commit author, "Name <email>" (default: git config user.name/user.email).
    #[arg(long)]
    pub author: Option<String>,
    /// List the files that would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print machine-readable JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::New(args) => new(args),
        Command::List {
            what: ListWhat::Addons { blueprint, json },
        } => list_addons(&blueprint, json),
    }
}

fn new(args: NewArgs) -> Result<()> {
    write::check_target(&args.dir)?;
    let author = match &args.author {
        Some(text) => Some(Author::parse(text)?),
        None => None,
    };
    let set = args
        .set
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| Error::Input(format!("--set `{pair}`: use KEY=VALUE")))
        })
        .collect::<Result<Vec<_>>>()?;
    let values = match &args.values {
        Some(path) => read_values(path)?,
        None => BTreeMap::new(),
    };
    let blueprint = Blueprint::load(&args.blueprint)?;
    let sources_list = plan::template_sources(&blueprint);
    let renderer = Renderer::new(sources_list.iter().map(|(n, s)| (n.as_str(), s.as_str())))?;

    let mut builtins = Map::new();
    builtins.insert("target_dir_name".into(), Json::String(dir_name(&args.dir)));
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
            builtins: builtins.clone(),
        },
    )?;

    let (plan, added) = render_repo(&blueprint, &renderer, &answers, &builtins)?;
    if args.dry_run {
        if args.json {
            println!(
                "{}",
                json!({"dir": args.dir, "blueprint": blueprint.manifest.name, "files": plan.listing()})
            );
        } else {
            for path in plan.files.keys() {
                println!("{}", path.as_str());
            }
            eprintln!(
                "dry run: {} files would be written to {}; nothing written",
                plan.files.len(),
                args.dir.display()
            );
        }
        return Ok(());
    }

    let author = match author.or_else(Author::from_git_config) {
        Some(author) => author,
        None => {
            eprintln!(
                "note: no --author and no git config user.name/user.email; committing as scaffold <scaffold@localhost>"
            );
            Author {
                name: "scaffold".into(),
                email: "scaffold@localhost".into(),
            }
        }
    };
    let message = format!(
        "scaffold: new platform from blueprint {} {}",
        blueprint.manifest.name, blueprint.manifest.version
    );
    let staged = write::stage(&plan, &args.dir)?;
    let commit = git::commit(staged.path(), &plan, &author, &message)?;
    staged.finish()?;

    let context = answers::context_of(&answers, &builtins);
    let next = match &blueprint.manifest.next_steps {
        Some(template) => renderer.render_str("next_steps", template, &context)?,
        None => String::new(),
    };
    if args.json {
        println!(
            "{}",
            json!({"dir": args.dir, "commit": commit, "files": plan.files.len(), "added_dependencies": added})
        );
    } else {
        for (dep, by) in &added {
            println!("added addon {dep} (needed by {by})");
        }
        println!(
            "Created {} from blueprint {} {}: {} files, commit {} on main.",
            args.dir.display(),
            blueprint.manifest.name,
            blueprint.manifest.version,
            plan.files.len(),
            &commit[..12]
        );
        if !next.trim().is_empty() {
            println!("\n{}", next.trim_end());
        }
    }
    Ok(())
}

/// answers → template context → plan (plus the answers record).
fn render_repo(
    blueprint: &Blueprint,
    renderer: &Renderer,
    answers: &Answers,
    builtins: &Map<String, Json>,
) -> Result<(Plan, Vec<(String, String)>)> {
    let chosen: Vec<String> = answers
        .values
        .get("addons")
        .and_then(Json::as_array)
        .map(|a| a.iter().map(answers::show).collect())
        .unwrap_or_default();
    let selection = blueprint.catalog.select(&chosen)?;
    for entry in &selection.entries {
        for key in &entry.spec.requires {
            let present = answers
                .values
                .get(key)
                .is_some_and(|v| !answers::show(v).is_empty());
            if !present {
                return Err(Error::Input(format!(
                    "addons: {} needs `{key}`; set --set {key}=… or leave {} out of addons",
                    entry.spec.name, entry.spec.name
                )));
            }
        }
    }
    let addons: Vec<Json> = selection
        .entries
        .iter()
        .map(|e| e.template_object())
        .collect();
    let mut context = match answers::context_of(answers, builtins) {
        Json::Object(map) => map,
        _ => Map::new(),
    };
    context.insert(
        "blueprint".into(),
        json!({"name": blueprint.manifest.name, "version": blueprint.manifest.version}),
    );
    context.insert("scaffold_version".into(), Json::String(VERSION.into()));
    context.insert(
        "addon_names".into(),
        Json::Array(
            selection
                .entries
                .iter()
                .map(|e| Json::String(e.spec.name.clone()))
                .collect(),
        ),
    );
    context.insert("addons".into(), Json::Array(addons.clone()));
    let context = Json::Object(context);
    let mut plan = plan::build(blueprint, renderer, &context, &addons)?;
    let path = RelPath::new(ANSWERS_FILE).map_err(Error::Blueprint)?;
    plan.add(path, answers_record(blueprint, answers)?.into_bytes())?;
    Ok((plan, selection.added))
}

fn answers_record(blueprint: &Blueprint, answers: &Answers) -> Result<String> {
    let recorded: Map<String, Json> = answers
        .recorded
        .iter()
        .filter_map(|k| answers.values.get(k).map(|v| (k.clone(), v.clone())))
        .collect();
    let record = json!({
        "blueprint": {"name": blueprint.manifest.name, "version": blueprint.manifest.version},
        "scaffold_version": VERSION,
        "answers": recorded,
    });
    let yaml = serde_yaml::to_string(&record).map_err(|e| Error::Blueprint(e.to_string()))?;
    Ok(format!(
        "# Written by scaffold: the answers this repo was generated from (secrets are never recorded).\n# scaffold add-addon and later updates read it; edit with care.\n{yaml}"
    ))
}

fn read_values(path: &Path) -> Result<BTreeMap<String, serde_yaml::Value>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::io_path("read --values file", path, e))?;
    let value: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|e| Error::Input(format!("--values `{}`: not YAML: {e}", path.display())))?;
    match value {
        serde_yaml::Value::Null => Ok(BTreeMap::new()),
        serde_yaml::Value::Mapping(map) => map
            .into_iter()
            .map(|(k, v)| match k {
                serde_yaml::Value::String(k) => Ok((k, v)),
                other => Err(Error::Input(format!(
                    "--values `{}`: key {other:?} is not a string",
                    path.display()
                ))),
            })
            .collect(),
        _ => Err(Error::Input(format!(
            "--values `{}`: must be a mapping of answer keys to values",
            path.display()
        ))),
    }
}

fn dir_name(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

fn list_addons(blueprint: &str, as_json: bool) -> Result<()> {
    let blueprint = Blueprint::load(blueprint)?;
    let rows: Vec<Json> = blueprint
        .catalog
        .entries()
        .map(|e| {
            let s = &e.spec;
            json!({
                "name": s.name, "chart": s.chart.name, "version": s.chart.version,
                "namespace": s.namespace, "layer": s.layer, "always": s.always, "default": s.default,
                "aws_permissions": s.iam_policy.is_some(), "requires": s.requires, "depends_on": s.depends_on,
                "description": s.description,
            })
        })
        .collect();
    if as_json {
        println!("{}", Json::Array(rows));
        return Ok(());
    }
    println!(
        "{:<28} {:<30} {:<12} {:<18} {:<14} NEEDS",
        "NAME", "CHART", "VERSION", "NAMESPACE", "LAYER"
    );
    for e in blueprint.catalog.entries() {
        let s = &e.spec;
        let mut needs: Vec<String> = s.depends_on.clone();
        needs.extend(s.requires.iter().map(|r| format!("answer {r}")));
        if s.iam_policy.is_some() {
            needs.push("IRSA".into());
        }
        let name = if s.always {
            format!("{} (always)", s.name)
        } else {
            s.name.clone()
        };
        println!(
            "{:<28} {:<30} {:<12} {:<18} {:<14} {}",
            name,
            s.chart.name,
            s.chart.version,
            s.namespace,
            s.layer,
            if needs.is_empty() {
                "-".to_string()
            } else {
                needs.join(", ")
            }
        );
    }
    Ok(())
}

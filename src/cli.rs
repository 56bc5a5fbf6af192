//! The command line: clap definitions only; each subcommand's pipeline is in `commands`.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::commands;
use crate::error::Result;

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
    /// Add an addon (from the catalog, or any chart with --chart/--repo) to the repo around
    /// the current directory, and commit.
    #[command(
        after_help = "Examples:\n  scaffold add-addon velero\n  scaffold add-addon podinfo --chart podinfo --repo oci://ghcr.io/stefanprodan/charts --version 6.14.1 --layer apps"
    )]
    AddAddon(AddAddonArgs),
    /// Remove an addon added by name, with everything scaffold wrote for it, and commit.
    RemoveAddon(RemoveAddonArgs),
    /// Move the repo around the current directory to a newer blueprint, or to changed
    /// answers, keeping every edit; commit once.
    #[command(
        after_help = "Examples:\n  scaffold update\n  scaffold update --set region=us-east-1 --set zones=us-east-1a,us-east-1b\n  scaffold update --blueprint ./platform-blueprint --dry-run\n  scaffold update --conflicts=markers"
    )]
    Update(UpdateArgs),
    /// Write, check and inspect blueprints.
    Blueprint {
        #[command(subcommand)]
        what: BlueprintCommand,
    },
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

#[derive(Debug, Subcommand)]
pub enum BlueprintCommand {
    /// The embedded blueprints and those on the search path ($SCAFFOLD_BLUEPRINT_PATH,
    /// then $XDG_CONFIG_HOME/scaffold/blueprints).
    List,
    /// The merged manifest of a blueprint (extends resolved) and where each file comes from.
    Show {
        /// A blueprint name or directory.
        name: String,
    },
    /// Write a minimal, working, commented blueprint into DIR.
    Init {
        dir: PathBuf,
        /// Build on another blueprint (e.g. default) instead of starting empty.
        #[arg(long)]
        extends: Option<String>,
    },
    /// Check a blueprint: manifest, templates, variables, regexes, defaults, paths, delimiters.
    Lint { path: PathBuf },
    /// Render every answer set in the blueprint's tests/ and run the built-in checks.
    Test { path: String },
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

#[derive(Debug, Args)]
pub struct EditArgs {
    /// Blueprint: a name on the search path or a directory (default: the recorded one,
    /// by name). update moves the repo to it; the others need the version that made it.
    #[arg(long)]
    pub blueprint: Option<String>,
    /// Edit even if files scaffold must change have uncommitted changes.
    #[arg(long)]
    pub allow_dirty: bool,
    /// Print the diff that would be made; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Commit author, "Name <email>" (default: git config user.name/user.email).
    #[arg(long)]
    pub author: Option<String>,
    /// Run as if started in this directory.
    #[arg(short = 'C', long = "directory", default_value = ".")]
    pub directory: PathBuf,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// A changed or new answer, KEY=VALUE (repeatable; wins over --values).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// YAML file of changed or new answers (key: value).
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// On conflict: refuse and show the hunks, or write git-style markers and leave the
    /// commit to you.
    #[arg(long, value_enum, default_value_t = Conflicts::Refuse)]
    pub conflicts: Conflicts,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Conflicts {
    Refuse,
    Markers,
}

#[derive(Debug, Args)]
pub struct AddAddonArgs {
    /// Catalog addon (see `scaffold list addons`), or the name of a custom chart.
    pub name: String,
    /// Chart version (default: the catalog's pinned version).
    #[arg(long)]
    pub version: Option<String>,
    /// Namespace (default: the catalog's, or NAME for a custom chart).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Helm values as helm --set takes them (repeatable): a.b=1,c[0]=x,d={e,f}; true, false,
    /// null and plain integers are typed, everything else (6.10, 1e3, 0x1F) stays a string.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Like --set, but every value is a string (helm --set-string).
    #[arg(long = "set-string", value_name = "KEY=VALUE")]
    pub set_string: Vec<String>,
    /// A chart outside the catalog: its name in --repo.
    #[arg(long, requires_all = ["repo", "version"])]
    pub chart: Option<String>,
    /// The chart repository: https://… (HelmRepository) or oci://… (OCIRepository).
    #[arg(long, requires = "chart")]
    pub repo: Option<String>,
    /// Layer of a custom chart: addons or apps (default: the blueprint's custom_addon layer).
    #[arg(long, requires = "chart", value_parser = ["addons", "apps"])]
    pub layer: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Args)]
pub struct RemoveAddonArgs {
    /// The addon to remove.
    pub name: String,
    #[command(flatten)]
    pub edit: EditArgs,
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::New(args) => commands::new::run(args),
        Command::AddAddon(args) => commands::addon::add(args),
        Command::RemoveAddon(args) => commands::addon::remove(args),
        Command::Update(args) => commands::update::run(args),
        Command::List {
            what: ListWhat::Addons { blueprint, json },
        } => commands::list::addons(&blueprint, json),
        Command::Blueprint { what } => match what {
            BlueprintCommand::List => commands::blueprint::list(),
            BlueprintCommand::Show { name } => commands::blueprint::show(&name),
            BlueprintCommand::Init { dir, extends } => {
                commands::blueprint::init(&dir, extends.as_deref())
            }
            BlueprintCommand::Lint { path } => commands::blueprint::lint(&path),
            BlueprintCommand::Test { path } => commands::blueprint::test(&path),
        },
    }
}

//! From the parsed command line to what each command runs with: one options struct per
//! command, owned, free of clap (as uv's `settings` does). Commands take these and never
//! see `cli`; a new flag is added to `cli` and resolved here, and its command reads the
//! option.
use std::path::PathBuf;

use crate::check::Filter;
use crate::cli::{self, Cli, Command};
use crate::error::{Error, Problem, Result};
use crate::names::{AddonName, ChartName, ChartRepoUrl, EnvironmentName, Namespace, Version};
use crate::ui::Verbosity;

/// What `main` runs: the verbosity every line on stderr follows, and one command.
#[derive(Debug)]
pub struct Settings {
    pub verbosity: Verbosity,
    pub command: Options,
}

/// One command and its options.
#[derive(Debug)]
pub enum Options {
    New(NewOptions),
    AddAddon(AddAddonOptions),
    RemoveAddon(RemoveAddonOptions),
    EnvAdd(EnvAddOptions),
    EnvRemove(EnvRemoveOptions),
    Promote(PromoteOptions),
    Update(UpdateOptions),
    Check(CheckOptions),
    Diff(DiffOptions),
    ListAddons(ListAddonsOptions),
    Blueprint(BlueprintOptions),
    /// Text made from the command line's own definitions (completions, the manual page),
    /// printed as it is.
    Print(Vec<u8>),
}

/// `scaffold new`.
#[derive(Debug)]
pub struct NewOptions {
    pub dir: PathBuf,
    pub blueprint: String,
    /// Never prompt: defaults for every answer not given.
    pub defaults: bool,
    /// A `--values` file.
    pub values: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    pub secrets: Vec<(String, String)>,
    pub author: Option<String>,
    /// Skip the `pre-commit` and `commit-msg` hooks, as `git commit --no-verify` does.
    pub no_verify: bool,
    pub dry_run: bool,
    pub json: bool,
    /// Where `new` keeps the lint verdicts of blueprints from disk (`lint_cache_dir`).
    pub lint_cache: Option<PathBuf>,
}

/// What every command that changes an existing repo takes: where the repo is, with which
/// blueprint, how careful to be and how to report.
#[derive(Debug, Clone)]
pub struct EditOptions {
    pub directory: PathBuf,
    pub blueprint: Option<String>,
    pub allow_dirty: bool,
    pub secrets: Vec<(String, String)>,
    pub dry_run: bool,
    pub author: Option<String>,
    pub json: bool,
    /// Skip the `pre-commit` and `commit-msg` hooks, as `git commit --no-verify` does.
    pub no_verify: bool,
}

/// `scaffold add-addon`.
#[derive(Debug)]
pub struct AddAddonOptions {
    pub name: AddonName,
    pub version: Option<Version>,
    pub namespace: Option<Namespace>,
    pub helm_set: Vec<String>,
    pub helm_set_string: Vec<String>,
    /// A custom chart: its name and repository.
    pub chart: Option<CustomChart>,
    pub env: Vec<String>,
    pub edit: EditOptions,
}

/// A chart outside the catalog (`--chart`, `--repo`, `--layer`).
#[derive(Debug)]
pub struct CustomChart {
    pub chart: ChartName,
    pub repo: ChartRepoUrl,
    pub layer: Option<String>,
}

/// `scaffold remove-addon`.
#[derive(Debug)]
pub struct RemoveAddonOptions {
    pub name: String,
    pub env: Vec<String>,
    pub edit: EditOptions,
}

/// `scaffold env add`.
#[derive(Debug)]
pub struct EnvAddOptions {
    pub name: EnvironmentName,
    pub from: Option<String>,
    pub set: Vec<(String, String)>,
    pub edit: EditOptions,
}

/// `scaffold env remove`.
#[derive(Debug)]
pub struct EnvRemoveOptions {
    pub name: String,
    pub force: bool,
    pub edit: EditOptions,
}

/// `scaffold promote`.
#[derive(Debug)]
pub struct PromoteOptions {
    pub from: String,
    pub to: String,
    pub addons: Vec<String>,
    /// Which values `to` owns move too (`--values`, `--values COMPONENT:KEY`).
    pub values: crate::promotion::TakeOwned,
    /// Move the cluster's version pins instead of components.
    pub cluster: bool,
    /// `--branch NAME`: the promotion as a commit on that new branch.
    pub branch: Option<String>,
    pub edit: EditOptions,
}

/// `scaffold update`.
#[derive(Debug)]
pub struct UpdateOptions {
    /// Several repos (only with `--dry-run`): a fleet; one: the repo of `edit.directory`.
    pub fleet: Vec<PathBuf>,
    pub set: Vec<(String, String)>,
    pub values: Option<PathBuf>,
    pub conflicts: OnConflict,
    /// `--branch NAME`: each repo's update as a commit on that new branch (`fleet` holds
    /// the repos, one at least).
    pub branch: Option<String>,
    pub edit: EditOptions,
}

/// What `update` does with a conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Refuse, showing the hunks; nothing written.
    Refuse,
    /// Write git-style markers and leave the commit to the user.
    Markers,
}

/// `scaffold check`.
#[derive(Debug)]
pub struct CheckOptions {
    pub dirs: Vec<PathBuf>,
    pub filter: Filter,
    pub format: CheckFormat,
    pub list_rules: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
    Human,
    Json,
    /// SARIF 2.1.0 (code scanning).
    Sarif,
}

/// `scaffold diff`.
#[derive(Debug)]
pub struct DiffOptions {
    pub repo: PathBuf,
    /// None: the merge-base with the default branch.
    pub base: Option<String>,
    /// None: the work tree.
    pub head: Option<String>,
    pub format: DiffFormat,
    pub exit_code: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

/// `scaffold list addons`.
#[derive(Debug)]
pub struct ListAddonsOptions {
    /// The blueprint whose catalog to list (default: the repo's, else `default`).
    pub blueprint: Option<String>,
    pub json: bool,
}

/// `scaffold blueprint …`.
#[derive(Debug)]
pub enum BlueprintOptions {
    List,
    Show {
        name: String,
    },
    Init {
        dir: PathBuf,
        extends: Option<String>,
    },
    Lint {
        path: Option<PathBuf>,
        json: bool,
        list_rules: bool,
        from: Option<PathBuf>,
    },
    Test {
        path: String,
        json: bool,
    },
    Files {
        name: String,
        json: bool,
    },
    Cat {
        name: String,
        path: String,
    },
    Export {
        name: String,
        dir: PathBuf,
    },
    Rebase {
        dir: PathBuf,
        from: String,
    },
}

/// `$XDG_CACHE_HOME/scaffold/lint` (an absolute `XDG_CACHE_HOME` only, as the XDG base
/// directory specification says), else `~/.cache/scaffold/lint`; none without a home.
fn lint_cache_dir(env: &scaffold_support::process_env::Snapshot) -> Option<PathBuf> {
    env.xdg_dir("XDG_CACHE_HOME", ".cache")
        .map(|cache| cache.join("scaffold").join("lint"))
}

/// The settings of a parsed command line. Refuses (exit 2, one line) what clap lets
/// through but the command cannot take.
pub fn resolve(cli: Cli) -> Result<Settings> {
    let verbosity = match (cli.quiet, cli.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, 0) => Verbosity::Normal,
        (false, _) => Verbosity::Verbose,
    };
    let command = match cli.command {
        Command::New(args) => Options::New(NewOptions {
            dir: args.dir,
            blueprint: args.blueprint,
            defaults: args.defaults,
            values: args.values,
            set: pairs(args.set),
            secrets: pairs(args.secret),
            author: args.author,
            no_verify: args.no_verify,
            dry_run: args.dry_run,
            json: args.json,
            lint_cache: lint_cache_dir(scaffold_support::process_env::snapshot()),
        }),
        Command::AddAddon(args) => Options::AddAddon(add_addon(args)?),
        Command::RemoveAddon(args) => Options::RemoveAddon(RemoveAddonOptions {
            name: args.name,
            env: args.env,
            edit: edit(args.edit),
        }),
        Command::Env { what } => match what {
            cli::EnvCommand::Add(args) => Options::EnvAdd(EnvAddOptions {
                name: args.name,
                from: args.from,
                set: pairs(args.set),
                edit: edit(args.edit),
            }),
            cli::EnvCommand::Remove(args) => Options::EnvRemove(EnvRemoveOptions {
                name: args.name,
                force: args.force,
                edit: edit(args.edit),
            }),
        },
        Command::Promote(args) => Options::Promote(promote(args)?),
        Command::Update(args) => Options::Update(update(args)?),
        Command::Check(args) => Options::Check(CheckOptions {
            dirs: args.dir,
            filter: Filter {
                only: args.rule,
                skip: args.skip,
            },
            format: match args.format.as_deref() {
                Some("sarif") => CheckFormat::Sarif,
                Some("json") => CheckFormat::Json,
                _ if args.json => CheckFormat::Json,
                _ => CheckFormat::Human,
            },
            list_rules: args.list_rules,
        }),
        Command::Diff(args) => Options::Diff(DiffOptions {
            repo: args.repo,
            base: args.base,
            head: args.head,
            format: match args.format.as_deref() {
                Some("markdown") => DiffFormat::Markdown,
                Some("json") => DiffFormat::Json,
                _ if args.json => DiffFormat::Json,
                _ => DiffFormat::Text,
            },
            exit_code: args.exit_code,
        }),
        Command::List {
            what: cli::ListWhat::Addons { blueprint, json },
        } => Options::ListAddons(ListAddonsOptions { blueprint, json }),
        Command::Blueprint { what } => Options::Blueprint(blueprint(what)),
        Command::Completions { shell } => Options::Print(cli::manual::completions(shell)),
        Command::Man => Options::Print(cli::manual::man()?),
    };
    Ok(Settings { verbosity, command })
}

fn pairs(pairs: Vec<cli::Pair>) -> Vec<(String, String)> {
    pairs.into_iter().map(|p| (p.key, p.value)).collect()
}

fn edit(args: cli::EditArgs) -> EditOptions {
    EditOptions {
        directory: args.directory,
        blueprint: args.blueprint,
        allow_dirty: args.allow_dirty,
        secrets: pairs(args.secret),
        dry_run: args.dry_run,
        author: args.author,
        json: args.json,
        no_verify: args.no_verify,
    }
}

fn add_addon(args: cli::AddAddonArgs) -> Result<AddAddonOptions> {
    let name = args.name;
    if let Some(pair) = args.misplaced_set.first() {
        return Err(Error::input(
            Problem::new(format!(
                "--set `{pair}`: add-addon takes Helm values as --helm-set KEY=VALUE"
            ))
            .fix("an answer of this repo changes with `scaffold update --set KEY=VALUE`"),
        ));
    }
    let version = args.version;
    let chart = match args.chart {
        None => None,
        Some(chart) => {
            // One line naming what is missing (clap's own report is a usage block).
            let missing: Vec<&str> = [
                ("--repo URL", args.repo.is_none()),
                ("--version V", version.is_none()),
            ]
            .into_iter()
            .filter_map(|(flag, absent)| absent.then_some(flag))
            .collect();
            if !missing.is_empty() {
                return Err(Error::input(format!(
                    "--chart {chart} needs {}: add-addon {name} --chart {chart} --repo URL --version V",
                    missing.join(" and ")
                )));
            }
            // Present: its absence was refused above.
            args.repo.map(|repo| CustomChart {
                chart,
                repo,
                layer: args.layer,
            })
        }
    };
    Ok(AddAddonOptions {
        name,
        version,
        namespace: args.namespace,
        helm_set: args.helm_set,
        helm_set_string: args.helm_set_string,
        chart,
        env: args.env,
        edit: edit(args.edit),
    })
}

fn update(args: cli::UpdateArgs) -> Result<UpdateOptions> {
    let mut edit = edit(args.edit);
    let mut repos = args.repos;
    if let Some(branch) = &args.branch {
        return branch_update(args.set, args.values, args.conflicts, branch, repos, edit);
    }
    let fleet = match repos.len() {
        0 => Vec::new(),
        1 => {
            edit.directory = repos.remove(0);
            Vec::new()
        }
        n if !edit.dry_run => {
            return Err(Error::input(
                Problem::new(format!(
                    "{n} repos: several only with --dry-run (an update commits in each repo"
                ))
                .fix("run it in each, or add --dry-run to see what it would do)"),
            ));
        }
        _ => repos,
    };
    Ok(UpdateOptions {
        fleet,
        set: pairs(args.set),
        values: args.values,
        conflicts: match args.conflicts {
            cli::Conflicts::Refuse => OnConflict::Refuse,
            cli::Conflicts::Markers => OnConflict::Markers,
        },
        branch: None,
        edit,
    })
}

fn promote(args: cli::PromoteArgs) -> Result<PromoteOptions> {
    let edit = edit(args.edit);
    if args.branch.is_some() && edit.dry_run {
        return Err(Error::input(
            Problem::new("--branch writes a branch and --dry-run writes nothing")
                .fix("drop one of them"),
        ));
    }
    Ok(PromoteOptions {
        from: args.from,
        to: args.to,
        addons: args.addons,
        values: match args.values {
            None => crate::promotion::TakeOwned::None,
            Some(keys) if keys.is_empty() => crate::promotion::TakeOwned::All,
            Some(keys) => crate::promotion::TakeOwned::Keys(keys),
        },
        cluster: args.cluster,
        branch: args.branch,
        edit,
    })
}

/// `update [REPO…] --branch NAME`: every repo (the one of -C when none is named) gets the
/// update as a commit on a new branch; conflicts are reported, never written there.
fn branch_update(
    set: Vec<cli::Pair>,
    values: Option<PathBuf>,
    conflicts: cli::Conflicts,
    branch: &str,
    mut repos: Vec<PathBuf>,
    edit: EditOptions,
) -> Result<UpdateOptions> {
    if edit.dry_run {
        return Err(Error::input(
            Problem::new("--branch writes a branch and --dry-run writes nothing")
                .fix("drop one of them"),
        ));
    }
    if conflicts == cli::Conflicts::Markers {
        return Err(Error::input(
            Problem::new("--conflicts=markers with --branch: a branch never carries markers")
                .fix("drop --conflicts; a repo with conflicts is reported and gets no branch"),
        ));
    }
    if repos.is_empty() {
        repos.push(edit.directory.clone());
    }
    Ok(UpdateOptions {
        fleet: repos,
        set: pairs(set),
        values,
        conflicts: OnConflict::Refuse,
        branch: Some(branch.to_string()),
        edit,
    })
}

fn blueprint(what: cli::BlueprintCommand) -> BlueprintOptions {
    use cli::BlueprintCommand as B;
    match what {
        B::List => BlueprintOptions::List,
        B::Show { name } => BlueprintOptions::Show { name },
        B::Init { dir, extends } => BlueprintOptions::Init { dir, extends },
        B::Lint {
            path,
            json,
            list_rules,
            from,
        } => BlueprintOptions::Lint {
            path,
            json,
            list_rules,
            from,
        },
        B::Test { path, json } => BlueprintOptions::Test { path, json },
        B::Files { name, json } => BlueprintOptions::Files { name, json },
        B::Cat { name, path } => BlueprintOptions::Cat { name, path },
        B::Export { name, dir } => BlueprintOptions::Export { name, dir },
        B::Rebase { dir, from } => BlueprintOptions::Rebase { dir, from },
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn the_lint_cache_follows_xdg_cache_home_when_absolute_else_home() {
        use scaffold_support::process_env::Snapshot;
        let some = |p: &str| Some(PathBuf::from(p));
        let env = Snapshot::of(&[("XDG_CACHE_HOME", "/x/cache"), ("HOME", "/home/u")]);
        assert_eq!(lint_cache_dir(&env), some("/x/cache/scaffold/lint"));
        let env = Snapshot::of(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/u")]);
        assert_eq!(lint_cache_dir(&env), some("/home/u/.cache/scaffold/lint"));
        assert_eq!(lint_cache_dir(&Snapshot::of(&[])), None);
    }

    fn settle(args: &[&str]) -> Result<Settings> {
        let cli = Cli::try_parse_from(std::iter::once("scaffold").chain(args.iter().copied()))
            .expect("the command line parses");
        resolve(cli)
    }

    #[test]
    fn quiet_and_verbose_become_one_verbosity() {
        let quiet = settle(&["-q", "blueprint", "list"]).expect("settings");
        assert_eq!(quiet.verbosity, Verbosity::Quiet);
        let verbose = settle(&["blueprint", "list", "-vv"]).expect("settings");
        assert_eq!(verbose.verbosity, Verbosity::Verbose);
    }

    #[test]
    fn pairs_and_edit_flags_reach_the_options() {
        let settings = settle(&[
            "env",
            "add",
            "dev",
            "--from",
            "prod",
            "--set",
            "region= x=y",
            "--secret",
            "t=1",
            "-C",
            "repo",
            "--dry-run",
        ])
        .expect("settings");
        let Options::EnvAdd(options) = settings.command else {
            panic!("env add: {:?}", settings.command);
        };
        assert_eq!(options.name.as_str(), "dev");
        assert_eq!(options.set, vec![("region".into(), " x=y".into())]);
        assert_eq!(options.edit.secrets, vec![("t".into(), "1".into())]);
        assert_eq!(options.edit.directory, PathBuf::from("repo"));
        assert!(options.edit.dry_run && !options.edit.json);
    }

    #[test]
    fn one_update_repo_is_the_directory_and_several_need_dry_run() {
        let Options::Update(one) = settle(&["update", "a"]).expect("settings").command else {
            panic!("update");
        };
        assert!(one.fleet.is_empty());
        assert_eq!(one.edit.directory, PathBuf::from("a"));
        let refused = settle(&["update", "a", "b"]).expect_err("two repos without --dry-run");
        assert_eq!(refused.exit_code(), 2);
        let Options::Update(fleet) = settle(&["update", "a", "b", "--dry-run"])
            .expect("settings")
            .command
        else {
            panic!("update");
        };
        assert_eq!(fleet.fleet.len(), 2);
        assert_eq!(fleet.conflicts, OnConflict::Refuse);
    }

    #[test]
    fn a_custom_chart_needs_its_repo_and_version() {
        let refused = settle(&["add-addon", "hello", "--chart", "podinfo"])
            .expect_err("no --repo, no --version");
        assert_eq!(
            refused.to_string(),
            "--chart podinfo needs --repo URL and --version V: add-addon hello --chart podinfo --repo URL --version V"
        );
        let refused = settle(&["add-addon", "velero", "--set", "a=1"]).expect_err("--set");
        assert!(refused.to_string().contains("--helm-set"), "{refused}");
    }

    #[test]
    fn check_formats_resolve_to_one() {
        let format = |args: &[&str]| match settle(args).expect("settings").command {
            Options::Check(options) => options.format,
            other => panic!("check: {other:?}"),
        };
        assert_eq!(format(&["check"]), CheckFormat::Human);
        assert_eq!(format(&["check", "--json"]), CheckFormat::Json);
        assert_eq!(format(&["check", "--format", "json"]), CheckFormat::Json);
        assert_eq!(format(&["check", "--format", "sarif"]), CheckFormat::Sarif);
    }
}

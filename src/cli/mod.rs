//! The command line: clap definitions and the parsers of their values, nothing else.
//! `settings` turns what clap parsed into each command's options; `manual` renders the
//! completions and the manual page from these definitions.
use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};

pub mod manual;

/// The exit codes, as `scaffold --help` and README.md list them.
const EXIT_CODES: &str = "Exit codes:
  0  success (also when a signal came after the change was committed: it finished)
  1  findings: blueprint lint/test or check found problems; update or blueprint rebase left conflicts (rebase: or forks it could not carry); update --dry-run of several repos found conflicts; diff --exit-code found changes
  2  bad input or usage: a flag, an answer, a name (the message names it and the fix)
  3  refused to protect your data: a non-empty target, uncommitted or conflicting edits
  4  IO or git failure
  5  a blueprint that does not render (a bug in the blueprint, not in your answers)
  70 a bug in scaffold itself (anything half-done is rolled back by the next run)
  130 interrupted (SIGINT/SIGTERM, or new declined at its review) before the commit point; nothing was changed

Results go to stdout, notes and progress to stderr (-q silences them, -v adds detail).
Colour only on a terminal; NO_COLOR=1 turns it off.";

#[derive(Debug, Parser)]
#[command(
    name = "scaffold",
    version,
    about = "Generate and grow GitOps platform repositories (kops + Terraform + Flux on AWS).",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Print only results and errors: no notes or progress on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say more on stderr (e.g. every file written).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new platform repository into DIR and commit it.
    #[command(
        after_help = "Examples:\n  scaffold new acme-platform\n  scaffold new acme-gossip --defaults --set region=us-east-1 --set dns_zone=\n  scaffold new acme-preview --defaults --dry-run --json"
    )]
    New(NewArgs),
    /// Add an addon (from the catalog, or any chart with --chart/--repo) to the repo around
    /// the current directory, and commit.
    #[command(
        after_help = "Examples (inside a repo made by `scaffold new`):\n  scaffold add-addon velero --dry-run\n  scaffold add-addon velero\n  scaffold add-addon hello --chart podinfo --repo oci://ghcr.io/stefanprodan/charts --version 6.14.1 --layer apps --helm-set replicaCount=2"
    )]
    AddAddon(AddAddonArgs),
    /// Remove an addon added by name, with everything scaffold wrote for it, and commit.
    #[command(
        after_help = "Examples (inside a repo made by `scaffold new`):\n  scaffold remove-addon reloader --dry-run\n  scaffold remove-addon reloader --json"
    )]
    RemoveAddon(RemoveAddonArgs),
    /// Add or remove an environment (a cluster with its own roots, Flux entry and addon
    /// overlays; docs/environments.md) of the repo around the current directory, and commit.
    Env {
        #[command(subcommand)]
        what: EnvCommand,
    },
    /// Move chart versions and values of addons from one environment to another, as one
    /// commit that lists what moved (docs/environments.md).
    #[command(
        after_help = "Examples (inside a repo made by `scaffold new`):\n  scaffold env add dev --from prod\n  scaffold add-addon cert-manager --env dev --helm-set replicaCount=3\n  scaffold promote --from dev --to prod --dry-run\n  scaffold promote --from dev --to prod cert-manager\n  scaffold promote --from dev --to prod karpenter --json\n  scaffold promote --from dev --to prod --values\n  scaffold add-addon cert-manager --env prod --helm-set replicaCount=2\n  scaffold promote --from dev --to prod cert-manager --values cert-manager:replicaCount\n  scaffold promote --from dev --to prod --cluster\n  scaffold promote --from dev --to prod --branch promote/dev-to-prod"
    )]
    Promote(PromoteArgs),
    /// Move the repo around the current directory to a newer blueprint, or to changed
    /// answers, keeping every edit; commit once.
    #[command(
        after_help = "Examples:\n  scaffold update\n  scaffold update --set region=us-east-1 --set zones=us-east-1a,us-east-1b,us-east-1c\n  scaffold update --blueprint default --dry-run\n  scaffold update --dry-run . --json\n  scaffold update --conflicts=markers\n  scaffold update --branch scaffold/node-max --set node_max=12 --json"
    )]
    Update(UpdateArgs),
    /// Write, check and inspect blueprints.
    Blueprint {
        #[command(subcommand)]
        what: BlueprintCommand,
    },
    /// Check a platform repo offline: YAML, schemas, the Flux graph and order, the
    /// Terraform→Flux bridge, kops, Terraform and hygiene rules (docs/check.md).
    #[command(
        after_help = "Examples:\n  scaffold check\n  scaffold check . --json\n  scaffold check --format sarif > check.sarif\n  scaffold check --rule kops.imds --rule kops.irsa\n  scaffold check --skip tf.backend\n  scaffold check --list-rules\n\nExit: 0 no errors, 1 errors found, 2 usage error.\nSilence one finding with a comment on its line or the line above: # scaffold:ignore RULE reason"
    )]
    Check(CheckArgs),
    /// What each environment's cluster applies at two revisions, object by object: the
    /// Flux objects as built (overlay patches applied) and each environment's Terraform
    /// and kops inputs (docs/pull-requests.md).
    #[command(
        after_help = "Examples:\n  scaffold diff                      # the merge-base with the default branch against the work tree\n  scaffold diff main                 # main against the work tree\n  scaffold diff main HEAD            # two commits\n  scaffold diff --format markdown    # a pull-request comment\n  scaffold diff --json\n\nExit: 0 with or without changes; with --exit-code, 1 when something changes."
    )]
    Diff(DiffArgs),
    /// List what a blueprint offers.
    List {
        #[command(subcommand)]
        what: ListWhat,
    },
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish) to stdout.
    #[command(
        after_help = "Examples:\n  source <(scaffold completions bash)\n  mkdir -p ~/.zfunc && scaffold completions zsh > ~/.zfunc/_scaffold\n  mkdir -p ~/.config/fish/completions && scaffold completions fish > ~/.config/fish/completions/scaffold.fish"
    )]
    Completions { shell: clap_complete::Shell },
    /// Print the manual page (roff) to stdout.
    #[command(after_help = "Examples:\n  scaffold man > scaffold.1 && man -l scaffold.1")]
    Man,
}

#[derive(Debug, Subcommand)]
pub enum ListWhat {
    /// The addon catalog: name, chart, pinned version, namespace, layer, what it needs.
    #[command(after_help = "Examples:\n  scaffold list addons\n  scaffold list addons --json")]
    Addons {
        /// Blueprint name or directory (default: inside a scaffold repo, the one that made
        /// it; elsewhere `default`).
        #[arg(long)]
        blueprint: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum BlueprintCommand {
    /// The embedded blueprints and those on the search path ($SCAFFOLD_BLUEPRINT_PATH,
    /// then $XDG_CONFIG_HOME/scaffold/blueprints).
    #[command(after_help = "Examples:\n  scaffold blueprint list")]
    List,
    /// The merged manifest of a blueprint (extends resolved) and where each file comes from.
    #[command(after_help = "Examples:\n  scaffold blueprint show default")]
    Show {
        /// A blueprint name or directory.
        #[arg(value_name = "NAME|PATH")]
        name: String,
    },
    /// Write a minimal, working, commented blueprint into DIR.
    #[command(
        after_help = "Examples:\n  scaffold blueprint init acme --extends default\n  scaffold blueprint init standalone"
    )]
    Init {
        dir: PathBuf,
        /// Build on another blueprint (e.g. default) instead of starting empty.
        #[arg(long)]
        extends: Option<String>,
    },
    /// Check a blueprint: manifest, templates, variables, regexes, defaults, paths, delimiters.
    #[command(
        after_help = "Examples:\n  scaffold blueprint init acme --extends default && scaffold blueprint lint acme\n  scaffold blueprint lint acme --json\n  scaffold blueprint lint --list-rules"
    )]
    Lint {
        /// The blueprint directory.
        #[arg(required_unless_present = "list_rules")]
        path: Option<PathBuf>,
        /// Print the findings as JSON (docs/json.md).
        #[arg(long)]
        json: bool,
        /// Print lint's rules and exit.
        #[arg(long)]
        list_rules: bool,
        /// The blueprint's previous version (a directory, such as an export): also check
        /// that every path it wrote is written, or moved by a `moves:` migration, here.
        #[arg(long, value_name = "OLD")]
        from: Option<PathBuf>,
    },
    /// Render every answer set in the blueprint's tests/ and run the built-in checks.
    #[command(
        after_help = "Examples:\n  scaffold blueprint test default\n  scaffold blueprint test default --json"
    )]
    Test {
        /// A blueprint name or directory.
        #[arg(value_name = "NAME|PATH")]
        path: String,
        /// Print the results as JSON (docs/json.md).
        #[arg(long)]
        json: bool,
    },
    /// The files of a blueprint (extends resolved), each with the blueprint it comes from.
    #[command(
        after_help = "Examples:\n  scaffold blueprint files default\n  scaffold blueprint files default | grep 2-kops"
    )]
    Files {
        /// A blueprint name or directory.
        name: String,
        /// One JSON array of {path, how, origin}, with the files removed by `remove_files`
        /// (how: "removed") and the catalog entries' patches (how: "catalog-patch", path
        /// the patched file, origin the entry).
        #[arg(long)]
        json: bool,
    },
    /// Print one file of a blueprint as it is stored (to copy it before changing it).
    #[command(
        after_help = "Examples:\n  scaffold blueprint cat default 'env-files/envs/[[ environment ]]/2-kops/values.yaml.tera'\n  scaffold blueprint cat default addons/velero.yaml"
    )]
    Cat {
        /// A blueprint name or directory.
        name: String,
        /// Its blueprint-relative path, as `scaffold blueprint files` lists it.
        path: String,
    },
    /// Write a blueprint's own files (its layer, as stored) into a new directory: a copy
    /// of the embedded default to read, diff against a newer one, or keep beside a fork.
    #[command(after_help = "Examples:\n  scaffold blueprint export default base-0.1.0")]
    Export {
        /// A blueprint name or directory.
        name: String,
        /// The directory to create (must not exist, or be empty).
        dir: std::path::PathBuf,
    },
    /// Three-way merge the files a layer replaced from the base it copied them from (a
    /// copy of that base: `scaffold blueprint export`, an older checkout) to the base it
    /// extends now, and record the new base digests in `replaces`. Conflicts are written
    /// with git-style markers and named; exit 1 then.
    #[command(
        after_help = "Examples:\n  scaffold blueprint init team --extends default\n  scaffold blueprint export default base-old   # run with the scaffold the fork was copied from\n  scaffold blueprint rebase team --from ./base-old"
    )]
    Rebase {
        /// The layer's directory.
        dir: std::path::PathBuf,
        /// The old base: a blueprint directory (or name).
        #[arg(long)]
        from: String,
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
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = set_pair)]
    pub set: Vec<Pair>,
    /// A secret answer, KEY=VALUE (repeatable), or set SCAFFOLD_SECRET_<KEY>; never recorded.
    #[arg(long = "secret", value_name = "KEY=VALUE", value_parser = secret_pair)]
    pub secret: Vec<Pair>,
    /// Commit author, "Name <email>" (default: git config user.name/user.email).
    #[arg(long)]
    pub author: Option<String>,
    /// Skip the pre-commit and commit-msg hooks on the first commit, as `git commit
    /// --no-verify` does (prepare-commit-msg and post-commit still run).
    #[arg(long)]
    pub no_verify: bool,
    /// List the files that would be written; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the result as JSON on stdout (docs/json.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The revision to compare from (default: the merge-base of HEAD with the default
    /// branch: origin/HEAD, else main or master).
    pub base: Option<String>,
    /// The revision to compare to (default: the work tree).
    pub head: Option<String>,
    /// The platform repo (default: the current directory).
    #[arg(long = "repo", default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// Output format: text, markdown (a pull-request comment) or json (docs/json.md).
    #[arg(long, value_parser = ["text", "markdown", "json"], value_name = "FORMAT")]
    pub format: Option<String>,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when any environment applies something different.
    #[arg(long)]
    pub exit_code: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The platform repo (default: the current directory); several check a fleet in one
    /// run, on every core, with one summary.
    #[arg(default_value = ".", num_args = 1..)]
    pub dir: Vec<PathBuf>,
    /// Run only this rule (repeatable).
    #[arg(long = "rule", value_name = "ID")]
    pub rule: Vec<String>,
    /// Do not run this rule (repeatable).
    #[arg(long = "skip", value_name = "ID")]
    pub skip: Vec<String>,
    /// Print machine-readable JSON (docs/check.md); same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Output format: human, json, or sarif (SARIF 2.1.0, for code-scanning uploads).
    #[arg(long, value_parser = ["human", "json", "sarif"], value_name = "FORMAT")]
    pub format: Option<String>,
    /// Print the rule catalogue and exit.
    #[arg(long)]
    pub list_rules: bool,
}

#[derive(Debug, Args)]
pub struct EditArgs {
    /// Blueprint: a name on the search path or a directory (default: the recorded one,
    /// by name). update moves the repo to it; the others need the version that made it.
    #[arg(long)]
    pub blueprint: Option<String>,
    /// Edit even if files scaffold must change have uncommitted changes (they are committed too).
    #[arg(long)]
    pub allow_dirty: bool,
    /// A secret answer the blueprint asks, KEY=VALUE (repeatable), or set SCAFFOLD_SECRET_<KEY>;
    /// secrets are never recorded, so a repo with one needs it again here.
    #[arg(long = "secret", value_name = "KEY=VALUE", value_parser = secret_pair)]
    pub secret: Vec<Pair>,
    /// Print the diff that would be made; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Commit author, "Name <email>" (default: git config user.name/user.email).
    #[arg(long)]
    pub author: Option<String>,
    /// Skip the repo's pre-commit and commit-msg hooks, as `git commit --no-verify` does
    /// (prepare-commit-msg and post-commit still run).
    #[arg(long)]
    pub no_verify: bool,
    /// Run as if started in this directory.
    #[arg(short = 'C', long = "directory", default_value = ".")]
    pub directory: PathBuf,
    /// Print the result as JSON on stdout (docs/json.md); with --dry-run, the changes
    /// instead of the diff.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// With --dry-run, several repos: what update would do to each, judged on every core
    /// with one summary (and one --json document) for all. Without: the repo of -C.
    #[arg(value_name = "REPO")]
    pub repos: Vec<PathBuf>,
    /// A changed or new answer, KEY=VALUE (repeatable; wins over --values).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = set_pair)]
    pub set: Vec<Pair>,
    /// YAML file of changed or new answers (key: value).
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,
    /// On conflict: refuse and show the hunks, or write git-style markers and leave the
    /// commit to you.
    #[arg(long, value_enum, default_value_t = Conflicts::Refuse)]
    pub conflicts: Conflicts,
    /// Write the update as a commit on a new branch NAME in each REPO (several run in
    /// parallel), leaving the checked-out branch and work tree as they are; pushing is
    /// yours. A repo with nothing to update or with conflicts gets no branch.
    #[arg(long, value_name = "NAME", value_parser = branch_name)]
    pub branch: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

fn branch_name(text: &str) -> Result<String, BadValue> {
    if crate::git_paths::is_valid_branch(text) {
        Ok(text.to_string())
    } else {
        Err(BadValue(format!(
            "--branch `{text}` is not a branch name git accepts (git check-ref-format --branch)"
        )))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Conflicts {
    Refuse,
    Markers,
}

#[derive(Debug, Args)]
pub struct AddAddonArgs {
    /// Catalog addon (see `scaffold list addons`), or the name of a custom chart.
    #[arg(value_parser = checked(AddonName::parse))]
    pub name: AddonName,
    /// Chart version (default: the catalog's pinned version).
    #[arg(long, value_parser = checked(Version::parse))]
    pub version: Option<Version>,
    /// Namespace (default: the catalog's, or NAME for a custom chart).
    #[arg(long, value_parser = checked(Namespace::parse))]
    pub namespace: Option<Namespace>,
    /// A Helm value as helm --set takes it (repeatable): a.b=1,c[0]=x,d={e,f}; true, false,
    /// null and plain integers are typed, everything else (6.10, 1e3, 0x1F) stays a string.
    /// (`--set` is for blueprint answers, in `new` and `update`.)
    #[arg(long = "helm-set", value_name = "KEY=VALUE")]
    pub helm_set: Vec<String>,
    /// Like --helm-set, but every value is a string (helm --set-string).
    #[arg(long = "helm-set-string", value_name = "KEY=VALUE")]
    pub helm_set_string: Vec<String>,
    /// Answers are `--set` in `new`; here it is only caught to point at --helm-set.
    #[arg(long = "set", value_name = "KEY=VALUE", hide = true)]
    pub misplaced_set: Vec<String>,
    /// A chart outside the catalog: its name in --repo (with --repo and --version).
    #[arg(long, value_parser = checked(ChartName::parse))]
    pub chart: Option<ChartName>,
    /// The chart repository: https://… (HelmRepository) or oci://… (OCIRepository).
    #[arg(long, requires = "chart", value_parser = checked(ChartRepoUrl::parse))]
    pub repo: Option<ChartRepoUrl>,
    /// Add it to this environment only (repeatable; default: every environment).
    #[arg(long = "env", value_name = "ENV")]
    pub env: Vec<String>,
    /// Layer of a custom chart, one of the blueprint's `layers` (the default blueprint's:
    /// addons or apps; default: the blueprint's custom_addon layer).
    #[arg(long, requires = "chart")]
    pub layer: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// The environment whose versions and values move.
    #[arg(long)]
    pub from: String,
    /// The environment they move to.
    #[arg(long)]
    pub to: String,
    /// Components to promote, each with the components it depends on (default: every
    /// component both environments run: addons, always-on components, dependencies, apps).
    pub addons: Vec<String>,
    /// Also move the values --to owns (set with `add-addon --env TO --helm-set`), which
    /// otherwise stay; with COMPONENT:KEY (repeatable) only that key and what lies below it.
    #[arg(long, num_args = 0..=1, value_name = "COMPONENT:KEY", value_parser = crate::promotion::OwnedKey::parse)]
    pub values: Option<Vec<crate::promotion::OwnedKey>>,
    /// Move the cluster's version pins instead (the blueprint's `cluster_pins`: kops, then
    /// Kubernetes one minor at a time, Flux, the Terraform AWS provider), only versions
    /// --from has applied, writing the target's upgrade steps in order into its runbook.
    #[arg(long, conflicts_with_all = ["addons", "values"])]
    pub cluster: bool,
    /// Write the promotion as a commit on a new branch NAME, leaving the checked-out
    /// branch and work tree as they are (for a pull request); pushing is yours.
    #[arg(long, value_name = "NAME", value_parser = branch_name)]
    pub branch: Option<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Subcommand, Debug)]
pub enum EnvCommand {
    /// Add an environment: its own answers start from --from's (not its names), --set
    /// answers it.
    #[command(
        after_help = "Examples (inside a repo made by `scaffold new`):\n  scaffold env add staging --from prod\n  scaffold env add dev --set region=eu-central-1 --dry-run"
    )]
    Add(EnvAddArgs),
    /// Remove an environment's files (refused without --force: its cluster must go first).
    #[command(
        after_help = "Examples (inside a repo made by `scaffold new`):\n  scaffold env add staging --from prod\n  scaffold env remove staging --force --dry-run\n  scaffold env remove staging --force"
    )]
    Remove(EnvRemoveArgs),
}

#[derive(Args, Debug)]
pub struct EnvAddArgs {
    /// The new environment's name (a DNS label of at most 20 characters).
    #[arg(value_parser = checked(EnvironmentName::parse))]
    pub name: EnvironmentName,
    /// Copy this environment's own answers (addons, sizes, choices), except those that are
    /// its defaults (names made from the environment).
    #[arg(long)]
    pub from: Option<String>,
    /// An answer of the new environment, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = set_pair)]
    pub set: Vec<Pair>,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Args, Debug)]
pub struct EnvRemoveArgs {
    /// The environment to remove.
    pub name: String,
    /// Remove its files although its cluster may still exist (tear it down first).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Args)]
pub struct RemoveAddonArgs {
    /// The addon to remove.
    pub name: String,
    /// Remove it from this environment only (repeatable; default: every environment).
    #[arg(long = "env", value_name = "ENV")]
    pub env: Vec<String>,
    #[command(flatten)]
    pub edit: EditArgs,
}

/// A value clap refused, as one line naming the flag (or argument) and the fix; `main`
/// prints it as every other refusal is printed (exit 2), not as clap's usage block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadValue(pub String);

impl std::fmt::Display for BadValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadValue {}

/// A `KEY=VALUE` answer (`--set`, `--secret`): split at the first `=`, the key trimmed and
/// never empty; the value as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub key: String,
    pub value: String,
}

impl Pair {
    fn parse(flag: &str, text: &str) -> Result<Self, BadValue> {
        crate::flags::parse_pair(text)
            .map(|(key, value)| Pair { key, value })
            .ok_or_else(|| BadValue(format!("{flag} `{text}`: use KEY=VALUE")))
    }
}

fn set_pair(text: &str) -> Result<Pair, BadValue> {
    Pair::parse("--set", text)
}

fn secret_pair(text: &str) -> Result<Pair, BadValue> {
    Pair::parse("--secret", text)
}

pub use crate::names::{AddonName, ChartName, ChartRepoUrl, EnvironmentName, Namespace, Version};

/// A name or version checked by its type (`names`), refused as clap's parsers refuse.
fn checked<T>(
    parse: fn(&str) -> Result<T, String>,
) -> impl Fn(&str) -> Result<T, BadValue> + Clone {
    move |text| parse(text).map_err(BadValue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_pattern_compiles_and_refuses_in_one_line() {
        assert!(AddonName::parse("velero").is_ok());
        assert_eq!(
            AddonName::parse("Bad_Name").expect_err("refused"),
            "NAME: `Bad_Name` is not a DNS-1123 label of at most 53 characters"
        );
        assert!(EnvironmentName::parse("dev").is_ok());
        assert!(EnvironmentName::parse("1dev").is_err());
        assert!(Version::parse("v1.2.3-rc.1").is_ok());
        assert_eq!(
            Version::parse("latest").expect_err("refused"),
            "--version: `latest` is not an exact version such as 1.2.3"
        );
        assert!(Namespace::parse("kube-system").is_ok());
        assert!(Namespace::parse("Kube").is_err());
        assert!(ChartRepoUrl::parse("oci://ghcr.io/x/charts").is_ok());
        assert!(ChartRepoUrl::parse("ftp://charts").is_err());
        assert!(ChartName::parse("podinfo").is_ok());
        assert!(ChartName::parse("Bad/Chart").is_err());
    }

    #[test]
    fn pairs_split_at_the_first_equals() {
        assert_eq!(
            set_pair(" a =b=c").expect("a pair"),
            Pair {
                key: "a".into(),
                value: "b=c".into()
            }
        );
        assert_eq!(
            set_pair("=x").expect_err("refused").0,
            "--set `=x`: use KEY=VALUE"
        );
        assert_eq!(
            secret_pair("token").expect_err("refused").0,
            "--secret `token`: use KEY=VALUE"
        );
    }
}

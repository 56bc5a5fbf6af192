//! One pipeline per subcommand: take the command's options (`settings`), call the core,
//! then write, commit and report through the one [`Reporter`]. Printing happens here and
//! in the edit session these call; below them, only the few notes of `ui::note` (same
//! `-q`). No command imports another: what two commands share is a core module
//! (`edit_session`, `addon_envs`, `flags`).
pub mod addon;
pub mod blueprint;
pub mod check;
pub mod diff;
pub mod env;
pub mod list;
pub mod new;
pub mod promote;
pub mod promote_cluster;
pub mod update;

use crate::error::Result;
use crate::settings::{BlueprintOptions, Options, PromoteOptions};
use crate::ui::Reporter;

use crate::outcome::ExitStatus;

fn promote_here(options: PromoteOptions, out: &Reporter) -> Result<ExitStatus> {
    if options.cluster {
        promote_cluster::promote_cluster(options, out)
    } else {
        promote::promote(options, out)
    }
}

/// `promote … --branch NAME`: the promotion as a commit on a new branch, made in a linked
/// work tree, so the checked-out branch and work tree stay as they are.
fn promote_on_branch(
    mut options: PromoteOptions,
    branch: &str,
    out: &Reporter,
) -> Result<ExitStatus> {
    let dir = options.edit.directory.clone();
    let (status, commit) = crate::worktree::BranchWorktree::run(&dir, branch, |root| {
        options.edit.directory = root.to_path_buf();
        promote_here(options, out)
    })?;
    match commit {
        Some(commit) => out.note(format!(
            "on branch {branch} (commit {}); the checked-out branch and work tree are untouched",
            &commit[..commit.len().min(12)]
        )),
        None => out.note(format!("nothing committed: no branch {branch} made")),
    }
    Ok(status)
}

/// Runs one command.
pub fn run(options: Options, out: &Reporter) -> Result<ExitStatus> {
    match options {
        Options::New(options) => new::run(options, out),
        Options::AddAddon(options) => addon::add(options, out),
        Options::RemoveAddon(options) => addon::remove(options, out),
        Options::EnvAdd(options) => env::add(options, out),
        Options::EnvRemove(options) => env::remove(options, out),
        Options::Promote(options) => match options.branch.clone() {
            Some(branch) => promote_on_branch(options, &branch, out),
            None => promote_here(options, out),
        },
        Options::Update(options) => update::run(options, out),
        Options::Check(options) => check::run(options, out),
        Options::Diff(options) => diff::run(options, out),
        Options::ListAddons(options) => list::addons(options, out),
        Options::Blueprint(what) => match what {
            BlueprintOptions::List => blueprint::list(out),
            BlueprintOptions::Show { name } => blueprint::show(&name, out),
            BlueprintOptions::Init { dir, extends } => {
                blueprint::init(&dir, extends.as_deref(), out)
            }
            BlueprintOptions::Lint {
                path,
                json,
                list_rules,
                from,
            } => blueprint::lint(path.as_deref(), json, list_rules, from.as_deref(), out),
            BlueprintOptions::Test { path, json } => blueprint::test(&path, json, out),
            BlueprintOptions::Files { name, json } => blueprint::files(&name, json, out),
            BlueprintOptions::Cat { name, path } => blueprint::cat(&name, &path, out),
            BlueprintOptions::Export { name, dir } => blueprint::export(&name, &dir, out),
            BlueprintOptions::Rebase { dir, from } => blueprint::rebase(&dir, &from, out),
        },
        Options::Print(bytes) => {
            out.bytes(&bytes)?;
            Ok(ExitStatus::Success)
        }
    }
}

//! `scaffold diff [BASE] [HEAD]`: read both sides (revisions from git, or the work tree),
//! compare what each environment's cluster applies, report. Writes nothing.
use crate::check::Repo;
use crate::diff::{self, format, revision};
use crate::error::{Error, Problem, Result};
use crate::outcome::ExitStatus;
use crate::settings::{DiffFormat, DiffOptions};
use crate::ui::Reporter;

pub fn run(options: DiffOptions, out: &Reporter) -> Result<ExitStatus> {
    let dir = &options.repo;
    let git = git2::Repository::open(dir).map_err(|_| {
        Error::input(
            Problem::new(format!("`{}` is not a git repository", dir.display()))
                .fix("give the platform repo's root with --repo DIR"),
        )
    })?;
    let _lock = crate::lock::acquire_to_read(dir, "diff")?;
    let base_rev = match &options.base {
        Some(rev) => rev.clone(),
        None => revision::default_base(&git, dir)?,
    };
    let (base_files, base_label) = revision::files_at(&git, dir, &base_rev)?;
    let (head, head_label) = match &options.head {
        Some(rev) => {
            let (files, label) = revision::files_at(&git, dir, rev)?;
            (Repo::from_files(files), label)
        }
        None => (Repo::read(dir)?, "work tree".to_string()),
    };
    let diff = diff::compare(
        &Repo::from_files(base_files),
        &head,
        &base_label,
        &head_label,
    );
    match options.format {
        DiffFormat::Text => out.text(&format::text(&diff)),
        DiffFormat::Markdown => out.text(&format::markdown(&diff)),
        DiffFormat::Json => out.json(&diff),
    }
    let changed: Vec<String> = diff
        .environments
        .iter()
        .filter(|e| !e.is_empty())
        .map(|e| format!("{} ({})", e.name, format::counts(e)))
        .collect();
    if changed.is_empty() {
        out.note(format!(
            "no environment changes between {base_label} and {head_label}"
        ));
    } else {
        out.note(format!("changes in {}", changed.join(", ")));
    }
    Ok(if options.exit_code && diff.has_changes() {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

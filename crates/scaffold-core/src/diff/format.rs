//! `scaffold diff`'s text and Markdown. The Markdown is a pull-request comment: one
//! collapsed section per environment, object diffs until a size budget is spent, then one
//! line per object, then counts, so it stays under GitHub's comment limit (65,536
//! characters) at any number of objects.
use std::fmt::Write;

use super::{Change, Diff, EnvironmentDiff, ObjectChange};

/// The comment's size budget, below GitHub's limit with room for the summary.
const MARKDOWN_BUDGET: usize = 60_000;
/// Lines of one object's diff shown in Markdown before it is cut.
const DIFF_LINES: usize = 60;

fn verb(change: Change) -> &'static str {
    match change {
        Change::Added => "added",
        Change::Removed => "removed",
        Change::Changed => "changed",
    }
}

/// "2 changed, 1 added" (or "no changes") for one environment.
pub fn counts(env: &EnvironmentDiff) -> String {
    let mut parts: Vec<String> = [Change::Changed, Change::Added, Change::Removed]
        .into_iter()
        .map(|c| (env.count(c), verb(c)))
        .filter(|(n, _)| *n > 0)
        .map(|(n, v)| format!("{n} {v}"))
        .collect();
    if !env.inputs.is_empty() {
        let n = env.inputs.len();
        parts.push(format!("{n} input{}", if n == 1 { "" } else { "s" }));
    }
    if parts.is_empty() {
        "no changes".into()
    } else {
        parts.join(", ")
    }
}

/// The text report: every environment, each change with its highlights and YAML diff.
pub fn text(diff: &Diff) -> String {
    let mut out = format!("scaffold diff {}..{}\n", diff.base, diff.head);
    for env in &diff.environments {
        let _ = writeln!(out, "\n{}: {}", env.name, counts(env));
        for object in &env.objects {
            let _ = writeln!(
                out,
                "  {} {}  ({})",
                verb(object.change),
                object.title(),
                where_of(object)
            );
            for line in &object.highlights {
                let _ = writeln!(out, "    * {line}");
            }
            for line in object.diff.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
        for input in &env.inputs {
            let _ = writeln!(out, "  input {} {}", verb(input.change), input.path);
            for line in input.diff.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    out
}

fn where_of(object: &ObjectChange) -> String {
    match &object.overlay {
        Some(overlay) => format!("{}, overlay {overlay}", object.file),
        None => object.file.clone(),
    }
}

/// The pull-request comment.
pub fn markdown(diff: &Diff) -> String {
    let mut out = format!("### scaffold diff `{}`..`{}`\n\n", diff.base, diff.head);
    out.push_str("| environment | changed | added | removed | inputs |\n|---|--:|--:|--:|--:|\n");
    for env in &diff.environments {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            env.name,
            env.count(Change::Changed),
            env.count(Change::Added),
            env.count(Change::Removed),
            env.inputs.len()
        );
    }
    let mut budget = MARKDOWN_BUDGET.saturating_sub(out.len());
    for env in diff.environments.iter().filter(|e| !e.is_empty()) {
        let section = environment_markdown(env, &mut budget);
        out.push_str(&section);
    }
    if !diff.has_changes() {
        out.push_str("\nNo environment applies anything different.\n");
    }
    out
}

fn environment_markdown(env: &EnvironmentDiff, budget: &mut usize) -> String {
    let mut out = format!(
        "\n<details><summary><b>{}</b>: {}</summary>\n\n",
        env.name,
        counts(env)
    );
    let mut omitted = 0;
    for object in &env.objects {
        let overlay = object
            .overlay
            .as_ref()
            .map(|o| format!(" (overlay `{o}`)"))
            .unwrap_or_default();
        let mut entry = format!(
            "- **{}** `{}` in `{}`{overlay}\n",
            verb(object.change),
            object.title(),
            object.file
        );
        for line in &object.highlights {
            let _ = writeln!(entry, "  - {}", escape(line));
        }
        omitted += usize::from(!push_within(&mut out, budget, entry, &object.diff));
    }
    for input in &env.inputs {
        let entry = format!("- input **{}** `{}`\n", verb(input.change), input.path);
        omitted += usize::from(!push_within(&mut out, budget, entry, &input.diff));
    }
    if omitted > 0 {
        let _ = writeln!(out, "\n… and {omitted} more (run `scaffold diff` for all)");
    }
    out.push_str("\n</details>\n");
    out
}

/// Adds `entry` with its fenced `diff` while the budget lasts, then `entry` alone; false
/// when not even that fits (the caller counts it as left out).
fn push_within(out: &mut String, budget: &mut usize, entry: String, diff: &str) -> bool {
    let full = format!("{entry}{}", fenced(diff));
    let piece = if full.len() <= *budget {
        full
    } else if entry.len() <= *budget {
        entry
    } else {
        return false;
    };
    *budget -= piece.len();
    out.push_str(&piece);
    true
}

/// A diff in a fenced block, cut at [`DIFF_LINES`] lines with the count left out.
fn fenced(diff: &str) -> String {
    if diff.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = diff.lines().collect();
    let shown = lines.len().min(DIFF_LINES);
    let mut out = String::from("\n  ```diff\n");
    for line in &lines[..shown] {
        let _ = writeln!(out, "  {}", line.replace("```", "`\u{200b}``"));
    }
    if lines.len() > shown {
        let _ = writeln!(out, "  … {} more lines", lines.len() - shown);
    }
    out.push_str("  ```\n\n");
    out
}

/// Markdown's active characters in a highlight (values come from the repo).
fn escape(text: &str) -> String {
    text.replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

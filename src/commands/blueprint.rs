//! `scaffold blueprint list | show | init | lint | test`.
use std::path::Path;

use crate::blueprint::{self, Blueprint};
use crate::blueprint_test;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Problem, Result};
use crate::generate;
use crate::lint;
use crate::outcome::ExitStatus;
use crate::overrides::OverrideKind;
use crate::plan::Plan;
use crate::report::{self, CaseEntry, TestReport};
use crate::ui::Reporter;
use crate::write;

pub fn list(out: &Reporter) -> Result<ExitStatus> {
    for (name, place) in blueprint::available() {
        out.line(format!("{name:<24} {place}"));
    }
    Ok(ExitStatus::Success)
}

pub fn show(selector: &str, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    let manifest =
        crate::yaml::to_string(&blueprint.manifest).map_err(|e| Error::blueprint(e.to_string()))?;
    out.line(format!(
        "# {} {} from {}, `extends` resolved",
        blueprint.manifest.name, blueprint.manifest.version, blueprint.origin
    ));
    out.line(manifest.trim_end());
    out.line("\n# Files and addons: how this blueprint has each, and the blueprint it comes from");
    print_files(&blueprint, out);
    for (path, change) in &blueprint.overrides {
        if change.kind == OverrideKind::Replaced && change.recorded.is_none() {
            let own = blueprint.file(path).unwrap_or_default();
            let verbatim = crate::overrides::digest(&own) == change.base_digest;
            // Only a copy of *this* base may record its digest: recording it for a file
            // copied from an older base would silence the very warning it is for.
            let when = if verbatim {
                "it is still a verbatim copy of it".to_string()
            } else {
                format!(
                    "only if you copied it from this base ({}); a copy of an older base records that base's digest (`git hash-object FILE` of that copy, first 12 digits)",
                    change.base
                )
            };
            out.note(format!(
                "note: {path} replaces a file of {}; record `replaces: {{\"{}\": {}}}` to be warned when it changes: {when}",
                change.base, change.base_path, change.base_digest
            ));
        } else if change.kind == OverrideKind::Patched && change.recorded.is_none() {
            out.note(format!(
                "note: {path} of {} is patched by {}; record `replaces: {{\"{}\": {}}}` to be warned when the base changes it",
                change.base, change.by, change.base_path, change.base_digest
            ));
        } else if change.base_changed() {
            let what = match change.kind {
                OverrideKind::Replaced => "replaces a file of {} that changed since it was copied",
                OverrideKind::Patched => {
                    "is patched, and its file in {} changed since the patch was written"
                }
            };
            out.note(format!(
                "warning: {path} {} (recorded {}, now {})",
                what.replace("{}", &change.base),
                change.recorded.as_deref().unwrap_or_default(),
                change.base_digest
            ));
        }
    }
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint files NAME`: path, how it is had, origin.
pub fn files(selector: &str, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    if !as_json {
        print_files(&blueprint, out);
        return Ok(ExitStatus::Success);
    }
    let row = |path: &str, how: &str, origin: &str| report::FileRow {
        path: path.to_string(),
        how: how.to_string(),
        origin: origin.to_string(),
    };
    let mut rows: Vec<report::FileRow> = file_rows(&blueprint)
        .iter()
        .map(|(path, how, origin)| row(path, how, origin))
        .collect();
    for (path, by) in &blueprint.removed {
        rows.push(row(path, "removed", by));
    }
    for entry in blueprint.catalog.entries() {
        let raw = entry.template_object("", &[]);
        for patch in raw
            .get("patches")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(file) = patch.get("file").and_then(serde_json::Value::as_str) {
                rows.push(row(
                    file,
                    "catalog-patch",
                    &format!("addons/{}.yaml", entry.spec.name),
                ));
            }
        }
    }
    out.json(&rows);
    Ok(ExitStatus::Success)
}

/// (path, how the blueprint has it, origin) of every file and catalog entry.
fn file_rows(blueprint: &Blueprint) -> Vec<(&str, &'static str, &str)> {
    let own = format!("({})", blueprint.origin);
    blueprint
        .origins
        .iter()
        .map(|(path, origin)| {
            let how = match blueprint.overrides.get(path).map(|o| &o.kind) {
                Some(OverrideKind::Replaced) => "replaced",
                Some(OverrideKind::Patched) => "patched",
                None if path.ends_with(crate::overrides::PATCH_SUFFIX) => "patch",
                None if origin.ends_with(&own) => "own",
                None => "inherited",
            };
            (path.as_str(), how, origin.as_str())
        })
        .collect()
}

fn print_files(blueprint: &Blueprint, out: &Reporter) {
    let width = blueprint.origins.keys().map(|k| k.len()).max().unwrap_or(0);
    for (path, how, origin) in file_rows(blueprint) {
        out.line(format!("{path:<width$}  {how:<9}  {origin}"));
    }
}

/// `scaffold blueprint cat NAME PATH`: the stored bytes of one file.
pub fn cat(selector: &str, path: &str, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    if let Some(own) = blueprint
        .overrides
        .iter()
        .find(|(own, o)| o.kind == OverrideKind::Replaced && o.base_path == path && *own != path)
        .map(|(own, _)| own)
    {
        let base = blueprint.base.as_ref().map_or("BASE", |b| b.name.as_str());
        return Err(Error::input(Problem::new(format!("{path}: blueprint {} replaces it with `{own}` (`scaffold blueprint cat {selector} {own}`)",
            blueprint.manifest.name)).fix(format!("the base's copy: `scaffold blueprint cat {base} {path}`"))));
    }
    let bytes = blueprint.file(path).ok_or_else(|| {
        Error::input(
            Problem::new(format!(
                "{path}: not a file of blueprint {}{}",
                blueprint.manifest.name,
                crate::suggest::did_you_mean(path, blueprint.origins.keys().map(String::as_str))
            ))
            .fix(format!("`scaffold blueprint files {selector}` lists them")),
        )
    })?;
    out.bytes(&bytes)?;
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint export NAME DIR`: the blueprint's own layer, file for file.
pub fn export(selector: &str, dir: &Path, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = Blueprint::load(selector)?;
    let (tree, executable) = Blueprint::layer_files(selector)?;
    write::check_target(dir)?;
    let mut plan = Plan::default();
    for (path, bytes) in tree {
        let rel = crate::plan::RelPath::new(&path).map_err(Error::blueprint)?;
        if executable.contains(&path) {
            plan.executable.insert(rel.clone());
        }
        plan.add(rel, bytes)?;
    }
    let count = plan.files.len();
    write::stage(&plan, dir)?.finish()?;
    out.line(format!(
        "Exported blueprint {} {} ({}) to {}: {count} files.",
        blueprint.manifest.name,
        blueprint.manifest.version,
        blueprint.origin,
        dir.display()
    ));
    Ok(ExitStatus::Success)
}

/// `scaffold blueprint rebase DIR --from OLD`: each file the layer replaced, merged from
/// the old base's copy to the current base's (the fork's own changes kept), following the
/// files the new base moved ([`crate::rebase`]). Exit 1 names every fork with conflicts or
/// that could not be carried.
pub fn rebase(dir: &Path, from: &str, out: &Reporter) -> Result<ExitStatus> {
    let layer = Blueprint::load(&dir.display().to_string())?;
    let old_base = Blueprint::load(from)?;
    let Some(extends) = &layer.manifest.extends else {
        return Err(Error::input(format!(
            "{}: extends nothing, so there is no base to rebase on",
            dir.display()
        )));
    };
    let new_base = if extends.contains('/') || extends.starts_with('.') {
        Blueprint::load(&Path::new(&layer.origin).join(extends).display().to_string())?
    } else {
        Blueprint::load(extends)?
    };
    let root = Path::new(&layer.origin);
    let manifest_path = root.join("blueprint.yaml");
    let mut manifest = std::fs::read_to_string(&manifest_path)
        .map_err(|e| Error::io_path("read", &manifest_path, e))?;
    let (own, _) = Blueprint::layer_files(&layer.origin)?;
    let mut tally = Tally::default();
    for path in own.keys() {
        match fork_step(&old_base, &new_base, path, &own) {
            Some(Ok(step)) => {
                let bases = Bases {
                    old: &old_base,
                    new: &new_base,
                };
                carry(root, &mut manifest, &bases, &step, &mut tally, out)?;
            }
            Some(Err(why)) => {
                out.line(format!("{path}: not carried ({why})"));
                tally.lost.push(path.clone());
            }
            None => {}
        }
    }
    write_beside(&manifest_path, manifest.as_bytes())?;
    out.line(format!(
        "{} merged, {} with conflicts, {} not carried",
        tally.merged,
        tally.conflicted.len(),
        tally.lost.len()
    ));
    if tally.conflicted.is_empty() && tally.lost.is_empty() {
        return Ok(ExitStatus::Success);
    }
    let mut named = Vec::new();
    if !tally.conflicted.is_empty() {
        named.push(format!("conflicts in {}", tally.conflicted.join(", ")));
    }
    if !tally.lost.is_empty() {
        named.push(format!("not carried: {}", tally.lost.join(", ")));
    }
    out.findings(format!("blueprint rebase: {}", named.join("; ")));
    Ok(ExitStatus::Findings)
}

#[derive(Default)]
struct Tally {
    merged: usize,
    conflicted: Vec<String>,
    lost: Vec<String>,
}

struct Bases<'a> {
    old: &'a Blueprint,
    new: &'a Blueprint,
}

/// One fork to carry: the layer's file, its base in the old blueprint, and where that
/// file is in the new one.
struct ForkStep {
    fork: String,
    old: String,
    new: String,
}

/// What to do with the layer's file `path`: nothing (the layer's own file, a patch, or a
/// fork of a file new in the new base), carry it, or why it cannot be carried.
fn fork_step(
    old_base: &Blueprint,
    new_base: &Blueprint,
    path: &str,
    own: &blueprint::FileTree,
) -> Option<std::result::Result<ForkStep, String>> {
    if path.ends_with(".patch.yaml")
        || !(old_base.is_rendered_path(path) || new_base.is_rendered_path(path))
    {
        return None;
    }
    let step = |old: String, new: String| ForkStep {
        fork: path.to_string(),
        old,
        new,
    };
    match (old_base.file(path).is_some(), new_base.file(path).is_some()) {
        (true, true) => Some(Ok(step(path.into(), path.into()))),
        (true, false) => Some(match crate::rebase::follow(old_base, new_base, path) {
            Some(new) if own.contains_key(&new) => Err(format!(
                "it moved to {new}, and the layer has a file there too: merge them by hand"
            )),
            Some(new) => Ok(step(path.into(), new)),
            None => Err(format!(
                "{} {} has no such file, and no move or rename of it was found",
                new_base.manifest.name, new_base.manifest.version
            )),
        }),
        (false, true) => {
            crate::rebase::came_from(old_base, new_base, path).map(|old| Ok(step(old, path.into())))
        }
        (false, false) => None,
    }
}

/// Merges one fork onto the new base, writes it where the new base has the file (moving
/// it there), and points its `replaces` entry at the new path and digest when clean.
fn carry(
    root: &Path,
    manifest: &mut String,
    bases: &Bases,
    step: &ForkStep,
    tally: &mut Tally,
    out: &Reporter,
) -> Result<()> {
    let text = |bytes: Option<Vec<u8>>| {
        bytes
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let old = text(bases.old.file(&step.old));
    let new = text(bases.new.file(&step.new));
    let fork_path = root.join(&step.fork);
    let fork =
        std::fs::read_to_string(&fork_path).map_err(|e| Error::io_path("read", &fork_path, e))?;
    let version = &bases.new.manifest.version;
    let moved = step.fork != step.new;
    let digest = crate::overrides::digest(new.as_bytes());
    let merged = crate::merge::merge_file(&old, &fork, &new, &bases.new.manifest.name);
    let whither = if moved {
        format!(" (moved to {})", step.new)
    } else {
        String::new()
    };
    if merged.hunks.is_empty() {
        tally.merged += 1;
        set_replaces(manifest, &[&step.old, &step.fork], &step.new, Some(&digest));
        let what = if old == new {
            format!("unchanged in {version}")
        } else {
            format!("merged the base's changes ({version})")
        };
        out.line(format!("{}: {what}{whither}", step.fork));
    } else {
        tally.conflicted.push(step.new.clone());
        if moved {
            set_replaces(manifest, &[&step.old, &step.fork], &step.new, None);
        }
        out.line(format!(
            "{}: {} conflict(s) marked{whither}; resolve them, then update `replaces` to {digest}",
            step.fork,
            merged.hunks.len(),
        ));
    }
    let target = root.join(&step.new);
    if merged.marked != fork || moved {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
        }
        write_beside(&target, merged.marked.as_bytes())?;
    }
    if moved {
        std::fs::remove_file(&fork_path).map_err(|e| Error::io_path("remove", &fork_path, e))?;
    }
    Ok(())
}

/// Points the `replaces` entry keyed by one of `keys` at `new_key`, with `digest` (or
/// its recorded digest kept); a layer that recorded none is left as it is.
fn set_replaces(manifest: &mut String, keys: &[&str], new_key: &str, digest: Option<&str>) {
    let places = crate::yaml::Places::of(manifest);
    let Some((line, _)) = keys
        .iter()
        .find_map(|key| places.section_entry("replaces", key))
    else {
        return;
    };
    let start: usize = manifest
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    let Some(text) = manifest[start..].split_inclusive('\n').next() else {
        return;
    };
    let indent = &text[..text.len() - text.trim_start().len()];
    let recorded = text
        .trim_end()
        .rsplit_once(':')
        .map(|(_, v)| v.trim())
        .unwrap_or_default();
    let value = digest.unwrap_or(recorded);
    let key = if new_key.contains(['[', '{', '#', ':']) {
        format!("\"{new_key}\"")
    } else {
        new_key.to_string()
    };
    let fixed = format!("{indent}{key}: {value}\n");
    let end = start + text.len();
    manifest.replace_range(start..end, &fixed);
}

/// Replaces a file by rename, so it is never left half written.
fn write_beside(path: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = path.with_extension("scaffold-tmp");
    std::fs::write(&temporary, bytes).map_err(|e| Error::io_path("write", &temporary, e))?;
    std::fs::rename(&temporary, path).map_err(|e| Error::io_path("replace", path, e))
}

pub fn init(dir: &Path, extends: Option<&str>, out: &Reporter) -> Result<ExitStatus> {
    write::check_target(dir)?;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "my-blueprint".into());
    let mut plan = Plan::default();
    let add = |plan: &mut Plan, path: &str, text: String| {
        plan.add(
            crate::plan::RelPath::new(path).map_err(Error::blueprint)?,
            text.into_bytes(),
        )
    };
    match extends {
        Some(base) => {
            let loaded = Blueprint::load(base)?;
            let (major, minor, _) = crate::version::tuple(&loaded.manifest.version);
            let base_range = if major == 0 {
                format!(">={}, <0.{}", loaded.manifest.version, minor + 1)
            } else {
                format!(">={}, <{}", loaded.manifest.version, major + 1)
            };
            add(
                &mut plan,
                "blueprint.yaml",
                format!(
                    include_str!("init/extends.yaml"),
                    name = name,
                    base = base,
                    base_range = base_range
                ),
            )?;
            add(
                &mut plan,
                "files/docs/OWNERS.md.tera",
                include_str!("init/OWNERS.md.tera").to_string(),
            )?;
        }
        None => {
            add(
                &mut plan,
                "blueprint.yaml",
                format!(include_str!("init/standalone.yaml"), name = name),
            )?;
            add(
                &mut plan,
                "files/README.md.tera",
                include_str!("init/README.md.tera").to_string(),
            )?;
        }
    }
    add(
        &mut plan,
        "tests/defaults.yaml",
        "# An answer set for `scaffold blueprint test`: empty means every default.\n{}\n".into(),
    )?;
    let staged = write::stage(&plan, dir)?;
    staged.finish()?;
    out.line(format!(
        "Created blueprint {name} in {}: {} files.",
        dir.display(),
        plan.files.len()
    ));
    out.line(format!(
        "Check it with: scaffold blueprint lint {0} && scaffold blueprint test {0}",
        dir.display()
    ));
    Ok(ExitStatus::Success)
}

pub fn lint(
    dir: Option<&Path>,
    as_json: bool,
    list_rules: bool,
    from: Option<&Path>,
    out: &Reporter,
) -> Result<ExitStatus> {
    let rules = || {
        lint::RULES
            .iter()
            .map(|(id, finds)| report::LintRule { id, finds })
    };
    match dir {
        _ if list_rules && as_json => out.json(&rules().collect::<Vec<_>>()),
        _ if list_rules => rules().for_each(|r| out.line(format!("{:<28} {}", r.id, r.finds))),
        None => {}
        Some(dir) => return lint_dir(dir, from, as_json, out),
    }
    Ok(ExitStatus::Success)
}

/// The findings of the blueprint `dir` names: a directory, or a blueprint name on the
/// search path or embedded (an embedded one is linted as its export would be).
fn lint_selected(dir: &Path) -> Result<Vec<Diagnostic>> {
    if dir.join("blueprint.yaml").is_file() {
        return lint::lint(dir);
    }
    let selector = dir.display().to_string();
    let blueprint = Blueprint::load(&selector)?;
    if !blueprint
        .origin
        .starts_with(crate::blueprint::EMBEDDED_ORIGIN)
    {
        return lint::lint(Path::new(&blueprint.origin));
    }
    let scratch = tempfile::tempdir().map_err(|e| Error::io("create a temporary directory", e))?;
    let copy = scratch.path().join(&blueprint.manifest.name);
    let (tree, _) = Blueprint::layer_files(&selector)?;
    for (path, bytes) in tree {
        let target = copy.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io_path("create", parent, e))?;
        }
        std::fs::write(&target, bytes).map_err(|e| Error::io_path("write", &target, e))?;
    }
    lint::lint(&copy)
}

fn lint_dir(dir: &Path, from: Option<&Path>, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let findings = match from {
        Some(old) => lint::lint_release(dir, old)?,
        None => lint_selected(dir)?,
    };
    let errors = findings.iter().filter(|f| f.is_error()).count();
    let warnings = findings.len() - errors;
    if as_json {
        out.json(&report::LintReport {
            version: 1,
            blueprint: dir.display().to_string(),
            errors,
            warnings,
            findings: &findings,
        });
    } else {
        findings.iter().for_each(|finding| out.line(finding));
    }
    if errors > 0 {
        out.findings(format!(
            "blueprint lint: {errors} error(s), {warnings} warning(s)"
        ));
        return Ok(ExitStatus::Findings);
    }
    out.note(format!("blueprint lint: 0 errors, {warnings} warning(s)"));
    Ok(ExitStatus::Success)
}

pub fn test(selector: &str, as_json: bool, out: &Reporter) -> Result<ExitStatus> {
    let blueprint = match Blueprint::load(selector) {
        Ok(blueprint) => blueprint,
        // A directory that does not load: reported as lint reports it, FILE:LINE:COL.
        Err(e) if Path::new(selector).join("blueprint.yaml").is_file() => {
            let findings = lint::lint(Path::new(selector))?;
            if !findings.iter().any(Diagnostic::is_error) {
                return Err(e);
            }
            return Ok(report_lint(&findings, as_json, out));
        }
        Err(e) => return Err(e),
    };
    // Lint first: a case can pass on a blueprint that lint knows is broken.
    if !blueprint
        .origin
        .starts_with(crate::blueprint::EMBEDDED_ORIGIN)
    {
        let findings = lint::lint(Path::new(&blueprint.origin))?;
        if report_lint(&findings, as_json, out) == ExitStatus::Findings {
            return Ok(ExitStatus::Findings);
        }
    }
    let renderer = generate::renderer_for(&blueprint)?;
    if blueprint.tests.is_empty() {
        return Err(Error::input(format!(
            "blueprint {}: no answer sets in tests/ (add tests/<case>.yaml)",
            blueprint.origin
        )));
    }
    let scratch =
        tempfile::TempDir::new().map_err(|e| Error::io("create a temporary directory", e))?;
    let mut report = TestReport {
        blueprint: blueprint.origin.clone(),
        passed: 0,
        failed: 0,
        cases: Vec::new(),
    };
    for (name, text) in &blueprint.tests {
        let (mut verdict, plan) = blueprint_test::run_case(&blueprint, &renderer, name, text);
        if let Some(plan) = plan {
            // Rendered into a directory of its own, as `new` would write it.
            let target = scratch.path().join(name.trim_end_matches(".yaml"));
            if let Err(e) = write::stage(&plan, &target).and_then(|s| s.finish()) {
                verdict.add(blueprint_test::rule::WRITE, name, e.to_string());
            }
        }
        let passed = verdict.problems.is_empty();
        if passed {
            report.passed += 1;
        } else {
            report.failed += 1;
        }
        if !as_json {
            if let (true, Some(refused)) = (passed, &verdict.refused) {
                out.line(format!("PASS {name} (refused as expected: {refused})"));
            } else if passed {
                out.line(format!("PASS {name} ({} files)", verdict.files));
            } else {
                let problems: Vec<String> =
                    verdict.problems.iter().map(Diagnostic::with_rule).collect();
                out.line(format!("FAIL {name}: {}", problems.join("; ")));
            }
        }
        report.cases.push(CaseEntry {
            name: name.clone(),
            passed,
            files: verdict.files,
            problems: verdict.problems,
        });
    }
    if as_json {
        out.json(&report);
    } else {
        out.line(format!(
            "{} passed, {} failed",
            report.passed, report.failed
        ));
    }
    if report.failed > 0 {
        out.findings(format!("blueprint test: {} case(s) failed", report.failed));
        return Ok(ExitStatus::Findings);
    }
    Ok(ExitStatus::Success)
}

/// Prints lint's findings for `blueprint test` (on stderr under --json: stdout carries only
/// the report); any error stops the test (Findings).
fn report_lint(findings: &[Diagnostic], as_json: bool, out: &Reporter) -> ExitStatus {
    for finding in findings {
        if as_json {
            out.problem(finding);
        } else {
            out.line(finding);
        }
    }
    match findings.iter().filter(|f| f.is_error()).count() {
        0 => ExitStatus::Success,
        errors => {
            out.findings(format!(
                "blueprint test: lint found {errors} error(s); fix them first"
            ));
            ExitStatus::Findings
        }
    }
}

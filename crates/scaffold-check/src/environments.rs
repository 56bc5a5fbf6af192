//! A repo of several clusters is judged one environment at a time. Each cluster has one
//! Flux entry, the `flux-system` Kustomization `flux bootstrap --path=<dir>` writes; the
//! last directory of its path names the environment (`clusters/prod` → `prod`). A file
//! belongs to an environment when one of its first two directories bears its name
//! (`clusters/prod/…`, `envs/prod/…`, `environments/prod/…`, `apps/prod/…`); the others
//! are shared. Each environment's view holds the shared files and its own, with overlay
//! patches applied, so two clusters' objects of the same name never meet and every
//! HelmRelease is judged with that environment's chart version and values.
use std::collections::{BTreeMap, BTreeSet};

use super::kustomize;
use super::model::{EnvironmentScope, Repo};
use super::yaml;
use crate::diagnostic::Diagnostic;

/// What makes two environments' findings one: file, line, rule and message.
type FindingKey = (String, usize, &'static str, String);

/// The environments of the repo: one per `flux-system` Flux Kustomization, named by the
/// last directory of its path; sorted, without repeats.
pub fn names(repo: &Repo) -> Vec<String> {
    let mut names: Vec<String> = repo
        .objects
        .iter()
        .filter(|o| o.is("kustomize.toolkit.fluxcd.io", "Kustomization") && o.name == "flux-system")
        .filter_map(|o| yaml::str_at(o.value(), "spec/path"))
        .filter_map(|p| {
            p.trim_end_matches('/')
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty() && *n != ".")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The environment among `all` that `path` belongs to, if any.
pub fn owner<'a>(path: &str, all: &'a [String]) -> Option<&'a str> {
    let mut dirs = path.split('/');
    let first = dirs.next();
    let second = dirs.next();
    // Only directories count: a file's own name is the last segment.
    let dirs = [first, second]
        .into_iter()
        .flatten()
        .take(path.matches('/').count());
    for dir in dirs {
        if let Some(name) = all.iter().find(|n| n.as_str() == dir) {
            return Some(name);
        }
    }
    None
}

/// The view of `env`: the shared files and its own, with overlay patches applied.
pub fn view(repo: &Repo, env: Option<&str>, all: &[String]) -> Repo {
    let mut view = repo.view(|path| owner(path, all).is_none_or(|o| Some(o) == env));
    kustomize::apply_patches(&mut view);
    view
}

/// The files holding Kubernetes objects that the Flux Kustomizations of `view` apply,
/// following Kustomizations that other Kustomizations apply.
fn applied(view: &Repo) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut built_paths = BTreeSet::new();
    let mut queue: Vec<usize> = (0..view.objects.len())
        .filter(|i| view.objects[*i].name == "flux-system")
        .collect();
    while let Some(i) = queue.pop() {
        let object = &view.objects[i];
        files.insert(object.built_from.clone());
        if !object.is("kustomize.toolkit.fluxcd.io", "Kustomization") {
            continue;
        }
        let Some(path) = object
            .spec("path")
            .and_then(|p| p.as_str())
            .map(|p| p.trim_start_matches("./").trim_matches('/').to_string())
        else {
            continue;
        };
        if !built_paths.insert(path.clone()) {
            continue;
        }
        queue.extend(
            kustomize::build(view, &path)
                .objects
                .into_iter()
                .map(|(i, _)| i),
        );
    }
    files
}

/// The `.tfvars` string values that exactly one environment holds, structured enough to
/// be that environment's own (a region, a zone, a cluster name, a CIDR, a path: they hold
/// `.`, `/` or `-`), and not an environment's bare name.
fn own_values(repo: &Repo, all: &[String]) -> BTreeMap<String, String> {
    static ASSIGN: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?m)^\s*\w+\s*=\s*"([^"$]{4,})"\s*$"#).ok()
    });
    let Some(assign) = &*ASSIGN else {
        return BTreeMap::new();
    };
    let mut holders: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (path, text) in repo.texts().filter(|(p, _)| p.ends_with(".tfvars")) {
        let Some(env) = owner(path, all) else {
            continue;
        };
        for value in assign.captures_iter(text).map(|c| c[1].to_string()) {
            if value.contains(['.', '/', '-']) && !all.contains(&value) {
                holders.entry(value).or_default().insert(env);
            }
        }
    }
    holders
        .into_iter()
        .filter(|(_, envs)| envs.len() == 1)
        .filter_map(|(value, envs)| Some((value, envs.first()?.to_string())))
        .collect()
}

/// Each environment's view, without the shared objects its cluster does not apply (another
/// environment's addon base). Shared objects no cluster applies stay in every view.
fn views(repo: &Repo, all: &[String]) -> Vec<Repo> {
    let values = own_values(repo, all);
    let full: Vec<Repo> = all
        .iter()
        .map(|env| scoped_view(repo, env, all, &values))
        .collect();
    let applied: Vec<BTreeSet<String>> = full.iter().map(applied).collect();
    let anywhere: BTreeSet<&String> = applied.iter().flatten().collect();
    full.into_iter()
        .zip(&applied)
        .map(|(view, own)| narrowed(view, own, &anywhere, all))
        .collect()
}

/// `env`'s view with its scope: which environment it is, among which, and what only each
/// environment's inputs hold.
fn scoped_view(repo: &Repo, env: &str, all: &[String], values: &BTreeMap<String, String>) -> Repo {
    let mut view = view(repo, Some(env), all);
    view.environment = Some(EnvironmentScope {
        own: env.to_string(),
        all: all.to_vec(),
        values: values.clone(),
    });
    view
}

/// The view less the shared objects other clusters apply and its own (`own`) does not.
fn narrowed(
    mut view: Repo,
    own: &BTreeSet<String>,
    anywhere: &BTreeSet<&String>,
    all: &[String],
) -> Repo {
    view.objects.retain(|o| {
        owner(&o.built_from, all).is_some()
            || own.contains(&o.built_from)
            || !anywhere.contains(&o.built_from)
    });
    view
}

/// `judge`'s findings on each environment's view (as [`views`] makes them), one view alive
/// at a time: each view but the last is built twice (once for what its cluster applies,
/// once to be judged), so the memory held is one view's, not every environment's.
fn judged_one_at_a_time(
    repo: &Repo,
    all: &[String],
    judge: impl Fn(&Repo) -> Vec<Diagnostic>,
) -> Vec<Vec<Diagnostic>> {
    let values = own_values(repo, all);
    let mut applied_files = Vec::with_capacity(all.len());
    let mut last_view = None;
    for env in all {
        drop(last_view.take());
        let view = scoped_view(repo, env, all, &values);
        applied_files.push(applied(&view));
        last_view = Some(view);
    }
    let anywhere: BTreeSet<&String> = applied_files.iter().flatten().collect();
    // The last view, still built, is judged first and dropped before the others are built.
    let last = last_view
        .zip(applied_files.last())
        .map(|(view, own)| judge(&narrowed(view, own, &anywhere, all)));
    let mut judged: Vec<Vec<Diagnostic>> = all
        .iter()
        .zip(&applied_files)
        .take(all.len().saturating_sub(1))
        .map(|(env, own)| {
            let view = scoped_view(repo, env, all, &values);
            judge(&narrowed(view, own, &anywhere, all))
        })
        .collect();
    judged.extend(last);
    judged
}

/// What each environment's cluster applies, by name: its view as [`run`] judges it (a repo
/// of one environment or none is one view, named when it has an environment). For
/// `scaffold diff`.
/// Unlike the views `check` judges, an environment's own file that no Kustomization
/// reaches is left out: nothing applies it.
pub fn applied_views(repo: &Repo) -> Vec<(Option<String>, Repo)> {
    let all = names(repo);
    let mut views: Vec<(Option<String>, Repo)> = if all.len() < 2 {
        let name = all.first().cloned();
        let one = view(repo, name.as_deref(), &all);
        vec![(name, one)]
    } else {
        all.iter()
            .cloned()
            .map(Some)
            .zip(views(repo, &all))
            .collect()
    };
    for (name, view) in &mut views {
        if name.is_some() {
            let reached = applied(view);
            view.objects.retain(|o| reached.contains(&o.built_from));
        }
    }
    views
}

/// How [`run`] judges the views of a repo of several environments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judging {
    /// Every view built at once and judged on every core (`check`).
    Parallel,
    /// One view alive at a time, on the calling thread (`new`'s lint: memory over time).
    OneAtATime,
}

/// Runs `judge` on each environment's view, and merges the findings: a finding in an
/// environment's own file, or found in a shared file by some environments only, names
/// them; a shared file's finding every environment makes names none.
pub fn run(
    repo: &Repo,
    judging: Judging,
    judge: impl Fn(&Repo) -> Vec<Diagnostic> + Sync,
) -> Vec<Diagnostic> {
    let all = names(repo);
    if all.len() < 2 {
        // One environment or none: the view is the whole repo, so it is copied (a copy of
        // every parsed object, a tenth of `new`'s lint at 2,000 files) only when patches
        // would change it.
        if repo.unmatched_patches.is_empty() && !kustomize::has_patches(repo) {
            return judge(repo);
        }
        return judge(&view(repo, all.first().map(String::as_str), &all));
    }
    let per_env: Vec<(usize, Vec<Diagnostic>)> = match judging {
        Judging::Parallel => crate::parallel::map(&views(repo, &all), &judge),
        Judging::OneAtATime => judged_one_at_a_time(repo, &all, &judge),
    }
    .into_iter()
    .enumerate()
    .collect();
    // The same finding from several environments' views is one finding.
    let mut merged: BTreeMap<FindingKey, (Diagnostic, Vec<&str>)> = BTreeMap::new();
    for (i, findings) in per_env {
        for d in findings {
            let key = (d.file.clone(), d.line, d.rule, d.message.clone());
            merged
                .entry(key)
                .or_insert_with(|| (d, Vec::new()))
                .1
                .push(&all[i]);
        }
    }
    let mut out: Vec<Diagnostic> = merged
        .into_values()
        .map(|(mut d, mut envs)| {
            envs.sort_unstable();
            d.environment = match owner(&d.file, &all) {
                Some(own) => Some(own.to_string()),
                None if envs.len() == all.len() => None,
                None => Some(envs.join(", ")),
            };
            d
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.file, a.line, a.rule, &a.message).cmp(&(&b.file, b.line, b.rule, &b.message))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_belongs_to_the_environment_named_by_one_of_its_first_two_directories() {
        let all = vec!["dev".to_string(), "prod".to_string()];
        assert_eq!(owner("clusters/prod/00-crds.yaml", &all), Some("prod"));
        assert_eq!(owner("envs/dev/1-prerequisites/main.tf", &all), Some("dev"));
        assert_eq!(owner("infrastructure/addons/prod/release.yaml", &all), None);
        assert_eq!(owner("prod/main.tf", &all), Some("prod"));
        // A file named like an environment is not a directory.
        assert_eq!(owner("apps/prod", &all), None);
        assert_eq!(owner("README.md", &all), None);
    }
}

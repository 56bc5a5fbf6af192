//! Lint's `flux.path` findings on a blueprint from disk, pinned file by file and line by
//! line (issue 45): lint builds its own model of the rendering for this one rule, and
//! whatever that model keeps or leaves out, lint must find what `check`'s `flux.path` finds
//! — with and without environments and overlays, and nothing when a file does not parse
//! (`check`'s findings that may follow from a broken file are not reported).
use std::path::{Path, PathBuf};

use crate::support::{Env, run};

const MANIFEST: &str = "name: fp\nversion: 0.1.0\nquestions:\n  - key: team\n    prompt: Team\n    type: string\n    default: platform\n";

/// A blueprint of plain files (`files/` + path), written to `bp/`.
fn blueprint(env: &Env, files: &[(&str, &str)]) -> PathBuf {
    let dir = env.path("bp");
    let _ = std::fs::remove_dir_all(&dir); // a test may write several in turn
    for (path, text) in [("blueprint.yaml", MANIFEST)]
        .into_iter()
        .chain(files.iter().map(|(p, t)| (*p, *t)))
    {
        let full = dir.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("dirs");
        std::fs::write(full, text).expect("file");
    }
    dir
}

/// `blueprint lint`'s findings, asserting its exit code.
fn lint(env: &Env, dir: &Path, code: i32) -> String {
    let out = run(env.scaffold().args(["blueprint", "lint"]).arg(dir));
    assert_eq!(out.code, code, "{}{}", out.stdout, out.stderr);
    out.stdout
}

fn flux_kustomization(name: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: {path}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
}

fn sync(env_path: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  url: ssh://git@example.org/platform\n  ref:\n    branch: main\n---\n{}",
        flux_kustomization("flux-system", env_path)
    )
}

fn deployment(name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: {replicas}\n"
    )
}

/// One cluster, no environments: a path that does not exist, a base entry that does not
/// exist, an overlay patch that matches nothing, and a suppressed finding.
fn one_cluster() -> Vec<(&'static str, String)> {
    vec![
        ("files/clusters/flux-system/sync.yaml", sync("./clusters")),
        (
            "files/clusters/apps.yaml",
            flux_kustomization("apps", "./apps/overlay"),
        ),
        (
            "files/clusters/gone.yaml",
            flux_kustomization("gone", "./nowhere"),
        ),
        (
            "files/clusters/ignored.yaml.tera",
            flux_kustomization("ignored", "./also-nowhere").replace(
                "  path:",
                "  # scaffold:ignore flux.path [[ team ]] adds it later\n  path:",
            ),
        ),
        (
            "files/apps/base/kustomization.yaml",
            "resources:\n  - deploy.yaml\n  - missing.yaml\n".into(),
        ),
        ("files/apps/base/deploy.yaml", deployment("web", 1)),
        (
            "files/apps/overlay/kustomization.yaml.tera",
            "# [[ team ]]\nresources:\n  - ../base\npatches:\n  - path: patch.yaml\n  - path: stray.yaml\n".into(),
        ),
        ("files/apps/overlay/patch.yaml", deployment("web", 2)),
        ("files/apps/overlay/stray.yaml", deployment("nope", 2)),
        (
            "files/docs/notes.yaml",
            "title: not a Kubernetes object\n".into(),
        ),
        (
            "files/infra/main.tf",
            "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n}\n".into(),
        ),
    ]
}

fn written<'a>(files: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    files.iter().map(|(p, t)| (*p, t.as_str())).collect()
}

#[test]
fn lint_pins_flux_path_findings_of_one_cluster_with_an_overlay() {
    let env = Env::new();
    let dir = blueprint(&env, &written(&one_cluster()));
    assert_eq!(
        lint(&env, &dir, 1),
        "files/apps/base/kustomization.yaml:3:5: error: Kustomization apps does not build: resources entry `missing.yaml` does not exist\n\
         files/apps/overlay/stray.yaml:1:1: error: Kustomization apps does not build: the patch in apps/overlay/stray.yaml targets apps/v1 Deployment nope, which its resources do not build\n\
         files/clusters/gone.yaml:8:3: error: Kustomization gone: path `./nowhere` does not exist in the repo\n"
    );
}

/// Two clusters: each environment's overlay, a shared base both apply, a shared Flux
/// Kustomization an overlay patches to a path that does not exist in one environment only.
fn two_clusters() -> Vec<(&'static str, String)> {
    let mut files = vec![
        (
            "files/clusters/dev/flux-system/sync.yaml",
            sync("./clusters/dev"),
        ),
        (
            "files/clusters/prod/flux-system/sync.yaml",
            sync("./clusters/prod"),
        ),
        (
            "files/clusters/dev/apps.yaml",
            flux_kustomization("apps", "./apps/dev"),
        ),
        (
            "files/clusters/prod/apps.yaml",
            flux_kustomization("apps", "./apps/prod"),
        ),
        (
            "files/clusters/dev/infra.yaml",
            flux_kustomization("infra", "./infra/dev"),
        ),
        (
            "files/clusters/prod/infra.yaml",
            flux_kustomization("infra", "./infra/prod"),
        ),
        (
            "files/clusters/prod/gone.yaml",
            flux_kustomization("gone", "./nowhere"),
        ),
        (
            "files/apps/base/kustomization.yaml",
            "resources:\n  - deploy.yaml\n  - shared-missing.yaml\n".into(),
        ),
        ("files/apps/base/deploy.yaml", deployment("web", 1)),
        (
            "files/apps/dev/kustomization.yaml",
            "resources:\n  - ../base\npatches:\n  - path: patch.yaml\n".into(),
        ),
        ("files/apps/dev/patch.yaml", deployment("web", 2)),
        (
            "files/apps/prod/kustomization.yaml",
            "resources:\n  - ../base\n  - prod-missing.yaml\npatches:\n  - path: stray.yaml\n"
                .into(),
        ),
        ("files/apps/prod/stray.yaml", deployment("nope", 3)),
        // A shared Flux Kustomization, its path patched per environment.
        (
            "files/infra/base/kustomization.yaml",
            "resources:\n  - layer.yaml\n".into(),
        ),
        (
            "files/infra/base/layer.yaml",
            flux_kustomization("layer", "./infra/layer"),
        ),
        (
            "files/infra/layer/kustomization.yaml",
            "resources:\n  - cm.yaml\n".into(),
        ),
        (
            "files/infra/layer/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".into(),
        ),
        (
            "files/infra/dev/kustomization.yaml",
            "resources:\n  - ../base\n".into(),
        ),
        (
            "files/infra/prod/kustomization.yaml",
            "resources:\n  - ../base\npatches:\n  - path: layer-path.yaml\n".into(),
        ),
        (
            "files/infra/prod/layer-path.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: layer\n  namespace: flux-system\nspec:\n  path: ./infra/prod-layer\n".into(),
        ),
    ];
    files.push((
        "files/envs/prod/main.tf",
        "terraform {\n  required_version = \">= 1.5\"\n}\n".into(),
    ));
    files
}

#[test]
fn lint_pins_flux_path_findings_of_two_environments_with_overlays() {
    let env = Env::new();
    let dir = blueprint(&env, &written(&two_clusters()));
    assert_eq!(
        lint(&env, &dir, 1),
        "files/apps/base/kustomization.yaml:3:5: error: Kustomization apps does not build: resources entry `shared-missing.yaml` does not exist\n\
         files/apps/prod/kustomization.yaml:3:5: error: Kustomization apps does not build: resources entry `prod-missing.yaml` does not exist\n\
         files/apps/prod/stray.yaml:1:1: error: Kustomization apps does not build: the patch in apps/prod/stray.yaml targets apps/v1 Deployment nope, which its resources do not build\n\
         files/clusters/prod/gone.yaml:8:3: error: Kustomization gone: path `./nowhere` does not exist in the repo\n\
         files/infra/base/layer.yaml:8:3: error: Kustomization layer: path `./infra/prod-layer` does not exist in the repo\n"
    );
}

#[test]
fn lint_reports_no_flux_path_finding_when_a_file_does_not_parse() {
    let env = Env::new();
    let broken: [(&str, &str); 4] = [
        ("files/docs/broken.yaml", "a: [\n"),
        ("files/infra/broken.tf", "resource \"x\" {\n"),
        ("files/docs/broken.json", "{\"a\":\n"),
        (
            "files/docs/conflict.txt",
            "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
        ),
    ];
    for (setup, files) in [("one cluster", one_cluster()), ("two", two_clusters())] {
        for (path, text) in broken {
            let mut with_broken = written(&files);
            with_broken.push((path, text));
            let dir = blueprint(&env, &with_broken);
            assert_eq!(lint(&env, &dir, 0), "", "{setup} with {path}");
        }
        // A Helm chart's template is YAML only once Helm renders it: not broken, so the
        // findings stay.
        let dir = blueprint(&env, &written(&files));
        let found = lint(&env, &dir, 1);
        let mut with_template = written(&files);
        with_template.push(("files/chart/templates/cm.yaml", "a: {{ .Values.a }\n"));
        let dir = blueprint(&env, &with_template);
        assert_eq!(lint(&env, &dir, 1), found, "{setup} with a Helm template");
    }
}

use std::collections::BTreeMap;

use super::*;

/// Two clusters, dev and prod, each with a Flux entry that applies `apps/<env>`.
fn repo(dev_web: &str, dev_resources: &str) -> Repo {
    let mut files: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut put = |path: &str, text: String| {
        files.insert(path.into(), Some(text));
    };
    for env in ["dev", "prod"] {
        put(
            &format!("clusters/{env}/flux-system/gotk-sync.yaml"),
            format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\n  namespace: flux-system\nspec:\n  path: ./clusters/{env}\n  prune: true\n"
            ),
        );
        put(
            &format!("clusters/{env}/kustomization.yaml"),
            "resources:\n  - flux-system/gotk-sync.yaml\n  - apps.yaml\n".into(),
        );
        put(
            &format!("clusters/{env}/apps.yaml"),
            format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  path: ./apps/{env}\n  prune: true\n"
            ),
        );
    }
    put("apps/dev/kustomization.yaml", dev_resources.into());
    put("apps/dev/web.yaml", dev_web.into());
    put(
        "apps/prod/kustomization.yaml",
        "resources:\n  - web.yaml\n".into(),
    );
    put("apps/prod/web.yaml", web("nginx:1.0", 3));
    put(
        "envs/dev/1-prerequisites/terraform.tfvars",
        "region = \"eu-west-1\"\n".into(),
    );
    Repo::from_files(files)
}

fn web(image: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: web\nspec:\n  replicas: {replicas}\n  template:\n    spec:\n      containers:\n        - name: web\n          image: {image}\n"
    )
}

const BOTH: &str = "resources:\n  - web.yaml\n";

#[test]
fn a_change_in_one_environment_shows_there_only_with_its_highlights() {
    let base = repo(&web("nginx:1.0", 1), BOTH);
    let head = repo(&web("nginx:1.1", 2), BOTH);
    let diff = compare(&base, &head, "base", "head");
    let names: Vec<&str> = diff.environments.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["dev", "prod"]);
    let (dev, prod) = (&diff.environments[0], &diff.environments[1]);
    assert!(prod.is_empty(), "{prod:?}");
    assert_eq!(dev.objects.len(), 1, "{:?}", dev.objects);
    let object = &dev.objects[0];
    assert_eq!(
        (object.change, object.title()),
        (Change::Changed, "Deployment web/web".into())
    );
    assert_eq!(object.file, "apps/dev/web.yaml");
    assert_eq!(
        object.highlights,
        [
            "spec.replicas: 1 → 2",
            "spec.template.spec.containers.web.image: nginx:1.0 → nginx:1.1"
        ]
    );
    assert!(
        object
            .diff
            .contains("-        image: nginx:1.0\n+        image: nginx:1.1"),
        "{}",
        object.diff
    );
    assert!(diff.has_changes());
    assert_eq!(format::counts(dev), "1 changed");
}

#[test]
fn a_removed_object_says_flux_prunes_it_and_unchanged_repos_have_no_changes() {
    let base = repo(&web("nginx:1.0", 1), BOTH);
    let head = repo(&web("nginx:1.0", 1), "resources: []\n");
    let diff = compare(&base, &head, "base", "head");
    let dev = &diff.environments[0];
    assert_eq!(dev.objects.len(), 1);
    assert_eq!(dev.objects[0].change, Change::Removed);
    assert_eq!(
        dev.objects[0].highlights,
        ["deleted: Flux prunes it (Kustomization path ./apps/dev)"]
    );
    let same = compare(&base, &base, "a", "a");
    assert!(!same.has_changes());
    assert!(format::markdown(&same).contains("No environment applies anything different"));
}

#[test]
fn terraform_inputs_are_compared_per_environment() {
    let base = repo(&web("nginx:1.0", 1), BOTH);
    let mut files = base.files.clone();
    files.insert(
        "envs/dev/1-prerequisites/terraform.tfvars".into(),
        Some("region = \"eu-central-1\"\n".into()),
    );
    let head = Repo::from_files(files);
    let diff = compare(&base, &head, "base", "head");
    let dev = &diff.environments[0];
    assert!(dev.objects.is_empty());
    assert_eq!(dev.inputs.len(), 1);
    assert_eq!(
        dev.inputs[0].path,
        "envs/dev/1-prerequisites/terraform.tfvars"
    );
    assert!(dev.inputs[0].diff.contains("+region = \"eu-central-1\""));
    assert!(
        diff.environments[1].inputs.is_empty(),
        "prod's inputs did not change"
    );
}

#[test]
fn markdown_stays_under_its_budget_at_any_size() {
    let mut base_files = BTreeMap::new();
    let mut head_files = BTreeMap::new();
    let flux = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: flux-system\nspec:\n  path: ./clusters/dev\n  prune: true\n";
    for files in [&mut base_files, &mut head_files] {
        files.insert(
            "clusters/dev/flux-system/gotk-sync.yaml".to_string(),
            Some(flux.to_string()),
        );
    }
    let resources: String = (0..800).map(|i| format!("  - cm{i}.yaml\n")).collect();
    for (files, value) in [(&mut base_files, "a"), (&mut head_files, "b")] {
        files.insert(
            "clusters/dev/kustomization.yaml".into(),
            Some(format!(
                "resources:\n  - flux-system/gotk-sync.yaml\n{resources}"
            )),
        );
        for i in 0..800 {
            let lines: String = (0..20).map(|l| format!("  k{l}: {value}{l}\n")).collect();
            files.insert(
                format!("clusters/dev/cm{i}.yaml"),
                Some(format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata:\n{lines}"
                )),
            );
        }
    }
    let diff = compare(
        &Repo::from_files(base_files),
        &Repo::from_files(head_files),
        "a",
        "b",
    );
    assert_eq!(diff.environments[0].count(Change::Changed), 800);
    let comment = format::markdown(&diff);
    assert!(comment.len() < 65_536, "{} characters", comment.len());
    assert!(
        comment.contains("more (run `scaffold diff` for all)"),
        "the cut is counted"
    );
}

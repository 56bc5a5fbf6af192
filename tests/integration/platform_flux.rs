//! The Flux side of a generated platform works on a real cluster (issue 12): each test
//! generates a repo with the real binary and reads the files it wrote.
use std::path::{Path, PathBuf};

use serde_norway::Value;

use crate::support::{Env, podinfo_app, run};

const AUTHOR: &str = "Test Author <test@example.org>";

fn new_repo(env: &Env, name: &str, addons: &str) -> PathBuf {
    let out = run(env.scaffold().args([
        "new",
        name,
        "--defaults",
        "--set",
        &format!("addons={addons}"),
        "--set",
        "dns_zone=platform.example.org",
        "--author",
        AUTHOR,
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

fn scaffold_in(env: &Env, dir: &Path, args: &[&str]) {
    let out = run(env
        .scaffold()
        .args(args)
        .args(["--author", AUTHOR, "-C"])
        .arg(dir));
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
}

fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
}

fn read_file(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Where a path of a one-environment (`prod`) repo lives now: an app's base under
/// `apps/base/`, and each addon file with its overlay under `environments/prod/`.
fn sources_of(dir: &Path, path: &str) -> Vec<String> {
    let (base, overlay) = match path.strip_prefix("apps/prod/") {
        Some(rest) if dir.join(format!("apps/base/{rest}")).exists() => {
            (format!("apps/base/{rest}"), path.to_string())
        }
        _ => (path.to_string(), format!("environments/prod/{path}")),
    };
    let mut out = vec![base];
    if dir.join(&overlay).is_file() {
        out.push(overlay);
    }
    out
}

/// A file's text, with its environment overlay's after it (what the cluster gets of it);
/// README.md is the repo's README and the environment's runbook.
fn read(dir: &Path, path: &str) -> String {
    if path == "README.md" {
        return read_file(dir, "README.md") + &read_file(dir, "envs/prod/README.md");
    }
    sources_of(dir, path)
        .iter()
        .map(|p| read_file(dir, p))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// JSON merge patch, as kustomize applies an overlay's patch to a custom resource.
fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Mapping(b), Value::Mapping(p)) => {
            for (key, value) in p {
                match b.get_mut(key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        b.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

/// Every YAML document of a file, with its environment overlay's patches applied.
fn docs(dir: &Path, path: &str) -> Vec<Value> {
    let parse = |text: String| -> Vec<Value> {
        serde_norway::Deserializer::from_str(&text)
            .map(|d| Value::deserialize(d).expect("yaml"))
            .filter(|v| !v.is_null())
            .collect()
    };
    let sources = sources_of(dir, path);
    let mut out = parse(read_file(dir, &sources[0]));
    for patch in sources
        .iter()
        .skip(1)
        .flat_map(|p| parse(read_file(dir, p)))
    {
        if let Some(target) = out.iter_mut().find(|d| {
            d["kind"] == patch["kind"] && d["metadata"]["name"] == patch["metadata"]["name"]
        }) {
            merge(target, &patch);
        }
    }
    out
}

fn doc(dir: &Path, path: &str, kind: &str) -> Value {
    docs(dir, path)
        .into_iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("{path}: no {kind}"))
}

/// Every tracked file's text.
fn all_text(env: &Env, dir: &Path) -> Vec<(String, String)> {
    env.git(dir, &["ls-files"])
        .lines()
        .map(|p| (p.to_string(), read(dir, p)))
        .collect()
}

use serde::Deserialize;

#[test]
fn ui_addons_get_tls_from_the_istio_gateway_and_a_cert_manager_certificate() {
    let env = Env::new();
    let dir = new_repo(&env, "tls", "headlamp,authentik");
    for (path, text) in all_text(&env, &dir) {
        assert!(
            !text.contains("alb.ingress.kubernetes.io/listen-ports"),
            "{path}: an HTTPS ALB listener without a certificate"
        );
    }
    let gateway = doc(
        &dir,
        "infrastructure/addons-config/istio/configs.yaml",
        "Gateway",
    );
    let listener = gateway["spec"]["listeners"]
        .as_sequence()
        .expect("listeners")
        .iter()
        .find(|l| l["name"] == "https")
        .expect("https listener");
    assert_eq!(listener["protocol"], "HTTPS");
    assert_eq!(
        listener["tls"]["certificateRefs"][0]["name"],
        "platform-tls"
    );
    let certificate = doc(
        &dir,
        "infrastructure/addons-config/istio/configs.yaml",
        "Certificate",
    );
    assert_eq!(certificate["spec"]["secretName"], "platform-tls");
    assert_eq!(certificate["spec"]["issuerRef"]["name"], "letsencrypt-prod");
    let issuers = read(
        &dir,
        "infrastructure/addons-config/cert-manager/configs.yaml",
    );
    assert!(issuers.contains("name: letsencrypt-prod"));
    let headlamp = doc(
        &dir,
        "infrastructure/addons/headlamp/release.yaml",
        "HelmRelease",
    );
    let route = &headlamp["spec"]["values"]["httpRoute"];
    assert_eq!(route["enabled"], true);
    assert_eq!(route["parentRefs"][0]["name"], "platform");
    let authentik = doc(
        &dir,
        "infrastructure/addons/authentik/release.yaml",
        "HelmRelease",
    );
    assert_eq!(
        authentik["spec"]["values"]["server"]["route"]["main"]["parentRefs"][0]["name"],
        "platform"
    );
}

#[test]
fn authentiks_secret_is_generated_by_terraform_and_headlamp_has_a_login() {
    let env = Env::new();
    let dir = new_repo(&env, "idp", "authentik,headlamp");
    let tf = read(&dir, "envs/prod/1-prerequisites/addon-authentik.tf");
    assert_has(
        &tf,
        &[
            "resource \"aws_secretsmanager_secret\" \"authentik\"",
            "name                    = \"${var.name}/${var.environment}/platform/authentik\"",
            "AUTHENTIK_SECRET_KEY",
            "AUTHENTIK_POSTGRESQL__PASSWORD",
            "AUTHENTIK_BOOTSTRAP_PASSWORD",
            "AUTHENTIK_BOOTSTRAP_TOKEN",
        ],
    );
    let external_secret = doc(
        &dir,
        "infrastructure/addons-config/authentik/configs.yaml",
        "ExternalSecret",
    );
    // The file serves every environment: each one's bridge writes its own prefix.
    assert_eq!(
        external_secret["spec"]["dataFrom"][0]["extract"]["key"],
        "${PLATFORM_SECRETS_PREFIX}/authentik"
    );
    assert_has(
        &read(&dir, "envs/prod/3-bridge/cluster-vars.tf"),
        &["PLATFORM_SECRETS_PREFIX    = \"idp/prod/platform\""],
    );
    let viewer = docs(&dir, "infrastructure/addons-config/headlamp/configs.yaml");
    let binding = viewer
        .iter()
        .find(|d| d["kind"] == "ClusterRoleBinding")
        .expect("a binding for headlamp's login ServiceAccount");
    assert_eq!(binding["roleRef"]["name"], "view");
    assert_eq!(binding["subjects"][0]["name"], "headlamp-viewer");
}

#[test]
fn istio_by_name_brings_the_gateway_api_and_one_gateway_owner() {
    let env = Env::new();
    let dir = new_repo(&env, "mesh", "istio");
    let crds = "infrastructure/crds/gateway-api-crds";
    let source = doc(&dir, &format!("{crds}/source.yaml"), "GitRepository");
    assert_eq!(
        source["spec"]["url"],
        "https://github.com/kubernetes-sigs/gateway-api"
    );
    assert_eq!(source["spec"]["ref"]["tag"], "v1.5.1");
    let apply = doc(&dir, &format!("{crds}/release.yaml"), "Kustomization");
    assert_eq!(apply["spec"]["path"], "./config/crd/standard");
    let karpenter = doc(&dir, "clusters/prod/10-karpenter.yaml", "Kustomization");
    assert!(
        karpenter["spec"]["dependsOn"]
            .as_sequence()
            .expect("dependsOn")
            .iter()
            .any(|d| d["name"] == "gateway-api-crds")
    );
    for addon in ["istio-base", "istio", "cert-manager", "external-dns"] {
        assert!(
            dir.join(format!("infrastructure/addons/{addon}/release.yaml"))
                .is_file(),
            "{addon}"
        );
    }
    let gateway = doc(
        &dir,
        "infrastructure/addons-config/istio/configs.yaml",
        "Gateway",
    );
    assert_eq!(gateway["spec"]["gatewayClassName"], "istio");
    let repositories: Vec<String> = all_text(&env, &dir)
        .into_iter()
        .filter(|(_, t)| t.contains("kind: HelmRepository") && t.contains("istio-release"))
        .map(|(p, _)| p)
        .collect();
    assert_eq!(
        repositories,
        ["infrastructure/addons/istio-base/source.yaml"]
    );
    // With the Gateway API CRDs (istio brings them), external-dns watches HTTPRoutes too.
    assert_eq!(
        dns_sources(&dir),
        ["service", "ingress", "gateway-httproute"]
    );
    let lbc = doc(
        &dir,
        "infrastructure/aws-load-balancer-controller/aws-load-balancer-controller/release.yaml",
        "HelmRelease",
    );
    let gates = &lbc["spec"]["values"]["controllerConfig"]["featureGates"];
    assert_eq!(gates["ALBGatewayAPI"], false);
    assert_eq!(gates["NLBGatewayAPI"], false);
}

#[test]
fn external_secrets_reads_only_this_platforms_secrets_from_named_namespaces() {
    let env = Env::new();
    let dir = new_repo(&env, "acme", "external-secrets,authentik");
    let tf = read(&dir, "envs/prod/1-prerequisites/addon-external-secrets.tf");
    assert!(!tf.contains("secret:*\""), "{tf}");
    assert!(!tf.contains("secretsmanager:ListSecrets"), "{tf}");
    // Review N-M2: two roles, two prefixes. The controller's own role (application
    // stores) reads only apps/; the platform role only platform/.
    let own = &tf[..tf
        .find("external_secrets_platform\"")
        .expect("platform policy")];
    let platform = &tf[tf
        .find("external_secrets_platform\"")
        .expect("platform policy")..];
    assert_has(
        own,
        &[
            "secret:${var.name}/${var.environment}/apps/*",
            "parameter/${var.name}/${var.environment}/apps/*",
        ],
    );
    assert!(!own.contains("/platform/"), "{own}");
    assert_has(
        platform,
        &["secret:${var.name}/${var.environment}/platform/*"],
    );
    assert!(!platform.contains("/apps/"), "{platform}");
    let kops = read(&dir, "envs/prod/2-kops/values.yaml");
    assert_has(
        &kops,
        &[
            "serviceAccount: external-secrets-platform",
            "external_secrets_platform_policy_arn",
        ],
    );
    let configs = docs(
        &dir,
        "infrastructure/addons-config/external-secrets/configs.yaml",
    );
    let store = |name: &str| {
        configs
            .iter()
            .find(|d| d["kind"] == "ClusterSecretStore" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no store {name}"))
            .clone()
    };
    for name in ["aws-secrets-manager", "aws-parameter-store"] {
        let app = store(name);
        let conditions = app["spec"]["conditions"].as_sequence().expect("conditions");
        assert_eq!(conditions.len(), 1, "{name}: only labelled namespaces");
        assert_eq!(
            conditions[0]["namespaceSelector"]["matchLabels"]["platform-secrets"],
            "allowed"
        );
        // Issue 40: the application stores name their own ServiceAccount; a store
        // without auth would run with the controller's credentials.
        let jwt = &app["spec"]["provider"]["aws"]["auth"]["jwt"]["serviceAccountRef"];
        assert_eq!(jwt["name"], "external-secrets-apps", "{name}");
        assert_eq!(jwt["namespace"], "external-secrets", "{name}");
    }
    // The namespaces come from each environment's own addons, through its cluster-vars.
    let platform_store = store("platform-secrets-manager");
    assert_eq!(
        platform_store["spec"]["conditions"],
        serde_norway::from_str::<Value>(
            "[{namespaceRegexes: ['^(${PLATFORM_SECRET_NAMESPACES})$']}]"
        )
        .expect("yaml")
    );
    assert_has(
        &read(&dir, "envs/prod/3-bridge/cluster-vars.tf"),
        &["PLATFORM_SECRET_NAMESPACES = \"authentik\""],
    );
    let jwt = &platform_store["spec"]["provider"]["aws"]["auth"]["jwt"]["serviceAccountRef"];
    assert_eq!(jwt["name"], "external-secrets-platform");
    assert_eq!(jwt["namespace"], "external-secrets");
    for (name, role) in [
        ("external-secrets-apps", "${EXTERNAL_SECRETS_ROLE_ARN}"),
        (
            "external-secrets-platform",
            "${EXTERNAL_SECRETS_PLATFORM_ROLE_ARN}",
        ),
    ] {
        let account = configs
            .iter()
            .find(|d| d["kind"] == "ServiceAccount" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("ServiceAccount {name}"));
        let annotations = &account["metadata"]["annotations"];
        assert_eq!(annotations["eks.amazonaws.com/audience"], "amazonaws.com");
        assert_eq!(annotations["eks.amazonaws.com/role-arn"], role);
    }
    // Issue 40: the controller's own ServiceAccount has no AWS role, and `edit` in a
    // namespace does not bring SecretStores (helm-chart-2.9.0 rbac.aggregateToEdit).
    let controller = read(
        &dir,
        "environments/prod/infrastructure/addons/external-secrets/release.yaml",
    ) + &read(&dir, "infrastructure/addons/external-secrets/release.yaml");
    let bridge_values = read(&dir, "envs/prod/3-bridge/addon-external-secrets.tf");
    for text in [&controller, &bridge_values] {
        assert!(
            !text.contains("role-arn") && !text.contains("AWS_ROLE_ARN"),
            "{text}"
        );
    }
    assert_has(&controller, &["aggregateToEdit: false"]);
    // kops' IRSA role trusts the apps ServiceAccount, not the controller's.
    assert_has(&kops, &["serviceAccount: external-secrets-apps"]);
    assert!(
        !kops.contains("serviceAccount: external-secrets\n"),
        "{kops}"
    );
    // authentik's secret lives under platform/ and is read through the platform store.
    let secret = doc(
        &dir,
        "infrastructure/addons-config/authentik/configs.yaml",
        "ExternalSecret",
    );
    assert_eq!(
        secret["spec"]["secretStoreRef"]["name"],
        "platform-secrets-manager"
    );
    assert_eq!(
        secret["spec"]["dataFrom"][0]["extract"]["key"],
        "${PLATFORM_SECRETS_PREFIX}/authentik"
    );
    assert_has(
        &read(&dir, "envs/prod/3-bridge/cluster-vars.tf"),
        &["PLATFORM_SECRETS_PREFIX    = \"acme/prod/platform\""],
    );
    assert_has(
        &read(&dir, "envs/prod/1-prerequisites/addon-authentik.tf"),
        &["\"${var.name}/${var.environment}/platform/authentik\""],
    );
    assert_has(
        &read(&dir, "README.md"),
        &["acme/prod/apps/", "platform-secrets-manager"],
    );
    let bridge = read(&dir, "envs/prod/3-bridge/addon-external-secrets.tf");
    assert_has(
        &bridge,
        &[
            "EXTERNAL_SECRETS_PLATFORM_ROLE_ARN",
            "EXTERNAL_SECRETS_ROLE_ARN = local.irsa_role_arns[\"external_secrets_external_secrets_apps\"]",
        ],
    );
}

#[test]
fn add_addon_helm_set_types_values_as_helm_does() {
    let env = Env::new();
    let dir = new_repo(&env, "typed", "");
    let mut args = podinfo_app("web");
    args.extend([
        "--helm-set",
        "image.tag=6.10,exp=1e3",
        "--helm-set",
        "hex=0x1F",
        "--helm-set",
        "word=on",
        "--helm-set",
        "replicaCount=3",
        "--helm-set",
        "flag=true",
        "--helm-set",
        "list={a,2}",
        "--helm-set-string",
        "port=8080",
    ]);
    scaffold_in(&env, &dir, &args);
    let release = doc(&dir, "apps/prod/web/release.yaml", "HelmRelease");
    let values = &release["spec"]["values"];
    assert_eq!(values["image"]["tag"], Value::from("6.10"));
    assert_eq!(values["exp"], Value::from("1e3"));
    assert_eq!(values["hex"], Value::from("0x1F"));
    assert_eq!(values["word"], Value::from("on"));
    // Review N-m10: quoted, so YAML 1.1 tools (kubectl, PyYAML) read a string too.
    assert_has(&read(&dir, "apps/prod/web/release.yaml"), &["word: 'on'"]);
    assert_eq!(values["replicaCount"], Value::from(3));
    assert_eq!(values["flag"], Value::from(true));
    assert_eq!(values["list"][1], Value::from(2));
    assert_eq!(values["port"], Value::from("8080"));
}

#[test]
fn each_addon_fails_alone_in_its_own_kustomization() {
    let env = Env::new();
    let dir = new_repo(&env, "iso", "reloader,authentik");
    for addon in ["reloader", "authentik", "external-secrets"] {
        let unit = doc(
            &dir,
            &format!("clusters/prod/30-addon-{addon}.yaml"),
            "Kustomization",
        );
        assert_eq!(unit["metadata"]["name"], format!("addon-{addon}").as_str());
        assert_eq!(
            unit["spec"]["path"],
            format!("./environments/prod/infrastructure/addons/{addon}").as_str()
        );
        assert_eq!(
            unit["spec"]["dependsOn"][0]["name"],
            "aws-load-balancer-controller"
        );
    }
    let authentik = doc(
        &dir,
        "clusters/prod/30-addon-authentik.yaml",
        "Kustomization",
    );
    let deps: Vec<&str> = authentik["spec"]["dependsOn"]
        .as_sequence()
        .expect("deps")
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(deps.contains(&"addon-external-secrets"), "{deps:?}");
    let apps = doc(&dir, "clusters/prod/50-apps.yaml", "Kustomization");
    let app_deps: Vec<&str> = apps["spec"]["dependsOn"]
        .as_sequence()
        .expect("deps")
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(app_deps.contains(&"addon-reloader") && app_deps.contains(&"addon-authentik"));
    assert!(
        app_deps.iter().all(|d| !d.ends_with("-config")),
        "a config that is not Ready must not hold back the apps: {app_deps:?}"
    );
    let karpenter = doc(&dir, "clusters/prod/10-karpenter.yaml", "Kustomization");
    assert!(karpenter["spec"]["wait"].is_null());
    assert_eq!(karpenter["spec"]["healthChecks"][0]["name"], "karpenter");
    assert!(!dir.join("clusters/prod/30-addons.yaml").exists());
}

#[test]
fn only_addons_with_terraform_values_get_a_bridge_and_apps_get_no_substitution() {
    let env = Env::new();
    let dir = new_repo(&env, "lean", "reloader,velero");
    assert!(!dir.join("envs/prod/3-bridge/addon-reloader.tf").exists());
    assert!(dir.join("envs/prod/3-bridge/addon-velero.tf").is_file());
    let reloader = doc(
        &dir,
        "infrastructure/addons/reloader/release.yaml",
        "HelmRelease",
    );
    assert!(reloader["spec"]["valuesFrom"].is_null());
    assert_eq!(
        doc(
            &dir,
            "infrastructure/addons/reloader/namespace.yaml",
            "Namespace"
        )["metadata"]["name"],
        "reloader"
    );
    let velero = doc(
        &dir,
        "infrastructure/addons/velero/release.yaml",
        "HelmRelease",
    );
    assert_eq!(velero["spec"]["valuesFrom"][0]["name"], "velero-tf-values");
    scaffold_in(&env, &dir, &podinfo_app("shop"));
    assert!(!dir.join("envs/prod/3-bridge/addon-shop.tf").exists());
    assert!(dir.join("apps/base/shop/namespace.yaml").is_file());
    assert!(dir.join("apps/prod/shop/kustomization.yaml").is_file());
    let apps = doc(&dir, "clusters/prod/50-apps.yaml", "Kustomization");
    assert!(apps["spec"]["postBuild"].is_null());
}

#[test]
fn crd_charts_keep_their_crds_and_removal_leaves_no_orphan() {
    let env = Env::new();
    let dir = new_repo(&env, "crd", "kube-prometheus-stack");
    let crds = doc(
        &dir,
        "infrastructure/crds/prometheus-operator-crds/release.yaml",
        "HelmRelease",
    );
    assert_eq!(
        crds["spec"]["values"]["crds"]["annotations"]["helm.sh/resource-policy"],
        "keep"
    );
    assert!(
        crds["metadata"]["annotations"].is_null(),
        "no prune: disabled left behind"
    );
    scaffold_in(&env, &dir, &["remove-addon", "kube-prometheus-stack"]);
    // renovate.json's rules name every catalog addon, chosen or not (issue 42: teammates'
    // add-addons merge): a rule for an absent addon matches nothing.
    for (path, text) in all_text(&env, &dir)
        .into_iter()
        .filter(|(path, _)| path != "renovate.json")
    {
        assert!(
            !text.contains("prometheus-operator-crds") && !text.contains("kube-prometheus-stack"),
            "{path} still names the removed addon"
        );
    }
}

#[test]
fn operations_defaults_follow_the_charts_and_monitoring_is_wired() {
    let env = Env::new();
    let dir = new_repo(
        &env,
        "ops",
        "kube-prometheus-stack,external-dns,reloader,velero",
    );
    let kps = doc(
        &dir,
        "infrastructure/addons/kube-prometheus-stack/release.yaml",
        "HelmRelease",
    );
    let values = &kps["spec"]["values"];
    assert_eq!(values["grafana"]["deploymentStrategy"]["type"], "Recreate");
    assert_eq!(
        values["grafana"]["podAnnotations"]["karpenter.sh/do-not-disrupt"],
        "true"
    );
    assert_eq!(
        values["prometheus"]["prometheusSpec"]["podMetadata"]["annotations"]["karpenter.sh/do-not-disrupt"],
        "true"
    );
    let dns = doc(
        &dir,
        "infrastructure/addons/external-dns/release.yaml",
        "HelmRelease",
    );
    assert_eq!(dns["spec"]["values"]["serviceMonitor"]["enabled"], true);
    let flux = doc(
        &dir,
        "infrastructure/addons-config/kube-prometheus-stack/configs.yaml",
        "PodMonitor",
    );
    assert_eq!(flux["metadata"]["namespace"], "flux-system");
    let velero = doc(
        &dir,
        "infrastructure/addons/velero/release.yaml",
        "HelmRelease",
    );
    assert_eq!(velero["spec"]["values"]["upgradeCRDs"], false);
    let reloader = doc(
        &dir,
        "infrastructure/addons/reloader/release.yaml",
        "HelmRelease",
    );
    assert!(reloader["spec"]["values"]["reloader"]["reloadOnCreate"].is_null());

    let plain = new_repo(&env, "plain", "external-dns");
    let dns = doc(
        &plain,
        "infrastructure/addons/external-dns/release.yaml",
        "HelmRelease",
    );
    assert!(
        dns["spec"]["values"]["serviceMonitor"].is_null(),
        "no ServiceMonitor without Prometheus"
    );
}

#[test]
fn metrics_server_documents_its_kubelet_tls_trade_off() {
    let env = Env::new();
    let dir = new_repo(&env, "ms", "metrics-server");
    let release = read(&dir, "infrastructure/addons/metrics-server/release.yaml");
    assert_has(&release, &["--kubelet-insecure-tls"]);
    let readme = read(&dir, "README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("- **metrics-server**"))
        .expect("the README lists the addon");
    assert_has(line, &["Trade-off", "serverTLSBootstrap"]);
}

#[test]
fn list_addons_says_what_each_addon_needs_from_the_operator() {
    let env = Env::new();
    let out = run(env.scaffold().args(["list", "addons"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_has(&out.stdout, &["Route53 DNS zone", "creates its AWS secret"]);
    let out = run(env.scaffold().args(["list", "addons", "--json"]));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).expect("json");
    let istio = rows
        .iter()
        .find(|r| r["name"] == "istio")
        .expect("istio is a name users type");
    assert!(
        istio["operator_needs"]
            .as_str()
            .expect("words")
            .contains("Route53 zone")
    );
}

fn dns_sources(dir: &Path) -> Vec<String> {
    let dns = doc(
        dir,
        "infrastructure/addons/external-dns/release.yaml",
        "HelmRelease",
    );
    dns["spec"]["values"]["sources"]
        .as_sequence()
        .expect("sources")
        .iter()
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

/// `check --json` on a repo: exit code and findings.
fn check_json(env: &Env, dir: &Path) -> (i32, Vec<serde_json::Value>) {
    let out = run(env
        .scaffold()
        .arg("check")
        .arg(dir)
        .args(["--json", "--skip", "tf.backend"]));
    let report: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json ({e}): {}\n{}", out.stdout, out.stderr));
    (
        out.code,
        report["findings"].as_array().cloned().unwrap_or_default(),
    )
}

/// The 1-based line of the first line of `path` equal to `line` once trimmed.
fn line_number(dir: &Path, path: &str, line: &str) -> usize {
    read(dir, path)
        .lines()
        .position(|l| l.trim() == line)
        .unwrap_or_else(|| panic!("{path}: no line {line:?}"))
        + 1
}

// Review N-B1: the default repo installs no Gateway API CRDs, so external-dns must not
// watch HTTPRoutes (it exits after 60 s and `apps`, waiting on it, is never applied).
#[test]
fn external_dns_watches_gateway_routes_only_with_the_gateway_api_crds() {
    let env = Env::new();
    let dir = new_repo(&env, "plain", "external-dns");
    assert_eq!(dns_sources(&dir), ["service", "ingress"]);
    assert!(
        !all_text(&env, &dir)
            .iter()
            .any(|(p, t)| p.ends_with(".yaml") && t.contains("gateway-httproute")),
        "a repo without the Gateway API CRDs mentions gateway-httproute"
    );
    let (code, findings) = check_json(&env, &dir);
    assert_eq!(code, 0, "{findings:#?}");
    // Adding istio brings the CRDs, and the source with them; removing it takes it away.
    scaffold_in(&env, &dir, &["add-addon", "istio"]);
    assert_eq!(
        dns_sources(&dir),
        ["service", "ingress", "gateway-httproute"]
    );
    scaffold_in(&env, &dir, &["remove-addon", "istio"]);
    assert_eq!(dns_sources(&dir), ["service", "ingress"]);
}

// The guard of N-B1's class: a hand edit that re-adds the source without the Gateway API
// is an error at the list item, naming the addon that installs the API.
#[test]
fn check_reports_a_gateway_source_without_the_gateway_api_at_its_line() {
    let env = Env::new();
    let dir = new_repo(&env, "edited", "external-dns,cert-manager");
    let release = "environments/prod/infrastructure/addons/external-dns/release.yaml";
    let text = read(&dir, release);
    std::fs::write(
        dir.join(release),
        text.replacen(
            "    - ingress\n",
            "    - ingress\n    - gateway-httproute\n",
            1,
        ),
    )
    .expect("write");
    let (code, findings) = check_json(&env, &dir);
    assert_eq!(code, 1, "{findings:#?}");
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let finding = &findings[0];
    assert_eq!(finding["rule"], "order.watched-api");
    assert_eq!(finding["file"], release);
    assert_eq!(
        finding["line"],
        line_number(&dir, release, "- gateway-httproute")
    );
    let message = finding["message"].as_str().expect("message");
    assert_has(
        message,
        &[
            "gateway.networking.k8s.io",
            "gateway-api-crds",
            "addon-external-dns",
        ],
    );
    // cert-manager's gateway-shim is the same shape.
    let cm = "environments/prod/infrastructure/addons/cert-manager/release.yaml";
    let text = read(&dir, cm);
    std::fs::write(
        dir.join(cm),
        text.replacen(
            "  values:\n",
            "  values:\n    extraArgs:\n    - --enable-gateway-api\n",
            1,
        ),
    )
    .expect("write");
    let (_, findings) = check_json(&env, &dir);
    let shim: Vec<_> = findings.iter().filter(|f| f["file"] == cm).collect();
    assert_eq!(shim.len(), 1, "{findings:#?}");
    assert_eq!(shim[0]["rule"], "order.watched-api");
    assert_eq!(
        shim[0]["line"],
        line_number(&dir, cm, "- --enable-gateway-api")
    );
}

// The same guard in the blueprint: a catalog entry that turns the feature on outside
// `values_when` of the addon bringing the API is refused where it is written.
#[test]
fn a_catalog_entry_turning_on_a_feature_without_its_addon_is_refused() {
    let env = Env::new();
    let blueprint = env.path("bp");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("blueprints/default");
    for entry in walkdir::WalkDir::new(&source) {
        let entry = entry.expect("walk");
        let to = blueprint.join(entry.path().strip_prefix(&source).expect("prefix"));
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else {
            std::fs::copy(entry.path(), &to).expect("copy");
        }
    }
    let entry = blueprint.join("addons/external-dns.yaml");
    let text = std::fs::read_to_string(&entry).expect("entry");
    let edited = text.replacen(
        "    - ingress\n",
        "    - ingress\n    - gateway-httproute\n",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&entry, edited).expect("write");
    let out = run(env
        .scaffold()
        .args(["new", "refused", "--defaults", "--blueprint"])
        .arg(&blueprint));
    // 5: a blueprint that does not render.
    assert_eq!(out.code, 5, "{}", out.stderr);
    assert_has(
        &out.stderr,
        &[
            "addons/external-dns.yaml",
            "gateway-api-routes",
            "values_when: gateway-api-crds",
        ],
    );
    assert!(!env.path("refused").exists());
}

// Review N-M1 (authentik trusts the gateway's forwarded headers from kops' pod range),
// N-m7 (client IPs reach the gateway; port 80 redirects), N-m2 (drift detection leaves
// istiod's webhook failurePolicy alone), N-m10 (Reloader annotation only with Reloader).
#[test]
fn the_gateway_passes_client_ip_and_scheme_and_keeps_istio_webhooks_fail_closed() {
    let env = Env::new();
    let dir = new_repo(&env, "front", "authentik");
    let authentik = doc(
        &dir,
        "infrastructure/addons/authentik/release.yaml",
        "HelmRelease",
    );
    let values = &authentik["spec"]["values"];
    let cidrs: Vec<&str> = values["authentik"]["listen"]["trusted_proxy_cidrs"]
        .as_str()
        .expect("a comma-separated string (the chart renders lists as Go's [a b])")
        .split(',')
        .collect();
    let template = read(&dir, "envs/prod/2-kops/cluster-template.yaml");
    let pods = template
        .lines()
        .find_map(|l| l.trim().strip_prefix("nonMasqueradeCIDR: "))
        .expect("nonMasqueradeCIDR");
    assert!(
        cidrs.contains(&pods),
        "{cidrs:?} lacks the pod range {pods}"
    );
    for default in ["127.0.0.0/8", "10.0.0.0/8", "::1/128"] {
        assert!(cidrs.contains(&default), "{cidrs:?} drops {default}");
    }
    assert!(
        values["global"]["deploymentAnnotations"].is_null(),
        "no Reloader, no reload annotation"
    );
    let configs = docs(&dir, "infrastructure/addons-config/istio/configs.yaml");
    let overlays = configs
        .iter()
        .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "platform-gateway-fixed")
        .expect("platform-gateway overlays");
    let service: Value =
        serde_norway::from_str(overlays["data"]["service"].as_str().expect("service"))
            .expect("yaml");
    assert_eq!(service["spec"]["externalTrafficPolicy"], "Local");
    let gateway = configs
        .iter()
        .find(|d| d["kind"] == "Gateway")
        .expect("Gateway");
    let http = gateway["spec"]["listeners"]
        .as_sequence()
        .expect("listeners")
        .iter()
        .find(|l| l["port"] == 80)
        .expect("a port 80 listener");
    assert_eq!(http["protocol"], "HTTP");
    let redirect = configs
        .iter()
        .find(|d| d["kind"] == "HTTPRoute")
        .expect("redirect route");
    assert_eq!(
        redirect["spec"]["parentRefs"][0]["sectionName"],
        http["name"]
    );
    assert_eq!(
        redirect["spec"]["rules"][0]["filters"][0]["requestRedirect"]["scheme"],
        "https"
    );
    assert_eq!(
        redirect["metadata"]["annotations"]["external-dns.alpha.kubernetes.io/controller"], "none",
        "external-dns must not publish the wildcard"
    );
    for release in ["istio-base", "istio"] {
        let hr = doc(
            &dir,
            &format!("infrastructure/addons/{release}/release.yaml"),
            "HelmRelease",
        );
        let ignored = hr["spec"]["driftDetection"]["ignore"]
            .as_sequence()
            .expect("ignore")
            .iter()
            .any(|i| {
                i["target"]["kind"] == "ValidatingWebhookConfiguration"
                    && i["paths"][0] == "/webhooks"
            });
        assert!(ignored, "{release}: webhooks drift not ignored");
    }
    scaffold_in(&env, &dir, &["add-addon", "reloader"]);
    let authentik = doc(
        &dir,
        "infrastructure/addons/authentik/release.yaml",
        "HelmRelease",
    );
    assert_eq!(
        authentik["spec"]["values"]["global"]["deploymentAnnotations"]["secret.reloader.stakater.com/reload"],
        "authentik-credentials"
    );
    assert!(
        authentik["spec"]["values"]["global"]["envFrom"].is_sequence(),
        "values_when merges, envFrom stays"
    );
}

// Review N-m1: a config Kustomization waits only for the configs its objects use (the
// ExternalSecret needs the stores, not the Gateway and its certificate).
#[test]
fn config_kustomizations_wait_only_for_the_configs_they_use() {
    let env = Env::new();
    let dir = new_repo(&env, "cfg", "authentik,headlamp");
    let depends = |file: &str, name: &str| -> Vec<String> {
        docs(&dir, &format!("clusters/prod/30-addon-{file}.yaml"))
            .into_iter()
            .find(|d| d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))["spec"]["dependsOn"]
            .as_sequence()
            .expect("dependsOn")
            .iter()
            .filter_map(|d| d["name"].as_str().map(String::from))
            .collect()
    };
    assert_eq!(
        depends("authentik", "addon-authentik-config"),
        ["addon-authentik", "addon-external-secrets-config"]
    );
    assert_eq!(
        depends("headlamp", "addon-headlamp-config"),
        ["addon-headlamp"]
    );
    // The addons themselves still wait for what they need.
    assert!(depends("authentik", "addon-authentik").contains(&"addon-istio".to_string()));
}

// Review N-m7 (HPA without metrics-server), N-m8 (Karpenter scraped with
// kube-prometheus-stack), N-m4 (Renovate moves pins that belong together at once).
#[test]
fn gateway_autoscales_only_with_metrics_and_karpenter_is_scraped_with_prometheus() {
    let env = Env::new();
    let dir = new_repo(&env, "mon", "istio");
    // Both ways to scale are in the shared config; each environment's bridge names the
    // one its Gateway reads (an HPA only where metrics-server runs).
    let overlays = |dir: &Path, scaling: &str| -> Value {
        let name = format!("platform-gateway-{scaling}");
        docs(dir, "infrastructure/addons-config/istio/configs.yaml")
            .into_iter()
            .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == name.as_str())
            .expect("overlays")["data"]
            .clone()
    };
    let scaling = |dir: &Path| read(dir, "envs/prod/3-bridge/cluster-vars.tf");
    assert!(scaling(&dir).contains("ISTIO_GATEWAY_SCALING      = \"fixed\""));
    let data = overlays(&dir, "fixed");
    assert!(data["horizontalPodAutoscaler"].is_null(), "{data:?}");
    let deployment: Value =
        serde_norway::from_str(data["deployment"].as_str().expect("deployment")).expect("yaml");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let data = overlays(&dir, "autoscaled");
    assert!(data["horizontalPodAutoscaler"].is_string(), "{data:?}");
    assert!(data["deployment"].is_null(), "{data:?}");
    let karpenter = |dir: &Path| {
        doc(
            dir,
            "infrastructure/karpenter/karpenter/release.yaml",
            "HelmRelease",
        )["spec"]["values"]["serviceMonitor"]["enabled"]
            .clone()
    };
    assert!(karpenter(&dir).is_null());
    scaffold_in(&env, &dir, &["add-addon", "metrics-server"]);
    scaffold_in(&env, &dir, &["add-addon", "kube-prometheus-stack"]);
    scaffold_in(&env, &dir, &["add-addon", "velero"]);
    assert!(scaling(&dir).contains("ISTIO_GATEWAY_SCALING      = \"autoscaled\""));
    assert_eq!(karpenter(&dir), Value::from(true));
    let renovate: serde_json::Value =
        serde_json::from_str(&read(&dir, "renovate.json")).expect("renovate.json");
    let group_of = |name: &str| -> Vec<String> {
        renovate["packageRules"]
            .as_array()
            .expect("packageRules")
            .iter()
            .filter(|r| {
                ["matchDepNames", "matchPackageNames"]
                    .iter()
                    .any(|k| r[k].as_array().is_some_and(|n| n.iter().any(|n| n == name)))
            })
            .filter_map(|r| r["groupName"].as_str().map(String::from))
            .collect()
    };
    for together in [
        &["base", "istiod", "kubernetes-sigs/gateway-api"][..],
        &["kube-prometheus-stack", "prometheus-operator-crds"],
        &["velero", "velero/velero-plugin-for-aws"],
    ] {
        let first = group_of(together[0]);
        assert_eq!(first.len(), 1, "{}: one group", together[0]);
        for name in together {
            assert_eq!(group_of(name), first, "{name}");
        }
    }
}

// Review N-m6 (teardown deletes the Gateways before their Services), N-m9 (remove-addon
// deletes the namespace's volumes), N-m10 (the node-termination-handler text).
#[test]
fn readme_teardown_deletes_gateways_first_and_warns_of_volumes_on_remove() {
    let env = Env::new();
    let dir = new_repo(&env, "docs", "istio");
    let readme = read(&dir, "README.md");
    let gateways = readme
        .find("kubectl --kubeconfig 2-kops/kubeconfig --context prod.platform.example.org delete gateways.gateway.networking.k8s.io")
        .expect("teardown deletes the Gateways");
    let services = readme
        .find("delete the Services of type LoadBalancer")
        .expect("then the Services");
    assert!(gateways < services);
    assert_has(
        &readme,
        &[
            "aws elbv2 describe-load-balancers",
            "kustomize.toolkit.fluxcd.io/prune: disabled",
            "IMDS mode as a DaemonSet on every node",
        ],
    );
    assert!(!readme.contains("the autoscaling groups only"));
    let plain = new_repo(&env, "plain", "");
    assert!(!read(&plain, "README.md").contains("delete gateways"));
}

//! The bad-input catalogue: every case is refused before anything is written, with one
//! stderr line naming the field or file and the fix, and its documented exit code.
use std::path::Path;

use crate::safety_git::{assert_one_line, assert_same, in_repo, new_repo, snapshot};
use crate::support::{Env, run};

/// (arguments after `new t --defaults`, exit code, fragments the one line must contain)
type Case = (&'static [&'static str], i32, &'static [&'static str]);

const NEW_SET: &[Case] = &[
    (
        &["--set", "git_branch=feature..x"],
        2,
        &[
            "git_branch: `feature..x` is not a valid git branch name",
            "use a name such as main",
        ],
    ),
    (
        &["--set", "git_branch=x.lock"],
        2,
        &["git_branch: `x.lock` is not a valid git branch name"],
    ),
    (
        &["--set", "git_branch=-bad"],
        2,
        &["git_branch: `-bad` is not a valid git branch name"],
    ),
    (
        &["--set", "git_branch=bad branch"],
        2,
        &["git_branch: `bad branch` must be a git branch name"],
    ),
    (
        &["--set", "cluster_name=prod.other.org"],
        2,
        &["cluster_name: `prod.other.org` must be under the DNS zone, e.g. prod.t.example.com"],
    ),
    (
        &["--set", "dns_zone=", "--set", "cluster_name=a.b.org"],
        2,
        &[
            "cluster_name: `a.b.org` must end in .k8s.local",
            "e.g. t.k8s.local",
        ],
    ),
    (
        &["--set", "kubernetes_version=1.35.0"],
        2,
        &[
            "kops_version: `1.34.0` does not support Kubernetes 1.35.0",
            "use kops 1.35.x or an older Kubernetes",
        ],
    ),
    (
        &[
            "--set",
            "kubernetes_version=1.36.2",
            "--set",
            "kops_version=1.35.0",
        ],
        2,
        &["kops_version: `1.35.0` does not support Kubernetes 1.36.2"],
    ),
    (
        &["--set", "kubernetes_version=1.20.0"],
        2,
        &[
            "kops_version: `1.34.0` refuses Kubernetes 1.20.0",
            "use Kubernetes 1.29 or newer",
        ],
    ),
    (
        &[
            "--set",
            "vpc_mode=existing",
            "--set",
            "vpc_id=vpc-01234567",
            "--set",
            "zones=eu-west-1a,eu-west-1b",
            "--set",
            "private_subnet_ids=eu-west-1a=subnet-01234567,eu-west-1b=subnet-01234567",
        ],
        2,
        &[
            "private_subnet_ids: `{\"eu-west-1a\":\"subnet-01234567\",\"eu-west-1b\":\"subnet-01234567\"}` names a subnet for two zones",
        ],
    ),
    (
        &[
            "--set",
            "vpc_mode=existing",
            "--set",
            "vpc_id=vpc-01234567",
            "--set",
            "zones=eu-west-1a,eu-west-1b",
            "--set",
            "private_subnet_ids=eu-west-1a=subnet-01234567,eu-west-1b=subnet-01234568",
            "--set",
            "utility_subnet_ids=eu-west-1a=subnet-01234568,eu-west-1b=subnet-11234568",
        ],
        2,
        &[
            "utility_subnet_ids: ",
            "names a subnet twice, or one of the private subnets",
        ],
    ),
    (
        &["--set", "kubernetes_version=latest"],
        2,
        &["kubernetes_version: `latest` must be an exact version such as 1.34.1"],
    ),
    (
        &["--set", "kubernetes_version=1.34"],
        2,
        &["kubernetes_version: `1.34` must be an exact version"],
    ),
    (
        &["--set", "kops_version=2.0"],
        2,
        &["kops_version: `2.0` must be an exact version such as 1.34.0"],
    ),
    (
        &[
            "--set",
            "control_plane_count=3",
            "--set",
            "zones=eu-west-1a",
        ],
        2,
        &["control_plane_count: `3` must not exceed the number of zones (1)"],
    ),
    (
        &["--set", "control_plane_count=2"],
        2,
        &["control_plane_count: `2` is not one of 1, 3"],
    ),
    (
        &["--set", "control_plane_count=abc"],
        2,
        &["control_plane_count: `abc` is not a whole number"],
    ),
    (
        &["--set", "name=Bad_Name"],
        2,
        &["name: `Bad_Name` must be a DNS-1123 label"],
    ),
    (&["--set", "name="], 2, &["name: must not be empty"]),
    (
        &["--set", "name=abcdefghijabcdefghijabcdefghijabcdefghijk"],
        2,
        &[
            "name: `abcdefghijabcdefghijabcdefghijabcdefghijk` must be a DNS-1123 label of at most 40 characters",
        ],
    ),
    (
        &["--set", "environments=PROD"],
        2,
        &["environments: `PROD` must be a DNS-1123 label"],
    ),
    (
        &["--set", "dns_zone=nodot"],
        2,
        &["dns_zone: `nodot` must be a DNS name such as platform.example.org"],
    ),
    (
        &["--set", "region=mars-1"],
        2,
        &["region: `mars-1` must be an AWS region such as eu-west-1"],
    ),
    (
        &["--set", "zones=us-east-1a"],
        2,
        &["zones: `us-east-1a` must be a zone of the region, such as eu-west-1a"],
    ),
    (
        &["--set", "zones=eu-west-1a,eu-west-1a"],
        2,
        &["zones: `eu-west-1a` is listed twice"],
    ),
    (
        &[
            "--set",
            "zones=eu-west-1a,eu-west-1b,eu-west-1c,eu-west-1d,eu-west-1e,eu-west-1f,eu-west-1g",
        ],
        2,
        &["zones: takes at most 6 items, got 7"],
    ),
    (
        &["--set", "vpc_cidr=10.0.0.1/16"],
        2,
        &["vpc_cidr: `10.0.0.1/16` has host bits set; the network is 10.0.0.0/16"],
    ),
    (
        &["--set", "vpc_cidr=10.0.0.0/8"],
        2,
        &["vpc_cidr: `10.0.0.0/8` must have a prefix between /16 and /"],
    ),
    (
        &["--set", "vpc_cidr=100.64.0.0/16"],
        2,
        &["vpc_cidr: `100.64.0.0/16` must not overlap kops' pod and service ranges"],
    ),
    (
        &["--set", "vpc_cidr=nonsense"],
        2,
        &["vpc_cidr: `nonsense` is not an IPv4 CIDR such as 10.0.0.0/16"],
    ),
    (
        &["--set", "vpc_mode=maybe"],
        2,
        &["vpc_mode: `maybe` is not one of create, existing"],
    ),
    (
        &["--set", "vpc_mode=existing", "--set", "vpc_id=vpc-1"],
        2,
        &["vpc_id: `vpc-1` must be a VPC id such as vpc-0123456789abcdef0"],
    ),
    (
        &["--set", "vpc_id=vpc-0123456789abcdef0"],
        2,
        &["vpc_id: only applies when vpc_mode == \"existing\"; drop it"],
    ),
    (
        &[
            "--set",
            "vpc_mode=existing",
            "--set",
            "vpc_id=vpc-0123456789abcdef0",
            "--set",
            "private_subnet_ids=eu-west-1a=subnet-01234567",
        ],
        2,
        &[
            "private_subnet_ids: needs exactly one entry per zones (eu-west-1a, eu-west-1b, eu-west-1c), got eu-west-1a",
        ],
    ),
    (
        &[
            "--set",
            "vpc_mode=existing",
            "--set",
            "vpc_id=vpc-0123456789abcdef0",
            "--set",
            "zones=eu-west-1a",
            "--set",
            "private_subnet_ids=eu-west-1a=sub-1",
        ],
        2,
        &[
            "private_subnet_ids: eu-west-1a: `sub-1` must be a subnet id such as subnet-0123456789abcdef0",
        ],
    ),
    (
        &["--set", "node_max=0"],
        2,
        &["node_max: `0` is out of range 1..=1000"],
    ),
    (
        &["--set", "node_max=1001"],
        2,
        &["node_max: `1001` is out of range 1..=1000"],
    ),
    (
        &["--set", "node_max=ten"],
        2,
        &["node_max: `ten` is not a whole number"],
    ),
    (
        &["--set", "imds_hop_limit=3"],
        2,
        &["imds_hop_limit: `3` is not one of 1, 2"],
    ),
    (
        &["--set", "admin_cidrs=0.0.0.0/33"],
        2,
        &["admin_cidrs: `0.0.0.0/33` is not an IPv4 CIDR such as 10.0.0.0/16"],
    ),
    (
        &["--set", "zones="],
        2,
        &["zones: needs at least 1 item(s)"],
    ),
    (
        &["--set", "git_url=ftp://x"],
        2,
        &["git_url: `ftp://x` must be an https:// or ssh:// URL"],
    ),
    (
        &["--set", "addons=nonexistent"],
        2,
        &["addons: `nonexistent` is not one of authentik, cert-manager"],
    ),
    (
        &["--set", "addons=reloader,reloader"],
        2,
        &["addons: `reloader` is listed twice"],
    ),
    (
        &["--set", "dns_zone=", "--set", "addons=authentik"],
        2,
        &[
            "addons: authentik needs `dns_zone`, and `dns_zone` is empty: leave authentik out, or answer `dns_zone`",
        ],
    ),
    (
        &["--set", "control_plane_machine_type=big"],
        2,
        &["control_plane_machine_type: `big` must be an EC2 instance type such as m6i.large"],
    ),
    (
        &["--set", "node_machine_type=M6I.large"],
        2,
        &["node_machine_type: `M6I.large` must be an EC2 instance type"],
    ),
    (
        &[
            "--set",
            "cluster_name=abcdefghijabcdefghijabcdefghijabcdefghij.abcdefghijabcdefghijabcdefghij.t.example.com",
        ],
        2,
        &[
            "cluster_name:",
            "is 85 characters long; must be a DNS-1123 subdomain of at most 63 characters",
        ],
    ),
    (
        &["--set", "foo=1"],
        2,
        &["unknown answer key `foo`: the blueprint asks name, environment"],
    ),
    (
        &["--set", "noequals"],
        2,
        &["--set `noequals`: use KEY=VALUE"],
    ),
    (&["--set", "=x"], 2, &["--set `=x`: use KEY=VALUE"]),
    (
        &["--secret", "token"],
        2,
        &["--secret `token`: use KEY=VALUE"],
    ),
    (
        &["--author", "nobody"],
        2,
        &["--author `nobody`: use the form \"Name <email@example.org>\""],
    ),
    (
        &["--blueprint", "nonexistent"],
        2,
        &["unknown blueprint `nonexistent`: use one of default or a path to a directory"],
    ),
];

const NEW_FILES: &[Case] = &[
    (
        &["--values", "missing.yaml"],
        4,
        &["cannot read --values file `missing.yaml`"],
    ),
    (
        &["--values", "bad.yaml"],
        2,
        &["--values `bad.yaml`: not YAML"],
    ),
    (
        &["--values", "list.yaml"],
        2,
        &["--values `list.yaml`: must be a mapping of answer keys to values"],
    ),
    (
        &["--values", "intkey.yaml"],
        2,
        &["--values `intkey.yaml`: key `1` is not an answer key"],
    ),
    (
        &["--values", "unknown.yaml"],
        2,
        &["unknown answer key `nope`"],
    ),
    (
        &["--values", "badregion.yaml"],
        2,
        &["region: `mars` must be an AWS region such as eu-west-1 (from --values)"],
    ),
    (
        &["--values", "badbranch.yaml"],
        2,
        &[
            "git_branch: `feature..x` is not a valid git branch name",
            "(from --values)",
        ],
    ),
];

/// (target of `new`, exit code, fragments)
const NEW_TARGETS: &[(&str, i32, &[&str])] = &[
    (
        "full",
        3,
        &["`full` exists and is not empty; choose a new or empty directory"],
    ),
    (
        "afile",
        3,
        &["`afile` exists and is not a directory; choose a new or empty directory"],
    ),
    (
        "emptylink",
        3,
        &[
            "`emptylink` is a symbolic link (to `empty`); scaffold writes a new repo into a real directory: pass the link's target instead",
        ],
    ),
    (
        "no/such/x",
        2,
        &["`no/such` does not exist; create the parent directory first"],
    ),
    (
        "afile/x",
        2,
        &["`afile/x`: a part of this path is a file, not a directory"],
    ),
];

const EDITS: &[Case] = &[
    (
        &["add-addon", "Bad_Name"],
        2,
        &["NAME: `Bad_Name` is not a DNS-1123 label"],
    ),
    (
        &["add-addon", "velero", "--version", "latest"],
        2,
        &["--version: `latest` is not an exact version such as 1.2.3"],
    ),
    (
        &["add-addon", "velero", "--namespace", "Bad"],
        2,
        &["--namespace: `Bad` is not a DNS-1123 label"],
    ),
    (
        &[
            "add-addon",
            "mychart",
            "--chart",
            "c",
            "--repo",
            "ftp://x",
            "--version",
            "1.0.0",
        ],
        2,
        &["--repo: `ftp://x` is not an https:// or oci:// URL"],
    ),
    (
        &[
            "add-addon",
            "mychart",
            "--chart",
            "Bad/Chart",
            "--repo",
            "https://x.org",
            "--version",
            "1.0.0",
        ],
        2,
        &["--chart: `Bad/Chart` is not a chart name"],
    ),
    (
        &["add-addon", "mychart", "--chart", "c"],
        2,
        &[
            "--chart c needs --repo URL and --version V: add-addon mychart --chart c --repo URL --version V",
        ],
    ),
    (
        &[
            "add-addon",
            "podinfo",
            "--chart",
            "podinfo",
            "--repo",
            "oci://ghcr.io/stefanprodan/charts",
            "--version",
            "6.14.1",
            "--layer",
            "apps",
        ],
        2,
        &["addon name `podinfo`: its files would be written at `apps/prod/podinfo/"],
    ),
    (
        &["add-addon", "nonexistent"],
        2,
        &["unknown addon `nonexistent`; `scaffold list addons` shows the catalog"],
    ),
    (
        &["add-addon", "reloader", "--version", "9.9.9"],
        2,
        &["--version: reloader is already in this repo at"],
    ),
    (
        &["remove-addon", "karpenter"],
        2,
        &["karpenter is part of every repo this blueprint makes; it cannot be removed"],
    ),
    (
        &["remove-addon", "my-chart"],
        2,
        &["my-chart is not in this repo (addons:"],
    ),
    (
        &["remove-addon", "reloadr"],
        2,
        &["reloadr is not in this repo (did you mean `reloader`?) (addons:"],
    ),
    (
        &["add-addon", "velero", "--set", "=1"],
        2,
        &["--set `=1`: add-addon takes Helm values as --helm-set KEY=VALUE"],
    ),
    (
        &["add-addon", "velero", "--set", "a..b=1"],
        2,
        &["--set `a..b=1`: add-addon takes Helm values as --helm-set KEY=VALUE"],
    ),
    (
        &["add-addon", "velero", "--author", "bad"],
        2,
        &["--author `bad`: use the form \"Name <email@example.org>\""],
    ),
    (
        &["add-addon", "velero", "--blueprint", "/nonexistent"],
        2,
        &["blueprint `/nonexistent`: no blueprint.yaml there"],
    ),
    (
        &["add-addon", "velero", "--secret", "token"],
        2,
        &["--secret `token`: use KEY=VALUE"],
    ),
    (
        &["env", "add", "Dev"],
        2,
        &["NAME: `Dev` is not a DNS-1123 label of at most 20 characters"],
    ),
];

fn files_env() -> Env {
    let env = Env::new();
    let write = |name: &str, text: &str| std::fs::write(env.path(name), text).expect("write");
    write("bad.yaml", "a: [\n");
    write("list.yaml", "- a\n");
    write("intkey.yaml", "1: x\n");
    write("unknown.yaml", "nope: 1\n");
    write("badregion.yaml", "region: mars\n");
    write("badbranch.yaml", "git_branch: feature..x\n");
    write("afile", "x");
    std::fs::create_dir(env.path("full")).expect("mkdir");
    write("full/keep.txt", "mine\n");
    std::fs::create_dir(env.path("empty")).expect("mkdir");
    std::os::unix::fs::symlink("empty", env.path("emptylink")).expect("symlink");
    env
}

fn run_new_cases(cases: &[Case]) {
    let env = files_env();
    let before = env.listing();
    for (args, code, fragments) in cases {
        let out = run(env.scaffold().args(["new", "t", "--defaults"]).args(*args));
        assert_one_line(&out, *code, fragments, &format!("{args:?}"));
        assert_eq!(env.listing(), before, "{args:?} wrote something");
    }
}

#[test]
fn bad_answers_to_new_are_refused_before_anything_is_written() {
    run_new_cases(NEW_SET);
}

#[test]
fn bad_answer_files_and_targets_are_refused_before_anything_is_written() {
    run_new_cases(NEW_FILES);
    let env = files_env();
    let before = env.listing();
    for (target, code, fragments) in NEW_TARGETS {
        let out = run(env.scaffold().args(["new", target, "--defaults"]));
        assert_one_line(&out, *code, fragments, target);
        assert_eq!(env.listing(), before, "{target} wrote something");
    }
}

#[test]
fn bad_input_to_add_and_remove_addon_changes_nothing() {
    let env = Env::new();
    let dir = new_repo(&env, "repo");
    for (args, code, fragments) in EDITS {
        let before = snapshot(&env, &dir);
        let out = in_repo(&env, &dir, args);
        assert_one_line(&out, *code, fragments, &format!("{args:?}"));
        assert_same(&before, &snapshot(&env, &dir), &format!("{args:?}"));
    }
    // Outside any scaffold repo.
    let out = in_repo(&env, Path::new("/"), &["add-addon", "velero"]);
    assert_one_line(
        &out,
        2,
        &[
            "not inside a scaffold repo",
            "run this in a repo made by scaffold new",
        ],
        "outside",
    );
}

#[test]
fn the_catalogue_has_at_least_sixty_cases() {
    let count = NEW_SET.len() + NEW_FILES.len() + NEW_TARGETS.len() + EDITS.len() + 1;
    assert!(count >= 60, "{count}");
}

/// Every given answer except the one asked, so a run prompts exactly once.
const ALL_BUT_CONTROL_PLANE: &[&str] = &[
    "name=pty",
    "environments=prod",
    "dns_zone=pty.example.org",
    "cluster_name=prod.pty.example.org",
    "region=eu-west-1",
    "aws_account_id=",
    "zones=eu-west-1a",
    "vpc_mode=create",
    "vpc_cidr=10.0.0.0/16",
    "kubernetes_version=1.34.1",
    "kops_version=1.34.0",
    "flux_version=2.9.4",
    "aws_provider_version=6.69.1",
    "kubernetes_provider_version=3.2.1",
    "control_plane_machine_type=m6i.large",
    "node_machine_type=m6i.large",
    "node_max=10",
    "admin_cidrs=10.0.0.0/16",
    "imds_hop_limit=1",
    "git_url=https://git.example.org/pty.git",
    "git_branch=main",
    "scaffold_home=",
    "addons=reloader",
];

#[test]
fn interactive_runs_check_given_answers_before_the_first_prompt() {
    let env = Env::new();
    let mut cmd = env.scaffold();
    cmd.args(["new", "pty", "--set", "git_branch=-bad"])
        .env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn");
    let before = p
        .exp_string("git_branch: `-bad` is not a valid git branch name")
        .expect("refused up front");
    assert!(
        !before.contains("Platform name"),
        "prompted first: {before}"
    );
    p.exp_eof().expect("exit");
    assert!(!env.path("pty").exists());
}

#[test]
fn an_answer_breaking_a_cross_field_rule_is_asked_again() {
    let env = Env::new();
    let mut cmd = env.scaffold();
    cmd.args(["new", "pty"]).env("TERM", "xterm");
    for pair in ALL_BUT_CONTROL_PLANE {
        cmd.args(["--set", pair]);
    }
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("spawn");
    p.exp_string("Control-plane nodes").expect("select");
    p.exp_string("3").expect("choices drawn");
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send("\x1b[B").expect("down");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    p.exp_string("must not exceed the number of zones (1); choose again")
        .expect("refused with the reason");
    p.exp_string("Control-plane nodes").expect("asked again");
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The select is offered again on the refused choice: move back up to 1.
    p.send("\x1b[A").expect("up");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    crate::support::accept_review(&mut p);
    p.exp_string("Created pty").expect("done");
    p.exp_eof().expect("exit");
    assert_eq!(
        crate::support::answer(&env.path("pty"), "control_plane_count"),
        1
    );
}

/// A blueprint extending the default one with a secret question its files use.
fn secret_blueprint(env: &Env) -> std::path::PathBuf {
    let dir = env.path("bp");
    let out = run(env
        .scaffold()
        .args(["blueprint", "init", "bp", "--extends", "default"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let manifest = dir.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let text = text.replace(
        "questions:\n",
        "questions:\n  - key: webhook_token\n    prompt: Webhook token\n    type: string\n    secret: true\n    regex: '^[a-z0-9]{8,}$'\n    error: \"must be at least 8 lowercase letters or digits\"\n",
    );
    std::fs::write(&manifest, text).expect("write");
    std::fs::write(
        dir.join("files/docs/TOKEN.md.tera"),
        "token length [[ webhook_token | length ]]\n",
    )
    .expect("write");
    dir
}

#[test]
fn secrets_come_from_a_flag_or_the_environment_and_are_never_recorded_or_echoed() {
    let env = Env::new();
    let blueprint = secret_blueprint(&env);
    let bp = blueprint.display().to_string();
    const TOKEN: &str = "s3cr3ttokenvalue";
    // A bad secret is refused without echoing it.
    let out = run(env.scaffold().args([
        "new",
        "r",
        "--defaults",
        "--blueprint",
        &bp,
        "--secret",
        "webhook_token=BAD-secret",
    ]));
    assert_one_line(
        &out,
        2,
        &["webhook_token: `(hidden)` must be at least 8"],
        "bad secret",
    );
    assert!(!out.stderr.contains("BAD-secret"));
    // A secret flag for an ordinary answer is refused: it would be recorded.
    let out = run(env.scaffold().args([
        "new",
        "r",
        "--defaults",
        "--blueprint",
        &bp,
        "--secret",
        "name=x",
    ]));
    assert_one_line(
        &out,
        2,
        &["--secret `name`: not a secret question", "use --set"],
        "not secret",
    );

    let out = run(env
        .scaffold()
        .args(["new", "r", "--defaults", "--json", "--blueprint", &bp])
        .env("SCAFFOLD_SECRET_WEBHOOK_TOKEN", TOKEN));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("r");
    let record = std::fs::read_to_string(repo.join(".scaffold/answers.yaml")).expect("record");
    assert!(
        !record.contains(TOKEN) && !record.contains("webhook_token"),
        "{record}"
    );
    assert!(!out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN));

    // add-addon needs the secret again, says how to give it, and changes nothing without it.
    let before = crate::safety_git::snapshot(&env, &repo);
    let out =
        run(env
            .scaffold()
            .current_dir(&repo)
            .args(["add-addon", "velero", "--blueprint", &bp]));
    assert_one_line(
        &out,
        2,
        &[
            "missing secret answer `webhook_token`",
            "set SCAFFOLD_SECRET_WEBHOOK_TOKEN or pass --secret webhook_token=…",
        ],
        "missing",
    );
    assert_same(
        &before,
        &crate::safety_git::snapshot(&env, &repo),
        "missing secret",
    );
    for (flag, via_env) in [(false, true), (true, false)] {
        let (name, args): (&str, Vec<String>) = if flag {
            (
                "remove-addon",
                vec!["--secret".into(), format!("webhook_token={TOKEN}")],
            )
        } else {
            ("add-addon", Vec::new())
        };
        let mut cmd = env.scaffold();
        cmd.current_dir(&repo)
            .args([name, "velero", "--blueprint", &bp])
            .args(&args);
        if via_env {
            cmd.env("SCAFFOLD_SECRET_WEBHOOK_TOKEN", TOKEN);
        }
        let out = run(&mut cmd);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert!(
            !out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN),
            "{name}"
        );
        let record = std::fs::read_to_string(repo.join(".scaffold/answers.yaml")).expect("record");
        assert!(!record.contains(TOKEN), "{name}: {record}");
    }
}

#[test]
fn update_takes_secrets_from_a_flag_or_the_environment_and_never_records_them() {
    let env = Env::new();
    let blueprint = secret_blueprint(&env);
    let bp = blueprint.display().to_string();
    const TOKEN: &str = "s3cr3ttokenvalue";
    let out = run(env
        .scaffold()
        .args(["new", "r", "--defaults", "--blueprint", &bp])
        .env("SCAFFOLD_SECRET_WEBHOOK_TOKEN", TOKEN));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let repo = env.path("r");
    // Without the secret, update says how to give it and changes nothing.
    let before = crate::safety_git::snapshot(&env, &repo);
    let out = run(env.scaffold().current_dir(&repo).args([
        "update",
        "--blueprint",
        &bp,
        "--set",
        "node_max=12",
    ]));
    assert_one_line(
        &out,
        2,
        &[
            "missing secret answer `webhook_token`",
            "--secret webhook_token=",
        ],
        "update without the secret",
    );
    assert_same(
        &before,
        &crate::safety_git::snapshot(&env, &repo),
        "update without the secret",
    );
    let out = run(env.scaffold().current_dir(&repo).args([
        "update",
        "--blueprint",
        &bp,
        "--set",
        "node_max=12",
        "--secret",
        &format!("webhook_token={TOKEN}"),
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains(TOKEN) && !out.stderr.contains(TOKEN));
    let record = std::fs::read_to_string(repo.join(".scaffold/answers.yaml")).expect("record");
    assert!(record.contains("node_max: 12"), "{record}");
    assert!(
        !record.contains(TOKEN) && !record.contains("webhook_token"),
        "{record}"
    );
}

#[test]
fn blueprint_lint_rejects_a_duplicate_question_key() {
    let env = Env::new();
    let dir = secret_blueprint(&env);
    let manifest = dir.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    let twice = text.replace(
        "questions:\n",
        "questions:\n  - key: team\n    prompt: Team again\n    type: string\n    default: x\n",
    );
    std::fs::write(&manifest, twice).expect("write");
    let out = run(env.scaffold().args(["blueprint", "lint", "bp"]));
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("error: question `team` is asked twice; rename or remove one"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_hand_edited_answers_record_is_detected_and_nothing_changes() {
    let env = Env::new();
    let dir = new_repo(&env, "repo");
    let record = dir.join(".scaffold/answers.yaml");
    let text = std::fs::read_to_string(&record).expect("read");
    assert!(!text.contains("\nrendering: "), "{text}");
    assert!(dir.join(".scaffold/rendering").is_file());
    std::fs::write(&record, text.replace("node_max: 10", "node_max: 12")).expect("write");
    env.git(&dir, &["commit", "-qam", "hand edit"]);
    let before = snapshot(&env, &dir);
    for args in [&["add-addon", "velero"][..], &["remove-addon", "reloader"]] {
        let out = in_repo(&env, &dir, args);
        assert_one_line(
            &out,
            3,
            &[
                ".scaffold/answers.yaml no longer renders the files it recorded when committed: it was edited by hand",
                "git checkout <commit> -- .scaffold/answers.yaml",
            ],
            &format!("{args:?}"),
        );
        assert_same(&before, &snapshot(&env, &dir), &format!("{args:?}"));
    }
    // Put back, it works again, and the new record carries the new rendering's digest.
    env.git(
        &dir,
        &["checkout", "HEAD~1", "--", ".scaffold/answers.yaml"],
    );
    env.git(&dir, &["commit", "-qam", "restore"]);
    let out = in_repo(&env, &dir, &["add-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = in_repo(&env, &dir, &["remove-addon", "velero"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn an_unknown_region_and_a_deprecated_kubernetes_are_warned_about_and_kept() {
    let env = Env::new();
    for (set, warning) in [
        (
            "region=eu-west-7",
            "warning: region: `eu-west-7` is not an AWS region this blueprint knows",
        ),
        (
            "kubernetes_version=1.30.2",
            "warning: kops_version: `1.34.0` deprecates Kubernetes 1.30.2",
        ),
    ] {
        let out = run(env
            .scaffold()
            .args(["new", "t", "--defaults", "--dry-run", "--set", set]));
        assert_eq!(out.code, 0, "{set}: {}", out.stderr);
        assert!(out.stderr.contains(warning), "{set}: {}", out.stderr);
    }
    // A known region and a supported Kubernetes say nothing.
    let out = run(env.scaffold().args([
        "new",
        "t",
        "--defaults",
        "--dry-run",
        "--set",
        "region=ap-southeast-5",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("warning:"), "{}", out.stderr);
}

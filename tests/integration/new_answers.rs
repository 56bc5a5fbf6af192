//! Answers: --defaults, --values, --set and their precedence; the missing-answer error;
//! one bad value per validated field, each refused with one line naming the field and
//! nothing written.
use crate::support::{Env, answer, run};

#[test]
fn set_beats_values_beats_defaults() {
    let env = Env::new();
    std::fs::write(
        env.path("answers.yaml"),
        "region: us-east-1\nenvironments: staging\nzones: [us-east-1a, us-east-1b]\n",
    )
    .expect("values");
    let out = run(env.scaffold().args([
        "new",
        "acme",
        "--values",
        "answers.yaml",
        "--set",
        "environments=dev",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("acme");
    assert_eq!(answer(&dir, "region"), "us-east-1"); // from --values
    assert_eq!(answer(&dir, "environment"), "dev"); // --set wins over --values
    assert_eq!(answer(&dir, "kubernetes_version"), "1.34.1"); // default
    assert_eq!(answer(&dir, "name"), "acme"); // default from the directory name
    assert_eq!(answer(&dir, "cluster_name"), "dev.acme.example.com"); // default over earlier answers
    assert_eq!(answer(&dir, "zones").as_sequence().map(Vec::len), Some(2));
}

#[test]
fn defaults_follow_earlier_answers() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "gossip",
        "--defaults",
        "--set",
        "dns_zone=",
        "--set",
        "region=us-west-2",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("gossip");
    assert_eq!(answer(&dir, "cluster_name"), "gossip.k8s.local");
    let zones: Vec<String> = serde_norway::from_value(answer(&dir, "zones")).expect("zones");
    assert_eq!(zones, ["us-west-2a", "us-west-2b", "us-west-2c"]);
}

#[test]
fn missing_answer_without_terminal_names_the_key() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "x", "--set", "vpc_mode=existing"]));
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim(),
        "error: missing answer `vpc_id` (Existing VPC id): pass --set vpc_id=… or put `vpc_id:` in a --values file"
    );
    assert!(env.listing().is_empty(), "{:?}", env.listing());
}

#[test]
fn existing_vpc_answers_are_accepted_and_recorded() {
    let env = Env::new();
    std::fs::write(
        env.path("vpc.yaml"),
        "vpc_mode: existing\nvpc_id: vpc-0123456789abcdef0\nzones: [eu-west-1a, eu-west-1b]\n\
         private_subnet_ids: {eu-west-1a: subnet-0a000000000000001, eu-west-1b: subnet-0a000000000000002}\n\
         utility_subnet_ids: {eu-west-1a: subnet-0b000000000000001, eu-west-1b: subnet-0b000000000000002}\n\
         nat_gateway_ids: {eu-west-1a: nat-0c000000000000001, eu-west-1b: nat-0c000000000000002}\n\
         admin_cidrs: [10.20.0.0/16]\n",
    )
    .expect("values");
    let out = run(env
        .scaffold()
        .args(["new", "shared", "--values", "vpc.yaml"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("shared");
    assert_eq!(answer(&dir, "vpc_id"), "vpc-0123456789abcdef0");
    assert!(
        answer(&dir, "vpc_cidr").is_null(),
        "vpc_cidr is not asked in existing mode"
    );
}

#[test]
fn answer_for_a_question_that_does_not_apply_is_refused() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "x",
        "--defaults",
        "--set",
        "vpc_id=vpc-0123456789abcdef0",
    ]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: vpc_id: only applies when vpc_mode == \"existing\""),
        "{}",
        out.stderr
    );
    assert!(env.listing().is_empty());
}

#[test]
fn unknown_keys_are_refused() {
    let env = Env::new();
    let out = run(env
        .scaffold()
        .args(["new", "x", "--defaults", "--set", "regoin=eu-west-1"]));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with("error: unknown answer key `regoin`"),
        "{}",
        out.stderr
    );
    assert!(env.listing().is_empty());
}

/// (extra --set arguments, expected start of the one-line error)
const BAD_VALUES: &[(&[&str], &str)] = &[
    (
        &["name=Acme_Platform"],
        "error: name: `Acme_Platform` must be a DNS-1123 label",
    ),
    (
        &["name=a-very-long-platform-name-that-goes-on-and-on"],
        "error: name: `a-very-long-platform-name-that-goes-on-and-on` must be a DNS-1123 label",
    ),
    (
        &["environments=Prod"],
        "error: environments: `Prod` must be a DNS-1123 label",
    ),
    (
        &["dns_zone=not a zone"],
        "error: dns_zone: `not a zone` must be a DNS name",
    ),
    (
        &["cluster_name=single"],
        "error: cluster_name: `single` must be a DNS-1123 subdomain",
    ),
    (
        &["region=europe"],
        "error: region: `europe` must be an AWS region",
    ),
    (
        &["zones=eu-west-1a,us-east-1b"],
        "error: zones: `us-east-1b` must be a zone of the region",
    ),
    (
        &["zones=eu-west-1a,eu-west-1a"],
        "error: zones: `eu-west-1a` is listed twice",
    ),
    (
        &["control_plane_count=2"],
        "error: control_plane_count: `2` is not one of 1, 3",
    ),
    (
        &["control_plane_count=3", "zones=eu-west-1a,eu-west-1b"],
        "error: control_plane_count: `3` must not exceed the number of zones (2)",
    ),
    (
        &["vpc_mode=shared"],
        "error: vpc_mode: `shared` is not one of create, existing",
    ),
    (
        &["vpc_cidr=10.0.0.0/33"],
        "error: vpc_cidr: `10.0.0.0/33` is not an IPv4 CIDR",
    ),
    (
        &["vpc_cidr=10.0.0.1/16"],
        "error: vpc_cidr: `10.0.0.1/16` has host bits set",
    ),
    (
        &["vpc_cidr=100.64.0.0/16"],
        "error: vpc_cidr: `100.64.0.0/16` must not overlap kops' pod and service ranges",
    ),
    (
        &["kubernetes_version=latest"],
        "error: kubernetes_version: `latest` must be an exact version",
    ),
    (
        &["kops_version=1.34"],
        "error: kops_version: `1.34` must be an exact version",
    ),
    (
        &["node_machine_type=large"],
        "error: node_machine_type: `large` must be an EC2 instance type",
    ),
    (
        &["node_max=0"],
        "error: node_max: `0` is out of range 1..=1000",
    ),
    (
        &["node_max=ten"],
        "error: node_max: `ten` is not a whole number",
    ),
    (
        &["admin_cidrs=10.0.0.0/8,bogus"],
        "error: admin_cidrs: `bogus` is not an IPv4 CIDR",
    ),
    (
        &["imds_hop_limit=3"],
        "error: imds_hop_limit: `3` is not one of 1, 2",
    ),
    (
        &["git_url=github.com/acme/platform"],
        "error: git_url: `github.com/acme/platform` must be an https:// or ssh:// URL",
    ),
    (
        &["git_branch=bad branch"],
        "error: git_branch: `bad branch` must be a git branch name",
    ),
    (
        &["addons=external-dsn"],
        "error: addons: `external-dsn` is not one of",
    ),
    (
        &["dns_zone=", "addons=external-dns"],
        "error: addons: external-dns needs `dns_zone`",
    ),
    (
        &["vpc_mode=existing", "vpc_id=vpc-123"],
        "error: vpc_id: `vpc-123` must be a VPC id",
    ),
    (
        &[
            "vpc_mode=existing",
            "vpc_id=vpc-0123456789abcdef0",
            "private_subnet_ids=eu-west-1a=subnet-0123456789abcdef0",
        ],
        "error: private_subnet_ids: needs exactly one entry per zones (eu-west-1a, eu-west-1b, eu-west-1c)",
    ),
    (
        &[
            "vpc_mode=existing",
            "vpc_id=vpc-0123456789abcdef0",
            "zones=eu-west-1a",
            "private_subnet_ids=eu-west-1a=sub-1",
        ],
        "error: private_subnet_ids: eu-west-1a: `sub-1` must be a subnet id",
    ),
    (
        &[
            "vpc_mode=existing",
            "vpc_id=vpc-0123456789abcdef0",
            "zones=eu-west-1a",
            "private_subnet_ids=eu-west-1a=subnet-0123456789abcdef0",
            "utility_subnet_ids=eu-west-1a=subnet-0123456789abcdef1",
            "nat_gateway_ids=eu-west-1a=igw-0123456789abcdef0",
        ],
        "error: nat_gateway_ids: eu-west-1a: `igw-0123456789abcdef0` must be a NAT gateway id",
    ),
];

#[test]
fn every_validated_field_refuses_a_bad_value() {
    for (sets, expected) in BAD_VALUES {
        let env = Env::new();
        let mut cmd = env.scaffold();
        cmd.args(["new", "x", "--defaults"]);
        for set in *sets {
            cmd.args(["--set", set]);
        }
        let out = run(&mut cmd);
        assert_eq!(out.code, 2, "{sets:?}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(expected),
            "{sets:?}\n  got:  {}\n  want: {expected}",
            out.stderr.trim()
        );
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{sets:?}: one line: {}",
            out.stderr
        );
        assert!(
            env.listing().is_empty(),
            "{sets:?} wrote {:?}",
            env.listing()
        );
    }
}

#[test]
fn secret_answers_are_used_but_never_recorded() {
    let env = Env::new();
    let blueprint = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/secret-blueprint"
    );
    let out = run(env.scaffold().args([
        "new",
        "svc",
        "--blueprint",
        blueprint,
        "--set",
        "token=abcdefgh12",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = env.path("svc");
    let config = std::fs::read_to_string(dir.join("config.txt")).expect("config");
    assert_eq!(config, "name = svc\ntoken length = 10\n");
    let record = std::fs::read_to_string(dir.join(".scaffold/answers.yaml")).expect("record");
    assert!(
        !record.contains("abcdefgh12") && !record.contains("token"),
        "{record}"
    );
    assert!(
        record.contains("name: secret-test") && record.contains("version: 1.2.3"),
        "{record}"
    );
}

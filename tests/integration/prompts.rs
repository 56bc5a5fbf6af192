//! Prompts through a real pseudo-terminal: the gossip choice for the DNS zone, the
//! multi-select cursor without colour, hidden secrets, Ctrl-C, and coloured diffs only on
//! a terminal that wants colour. Answers not under test are given with --set, so each
//! test meets only the prompts it is about.
use rexpect::session::{PtySession, spawn_command};

use crate::support::{Env, answer, run};

/// Every answer of the default blueprint except `skip`, as --set arguments.
fn sets_except(skip: &[&str]) -> Vec<String> {
    [
        ("name", "pty"),
        ("environments", "prod"),
        ("dns_zone", "platform.example.org"),
        ("cluster_name", "prod.platform.example.org"),
        ("region", "eu-west-1"),
        ("aws_account_id", ""),
        ("zones", "eu-west-1a,eu-west-1b,eu-west-1c"),
        ("control_plane_count", "1"),
        ("vpc_mode", "create"),
        ("vpc_cidr", "10.0.0.0/16"),
        ("kubernetes_version", "1.34.1"),
        ("kops_version", "1.34.0"),
        ("flux_version", "2.9.4"),
        ("aws_provider_version", "6.69.1"),
        ("kubernetes_provider_version", "3.2.1"),
        ("control_plane_machine_type", "m6i.large"),
        ("node_machine_type", "m6i.large"),
        ("node_max", "10"),
        ("admin_cidrs", "10.0.0.0/16"),
        ("imds_hop_limit", "1"),
        ("git_url", "https://git.example.org/platform/pty.git"),
        ("git_branch", "main"),
        ("scaffold_home", ""),
        ("addons", "reloader"),
    ]
    .iter()
    .filter(|(key, _)| !skip.contains(key))
    .flat_map(|(key, value)| ["--set".to_string(), format!("{key}={value}")])
    .collect()
}

fn spawn(env: &Env, args: &[String], vars: &[(&str, &str)]) -> PtySession {
    let mut cmd = env.scaffold();
    cmd.args(args).env("TERM", "xterm").env_remove("NO_COLOR");
    for (key, value) in vars {
        cmd.env(key, value);
    }
    spawn_command(cmd, Some(30_000)).expect("spawn")
}

fn args(first: &[&str], rest: Vec<String>) -> Vec<String> {
    first.iter().map(|s| s.to_string()).chain(rest).collect()
}

/// Selects switch the terminal to raw mode only once drawn, and that switch drops input
/// already queued; wait a moment before pressing keys.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(300));
}

#[test]
fn none_at_the_dns_zone_prompt_makes_a_gossip_cluster() {
    let env = Env::new();
    let rest = sets_except(&["dns_zone", "cluster_name", "addons"]);
    let mut p = spawn(
        &env,
        &args(&["new", "gossip", "--set", "addons="], rest),
        &[],
    );
    // Help and default are shown; the empty-answer word is explained.
    p.exp_string("For a gossip cluster").expect("help shown");
    p.exp_string("Type `none` for an empty answer.")
        .expect("none explained");
    p.exp_string("(pty.example.com)").expect("default shown");
    // An invalid zone is refused with the rule and asked again.
    p.send_line("Not A Zone").expect("send");
    p.exp_string("must be a DNS name").expect("rule shown");
    p.send_line("none").expect("send");
    p.exp_string("(pty.k8s.local)")
        .expect("gossip cluster name offered");
    p.send_line("").expect("accept default");
    crate::support::accept_review(&mut p);
    p.exp_string("Created gossip").expect("done");
    p.exp_eof().expect("exit");

    let dir = env.path("gossip");
    assert_eq!(answer(&dir, "dns_zone"), "");
    assert_eq!(answer(&dir, "cluster_name"), "pty.k8s.local");
}

/// Without colour the multi-select still shows where the cursor is (`>`) and what is
/// checked (`[x]`), and no colour codes are drawn.
fn multiselect_without_colour(vars: &[(&str, &str)]) {
    let env = Env::new();
    let rest = sets_except(&["addons"]);
    let mut p = spawn(&env, &args(&["new", "plain"], rest), vars);
    let drawn = p.exp_string("reloader").expect("multiselect drawn");
    let drawn = drawn + &p.exp_string("velero").expect("all choices drawn");
    assert!(
        drawn.contains("> [ ] authentik"),
        "no textual cursor: {drawn:?}"
    );
    assert!(
        !regex::Regex::new("\x1b\\[[0-9;]*m")
            .expect("regex")
            .is_match(&drawn),
        "colour codes drawn: {drawn:?}"
    );
    settle();
    p.send(" ").expect("check authentik");
    p.flush().expect("flush");
    p.exp_string("> [x] authentik")
        .expect("cursor on the checked item");
    // Move to cert-manager (checked by default) and uncheck it; enter accepts.
    p.send("\x1b[B").expect("down");
    p.flush().expect("flush");
    p.exp_string("> [x] cert-manager")
        .expect("cursor on a checked item");
    p.send(" ").expect("toggle");
    p.flush().expect("flush");
    p.exp_string("> [ ] cert-manager").expect("unchecked");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    crate::support::accept_review(&mut p);
    p.exp_string("Created plain").expect("done");
    p.exp_eof().expect("exit");
    let chosen: Vec<String> =
        serde_norway::from_value(answer(&env.path("plain"), "addons")).expect("list");
    assert!(
        chosen.contains(&"authentik".to_string()) && !chosen.contains(&"cert-manager".to_string()),
        "{chosen:?}"
    );
}

#[test]
fn multiselect_has_a_textual_cursor_under_no_color() {
    multiselect_without_colour(&[("NO_COLOR", "1")]);
}

#[test]
fn multiselect_has_a_textual_cursor_on_a_terminal_without_colour() {
    multiselect_without_colour(&[("TERM", "dumb")]);
}

#[test]
fn secret_answers_are_not_echoed() {
    let env = Env::new();
    let blueprint = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/secret-blueprint"
    );
    let token = "Sup3rSecretT0ken";
    let mut p = spawn(
        &env,
        &args(
            &["new", "sec", "--blueprint", blueprint, "--set", "name=sec"],
            vec![],
        ),
        &[],
    );
    let mut seen = p.exp_string("API token (hidden)").expect("prompt");
    p.send_line("short").expect("send");
    seen += &p.exp_string("must be at least 8").expect("rule shown");
    seen += &p.exp_string("API token (hidden)").expect("asked again");
    p.send_line(token).expect("send");
    seen += &crate::support::accept_review(&mut p);
    seen += &p.exp_string("Created sec").expect("done");
    seen += &p.exp_eof().expect("exit");
    assert!(!seen.contains(token), "the secret was echoed: {seen:?}");
    assert!(
        !seen.contains("short"),
        "the bad secret was echoed: {seen:?}"
    );
}

#[test]
fn ctrl_c_at_a_prompt_leaves_nothing_and_says_so() {
    let env = Env::new();
    let mut p = spawn(&env, &["new".to_string(), "stop".to_string()], &[]);
    p.exp_string("Names the repo").expect("help shown");
    p.exp_string("(stop)").expect("default shown");
    settle();
    p.send_control('c').expect("ctrl-c");
    p.exp_string("interrupted: no answers kept, nothing was written")
        .expect("said so");
    p.exp_eof().expect("exit");
    let status = format!("{:?}", p.process().wait().expect("status"));
    assert!(status.contains("130"), "{status}");
    assert!(env.listing().is_empty(), "{:?}", env.listing());
}

#[test]
fn dry_run_diffs_are_coloured_on_a_terminal_only() {
    let env = Env::new();
    let made = run(env.scaffold().args(["new", "d", "--defaults"]));
    assert_eq!(made.code, 0, "{}", made.stderr);
    let repo = env.path("d").display().to_string();
    let dry = |vars: &[(&str, &str)]| {
        let mut p = spawn(
            &env,
            &args(&["add-addon", "velero", "--dry-run", "-C", &repo], vec![]),
            vars,
        );
        p.exp_eof().expect("exit")
    };
    let coloured = dry(&[]);
    assert!(
        coloured.contains("\x1b[32m+"),
        "no colour on a terminal: {coloured:?}"
    );
    let plain = dry(&[("NO_COLOR", "1")]);
    assert!(
        plain.contains("+++ b/envs/prod/1-prerequisites/addon-velero.tf"),
        "{plain}"
    );
    assert!(
        !plain.contains("\x1b[3"),
        "colour under NO_COLOR: {plain:?}"
    );
    let piped = run(env
        .scaffold()
        .args(["add-addon", "velero", "--dry-run", "-C", &repo])
        .env("TERM", "xterm"));
    assert!(
        piped
            .stdout
            .contains("+++ b/envs/prod/1-prerequisites/addon-velero.tf")
    );
    assert!(!piped.stdout.contains('\x1b'), "colour in a pipe");
}

/// Issue 29: an addon that needs a DNS zone, chosen at the prompt of a gossip cluster, is
/// refused there with the reason and the addons question asked again; nothing is lost.
#[test]
fn an_addon_needing_a_dns_zone_is_refused_at_the_prompt_of_a_gossip_cluster() {
    let env = Env::new();
    let rest = sets_except(&["addons"])
        .into_iter()
        .map(|a| match a.as_str() {
            "dns_zone=platform.example.org" => "dns_zone=".to_string(),
            "cluster_name=prod.platform.example.org" => "cluster_name=pty.k8s.local".to_string(),
            _ => a,
        })
        .collect();
    let mut p = spawn(&env, &args(&["new", "gdns"], rest), &[("NO_COLOR", "1")]);
    p.exp_string("velero").expect("multiselect drawn");
    settle();
    // The cursor starts on authentik, which needs the DNS zone.
    p.send(" ").expect("check authentik");
    p.flush().expect("flush");
    p.exp_string("[x] authentik").expect("checked");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    p.exp_string("authentik needs `dns_zone`, and `dns_zone` is empty")
        .expect("refused at the prompt");
    p.exp_string("> [x] authentik")
        .expect("asked again, the choice kept");
    p.exp_string("velero").expect("all choices drawn");
    settle();
    p.send(" ").expect("uncheck authentik");
    p.flush().expect("flush");
    p.exp_string("> [ ] authentik").expect("unchecked");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    crate::support::accept_review(&mut p);
    p.exp_string("Created gdns").expect("done");
    p.exp_eof().expect("exit");
    let chosen: Vec<String> =
        serde_norway::from_value(answer(&env.path("gdns"), "addons")).expect("list");
    assert!(!chosen.contains(&"authentik".to_string()), "{chosen:?}");
}

#[test]
fn an_addon_needing_a_dns_zone_given_with_set_is_refused_before_anything_is_written() {
    let env = Env::new();
    let out = run(env.scaffold().args([
        "new",
        "g",
        "--defaults",
        "--set",
        "name=platform",
        "--set",
        "dns_zone=",
        "--set",
        "cluster_name=platform.k8s.local",
        "--set",
        "addons=istio",
    ]));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("istio needs `dns_zone`, and `dns_zone` is empty: leave istio out"),
        "{}",
        out.stderr
    );
    assert!(!env.path("g").exists());
}

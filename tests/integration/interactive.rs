//! A full interactive `scaffold new` through a real pseudo-terminal: every prompt is
//! answered (some by accepting the default, some typed, one invalid answer re-prompted).
use rexpect::session::spawn_command;

use crate::support::{Env, answer};

#[test]
fn every_prompt_is_answered_through_a_pty() {
    let env = Env::new();
    let mut cmd = env.scaffold();
    cmd.args(["new", "pty-platform"]).env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(30_000)).expect("spawn");
    let enter = |p: &mut rexpect::session::PtySession, prompt: &str, text: &str| {
        p.exp_string(prompt)
            .unwrap_or_else(|e| panic!("prompt {prompt:?}: {e}"));
        p.send_line(text).expect("send");
    };
    enter(&mut p, "Platform name", "");
    enter(&mut p, "Environment", "staging");
    enter(&mut p, "Route53 DNS zone", "platform.example.org");
    enter(&mut p, "Cluster name", "");
    // An invalid region is refused and asked again.
    enter(&mut p, "AWS region", "mars-1");
    p.exp_string("must be an AWS region")
        .expect("validation message");
    p.send_line("us-east-2").expect("send");
    enter(
        &mut p,
        "Availability zones",
        "us-east-2a,us-east-2b,us-east-2c",
    );
    // Selects: enter accepts the highlighted default; arrow down picks the next choice.
    p.exp_string("Control-plane nodes").expect("select");
    p.exp_string("3").expect("choices drawn");
    settle();
    p.send("\x1b[B").expect("down");
    p.flush().expect("flush");
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    p.exp_string("existing").expect("select drawn");
    settle();
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    enter(&mut p, "VPC CIDR", "10.40.0.0/16");
    enter(&mut p, "Kubernetes version", "");
    enter(&mut p, "kops version", "");
    enter(&mut p, "Control-plane instance type", "");
    enter(&mut p, "Node instance type", "m7i.xlarge");
    enter(&mut p, "Most nodes Karpenter may run", "25");
    enter(
        &mut p,
        "CIDRs allowed to reach the API",
        "10.40.0.0/16,203.0.113.0/24",
    );
    // A public range cannot reach the internal API: warned at once, and kept.
    p.exp_string("warning: admin_cidrs")
        .expect("warning at the prompt");
    p.exp_string("Instance metadata hop limit").expect("select");
    p.exp_string("2").expect("choices drawn");
    settle();
    p.send("\r").expect("enter");
    p.flush().expect("flush");
    enter(
        &mut p,
        "Git URL Flux syncs from",
        "https://git.example.org/platform/pty.git",
    );
    enter(&mut p, "Git branch Flux syncs", "");
    p.exp_string("Addons").expect("multiselect");
    p.exp_string("reloader").expect("choices drawn");
    settle();
    p.send("\r").expect("accept defaults");
    p.flush().expect("flush");
    p.exp_string("Created pty-platform").expect("done");
    p.exp_eof().expect("exit");

    let dir = env.path("pty-platform");
    assert_eq!(answer(&dir, "name"), "pty-platform");
    assert_eq!(answer(&dir, "environment"), "staging");
    assert_eq!(answer(&dir, "cluster_name"), "staging.platform.example.org");
    assert_eq!(answer(&dir, "region"), "us-east-2");
    assert_eq!(answer(&dir, "control_plane_count"), 3);
    assert_eq!(answer(&dir, "vpc_mode"), "create");
    assert_eq!(answer(&dir, "vpc_cidr"), "10.40.0.0/16");
    assert_eq!(answer(&dir, "node_machine_type"), "m7i.xlarge");
    assert_eq!(answer(&dir, "node_max"), 25);
    assert_eq!(answer(&dir, "imds_hop_limit"), 1);
    assert_eq!(
        answer(&dir, "git_url"),
        "https://git.example.org/platform/pty.git"
    );
    let cidrs: Vec<String> = serde_yaml::from_value(answer(&dir, "admin_cidrs")).expect("list");
    assert_eq!(cidrs, ["10.40.0.0/16", "203.0.113.0/24"]);
}

/// Selects switch the terminal to raw mode only once drawn, and that switch drops input
/// already queued; wait a moment before pressing keys.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(300));
}

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
    enter(&mut p, "Environments", "staging");
    // The shared answers first, then the environment's own.
    enter(
        &mut p,
        "Git URL Flux syncs from",
        "https://git.example.org/platform/pty.git",
    );
    enter(&mut p, "Git branch Flux syncs", "");
    // Empty: no scaffold-update workflow.
    enter(&mut p, "scaffold's repository", "");
    enter(&mut p, "Route53 DNS zone", "platform.example.org");
    enter(&mut p, "Cluster name", "");
    // An invalid region is refused and asked again.
    enter(&mut p, "AWS region", "mars-1");
    p.exp_string("must be an AWS region")
        .expect("validation message");
    p.send_line("us-east-2").expect("send");
    // Optional: empty leaves the account unchecked.
    enter(&mut p, "AWS account id", "");
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
    enter(&mut p, "Flux version", "");
    enter(&mut p, "Terraform AWS provider version", "");
    enter(&mut p, "Terraform Kubernetes provider version", "");
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
    p.exp_string("Addons").expect("multiselect");
    p.exp_string("reloader").expect("choices drawn");
    settle();
    p.send("\r").expect("accept defaults");
    p.flush().expect("flush");
    // The review: every answer once, then one question before anything is written.
    p.exp_string("files in pty-platform:").expect("review");
    p.exp_string("  region: us-east-2")
        .expect("answers reviewed");
    p.exp_string("  node_max: 25").expect("answers reviewed");
    p.exp_string("Write this platform repo?").expect("confirm");
    settle();
    p.send("y").expect("yes");
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
    let cidrs: Vec<String> = serde_norway::from_value(answer(&dir, "admin_cidrs")).expect("list");
    assert_eq!(cidrs, ["10.40.0.0/16", "203.0.113.0/24"]);
}

/// Selects switch the terminal to raw mode only once drawn, and that switch drops input
/// already queued; wait a moment before pressing keys.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(300));
}

/// A tiny blueprint: a name and a secret token with a default, written into one file.
fn token_blueprint(env: &Env) -> std::path::PathBuf {
    let dir = env.path("token-bp");
    std::fs::create_dir_all(dir.join("files")).expect("mkdir");
    std::fs::write(
        dir.join("blueprint.yaml"),
        "name: token\nversion: 1.0.0\nquestions:\n  - key: name\n    prompt: Name\n    help: The repo's name.\n    type: string\n    default: \"[[ target_dir_name ]]\"\n  - key: token\n    prompt: API token\n    help: The token the tool uses.\n    type: string\n    secret: true\n    regex: '^[a-z0-9]{8,}$'\n    error: must be at least 8 lowercase letters or digits\n",
    )
    .expect("manifest");
    std::fs::write(
        dir.join("files/token.txt.tera"),
        "length [[ token | length ]]\n",
    )
    .expect("file");
    dir
}

#[test]
fn enter_at_a_hidden_prompt_says_what_it_needs_and_declining_the_review_writes_nothing() {
    let env = Env::new();
    let blueprint = token_blueprint(&env);
    let mut cmd = env.scaffold();
    cmd.args(["new", "tok", "--blueprint"])
        .arg(&blueprint)
        .env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(30_000)).expect("spawn");
    p.exp_string("Name").expect("name");
    p.send_line("").expect("send");
    p.exp_string("API token (hidden)").expect("hidden prompt");
    // A hidden prompt turns echo off once drawn, which may drop a key typed before.
    settle();
    // Enter with no default: said, not a silent re-prompt.
    p.send_line("").expect("send");
    p.exp_string("an answer is needed (typing is not shown)")
        .expect("told why");
    settle();
    p.send_line("abcdefgh1").expect("send");
    p.exp_string("  token: (hidden)")
        .expect("secret hidden in the review");
    p.exp_string("Write this platform repo?").expect("confirm");
    settle();
    p.send("n").expect("no");
    p.flush().expect("flush");
    p.exp_string("declined at the review: nothing was written")
        .expect("declined");
    p.exp_eof().expect("exit");
    assert!(!env.path("tok").exists(), "nothing written");
}

#[test]
fn enter_at_a_hidden_prompt_with_a_default_says_it_keeps_the_default() {
    let env = Env::new();
    let blueprint = token_blueprint(&env);
    let manifest = blueprint.join("blueprint.yaml");
    let text = std::fs::read_to_string(&manifest).expect("read");
    std::fs::write(
        &manifest,
        text.replace(
            "    secret: true\n",
            "    secret: true\n    default: changeme123\n",
        ),
    )
    .expect("write");
    let mut cmd = env.scaffold();
    cmd.args(["new", "tok", "--blueprint"])
        .arg(&blueprint)
        .env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(30_000)).expect("spawn");
    p.exp_string("Name").expect("name");
    p.send_line("").expect("send");
    p.exp_string("API token (hidden; Enter keeps the blueprint's default)")
        .expect("the prompt says what Enter does");
    settle();
    p.send_line("").expect("send");
    p.exp_string("Write this platform repo?").expect("confirm");
    settle();
    p.send("y").expect("yes");
    p.flush().expect("flush");
    p.exp_string("Created tok").expect("done");
    p.exp_eof().expect("exit");
    assert_eq!(
        std::fs::read_to_string(env.path("tok/token.txt")).expect("file"),
        "length 11\n"
    );
}

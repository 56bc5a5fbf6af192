//! Command-line conventions: completions and the man page load in the real tools, every
//! subcommand's --help has examples and each runs, exit codes are documented, -q/-v,
//! refusals that show the conflicting lines.
use std::path::Path;
use std::process::Command;

use crate::support::{Env, require_tool, run};

fn bin_dir() -> std::path::PathBuf {
    let exe = assert_cmd::cargo::cargo_bin("scaffold");
    exe.parent().expect("bin dir").to_path_buf()
}

fn write_completions(env: &Env, shell: &str, file: &str) -> std::path::PathBuf {
    let out = run(env.scaffold().args(["completions", shell]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("add-addon"), "{shell}: {}", out.stdout);
    let path = env.path(file);
    std::fs::write(&path, &out.stdout).expect("write");
    path
}

fn shell(program: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(program).args(args).output().expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bash_completion_loads_and_completes_subcommands() {
    let env = Env::new();
    let path = write_completions(&env, "bash", "scaffold.bash");
    let script = format!(
        "set -e; source {}; COMP_WORDS=(scaffold add); COMP_CWORD=1; _scaffold scaffold add scaffold; echo \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let (ok, stdout, stderr) = shell("bash", &["--norc", "-c", &script]);
    assert!(ok && stderr.is_empty(), "{stderr}");
    assert_eq!(stdout.trim(), "add-addon");
}

#[test]
fn zsh_completion_loads() {
    if !require_tool("zsh") {
        return;
    }
    let env = Env::new();
    let path = write_completions(&env, "zsh", "_scaffold");
    let script = format!(
        "autoload -Uz compinit && compinit -u -D && source {} && whence -w _scaffold",
        path.display()
    );
    let (ok, stdout, stderr) = shell("zsh", &["-f", "-c", &script]);
    assert!(ok && stderr.is_empty(), "{stderr}");
    assert_eq!(stdout.trim(), "_scaffold: function");
}

#[test]
fn fish_completion_loads_and_completes_subcommands() {
    if !require_tool("fish") {
        return;
    }
    let env = Env::new();
    let path = write_completions(&env, "fish", "scaffold.fish");
    let script = format!("source {}; complete -C'scaffold remove'", path.display());
    let (ok, stdout, stderr) = shell("fish", &["--no-config", "-c", &script]);
    assert!(ok && stderr.is_empty(), "{stderr}");
    assert!(stdout.starts_with("remove-addon\t"), "{stdout}");
}

#[test]
fn powershell_and_elvish_completions_are_generated() {
    let env = Env::new();
    for shell in ["powershell", "elvish"] {
        write_completions(&env, shell, &format!("scaffold.{shell}"));
    }
}

#[test]
fn man_page_renders_with_every_subcommand_and_the_exit_status() {
    let env = Env::new();
    let out = run(env.scaffold().arg("man"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let page = env.path("scaffold.1");
    std::fs::write(&page, &out.stdout).expect("write");
    // groff with every warning on: a roff mistake in the page is a failure.
    let (ok, _, stderr) = shell(
        "groff",
        &[
            "-k",
            "-man",
            "-Tutf8",
            "-ww",
            "-z",
            &page.display().to_string(),
        ],
    );
    assert!(ok && stderr.is_empty(), "groff: {stderr}");
    let rendered = Command::new("man")
        .args(["-l", &page.display().to_string()])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs");
    assert!(rendered.status.success());
    let text = String::from_utf8_lossy(&rendered.stdout);
    for section in [
        "SCAFFOLD NEW",
        "SCAFFOLD ADD-ADDON",
        "SCAFFOLD BLUEPRINT TEST",
        "SCAFFOLD LIST ADDONS",
        "EXIT STATUS",
    ] {
        assert!(text.contains(section), "no {section} in:\n{text}");
    }
    assert!(text.contains("--helm-set <KEY=VALUE>"), "{text}");
}

/// Subcommand names listed under "Commands:" in a --help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|name| name != "help")
        .collect()
}

fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Examples"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// Every leaf command, as its words after `scaffold`.
fn leaves(env: &Env, path: Vec<String>) -> Vec<(Vec<String>, String)> {
    let help = run(env.scaffold().args(&path).arg("--help")).stdout;
    let subs = subcommands(&help);
    if subs.is_empty() {
        return vec![(path, help)];
    }
    subs.into_iter()
        .flat_map(|sub| {
            let mut next = path.clone();
            next.push(sub);
            leaves(env, next)
        })
        .collect()
}

fn default_repo(env: &Env, name: &str) -> std::path::PathBuf {
    let out = run(env.scaffold().args(["new", name, "--defaults"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    env.path(name)
}

/// Each example runs (offline) in a fresh default repo, in the order the help lists them,
/// with the built binary first on PATH and HOME a temporary directory.
#[test]
fn every_subcommand_has_examples_and_each_runs() {
    let env = Env::new();
    let all = leaves(&env, Vec::new());
    assert!(
        all.len() >= 10,
        "{:?}",
        all.iter().map(|l| &l.0).collect::<Vec<_>>()
    );
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (index, (words, help)) in all.iter().enumerate() {
        let list = examples(help);
        assert!(
            !list.is_empty(),
            "scaffold {} --help has no example",
            words.join(" ")
        );
        let repo = default_repo(&env, &format!("repo{index}"));
        for example in list {
            assert!(
                example.starts_with("scaffold ")
                    || example.starts_with("source <(scaffold ")
                    || example.starts_with("mkdir -p "),
                "{example}"
            );
            let out = Command::new("bash")
                .args(["--norc", "-e", "-c", &example])
                .current_dir(&repo)
                .env("PATH", &path)
                .env("HOME", env.home.path())
                .env("XDG_CONFIG_HOME", env.home.path().join(".config"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("MANPAGER", "cat")
                .output()
                .expect("bash runs");
            assert!(
                out.status.success(),
                "`{example}` (from scaffold {} --help) failed: {}",
                words.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn exit_codes_are_in_help_and_readme_alike() {
    let env = Env::new();
    let help = run(env.scaffold().arg("--help")).stdout;
    let codes: Vec<&str> = help
        .lines()
        .skip_while(|l| *l != "Exit codes:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let numbers: Vec<&str> = codes
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        numbers,
        ["0", "1", "2", "3", "4", "5", "70", "130"],
        "{help}"
    );
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README");
    for line in codes {
        assert!(
            readme.contains(line),
            "README lacks the exit-code line `{line}`"
        );
    }
}

#[test]
fn quiet_prints_results_only_and_verbose_names_each_file() {
    let env = Env::new();
    let out = run(env.scaffold().args(["new", "q", "--defaults", "-q"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    assert!(
        out.stdout.starts_with("Created q from blueprint default"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("Next steps"), "{}", out.stdout);

    let out = run(env.scaffold().args(["new", "n", "--defaults"]));
    assert!(out.stdout.contains("  infrastructure/  "), "{}", out.stdout);
    assert!(out.stdout.contains("Next steps"), "{}", out.stdout);

    let out = run(env
        .scaffold()
        .args(["add-addon", "velero", "-v", "-C"])
        .arg(env.path("n")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("create infrastructure/addons/velero/release.yaml"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.starts_with("scaffold: add addon velero"),
        "{}",
        out.stdout
    );

    let both = run(env.scaffold().args(["list", "addons", "-q", "-v"]));
    assert_eq!(both.code, 2, "{}", both.stderr);
}

#[test]
fn helm_values_have_their_own_flag() {
    let env = Env::new();
    let repo = default_repo(&env, "h");
    let out = run(env
        .scaffold()
        .args(["add-addon", "velero", "--set", "a=1", "-C"])
        .arg(&repo));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--helm-set"), "{}", out.stderr);
}

#[test]
fn a_conflict_shows_the_lines_of_each_side() {
    let env = Env::new();
    let repo = default_repo(&env, "c");
    let list = repo.join("clusters/prod/50-apps.yaml");
    let text = std::fs::read_to_string(&list).expect("read");
    std::fs::write(
        &list,
        text.replace(
            "    - name: addon-reloader\n",
            "    - name: addon-reloader # keep\n",
        ),
    )
    .expect("write");
    env.git(&repo, &["commit", "-qam", "mine"]);
    let line = text
        .lines()
        .position(|l| l == "    - name: addon-reloader")
        .expect("listed")
        + 1;
    let out = run(env
        .scaffold()
        .args(["remove-addon", "reloader", "-C"])
        .arg(&repo));
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        format!(
            "error: clusters/prod/50-apps.yaml:{line}: your edits and scaffold's change touch the same lines; nothing was changed\n  scaffold wrote (base):\n    |     - name: addon-reloader\n  yours (now on disk):\n    |     - name: addon-reloader # keep\n  scaffold would write (new):\n    (nothing)\n"
        )
    );
    assert!(
        repo.join("infrastructure/addons/reloader/release.yaml")
            .exists()
    );
}

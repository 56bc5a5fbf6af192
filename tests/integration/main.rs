//! One integration-test binary driving the real `scaffold` executable.

// The tests read their own environment (CI, the tools they need) and print what they
// compare; the product's rules on both (clippy.toml, Cargo.toml's lints) are not theirs.
#![allow(clippy::disallowed_methods, clippy::print_stdout, clippy::print_stderr)]

// The fault, kill and panic tests (safety_git, safety_new, safety_kill) drive the binary's
// `SCAFFOLD_TEST_*` seams. Cargo.toml's dev-dependency on the package itself enables them for
// every `cargo test`, debug or --release; should that ever go, this fails the build rather
// than letting those tests pass without their fault ever happening.
#[cfg(not(feature = "test-seams"))]
compile_error!("the integration tests need the `test-seams` feature (see docs/testing.md)");

mod addons; // add-addon, remove-addon, list addons
mod architecture; // the workspace's shape: no cycle, commands apart, short functions
mod authoring; // strict blueprints, overrides, removals, modes, blueprint files/cat
mod blueprints; // blueprint lint, test, init, list, show; extends
mod check; // scaffold check: generated repos pass, each rule broken alone
mod check_corpus; // scaffold check: the agreement corpus (with the validator), file and line
mod cli; // completions, man page, --help examples, exit codes, -q/-v, conflict hunks
mod environments; // issue 26: environments answer, per-environment trees and answers
mod git_citizen; // issue 23: the lock, identity, signing, hooks, git checks
mod golden; // insta snapshots: every answer set's repo, refusals, check findings
mod interactive; // a full interactive run through a pseudo-terminal
mod json; // every --json output against the shapes in docs/json.md
mod lifetime; // issue 29: clones, bases, secrets, hand edits, markers, signals after commit
mod lint_cache; // issue 45: new's lint verdict kept by the blueprint's content digest
mod lint_flux_path; // issue 45: lint's flux.path findings on a blueprint from disk, pinned
mod new_answers; // answer sources, precedence and validation errors
mod new_repo; // what `scaffold new` writes and commits
mod platform_flux; // the Flux layers and addons work on a real cluster (issue 12)
mod platform_infra; // Terraform, kops and Karpenter of the generated repo (issue 11)
mod platform_operations; // the generated Makefiles run with stand-in tools; kops naming (issue 11 review)
mod promotion; // issue 41: promotion moves components with their dependencies, keeps what the target owns
mod prompts; // prompts through a PTY: gossip, no-colour cursor, secrets, Ctrl-C, diff colour
mod pull_requests; // scaffold diff against kubectl kustomize (issue 44)
mod repo_ci; // the generated repo's CI: workflow, make validate, renovate.json
mod safety_git; // add-addon/remove-addon in every git state, faults, signals
mod safety_input; // the bad-input catalogue
mod safety_kill; // the kill harness: SIGKILL/SIGINT/SIGTERM anywhere in new, add-addon, remove-addon, update
mod safety_new; // new in place, stale staging, IO faults
mod safety_props; // property tests: parsers, manifests, paths that never escape
mod support;
mod team; // issue 42: teammates merge scaffold changes with plain git; guards
mod update; // update: blueprint edited in place, changed answers, conflicts, the pristine base

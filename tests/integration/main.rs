//! One integration-test binary driving the real `scaffold` executable.
mod addons; // add-addon, remove-addon, list addons
mod blueprints; // blueprint lint, test, init, list, show; extends
// (see above)
mod interactive; // a full interactive run through a pseudo-terminal
mod new_answers; // answer sources, precedence and validation errors
mod new_repo; // what `scaffold new` writes and commits
mod platform_flux; // the Flux layers and addons work on a real cluster (issue 12)
mod platform_infra; // Terraform, kops and Karpenter of the generated repo (issue 11)
mod support;
mod update; // update: blueprint edited in place, changed answers, conflicts, the pristine base

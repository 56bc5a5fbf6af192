#!/usr/bin/env bash
# Generate one repo per answer set (tests/*.yaml) of the default blueprint and of the
# test blueprints that extend it (acme; team, the walkthrough of docs/blueprints.md), and
# judge each twice: with `scaffold check` (no error allowed) and with the shared validator
# (checkov included, no failure allowed). Both must pass: a failure either finds and the
# other misses is a bug in the one that missed it. Exit non-zero on any failure.
#   scripts/validate-answer-sets.sh [SCAFFOLD_BIN] [BLUEPRINT_DIR...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/scaffold}"; shift || true
validator="${VALIDATOR:-../shared/validate/validate-platform}"
blueprints=("$@")
[ ${#blueprints[@]} -gt 0 ] || blueprints=(blueprints/default tests/fixtures/acme-blueprint tests/fixtures/team-blueprint)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
total=0
failed=0
for blueprint in "${blueprints[@]}"; do
    for set in "$blueprint"/tests/*.yaml; do
        # A case that must be refused (`expect_error`) is blueprint test's, not a repo.
        grep -q '^expect_error:' "$set" && continue
        # A case that expects check findings (`expect_findings`) is no repo to pass either.
        grep -q '^expect_findings:' "$set" && continue
        name="$(basename "$blueprint")-$(basename "$set" .yaml)"
        total=$((total + 1))
        echo "== $name"
        "$bin" new "$out/$name" --blueprint "$blueprint" --defaults --values "$set" --author "CI <ci@example.org>" >/dev/null
        ok=1
        if ! "$bin" check "$out/$name"; then
            ok=0
        fi
        # The validator judges one cluster: a repo of several is judged one environment's
        # view at a time (docs/environments.md).
        targets=("$out/$name")
        if [ "$(find "$out/$name/clusters" -mindepth 1 -maxdepth 1 -type d | wc -l)" -gt 1 ]; then
            mapfile -t envs < <(scripts/environment-views "$out/$name" "$out/$name.views")
            targets=("${envs[@]/#/$out/$name.views/}")
        fi
        for target in "${targets[@]}"; do
            if ! "$validator" "$target" --max-checkov-failures 0 --quiet | grep -E '^FAIL|^validate-platform:'; then
                ok=0
            fi
        done
        [ "$ok" -eq 1 ] || failed=$((failed + 1))
    done
done
echo "answer sets: $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Generate one repo per answer set of the default blueprint (blueprints/default/tests/)
# — and of the extending test blueprint — and judge each with the shared
# validator (checkov included, no exceptions allowed). Exit non-zero on any failure.
#   scripts/validate-answer-sets.sh [SCAFFOLD_BIN] [SET...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/scaffold}"; shift || true
validator="${VALIDATOR:-../shared/validate/validate-platform}"
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(blueprints/default/tests/*.yaml)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
for set in "${sets[@]}"; do
    name="$(basename "$set" .yaml)"
    echo "== $name"
    "$bin" new "$out/$name" --defaults --values "$set" --author "CI <ci@example.org>" >/dev/null
    if ! "$validator" "$out/$name" --max-checkov-failures 0 --quiet; then
        failed=$((failed + 1))
    fi
done
echo "answer sets: $(( ${#sets[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]

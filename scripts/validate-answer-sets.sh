#!/usr/bin/env bash
# Generate one repo per answer set in tests/answer-sets/ and judge each with the shared
# validator (checkov included, no exceptions allowed). Exit non-zero on any failure.
#   scripts/validate-answer-sets.sh [SCAFFOLD_BIN] [SET...]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/scaffold}"; shift || true
validator="${VALIDATOR:-../shared/validate/validate-platform}"
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(tests/answer-sets/*.yaml)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
for set in "${sets[@]}"; do
    name="$(basename "$set" .yaml)"
    extra=()
    if [ "$name" = all-addons ]; then
        all="$("$bin" list addons --json | python3 -c 'import json,sys; print(",".join(a["name"] for a in json.load(sys.stdin) if not a["always"]))')"
        extra=(--set "addons=$all")
    fi
    echo "== $name"
    "$bin" new "$out/$name" --defaults --values "$set" "${extra[@]}" --author "CI <ci@example.org>" >/dev/null
    if ! "$validator" "$out/$name" --max-checkov-failures 0 --quiet; then
        failed=$((failed + 1))
    fi
done
echo "answer sets: $(( ${#sets[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]

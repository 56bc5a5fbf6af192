#!/usr/bin/env bash
# Grow repos with add-addon and judge each with `scaffold check` and the shared validator (checkov included,
# --max-checkov-failures 0). Cases:
#   each:NAME   scaffold new (no addons) → add-addon NAME
#   all         scaffold new (no addons) → add-addon every catalog addon, one by one
#   custom      scaffold new (no addons) → a custom https chart and a custom oci chart
# Usage: scripts/validate-addon-sweep.sh [SCAFFOLD_BIN] [CASE...]   (default: every case)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/debug/scaffold}")"; shift || true
validator="$(realpath "${VALIDATOR:-../shared/validate/validate-platform}")"
catalog="$("$bin" list addons --json | python3 -c 'import json,sys; print(" ".join(a["name"] for a in json.load(sys.stdin) if not a["always"]))')"
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    for name in $catalog; do cases+=("each:$name"); done
    cases+=(all custom)
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
for case in "${cases[@]}"; do
    dir="$out/${case//:/-}"
    echo "== $case"
    "$bin" new "$dir" --defaults --set addons= --set dns_zone=platform.example.org --author "CI <ci@example.org>" >/dev/null
    add() { (cd "$dir" && "$bin" add-addon "$@" --author "CI <ci@example.org>" >/dev/null); }
    case "$case" in
        each:*) add "${case#each:}" ;;
        all) for name in $catalog; do add "$name"; done ;;
        custom)
            add podinfo-web --chart podinfo --repo oci://ghcr.io/stefanprodan/charts --version 6.14.1 --layer apps
            add cache --chart redis --repo https://charts.bitnami.com/bitnami --version 21.2.5 --helm-set architecture=standalone ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    ok=1
    "$bin" check "$dir" || ok=0
    if ! "$validator" "$dir" --max-checkov-failures 0 --quiet | grep -E '^FAIL|^validate-platform:'; then
        ok=0
    fi
    [ "$ok" -eq 1 ] || failed=$((failed + 1))
done
echo "addon sweep: $(( ${#cases[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]

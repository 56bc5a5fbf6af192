#!/usr/bin/env bash
# The shared validator (and `scaffold check`) on what the environment commands write
# (issue 26): a repo made by default 0.2.1 migrated by `update`, then `env add`, an addon
# added to one environment and `promote`; and a new repo of dev, staging and prod with
# different addons, promoted. Each environment is validated on its own view
# (scripts/environment-views; docs/environments.md says why). Exit non-zero on any failure.
#   scripts/validate-environments.sh [SCAFFOLD_BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/debug/scaffold}")"
validator="$(realpath "${VALIDATOR:-../shared/validate/validate-platform}")"
old="$(realpath tests/old-blueprints/default-0.2.1)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export GIT_AUTHOR_NAME=CI GIT_AUTHOR_EMAIL=ci@example.org GIT_COMMITTER_NAME=CI GIT_COMMITTER_EMAIL=ci@example.org
s() { (cd "$1" && shift && "$bin" "$@" --author "CI <ci@example.org>" >/dev/null); }

"$bin" new "$out/migrated" --defaults -q --blueprint "$old" --author "CI <ci@example.org>" >/dev/null
s "$out/migrated" update --blueprint default
s "$out/migrated" env add staging --from prod
s "$out/migrated" add-addon velero --env staging
s "$out/migrated" add-addon reloader --env staging --helm-set reloader.deployment.replicas=2
s "$out/migrated" promote --from staging --to prod

"$bin" new "$out/three" --defaults -q --values blueprints/default/tests/three-environments.yaml --author "CI <ci@example.org>" >/dev/null
s "$out/three" add-addon metrics-server --env dev --helm-set replicas=3
s "$out/three" promote --from dev --to staging

failed=0
for repo in migrated three; do
    echo "== $repo"
    "$bin" check "$out/$repo" || failed=$((failed + 1))
    for env in $(scripts/environment-views "$out/$repo" "$out/$repo.views"); do
        if ! "$validator" "$out/$repo.views/$env" --max-checkov-failures 0 --quiet | grep -E '^FAIL|^validate-platform:'; then
            failed=$((failed + 1))
        fi
    done
done
echo "environments: $failed failed"
[ "$failed" -eq 0 ]

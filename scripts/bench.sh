#!/usr/bin/env bash
# Wall-clock cost of the main jobs on the release build (speed targets live here, never in
# tests): `scaffold new --defaults`, `new` with every addon, and `add-addon` + `remove-addon`.
#   scripts/bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
cargo build --release --quiet
bin="$PWD/target/release/scaffold"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$work"
all="$(tr -d '[]' < blueprints/default/tests/all-addons.yaml | sed -n 's/^addons: //p' | tr -d ' ')"
measure() { # name, command (run in $work; {} is replaced by a fresh directory name)
    local name="$1" cmd="$2" start end
    start=$(date +%s%N)
    for i in $(seq "$runs"); do (cd "$work" && eval "${cmd//\{\}/r$i}") >/dev/null; done
    end=$(date +%s%N)
    printf '%-32s %8.1f ms/run over %d runs\n' "$name" "$(echo "($end - $start) / 1000000 / $runs" | bc -l)" "$runs"
    rm -rf "$work"/r*
}
measure "new --defaults" "$bin new {} --defaults --author 'B <b@example.org>'"
measure "new (every addon)" "$bin new {} --defaults --set addons=$all --author 'B <b@example.org>'"
measure "new + add-addon + remove-addon" "$bin new {} --defaults --author 'B <b@example.org>' && $bin add-addon velero -C {} --author 'B <b@example.org>' && $bin remove-addon velero -C {} --author 'B <b@example.org>'"

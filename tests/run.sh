#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing, builds, tests.
# Each area has its own script (tests/<area>/run.sh) that installs its own tools; this one
# runs them in order, prints how long each took, and fails if any fails. In CI (CI=true) no
# area may skip; elsewhere an area that cannot run here is counted apart, loudly.
#
# The areas share one cargo target directory (CARGO_TARGET_DIR, else target/) and reuse what
# the earlier ones built: tests/python installs the wheel that dist/build.sh builds once,
# tests/docs and bench/smoke.sh the Python package and Node addon of tests/python and
# tests/node (docs/development.md, "What CI runs").
set -uo pipefail
cd "$(dirname "$0")/.."
export FLAKERY_REPO_ROOT="$PWD"
source tests/lib.sh
# What the areas build in this run is newer than this mark (built_this_run, tests/lib.sh).
FLAKERY_RUN_MARK="$(mktemp)"
export FLAKERY_RUN_MARK
trap 'rm -f "$FLAKERY_RUN_MARK"' EXIT

areas=(
  tests/rust/run.sh
  tests/security/run.sh
  tests/dist/run.sh
  tests/python/run.sh
  tests/node/run.sh
  tests/c/run.sh
  tests/go/run.sh
  tests/zookeeper/run.sh
  tests/partition/run.sh
  tests/db/run.sh
  tests/server/run.sh
  tests/fuzz/run.sh
  tests/java/run.sh
  tests/postgres/run.sh
  tests/docs/run.sh
  bench/smoke.sh
)
durations=()
began=$SECONDS
for script in "${areas[@]}"; do
  echo "=== $script"
  start=$SECONDS
  status=0
  if [ -f "$script" ]; then bash "$script" || status=$?; else status=1; echo "FAIL: $script is missing" >&2; fi
  took=$((SECONDS - start))
  durations+=("$(printf '%6d s  %s' "$took" "$script")")
  case "$status" in
    0) pass "$script ($took s)" ;;
    "$SKIPPED_STATUS") skip "$script ($took s)" ;;
    *) fail "$script ($took s, exit $status)" ;;
  esac
done
echo
echo "--- time per area"
printf '%s\n' "${durations[@]}"
printf '%6d s  in all\n' "$((SECONDS - began))"
finish areas

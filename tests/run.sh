#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what is missing, builds, tests.
# Each area has its own script (tests/<area>/run.sh) that installs its own tools; this one
# runs them in order and fails if any fails. In CI (CI=true) no area may skip.
set -uo pipefail
cd "$(dirname "$0")/.."
export FLAKERY_REPO_ROOT="$PWD"

areas=(
  tests/rust/run.sh
  tests/security/run.sh
  tests/python/run.sh
  tests/node/run.sh
  tests/c/run.sh
  tests/go/run.sh
  tests/dist/run.sh
  tests/zookeeper/run.sh
  tests/partition/run.sh
  tests/db/run.sh
  tests/server/run.sh
  tests/fuzz/run.sh
  tests/java/run.sh
  tests/docs/run.sh
  bench/smoke.sh
)
passed=0
failed=0
failures=()
for script in "${areas[@]}"; do
  echo "=== $script"
  [ -f "$script" ] || echo "FAIL: $script is missing" >&2
  if [ -f "$script" ] && bash "$script"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$script")
  fi
done
echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "areas: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

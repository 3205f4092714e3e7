#!/usr/bin/env bash
# ZooKeeper leases against a real server, on a fresh machine: installs Debian's zookeeper
# package when it is missing, checks the test harness, then runs every ZooKeeper test target
# of the core (each test starts and stops its own server). In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
command -v python3 >/dev/null 2>&1 || skip_or_fail "python3 is not installed (the ZooKeeper harness needs it)"
bash tests/zookeeper/install.sh || skip_or_fail "Debian's zookeeper package could not be installed"

echo "--- ZooKeeper harness self-test"
log="$(mktemp)"
if ! python3 tests/zookeeper/selftest.py >"$log" 2>&1; then
  cat "$log"
  rm -f "$log"
  echo "FAIL: the ZooKeeper harness self-test" >&2
  exit 1
fi
tail -n 3 "$log"
rm -f "$log"

echo "--- ZooKeeper lease tests"
targets=()
for file in core/tests/zookeeper*.rs; do
  targets+=(--test "$(basename "$file" .rs)")
done
cargo test -p flakery --locked "${targets[@]}"

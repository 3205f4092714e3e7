#!/usr/bin/env bash
# The ZooKeeper test harness itself, on a fresh machine: installs Debian's zookeeper package
# when it is missing and checks that tests/zookeeper/zkserver.py starts, serves and stops a
# server, then runs coordinators/zookeeper/tests/ (behind flakery-zookeeper's `system-tests`
# feature, so not in the workspace's plain `cargo test`). Other areas use it too:
# tests/python/test_zookeeper.py and
# tests/node/zookeeper.test.mjs. In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
need python3
bash tests/zookeeper/install.sh || skip_or_fail "Debian's zookeeper package could not be installed"

echo "--- ZooKeeper harness self-test"
quiet python3 tests/zookeeper/selftest.py
echo "zookeeper harness: self-test passed"

ensure_cargo
unset_flakery_env
cargo test -p flakery-zookeeper --features system-tests --locked

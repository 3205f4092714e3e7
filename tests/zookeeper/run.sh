#!/usr/bin/env bash
# ZooKeeper: installs Debian's zookeeper package when it is missing, checks that the harness
# (tests/zookeeper/zkserver.py) starts, serves and stops a server, then runs the Rust lease
# tests against real servers it starts (the `system-tests` feature of flakery-zookeeper),
# one of them with a secureClientPort (TLS, zookeeper_tls.rs).
# tests/python/test_zookeeper.py and tests/node/zookeeper.test.mjs use the same harness in
# their areas. In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
need python3
# tests/tls_certs.py makes the CA of the TLS test (zookeeper_tls.rs).
need openssl openssl
bash tests/zookeeper/install.sh || skip_or_fail "Debian's zookeeper package could not be installed"
unset_flakery_env

echo "--- ZooKeeper harness self-test"
check "zkserver.py self-test" quiet python3 tests/zookeeper/selftest.py
echo "--- the Rust lease tests against real servers"
CARGO_TARGET_DIR="$(zookeeper_tests_target_dir)"
export CARGO_TARGET_DIR
# Each test in a process of its own, all side by side: each starts its own ZooKeeper and
# spends its time waiting on it (the 13 of tests/zookeeper/ took 112 s one after another in a
# fresh-clone run, the longest of them 18 s alone).
cargo_tests_side_by_side --each-test -p flakery-zookeeper --features system-tests --locked
finish zookeeper

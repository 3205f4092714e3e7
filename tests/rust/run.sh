#!/usr/bin/env bash
# Formatting, lints and the plain Rust tests of every crate: `cargo test --workspace` runs
# only what needs no server, no network and no root. The system tests (a real ZooKeeper,
# PostgreSQL, MariaDB, root) sit behind each crate's `system-tests` feature and run in their
# areas (tests/zookeeper, tests/db, tests/security); they are linted here with the rest
# (--all-features).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
# client/tests/tls.rs makes its certificates with tests/tls_certs.py (python3, openssl).
need python3 python3
need openssl openssl
check "cargo fmt --check" cargo fmt --all -- --check
# The fork storm (core/tests/fork_storm.rs: 1,000 forks from four busy processes) took 105 s
# of the area's 160 s of tests one after another in a fresh-clone run, two thirds of it
# waiting on its children and on fsync. It runs from the start, beside clippy, the build and
# the other tests; `--workspace` in both commands unifies features alike, so each unit is
# built once, by whichever command comes to it first.
storm="fork_storm.rs (cargo test --workspace --test fork_storm)"
storm_log="$(mktemp)"
trap 'rm -f "$storm_log"' EXIT
cargo test --workspace --locked --test fork_storm >"$storm_log" 2>&1 &
storm_pid=$!
check "cargo clippy (every target and feature)" \
  cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
check "cargo test --workspace (but the fork storm)" cargo test --workspace --locked -- \
  --skip a_thousand_forks_under_load_leave_no_child_blocked_and_no_duplicate
echo "--- $storm"
storm_status=0
wait "$storm_pid" || storm_status=$?
cat "$storm_log"
if [ "$storm_status" -eq 0 ]; then pass "$storm"; else fail "$storm (exit $storm_status)"; fi
finish rust

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
check "cargo fmt --check" cargo fmt --all -- --check
check "cargo clippy (every target and feature)" \
  cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
check "cargo test --workspace" cargo test --workspace --locked
finish rust

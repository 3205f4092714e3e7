#!/usr/bin/env bash
# Formatting, lints and the Rust tests of every crate (the core's ZooKeeper tests start real
# servers from Debian's zookeeper package, installed here when it is missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked

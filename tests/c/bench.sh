#!/usr/bin/env bash
# What a call through the C ABI costs over the core: the same generator, the same loop, once
# in Rust (bindings-c/examples/bench_core.rs) and once in C through libflakery.a.
# usage: bash tests/c/bench.sh [CALLS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
calls=${1:-20000000}
target=${CARGO_TARGET_DIR:-target}
cargo build --release --locked -p flakery-c --example bench_core
mkdir -p "$target/c-test"
cc -std=c11 -O2 -Iinclude tests/c/bench.c "$target/release/libflakery.a" \
  -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$target/c-test/bench"
"$target/release/examples/bench_core" "$calls"
"$target/c-test/bench" "$calls"

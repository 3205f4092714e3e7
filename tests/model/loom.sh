#!/usr/bin/env bash
# The generator's concurrency under loom (core/tests/loom_*.rs; docs/development.md#loom-models):
# every interleaving of the models' threads, to each model's preemption bound, runs through the
# real generator code, built with RUSTFLAGS="--cfg loom" (core/src/generator/sync.rs) in a
# target directory of its own (the flag rebuilds every crate). One line per model; a
# counterexample prints the interleaving that broke a property and fails the script.
# `LOOM_MAX_PREEMPTIONS=N` overrides every model's bound. tests/model/run.sh calls this.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

export CARGO_TARGET_DIR="$(target_dir)/loom"
export RUSTFLAGS="--cfg loom"
export RUST_BACKTRACE=0

echo "--- build the loom models (release, --cfg loom)"
built="$(cargo test --release -p flakery --test 'loom_*' --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*"' | cut -d'"' -f4)" || true
[ -n "$built" ] || {
  cargo test --release -p flakery --test 'loom_*' --no-run # shows the error
  fail "the loom models build"
  finish loom
}

models=0
for binary in $built; do
  listed="$("$binary" --list)" || fail "$binary --list"
  for model in $(sed -n 's/: test$//p' <<<"$listed"); do
    models=$((models + 1))
    start=$SECONDS
    # Exit 0 alone would also pass a model that did not run (#[ignore], or no exact match).
    if out="$("$binary" --exact "$model" --test-threads 1 2>&1)" &&
      grep -q "^test result: ok. 1 passed" <<<"$out"; then
      pass "loom $(basename "${binary%-*}") $model: no counterexample ($((SECONDS - start)) s)"
    else
      # The model's panic: the property broken and the interleaving's events in order.
      echo "$out" | sed -n '/panicked at/,/^note: /p' | grep -v '^note: ' >&2
      fail "loom $(basename "${binary%-*}") $model: counterexample above ($((SECONDS - start)) s)"
    fi
  done
done
# The models the loom_*.rs files hold today; one lost (a file not built, a test renamed away
# from the list) fails here rather than passing with fewer.
check "every loom model ran ($models of at least 5)" test "$models" -ge 5

finish loom

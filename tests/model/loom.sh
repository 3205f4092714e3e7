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
  cargo test --release -p flakery --test 'loom_*' --no-run || true # shows the error
  fail "the loom models build"
  finish loom
}

# The models the loom_*.rs files declare (`#[test]`, other attributes, then `fn name`): each
# must be listed by a built binary, run and pass; a file or model that stops being built or
# listed fails by name.
shopt -s nullglob
files=(core/tests/loom_*.rs)
shopt -u nullglob
declared=""
if [ ${#files[@]} -gt 0 ]; then
  declared="$(awk '/^#\[test\]/ { t = 1; next }
    t && /^fn / { sub(/^fn /, ""); sub(/\(.*/, ""); print; t = 0; next }
    t && !/^#\[/ { t = 0 }' "${files[@]}" | sort)"
fi
passed=""
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
      passed+="$model"$'\n'
    else
      # The model's panic: the property broken and the interleaving's events in order.
      echo "$out" | sed -n '/panicked at/,/^note: /p' | grep -v '^note: ' >&2
      fail "loom $(basename "${binary%-*}") $model: counterexample above ($((SECONDS - start)) s)"
    fi
  done
done
not_run="$(comm -23 <(echo "$declared") <(sort <<<"$passed"))"
check "every model declared in core/tests/loom_*.rs ran and passed (missing: ${not_run:-none})" \
  test -z "$not_run"
# The models the files hold today: one deleted, or its file renamed away from loom_*.rs,
# fails here rather than passing with fewer.
check "at least 5 loom models ($models ran, $(grep -c . <<<"$declared") declared)" \
  test "$models" -ge 5

finish loom

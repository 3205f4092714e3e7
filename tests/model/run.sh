#!/usr/bin/env bash
# The model checkers (docs/development.md, "Model checking"): the lease protocol searched
# exhaustively (core/tests/keeper_model: the real Keeper of three holders on two node indexes
# against a model coordinator, every schedule of its faults to a depth), and the generator's
# atomics under loom (tests/model/loom.sh). Either one's counterexample fails the area and is
# printed as a trace.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
unset_flakery_env

# Release mode: the search takes about a minute there, several in a debug build.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if FLAKERY_MODEL_FULL=1 cargo test --release --locked -p flakery --test keeper_model -- \
  --nocapture >"$log" 2>&1; then
  # Each scenario's size: what the search covered.
  grep -E '^[a-z]+: [0-9]+ states to depth' "$log" || true
  pass "keeper_model: the lease protocol, every schedule to its depth"
else
  # The counterexample's trace (or the build's error) is in the panic message.
  sed -n '/panicked at\|^error/,$p' "$log" | head -400 >&2
  fail "keeper_model: the lease protocol"
fi

if [ -f tests/model/loom.sh ]; then
  tally "loom models of the generator" bash tests/model/loom.sh
elif [ "${CI:-}" = "true" ]; then
  fail "tests/model/loom.sh is missing (CI=true)"
else
  skip "tests/model/loom.sh is missing"
fi
finish model

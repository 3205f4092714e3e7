#!/usr/bin/env bash
# Instructions a call of the client's `next_id` beside the embedded generator's, counted by
# callgrind (a count, so a loaded machine does not change it): client/examples/steady_calls.rs
# in the bench profile (the criterion bench's: fat LTO), each kind run with two counts, the
# difference of the instructions over the difference of the calls (start-up, the fake server
# and the first block cancel out). Valgrind gives a process no vDSO, so the clock read counted
# is the C library's system call wrapper, not the vDSO's code a real run calls.
#
#   bash bench/client/profile.sh            # stock, embedded, sustained
#   KEEP=DIR bash bench/client/profile.sh   # keep the callgrind files in DIR (callgrind_annotate)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
target="${CARGO_TARGET_DIR:-target}"
cargo build --locked -q --profile bench -p flakery-client --example steady_calls
# The bench profile's artifacts are in release/.
bin="$target/release/examples/steady_calls"
out="${KEEP:-$(mktemp -d)}"
mkdir -p "$out"
count() { # kind calls
  # `stock` and `embedded`: only the calling thread inside the kind's function (the refill's
  # reads, which vary from run to run, are not the call's); `sustained`: every thread.
  local only=()
  [ "$1" = sustained ] || only=(--collect-atstart=no "--toggle-collect=steady_calls::$1")
  valgrind --tool=callgrind "${only[@]}" --callgrind-out-file="$out/$1.$2" "$bin" "$2" "$1" 2>&1 \
    | sed -n 's/.*Collected : //p'
}
# Counts within one block of the stock (100,000 IDs) for `stock`; several blocks for
# `sustained`, whose refills are part of what it measures.
for spec in "stock 10000 90000" "embedded 100000 600000" "sustained 1000000 3000000"; do
  set -- $spec
  a=$(count "$1" "$2")
  b=$(count "$1" "$3")
  python3 -c "import sys; a, b, n, m = map(int, sys.argv[2:]); print(f'{sys.argv[1]}: {(b - a) / (m - n):.1f} instructions a call')" \
    "$1" "$a" "$b" "$2" "$3"
done
[ -n "${KEEP:-}" ] || rm -rf "$out"

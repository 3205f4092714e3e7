#!/usr/bin/env bash
# Fuzzing (cargo-fuzz, libFuzzer; nightly toolchain): builds the targets of fuzz/, replays the
# committed corpus of each (every input once: what earlier campaigns found must still hold),
# then fuzzes each target for FUZZ_SECONDS (default 5: a smoke of each target; the replay is
# the regression check) from that corpus. Any failed property or panic fails the area and
# prints the input that caused it. Long campaigns: docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
unset_flakery_env
need c++ g++ # libfuzzer-sys compiles libFuzzer itself

command -v rustup >/dev/null 2>&1 || skip_or_fail "rustup is not installed (cargo fuzz needs nightly)"
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal || skip_or_fail "cannot install the nightly toolchain"
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  # About 2 minutes on 2 cores; the version is the one fuzz/Cargo.toml was written for.
  cargo install cargo-fuzz --version 0.13.2 --locked || skip_or_fail "cannot install cargo-fuzz"
fi

targets=(layout_parse parse_id decode_compose text_forms env_options)
seconds="${FUZZ_SECONDS:-5}"
work="$(mktemp -d "${TMPDIR:-/tmp}/fuzz-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cargo +nightly fetch --locked --manifest-path fuzz/Cargo.toml
# -a: overflow checks and debug assertions on (an overflow is a bug the fuzzer should see).
# -s none: no AddressSanitizer. The fuzzed code is safe Rust, whose memory errors the compiler
# already rules out; ASan would cost several times the executions per second.
build=(+nightly fuzz build --fuzz-dir fuzz -O -a -s none)
quiet cargo "${build[@]}"

for t in "${targets[@]}"; do
  mkdir -p "$work/$t/new" "$work/$t/artifacts"
  run=(cargo +nightly fuzz run --fuzz-dir fuzz -O -a -s none "$t")
  opts=(-artifact_prefix="$work/$t/artifacts/" -print_final_stats=1)
  log="$work/$t/log"
  # -runs=0: each input of the committed corpus once, no mutation.
  if "${run[@]}" "fuzz/corpus/$t" -- "${opts[@]}" -runs=0 >"$log" 2>&1 &&
    "${run[@]}" "$work/$t/new" "fuzz/corpus/$t" -- "${opts[@]}" -max_total_time="$seconds" >>"$log" 2>&1; then
    pass "$t: $(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | awk '{print $2}') executions, $(grep -oE 'cov: [0-9]+' "$log" | tail -1)"
  else
    # The failed property (the panic message), else the end of libFuzzer's report.
    grep -A6 -E 'panicked at' "$log" >&2 || grep -vE '^#[0-9]+|^INFO:|^stat::' "$log" | tail -40 >&2
    for crash in "$work/$t/artifacts"/*; do
      [ -f "$crash" ] || continue
      echo "FAIL: $t: input $(basename "$crash") (hex):" >&2
      od -An -tx1 "$crash" | head -20 >&2
    done
    fail "fuzz target $t"
  fi
done
finish fuzz

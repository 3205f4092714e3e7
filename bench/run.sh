#!/usr/bin/env bash
# flakery beside its peers, Rust, Python, Node and the C ABI, in one run on this machine.
#
#   bash bench/run.sh                  # full run (about 5 minutes): bench/results/{latest.json,table.md,chart.svg}
#   bash bench/run.sh --update-docs    # the same, and the results of docs/benchmarks.md and README's headline figures
#   bash bench/run.sh --smoke          # tiny counts, every language, no timing asserted (CI): bench/results/tmp/smoke/
#   bash bench/run.sh --only rust,python   # some of rust, python, node, c, java, server, startup, postgres, client
#
# java: bench/java's JMH benchmarks (bench/java/run.sh builds the jar and the benchmarks), in
# short settings: one fork, 3 warm-up and 5 measured iterations of 1 s each (JMH_ARGS; about
# 2 minutes), JMH's JSON into the report (bench/reporting/jmh.py: the median of the measured
# iterations, set against the peers of the same run); then a few on Java 17 (jmh17.json), and
# nextId there again with -XX:+CriticalJNINatives, the opt-in (jmh17crit.json). The smoke run leaves Java out unless
# asked (--smoke --only java: one iteration of 100 ms): it would build the release JNI library
# and the benchmarks jar in CI for figures nobody reads; bench/smoke.sh runs the converter's
# unit tests instead (bench/reporting/test_jmh.py).
#
# server: `flakery serve` under wrk beside nginx (bench/server/run.sh; bench/results/server.md).
# postgres: the extension's inserts beside bigserial, gen_random_uuid(), Instagram's function
# and (PGEDGE_SNOWFLAKE_SRC: its source) pgEdge's snowflake under pgbench, and one call beside
# nextval() (bench/postgres/run.sh; bench/results/postgres.md, and with --update-docs the block
# of docs/benchmarks.md#postgresql). Left out of the smoke run unless asked, as Java is: it builds the
# extension in release mode, which tests/postgres already runs.
# client: the client of `flakery serve` (bench/client/run.py; bench/results/client.md, and with
# --update-docs the block of docs/benchmarks.md#the-client): one thread's `next_id` from the
# client's stock beside an embedded generator's (criterion, client/benches/steady.rs, best of
# 3 runs), and the IDs/s that 1..8 client processes sustain against one and three local
# servers, against their combined layout ceiling. The smoke run builds it in the dev profile,
# runs the criterion bench once in its test mode and the throughput for 0.3 s.
# startup: `flakery next` from process start to first ID for each node ID source, the
# databases and ZooKeeper on loopback (bench/startup/run.py; bench/results/startup.md, and
# with --update-docs the start-up figures of docs/databases.md).
#
# Builds flakery in release mode (the core, the Python package with `pip install .` into a
# virtual environment under target/, the Node addon with the root `npm ci`, the C library),
# installs the peers (Rust: dev-dependencies of bench/rust; Python:
# bench/python/requirements.txt into that virtual environment; Node:
# bench/node/package-lock.json), runs every language, then
# bench/report.py prints the table of ratios, checks the bar and draws the chart.
# The numbers are only as good as the machine is quiet: the load average is recorded, and a
# warning printed when it is above 1.2.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/lib.sh
root="$PWD"
ensure_cargo # every part builds flakery with cargo
# This machine and CI are containers, where the implicit host-local lease is refused: a
# default generator leases from a directory of the bench's own unless one is given.
export FLAKERY_LEASE_DIR="${FLAKERY_LEASE_DIR:-$(target_dir)/bench-leases}"
mkdir -p "$FLAKERY_LEASE_DIR"

smoke=0
update_docs=0
langs="rust,python,node,c,java,server,startup,postgres,client"
only_given=0
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --update-docs) update_docs=1 ;;
    --only)
      only_given=1
      langs="${2:?--only needs a list: rust,python,node,c,java,server,startup,postgres,client}"
      shift
      for lang in ${langs//,/ }; do
        case "$lang" in rust|python|node|c|java|server|startup|postgres|client) ;; *) echo "unknown language: $lang" >&2; exit 2 ;; esac
      done
      ;;
    -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
want() { case ",$langs," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
# The smoke run's default leaves Java and PostgreSQL out (see above).
[ "$smoke" = 1 ] && [ "$only_given" = 0 ] && langs="${langs/,java/}" && langs="${langs/,postgres/}"
if [ "$smoke" = 1 ] && [ "$update_docs" = 1 ]; then
  echo "--update-docs with --smoke would publish the smoke run's figures: choose one" >&2
  exit 2
fi

if [ "$smoke" = 1 ]; then
  out="$root/bench/results/tmp/smoke"
  raw="$out/raw"
  smoke_flag="--smoke"
  profile_dir=debug
  cargo_profile=(--profile dev)
  c_profile=(--profile dev)
  # The CLI and the client's examples of a smoke run: tests/rust's debug graph (as
  # bench/server/run.sh says), not a `-p` build that unifies features anew.
  bins_build=(cargo build --locked --workspace --bins --examples --profile dev)
  # And the criterion benches (named, with --workspace: the same graph), run once each.
  bench_of=(--workspace)
else
  out="$root/bench/results"
  raw="$root/bench/results/tmp/raw"
  smoke_flag=""
  profile_dir=release
  cargo_profile=()
  c_profile=(--release)
  bins_build=()
  bench_of=()
fi
rm -rf "$raw"
mkdir -p "$raw"
target="$(target_dir)"
loadavg() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "? ? ?"; }
load_before="$(loadavg)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "bench: $([ "$smoke" = 1 ] && echo smoke || echo full) run of $langs; load average $load_before"
if [ "$smoke" = 0 ] && awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 1.2) }'; then
  echo "!!!!!!!! the load average is ${load_before%% *}: other work shares the 2 cores, the figures will be noisy !!!!!!!!" >&2
fi
failed=0
# skip_lang LANG WHY: a language that cannot run here. In CI that fails the run; elsewhere
# the run goes on without it, and the report says it was not measured.
skip_lang() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $1 cannot run: $2 (CI=true: nothing may be skipped)" >&2
    failed=1
  else
    echo "!!!!!!!! $1 skipped: $2 !!!!!!!!" >&2
  fi
}
has() { command -v "$1" >/dev/null 2>&1; }
# no_skipped_peers LANG: in CI every peer must have run (their packages are pinned).
no_skipped_peers() {
  [ "${CI:-}" = "true" ] || return 0
  if ! python3 -c 'import json, sys; sys.exit(1 if json.load(open(sys.argv[1])).get("skipped") else 0)' "$raw/$1.json"; then
    echo "FAIL: a $1 generator was skipped (CI=true):" >&2
    python3 -c 'import json, sys; [print("  ", s, file=sys.stderr) for s in json.load(open(sys.argv[1]))["skipped"]]' "$raw/$1.json" || true
    failed=1
  fi
}

# ---- Rust: criterion and the harness, flakery against the peer crates
bench_rust() {
  echo "=== rust: building the bench crate and its peers"
  local of=("${bench_of[@]}")
  [ ${#of[@]} -gt 0 ] || of=(-p flakery-bench)
  quiet cargo bench --locked "${of[@]}" --bench peers --no-run "${cargo_profile[@]}" || { failed=1; return; }
  echo "=== rust: running"
  if BENCH_OUT="$raw/rust.json" BENCH_SMOKE="$smoke" \
    cargo bench --locked -q "${of[@]}" --bench peers "${cargo_profile[@]}" >"$raw/rust.log" 2>&1; then
    grep -E '^(---|per_call/)' "$raw/rust.log" | sed 's/^/  /' || true
  else
    cat "$raw/rust.log" >&2
    echo "FAIL: the Rust bench" >&2
    failed=1
  fi
}
if want rust; then bench_rust; fi

# ---- Python: a virtual environment with flakery (pip install .) and the peers
bench_python() {
  has python3 || { skip_lang python "python3 is not installed"; return; }
  if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    apt_install python3-venv || { skip_lang python "python3-venv is not installed"; return; }
  fi
  local venv="${FLAKERY_BENCH_VENV:-$target/bench-venv}"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  # The smoke run of tests/run.sh installs the release wheel tests/dist built in the same run
  # (built_this_run, tests/lib.sh): `pip install .` would build the same extension with fat
  # LTO once more. A measuring run builds from the checkout.
  local version wheel="" package="$root"
  version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
  [ "$smoke" = 1 ] && wheel="$(ls "$root"/dist/python/flakery-"$version"-*manylinux*.whl 2>/dev/null | head -n 1 || true)"
  if [ -n "$wheel" ] && built_this_run "$wheel"; then
    package="$wheel"
    echo "=== python: installing the peers and the wheel tests/dist built in this run (${wheel#"$root"/})"
  else
    echo "=== python: installing the peers and flakery (pip install . into $venv)"
  fi
  quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q -r bench/python/requirements.txt || { failed=1; return; }
  quiet "$venv/bin/python" -m pip install --disable-pip-version-check --force-reinstall --no-deps "$package" || { failed=1; return; }
  echo "=== python: running"
  if (cd "$raw" && "$venv/bin/python" "$root/bench/python/bench.py" --out "$raw/python.json" $smoke_flag); then
    no_skipped_peers python
  else
    echo "FAIL: the Python bench" >&2
    failed=1
  fi
}
if want python; then bench_python; fi

# ---- Node: flakery from the repository root, the peers from bench/node
bench_node() {
  if ! has node || ! has npm; then
    apt_install nodejs npm || true
  fi
  if ! has node || ! has npm; then
    skip_lang node "node and npm are not installed"
    return
  fi
  if [ "$smoke" = 1 ] && node -e 'require(".").nextId()' >/dev/null 2>&1; then
    echo "=== node: flakery's addon is built already"
  else
    echo "=== node: building flakery's addon (npm ci at the repository root)"
    quiet npm ci --no-audit --no-fund --loglevel=error || { failed=1; return; }
  fi
  echo "=== node: installing the peers (bench/node)"
  (cd bench/node && quiet npm ci --no-audit --no-fund --loglevel=error) || { failed=1; return; }
  echo "=== node: running"
  if node bench/node/bench.cjs --out "$raw/node.json" $smoke_flag; then
    no_skipped_peers node
  else
    echo "FAIL: the Node bench" >&2
    failed=1
  fi
}
if want node; then bench_node; fi

# ---- C: a call through the C ABI, beside the core's plain loop from the Rust run
bench_c() {
  has cc || apt_install gcc libc6-dev || true
  has cc || { skip_lang c "no C compiler (cc)"; return; }
  echo "=== c: building libflakery.a and bench/c/bench.c"
  quiet cargo build --locked -p flakery-c "${c_profile[@]}" || { failed=1; return; }
  mkdir -p "$target/bench-c"
  quiet cc -std=c11 -O2 -Iinclude bench/c/bench.c "$target/$profile_dir/libflakery.a" \
    "${FLAKERY_STATIC_LIBS[@]}" -o "$target/bench-c/bench" || { failed=1; return; }
  echo "=== c: running"
  local args=(10000000 5 400)
  [ "$smoke" = 1 ] && args=(100000 1 5)
  "$target/bench-c/bench" "${args[@]}" >"$raw/c.json" || { echo "FAIL: the C bench" >&2; failed=1; }
}
if want c; then bench_c; fi

# ---- Java: JMH (bench/java), its JSON read by bench/report.py
bench_java() {
  has java || apt_install openjdk-17-jdk-headless || true
  has mvn || apt_install maven || true
  if ! has java || ! has mvn; then
    skip_lang java "java and mvn are not installed"
    return
  fi
  local args=(${JMH_ARGS:--f 1 -wi 3 -w 1s -i 5 -r 1s})
  [ "$smoke" = 1 ] && args=(-f 1 -wi 0 -i 1 -r 100ms)
  echo "=== java: building the jar and the benchmarks, running JMH (${args[*]})"
  if bash bench/java/run.sh "${args[@]}" -rf json -rff "$raw/jmh.json" >"$raw/java.log" 2>&1; then
    grep -E '^(Benchmark|IdBenchmarks|BatchBenchmarks)' "$raw/java.log" | sed 's/^/  /' || true
  else
    tail -n 40 "$raw/java.log" >&2
    echo "FAIL: the Java bench" >&2
    failed=1
    return
  fi
  # Java 17's JNI path too (issue 37 sets a goal on each Java): the same jar, a few benchmarks.
  local java17="${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
  if [ -x "$java17/bin/java" ]; then
    local jdk17_benchmarks
    jdk17_benchmarks="$(python3 -c 'import sys; sys.path.insert(0, "bench"); from reporting import jmh; print(jmh.JDK17_BENCHMARKS)')"
    echo "=== java: the JNI path on Java 17 ($jdk17_benchmarks)"
    if "$java17/bin/java" -jar bench/java/target/benchmarks.jar "$jdk17_benchmarks" "${args[@]}" \
      -rf json -rff "$raw/jmh17.json" >"$raw/java17.log" 2>&1; then
      grep -E '^IdBenchmarks' "$raw/java17.log" | sed 's/^/  /' || true
    else
      tail -n 40 "$raw/java17.log" >&2
      echo "FAIL: the Java 17 bench" >&2
      failed=1
    fi
    # nextId again with the opt-in critical native (docs/java.md; about 10 s).
    local critical_benchmarks critical_flag
    critical_benchmarks="$(python3 -c 'import sys; sys.path.insert(0, "bench"); from reporting import jmh; print(jmh.JDK17_CRITICAL_BENCHMARKS)')"
    critical_flag="$(python3 -c 'import sys; sys.path.insert(0, "bench"); from reporting import jmh; print(jmh.CRITICAL_FLAG)')"
    echo "=== java: Java 17 with $critical_flag ($critical_benchmarks)"
    if "$java17/bin/java" -jar bench/java/target/benchmarks.jar "$critical_benchmarks" "${args[@]}" \
      -jvmArgsPrepend "$critical_flag" -rf json -rff "$raw/jmh17crit.json" >"$raw/java17crit.log" 2>&1; then
      grep -E '^IdBenchmarks' "$raw/java17crit.log" | sed 's/^/  /' || true
    else
      tail -n 40 "$raw/java17crit.log" >&2
      echo "FAIL: the Java 17 bench with $critical_flag" >&2
      failed=1
    fi
  fi
}
if want java; then bench_java; fi

# ---- the server: HTTP and gRPC on loopback, beside nginx
if want server; then
  bash bench/server/run.sh "$raw/server.json" $smoke_flag || { echo "FAIL: the server bench" >&2; failed=1; }
fi

# ---- the PostgreSQL extension under pgbench
if want postgres; then
  postgres_args=(--md "$out/postgres.md")
  [ "$update_docs" = 1 ] && postgres_args+=(--page "$root/docs/benchmarks.md")
  [ "$smoke" = 1 ] && postgres_args+=(1 2)
  bash bench/postgres/run.sh "${postgres_args[@]}" || { echo "FAIL: the PostgreSQL bench" >&2; failed=1; }
fi

# ---- start to first ID: every node ID source, the servers of tests/db and tests/zookeeper
bench_startup() {
  has python3 || { skip_lang startup "python3 is not installed"; return; }
  need openssl openssl
  bash tests/db/install.sh || { skip_lang startup "PostgreSQL / MariaDB could not be installed"; return; }
  bash tests/zookeeper/install.sh || echo "!!!!!!!! startup: no ZooKeeper (tests/zookeeper/install.sh failed): its row is left out !!!!!!!!" >&2
  echo "=== startup: building the flakery command"
  if [ ${#bins_build[@]} -gt 0 ]; then
    quiet "${bins_build[@]}" || { failed=1; return; }
  else
    quiet cargo build --locked -p flakery-cli "${c_profile[@]}" || { failed=1; return; }
  fi
  echo "=== startup: running"
  local args=(--runs 11 --md "$out/startup.md")
  [ "$smoke" = 1 ] && args=(--runs 1 --md "$out/startup.md")
  [ "$update_docs" = 1 ] && args+=(--page "$root/docs/databases.md")
  python3 bench/startup/run.py "$target/$profile_dir/flakery" "$raw/startup.json" "${args[@]}" \
    || { echo "FAIL: the start-up bench" >&2; failed=1; }
}
if want startup; then bench_startup; fi

# ---- the client of `flakery serve`: per call beside the embedded generator, IDs/s of N processes
bench_client() {
  has python3 || { skip_lang client "python3 is not installed"; return; }
  echo "=== client: building flakery and the client's drain"
  if [ ${#bins_build[@]} -gt 0 ]; then
    quiet "${bins_build[@]}" || { failed=1; return; }
  else
    quiet cargo build --locked -p flakery-cli -p flakery-client --bins --examples "${c_profile[@]}" \
      || { failed=1; return; }
  fi
  local args=(--flakery "$target/$profile_dir/flakery" --drain "$target/$profile_dir/examples/drain"
    --out "$raw/client.json" --md "$out/client.md")
  if [ "$smoke" = 1 ]; then
    echo "=== client: the criterion bench once, in its test mode"
    quiet cargo bench --locked --workspace --bench steady --profile dev -- --test \
      || { failed=1; return; }
    args+=(--smoke)
  else
    echo "=== client: building and running the criterion bench (3 runs)"
    quiet cargo bench --locked -p flakery-client --bench steady --no-run || { failed=1; return; }
    local run
    for run in 1 2 3; do
      cargo bench --locked -q -p flakery-client --bench steady >"$raw/client-criterion-$run.log" 2>&1 \
        || { cat "$raw/client-criterion-$run.log" >&2; failed=1; return; }
      args+=(--criterion "$raw/client-criterion-$run.log")
    done
  fi
  [ "$update_docs" = 1 ] && args+=(--page "$root/docs/benchmarks.md")
  echo "=== client: N client processes against 1 and 3 local servers"
  python3 bench/client/run.py "${args[@]}" || { echo "FAIL: the client bench" >&2; failed=1; }
}
if want client; then bench_client; fi

# ---- the table, the bar, the chart
load_after="$(loadavg)"
mode="$([ "$smoke" = 1 ] && echo smoke || echo full)"
python3 - "$raw/meta.json" "$root" "$started" "$mode" "$load_before" "$load_after" <<'EOF'
import json, os, platform, subprocess, sys
out, root, started, mode, load_before, load_after = sys.argv[1:]
def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "?"
cpu = "?"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip(); break
except OSError:
    pass
commit = run("git", "-C", root, "rev-parse", "--short", "HEAD")
if run("git", "-C", root, "status", "--porcelain", "--untracked-files=no"):
    commit += " (with uncommitted changes)"
json.dump({
    "date": started, "mode": mode, "commit": commit,
    "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(),
    "load_before": [float(x) for x in load_before.split() if x != "?"],
    "load_after": [float(x) for x in load_after.split() if x != "?"],
    "rustc": run("rustc", "--version"), "node": run("node", "--version"), "cc": run("cc", "--version").split("\n")[0],
}, open(out, "w"), indent=1)
EOF
# A run of only the server or start-up parts has no languages' table: the results of earlier
# runs (bench/results/{latest.json,table.md,chart.svg}, docs/benchmarks.md) stay as they are.
if want rust || want python || want node || want c || want java; then
  page_args=()
  # The headline figures of README.md, docs/index.md and docs/benchmarks.md come from the same
  # results (bench/report.py DOC_BLOCKS; tests/docs/bench_figures.py checks).
  [ "$update_docs" = 1 ] && page_args=(--page "$root/docs/benchmarks.md" --docs-root "$root")
  echo
  python3 bench/report.py "$raw" "$out" "${page_args[@]}"
  echo "bench: results in ${out#"$root"/}/ (latest.json, table.md, chart.svg); load average $load_before before, $load_after after"
else
  echo "bench: no language was run: ${out#"$root"/}/{latest.json,table.md,chart.svg} left as they are; load average $load_before before, $load_after after"
fi
[ "$failed" -eq 0 ]

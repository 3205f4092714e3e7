#!/usr/bin/env bash
# Where a request of `flakery serve` goes, under wrk's load (2 threads, 64 keep-alive
# connections, as bench/server/run.sh):
#   - by default, the server's user-space instructions per request, counted by callgrind (the
#     server runs under valgrind; collection starts after a warm-up and the count is divided by
#     the requests wrk completed). Instructions, not requests/s, are what to compare between two
#     builds on a shared machine: the count does not move with the machine's load (the kernel's
#     TCP is not counted: it is the same for any change to the server). The per-function counts
#     are in target/profile/callgrind.out (callgrind_annotate, or kcachegrind);
#   - with --record, a `perf record` profile (cpu-clock samples, call graphs from DWARF) of the
#     release server at full speed, its hottest symbols printed. perf counts time, which a
#     loaded machine distorts: use it to see where time goes, callgrind to compare.
#
#   bash bench/server/profile.sh [--record] [--path /v1/id] [--seconds 10] [--bin PATH]
#
# Needs wrk and valgrind, and for --record perf (`apt_install linux-perf`) and a kernel that
# lets a user profile its own processes (kernel.perf_event_paranoid at most 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
record=0 path=/v1/id seconds=10 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --record) record=1 ;;
    --path) path="$2"; shift ;;
    --seconds) seconds="$2"; shift ;;
    --bin) bin="$2"; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
need wrk wrk
if [ "$record" = 1 ]; then
  command -v perf >/dev/null 2>&1 || apt_install linux-perf || { echo "perf is not installed" >&2; exit 1; }
else
  need valgrind valgrind
fi
if [ -z "$bin" ]; then
  ensure_cargo
  quiet cargo build --locked -q -p flakery-cli --bin flakery --profile cli
  bin="$(target_dir)/cli/flakery"
fi
out="$(target_dir)/profile"
mkdir -p "$out"
rm -f "$out"/callgrind.out*
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
lease="$(mktemp -d -t profile-lease-XXXXXX)"
server_pid="" perf_pid=""
cleanup() {
  [ -n "$perf_pid" ] && kill -INT "$perf_pid" 2>/dev/null && wait "$perf_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$lease"
}
trap cleanup EXIT
under=()
[ "$record" = 1 ] || under=(valgrind --tool=callgrind --instr-atstart=no
  --callgrind-out-file="$out/callgrind.out" --log-file="$out/valgrind.log")
env -u FLAKERY_ZOOKEEPER -u FLAKERY_SERVER_TOKEN FLAKERY_LOG=warn FLAKERY_LEASE_DIR="$lease" \
  "${under[@]}" "$bin" serve --listen "127.0.0.1:$port" --worker-id 1 --max-in-flight 100000 &
server_pid=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
url="http://127.0.0.1:$port$path"
# Warm: the connections, the allocator's arenas, the first requests' one-time work.
wrk -t2 -c64 -d2s "$url" >/dev/null
if [ "$record" = 1 ]; then
  perf record -q -e cpu-clock -F 999 --call-graph dwarf,16384 -o "$out/perf.data" \
    -p "$server_pid" 2>"$out/record.log" &
  perf_pid=$!
  sleep 0.3
else
  callgrind_control -i on "$server_pid" >/dev/null 2>&1
fi
wrk -t2 -c64 -d"${seconds}s" "$url" >"$out/wrk.txt"
if [ "$record" = 1 ]; then
  kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=""
else
  callgrind_control -i off "$server_pid" >/dev/null 2>&1
  callgrind_control -d "$server_pid" >/dev/null 2>&1
fi
requests="$(awk '/requests in/ {print $1}' "$out/wrk.txt")"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $requests requests of $path in ${seconds}s"
if [ "$record" = 1 ]; then
  perf report -i "$out/perf.data" --no-children -g none --sort symbol --stdio 2>/dev/null \
    | grep -E '^ +[0-9]' | cut -c1-150 | head -40
  echo "profile: $out/perf.data (perf report -i $out/perf.data)"
else
  # The dump written by `callgrind_control -d` (its name ends in a dump number).
  dump="$(ls -t "$out"/callgrind.out* | head -n 1)"
  total="$(awk '/^totals:/ {print $2}' "$dump")"
  python3 -c "import sys; i, r = int(sys.argv[1]), int(sys.argv[2]); print(f'{i / r:,.0f} instructions/request (user space, server only; {r} requests)')" "$total" "$requests"
  echo "per function: callgrind_annotate $dump | head -60"
fi

#!/usr/bin/env bash
# What separates `flakery serve` from nginx under bench/server/run.sh's single-ID load (wrk,
# 2 threads, 64 keep-alive connections), in measures that a loaded machine moves little:
# per request, the syscalls each server makes (perf's raw_syscalls tracepoint), its CPU time
# (task-clock, user and kernel), its context switches and CPU migrations, counted by
# `perf stat` on the server's processes only, beside the requests wrk completed; wrk's own
# CPU a request and the cores both used over the run (on a quiet machine, under 2 means the
# run was not bound by CPU: the two waited on each other); and with
# --strace, which syscalls (strace -c -f, in a short run of its own: strace slows the
# server, so its totals differ from perf's, its mix does not).
#
#   bash bench/server/compare.sh [--seconds 5] [--bin PATH] [--strace] [-- SERVE FLAGS...]
#
# Flags after `--` go to `flakery serve` (e.g. `-- --max-in-flight 64`). Needs wrk, nginx and perf
# (`apt_install linux-perf`, `kernel.perf_event_paranoid` at most 2, and the tracing file
# system readable for the syscall count: without it that column reads n/a).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
source bench/server/nginx.sh
seconds=5 bin="" trace=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift ;;
    --bin) bin="$2"; shift ;;
    --strace) trace=1 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done
need wrk wrk
need nginx nginx-light
command -v perf >/dev/null 2>&1 || apt_install linux-perf || { echo "perf is not installed" >&2; exit 1; }
[ "$trace" = 0 ] || need strace strace
if [ -z "$bin" ]; then
  ensure_cargo
  quiet cargo build --locked -q -p flakery-cli --bin flakery --profile cli
  bin="$(target_dir)/cli/flakery"
fi
work="$(mktemp -d -t compare-XXXXXX)"
server_pid="" nginx_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

port="$(free_port)"
env -u FLAKERY_ZOOKEEPER -u FLAKERY_SERVER_TOKEN FLAKERY_LOG=warn FLAKERY_LEASE_DIR="$work" \
  "$bin" serve --listen "127.0.0.1:$port" --worker-id 1 --max-in-flight 100000 "${extra[@]}" &
server_pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
body="$(curl -sf "http://127.0.0.1:$port/v1/id")"

# nginx as bench/server/run.sh starts it: the same body, a worker a core, no logging.
nport="$(free_port)"
start_nginx "$work/nginx" "$nport" "$body"

# Every thread of a process (perf stat -p counts the threads that exist when it starts).
threads_of() { ls "/proc/$1/task" | paste -sd,; }
# nginx's workers, not its master (which sleeps).
nginx_workers() { pgrep -P "$nginx_pid" | paste -sd,; }

measure() { # NAME PIDS URL
  wrk -t2 -c64 -d1s "$3" >/dev/null # warm: the connections, the first requests' work
  local events=task-clock,context-switches,cpu-migrations
  perf stat -e raw_syscalls:sys_enter true >/dev/null 2>&1 && events="raw_syscalls:sys_enter,$events"
  perf stat -x, -e "$events" -t "$2" -o "$work/$1.perf" -- sleep "$((seconds + 1))" &
  local perf=$!
  sleep 0.5
  # wrk's own CPU too: client and server share the 2 cores, so a server's rate is bounded by
  # both sides' CPU a request, and the cores used say whether the run was bound by CPU.
  perf stat -x, -e task-clock -o "$work/$1.wrk.perf" -- \
    wrk -t2 -c64 -d"${seconds}s" --latency "$3" >"$work/$1.wrk"
  wait "$perf" || true
}
measure flakery "$(threads_of "$server_pid")" "http://127.0.0.1:$port/v1/id"
measure nginx "$(nginx_workers)" "http://127.0.0.1:$nport/v1/id"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg); wrk -t2 -c64 -d${seconds}s; per request:"
python3 - "$work" <<'PY'
import os, re, sys
work = sys.argv[1]
def row(name):
    wrk = open(os.path.join(work, name + ".wrk")).read()
    requests = int(re.search(r"(\d+) requests in", wrk).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1))
    p99 = re.search(r"^\s+99%\s+(\S+)", wrk, re.M).group(1)
    def counted(path):
        counts = {}
        for line in open(path):
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[2]:
                try:
                    counts[fields[2]] = float(fields[0])
                except ValueError:
                    pass
        return counts
    counts = counted(os.path.join(work, name + ".perf"))
    client = counted(os.path.join(work, name + ".wrk.perf")).get("task-clock")
    per = lambda key, scale=1.0: (f"{counts[key] * scale / requests:.2f}" if key in counts else "n/a")
    # task-clock is in milliseconds; the cores used over wrk's run, both sides together.
    seconds = requests / rps
    wrk_us = "n/a" if client is None else f"{client * 1000.0 / requests:.2f}"
    cores = ("n/a" if client is None or "task-clock" not in counts
             else f"{(counts['task-clock'] + client) / 1000.0 / seconds:.2f}")
    return (name, f"{rps:,.0f}", p99, per("raw_syscalls:sys_enter"), per("task-clock", 1000.0),
            per("context-switches"), per("cpu-migrations"), wrk_us, cores)
head = ("server", "requests/s", "p99", "syscalls", "CPU us", "switches", "migrations",
        "wrk CPU us", "cores used")
rows = [head, row("flakery"), row("nginx")]
widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
for r in rows:
    print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
PY
if [ "$trace" = 1 ]; then
  for name in flakery nginx; do
    if [ "$name" = flakery ]; then pids="$(threads_of "$server_pid")" url="http://127.0.0.1:$port/v1/id"
    else pids="$(nginx_workers)" url="http://127.0.0.1:$nport/v1/id"; fi
    timeout -s INT 4 strace -c -f $(printf -- '-p %s ' ${pids//,/ }) -o "$work/$name.strace" 2>/dev/null &
    trace_pid=$!
    sleep 0.5
    requests="$(wrk -t2 -c64 -d2s "$url" | awk '/requests in/ {print $1}')"
    wait "$trace_pid" || true
    echo "$name under strace, $requests requests; calls per request:"
    awk -v r="$requests" '$4 ~ /^[0-9]+$/ && $NF != "total" {printf "  %-16s %6.2f\n", $NF, $4 / r}' \
      "$work/$name.strace" | head -12
  done
fi

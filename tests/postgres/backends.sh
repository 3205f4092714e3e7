# Sourced by tests/postgres/run.sh (after cluster.sh and its helpers, the server stopped): the
# extension in backends that PostgreSQL itself starts and ends. A parallel query whose workers
# call next_id() (the plan forced, and checked to run next_id in both workers): no duplicate.
# A backend killed with kill -9, which makes the postmaster end every backend and reinitialize
# the shared memory, with the clock set back 10 s meanwhile (libfaketime reading its offset from
# a file): every ID after is above every ID before.

configure "${NODE[@]}" max_worker_processes=8 max_parallel_workers=4
start_server
psql_q "CREATE EXTENSION IF NOT EXISTS flakery" >/dev/null
psql_q "CREATE TABLE par AS SELECT g FROM generate_series(1, 1000000) g; ANALYZE par" >/dev/null
# Parallel query made cheap, and the leader kept out: every row comes from a worker.
PARALLEL="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
  SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off;"
par_query="SELECT count(*) || ' ' || count(DISTINCT id) FROM (SELECT flakery.next_id() AS id FROM par) s"
psql_q "$PARALLEL EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) $par_query" >"$work/parallel.plan"
# The scan under the Gather computes next_id(), and each of the two workers returned rows.
workers="$(python3 - "$work/parallel.plan" <<'EOF'
import re, sys
plan = open(sys.argv[1]).read()
scan = plan[plan.find("Parallel Seq Scan"):]
rows = re.findall(r"Worker \d+:\s+actual rows=(\d+)", scan)
if "Workers Launched: 2" in plan and re.search(r"Output: flakery\.next_id\(\)", scan):
    print(" ".join(rows))
EOF
)"
check "a forced parallel plan runs next_id() in two workers of a Parallel Seq Scan (rows of each: ${workers:-none})" \
  bash -c '[[ "$1" =~ ^[1-9][0-9]*\ [1-9][0-9]*$ ]]' _ "$workers"
equals "the parallel query's 1,000,000 IDs, made by two workers at once, are 1,000,000 distinct IDs" \
  "$PARALLEL $par_query" "1000000 1000000"
stop_server

# kill -9 of one backend. The postmaster reads its clock offset from a file (no cache).
check "libfaketime is installed ($faketime_lib)" test -n "$faketime_lib"
echo "+0" >"$work/clock"
chmod 644 "$work/clock"
CLOCK_FILE="$work/clock" start_server
: >"$work/before-kill"
# A session that takes IDs until it is ended; what it received is recorded (psql prints only
# whole results).
yes "SELECT flakery.next_ids(100) FROM pg_sleep(0.01);" |
  "$PGBIN/psql" -X -q -A -t -h "$work" -p "$port" -U postgres >"$work/before-kill" 2>/dev/null &
taker=$!
PGAPPNAME=flakery-victim "$PGBIN/psql" -X -q -A -t -h "$work" -p "$port" -U postgres \
  -c "SELECT flakery.next_id() FROM pg_sleep(600)" >/dev/null 2>&1 &
victim=""
for _ in $(seq 1 100); do
  victim="$(psql_q "SELECT pid FROM pg_stat_activity WHERE application_name = 'flakery-victim'")"
  [ -n "$victim" ] && [ "$(wc -l <"$work/before-kill")" -ge 2000 ] && break
  sleep 0.1
done
echo "-10" >"$work/clock"
log_lines="$(wc -l <"$work/server.log")"
kill -KILL "$victim"
wait "$taker" || true
for _ in $(seq 1 600); do "$PGBIN/pg_isready" -q -h "$work" -p "$port" && break; sleep 0.1; done
before_count="$(wc -l <"$work/before-kill")"
before_max="$(sort -n "$work/before-kill" | tail -n 1)"
check "the kill -9 of a backend made the postmaster end every backend and reinitialize (server log)" \
  grep -q "all server processes terminated; reinitializing" <(tail -n "+$((log_lines + 1))" "$work/server.log")
# The clock is 10 s behind the last ID: a refusal until it passes the floor, then IDs.
: >"$work/after-kill"
take_ids 1 "$work/after-kill"
after="$(sort -n "$work/after-kill" | sed -n 1p)"
echo "kill -9 of backend $victim: $before_count IDs before, the last $before_max; after the crash restart (clock 10 s back): $refusals refusals, then IDs from $after"
check "after the crash restart nothing is refused but clock_moved_backwards ${other:+(it refused: $other)}" test -z "$other"
check "after a kill -9 of a backend and the crash restart, every ID is above every earlier one ($after > $before_max)" \
  test "$before_count" -gt 0 -a "${after:-0}" -gt "${before_max:-0}"
stop_server

# Sourced by tests/postgres/run.sh (after cluster.sh and its helpers): node IDs leased by the
# extension's background worker (docs/postgres.md, "Node IDs from a lease") from a lease table
# in another PostgreSQL server, started by tests/db/dbserver.py on 127.0.0.1 and stopped by
# PID. Two clusters take distinct node IDs; the coordinator killed: next_id refuses with the
# core's code once the grant runs out, and goes on once it is back; kill -9 of the worker and of
# the postmaster during concurrent inserts: no duplicate, counted over every row of both
# clusters; the URL's password in no message, log or SHOW for a non-superuser.

# A short term, so that a lost coordinator shows within seconds (the worker keeps the node ID
# until half of it past the coordinator's last answer).
TERM_MS=4000
coordinator_json="$(python3 tests/db/dbserver.py start postgres)" ||
  skip_or_fail "tests/db/dbserver.py cannot start a PostgreSQL server for the lease table"
# field_of JSON NAME: a field of the JSON object a server harness printed as it started.
field_of() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
coordinator_dir="$(field_of "$coordinator_json" dir)"
coordinator_url="$(field_of "$coordinator_json" url)"
coordinator_password="$(field_of "$coordinator_json" password)"

# The second cluster: its own data directory and port, same binaries and socket directory.
data1="$data" port1="$port"
data2="$work/data2"
port2=5433 # the name of its socket in $work, beside cluster 1's
as_pg "$PGBIN/initdb" -D "$data2" -U postgres -A trust --no-sync >"$work/initdb2.log" 2>&1 ||
  { cat "$work/initdb2.log" >&2; exit 1; }
pid1="" pid2=""
# on_cluster N: start_server, stop_server, crash_server, psql_q and configure act on cluster N.
current=1
on_cluster() {
  if [ "$current" = 1 ]; then pid1="$pid"; else pid2="$pid"; fi
  current="$1"
  if [ "$1" = 1 ]; then data="$data1" port="$port1" pid="$pid1"; else data="$data2" port="$port2" pid="$pid2"; fi
}
lease_cleanup() {
  on_cluster 2
  [ -n "$pid" ] && stop_server
  on_cluster 1
  python3 tests/db/dbserver.py stop "$coordinator_dir" >/dev/null 2>&1 || true
}
trap 'lease_cleanup; cleanup' EXIT

LEASED=(shared_preload_libraries=flakery "flakery.database_url='$coordinator_url'"
  flakery.namespace=pgtest "flakery.session_timeout_ms=$TERM_MS")
# node_of: the datacenter/worker a new ID of the current cluster carries, or the refusal (for
# the check that reads it).
node_of() {
  psql_q "SELECT (d).datacenter_id || '/' || (d).worker_id FROM (SELECT flakery.decode(flakery.next_id()) AS d) s" 2>&1 || true
}
# worker_pid: the current cluster's lease worker.
worker_pid() { child_named "$pid" "flakery lease worker"; }
# wait_ready: after a crash the postmaster reinitializes; wait until it answers again.
wait_ready() {
  until "$PGBIN/pg_isready" -q -h "$work" -p "$port"; do sleep 0.1; done
}

# two_clusters WHAT SETTINGS...: both clusters started with SETTINGS; each leases a node ID
# from WHAT, and the two differ. Leaves cluster 2 current.
two_clusters() {
  local what="$1" node1 node2
  shift
  for n in 1 2; do
    on_cluster "$n"
    configure "$@"
    start_server
    psql_q "CREATE EXTENSION IF NOT EXISTS flakery" >/dev/null
  done
  on_cluster 1
  node1="$(node_of)"
  on_cluster 2
  node2="$(node_of)"
  echo "node IDs leased from $what: cluster 1 $node1, cluster 2 $node2"
  check "each cluster's worker leases a node ID from $what ($node1, $node2)" \
    grep -Eq '^[0-9]+/[0-9]+$' <<<"$node1"$'\n'"$node2"
  check "two clusters on one $what take distinct node IDs" test "$node1" != "$node2"
}
two_clusters "lease table" "${LEASED[@]}"
on_cluster 1
held="$(python3 tests/db/dbserver.py sql "$coordinator_dir" "SELECT count(*) FROM flakery_node_leases WHERE namespace = 'pgtest' AND holder IS NOT NULL" 2>&1 || true)"
check "the lease table in the other server holds both clusters' claims (found: $held)" test "$held" = 2
check "one lease worker runs under the postmaster, titled 'postgres: flakery lease worker'" \
  test "$(worker_pid | wc -l)" = 1
psql_q "CREATE ROLE reader LOGIN" >/dev/null
refuses "a non-superuser cannot read flakery.database_url (it holds a password)" \
  "SET ROLE reader; SHOW flakery.database_url" "must be superuser"

# ---- Concurrent inserts on both clusters, with kill -9 of a worker and of a postmaster.
for n in 1 2; do
  on_cluster "$n"
  psql_q "CREATE TABLE leased (id bigint DEFAULT flakery.next_id(), session int)" >/dev/null
done
echo "INSERT INTO leased (session) VALUES (:client_id);" >"$work/leased.sql"
# inserts SECONDS: 8 sessions inserting into the current cluster, in the background ($inserting).
inserts() {
  "$PGBIN/pgbench" -n -h "$work" -p "$port" -U postgres -c 8 -j 2 -T "$1" -f "$work/leased.sql" postgres \
    >>"$work/pgbench-leased.log" 2>&1 &
  inserting=$!
}
rows_of() { psql_q "SELECT count(*) FROM leased"; }

on_cluster 2
inserts 6
on_cluster 1
inserts 6
sleep 2
before_kill="$(rows_of)"
worker="$(worker_pid)"
kill -KILL "$worker"
echo "killed the lease worker ($worker) of cluster 1 with kill -9, after $before_kill rows"
wait "$inserting" || true # its sessions end with the crash the postmaster makes of it
wait_ready
after="$(node_of)"
check "after kill -9 of the worker, the postmaster restarts it and next_id goes on ($after)" \
  grep -Eq '^[0-9]+/[0-9]+$' <<<"$after"
check "a restarted worker is a new worker process" test -n "$(worker_pid)" -a "$(worker_pid)" != "$worker"
inserts 4
sleep 2
crash_server
wait "$inserting" || true
echo "killed cluster 1's postmaster and all its processes with kill -9"
start_server
inserts 3
wait "$inserting" || true
on_cluster 2
wait "$inserting" || true # the six seconds of cluster 2
ids="$work/leased-ids"
: >"$ids"
for n in 1 2; do
  on_cluster "$n"
  psql_q "SELECT id FROM leased" >>"$ids"
done
total="$(wc -l <"$ids")"
dups="$(sort "$ids" | uniq -d | wc -l)"
echo "leased inserts over both clusters: $total rows, $dups duplicated IDs"
check "concurrent inserts on two leased clusters, through kill -9 of a worker and of a postmaster: $total rows, no duplicate" \
  test "$total" -gt 1000 -a "$dups" = 0
on_cluster 1
equals "no NULL ID among the rows (every insert had its default)" \
  "SELECT count(*) FROM leased WHERE id IS NULL" "0"

# outage WHAT SETTING PASSWORD STOP... -- RESUME...: a session that calls next_id every 50 ms
# (as a pooled connection does) while the coordinator is stopped (STOP) is refused with the
# core's code once its grant runs out, naming SETTING and not PASSWORD; resumed (RESUME), a
# session's next_id goes on above every ID before.
outage() {
  local what="$1" setting="$2" password="$3" stop=() resume=() last refusal="" resumed=""
  shift 3
  while [ "$1" != "--" ]; do stop+=("$1"); shift; done
  shift
  resume=("$@")
  psql_q "DO \$\$ DECLARE last bigint; BEGIN
      FOR i IN 1..1200 LOOP
        BEGIN
          last := flakery.next_id();
        EXCEPTION WHEN others THEN
          RAISE NOTICE 'last %, refused: %', last, SQLERRM;
          RETURN;
        END;
        IF i = 20 THEN RAISE NOTICE 'running'; END IF;
        PERFORM pg_sleep(0.05);
      END LOOP;
      RAISE NOTICE 'last %, never refused', last;
    END \$\$" >"$work/outage.log" 2>&1 &
  local session=$!
  until grep -qs running "$work/outage.log" || ! kill -0 "$session" 2>/dev/null; do sleep 0.1; done
  "${stop[@]}"
  wait "$session" || true
  refusal="$(sed -n 's/^NOTICE:  last [0-9]*, refused: //p' "$work/outage.log")"
  last="$(sed -n 's/^NOTICE:  last \([0-9]*\), .*/\1/p' "$work/outage.log")"
  echo "$what stopped: $(grep -v running "$work/outage.log")"
  check "$what stopped: a session's next_id refuses with the core's code once its grant runs out" \
    grep -Eq '^(lease_lost|coordinator_unavailable): ' <<<"$refusal"
  check "$what stopped: the refusal names the setting ($setting)" grep -qF "$setting" <<<"$refusal"
  check "$what stopped: the refusal does not show the password" \
    bash -c '! grep -qF -- "$1" <<<"$2"' _ "$password" "$refusal"
  "${resume[@]}" >/dev/null
  for _ in $(seq 1 600); do
    if resumed="$(psql_q "SELECT flakery.next_id()" 2>/dev/null)"; then break; fi
    resumed=""
    sleep 0.05
  done
  check "$what back: next_id goes on, above every ID before ($resumed > $last)" \
    test -n "$resumed" -a "${resumed:-0}" -gt "$last"
}
# outage_then_stop WHAT SETTING PASSWORD STOP... -- RESUME...: after two_clusters, cluster 2
# stopped and the outage (above) run on cluster 1, which is then stopped; PASSWORD is in no
# line of the server log.
outage_then_stop() {
  stop_server
  on_cluster 1
  outage "$@"
  stop_server
  check "no password of $1 in the server log" bash -c '! grep -qF -- "$1" "$2"' _ "$3" "$work/server.log"
}
outage "the lease table's server (kill -9)" flakery.database_url "$coordinator_password" \
  python3 tests/db/dbserver.py kill "$coordinator_dir" -- \
  python3 tests/db/dbserver.py restart "$coordinator_dir"
stop_server
on_cluster 2
stop_server
on_cluster 1

# ---- The settings' refusals.
refuses_with "${LEASED[@]}" flakery.worker_id=3 -- \
  "flakery.worker_id and flakery.database_url both set: refuses, naming the two" \
  "^ERROR:  invalid_argument: flakery.worker_id and flakery.database_url are both set"
refuses_with "${LEASED[@]}" "flakery.zookeeper='127.0.0.1:1'" -- \
  "flakery.zookeeper and flakery.database_url both set: refuses, naming the two" \
  "^ERROR:  invalid_argument: flakery.zookeeper and flakery.database_url are both set"
refuses_with shared_preload_libraries=flakery "flakery.database_url='postgres://u:hunter2secret@127.0.0.1:1/db'" \
  "flakery.session_timeout_ms=$TERM_MS" -- \
  "a lease table nobody serves: refuses with coordinator_unavailable, naming the setting" \
  "^ERROR:  coordinator_unavailable: .*flakery.database_url"
check "no password (the coordinator's, or hunter2secret) in the server log" \
  bash -c '! grep -qF -e "$1" -e hunter2secret "$2"' _ "$coordinator_password" "$work/server.log"

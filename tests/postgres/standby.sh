# Sourced by tests/postgres/run.sh after lease.sh (whose two clusters, helpers and lease table
# it uses): a streaming standby (pg_basebackup -R) of a primary, both on sockets in $work, promoted
# after a kill -9 of the primary (docs/postgres.md, "Standbys"). In recovery a standby refuses
# next_id; promoted, with the same node ID and its clock 10 s behind the primary's, it issues
# only IDs above every ID the primary's clients received, because the high-water mark is in
# the WAL the standby replayed. With a leased node ID, the promoted standby leases one of its
# own. Cluster 1 and cluster 2 change roles: each standby is made from the other's data.

# make_standby FROM_PORT DIR: DIR (emptied) becomes a streaming standby of the server on
# FROM_PORT, with standby.signal and primary_conninfo written by pg_basebackup -R.
make_standby() {
  rm -rf "$2"
  as_pg "$PGBIN/pg_basebackup" -h "$work" -p "$1" -U postgres -D "$2" -R -X stream \
    --checkpoint=fast --no-sync >"$work/basebackup.log" 2>&1 ||
    { cat "$work/basebackup.log" >&2; exit 1; }
}
# promote: the current cluster, a standby, promoted (pg_ctl waits until it is a primary).
promote() {
  as_pg "$PGBIN/pg_ctl" promote -w -D "$data" >>"$work/promote.log" 2>&1 ||
    { cat "$work/promote.log" >&2; exit 1; }
}
in_recovery() { psql_q "SELECT pg_is_in_recovery()"; }
# walreceiver_of POSTMASTER: the WAL receiver among a standby's processes.
walreceiver_of() { child_named "$1" walreceiver; }
# make_synchronous: the current cluster's standby made synchronous
# (synchronous_standby_names = '*', reloaded), once it is seen as such.
make_synchronous() {
  psql_q "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
  psql_q "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 1 300); do
    [ "$(psql_q "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ] && break
    sleep 0.1
  done
}

# ---- A fixed node ID (datacenter 3, worker 7) on the primary and on its standby.
on_cluster 1
configure "${NODE[@]}"
start_server
make_standby "$port1" "$data2"
on_cluster 2
configure "${NODE[@]}"
# The standby's clock is 10 s behind: promoted, it reads a time its primary passed.
start_server -10
equals "a streaming standby of the primary is in recovery" "SELECT pg_is_in_recovery()" "t"
refuses "a standby in recovery refuses next_id (read-only), saying why" \
  "SELECT flakery.next_id()" "^ERROR:  invalid_argument: this server is a standby in recovery"

# Synchronous replication: each new mark waits for the standby's confirmation, as a commit
# does. The standby's WAL receiver stopped (SIGSTOP), a wait canceled (statement_timeout)
# refuses instead of issuing under a mark the standby may not have.
walreceiver="$(walreceiver_of "$pid")"
on_cluster 1
make_synchronous
equals "with a synchronous standby, next_id issues (its mark confirmed by the standby)" \
  "SELECT flakery.next_id() > 0" "t"
check "the standby's WAL receiver found ($walreceiver)" test -n "$walreceiver"
kill -STOP "$walreceiver"
# Past the look-ahead of the last mark: the next ID needs a new one.
sleep 1
refuses "the synchronous standby stopped, a canceled wait for the mark's confirmation refuses" \
  "SET statement_timeout = '2s'; SELECT flakery.next_id()" \
  "^ERROR:  lease_lost: the synchronous standby did not confirm the high-water mark"
kill -CONT "$walreceiver"
psql_q "ALTER SYSTEM RESET synchronous_standby_names" >/dev/null
psql_q "SELECT pg_reload_conf()" >/dev/null

# Two sessions take IDs from the primary until it is killed (asynchronous replication, the
# default); what each client received is recorded (psql prints only whole results).
issuers=()
for s in 1 2; do
  yes "SELECT flakery.next_ids(100) FROM pg_sleep(0.01);" |
    "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres \
      >"$work/primary-ids.$s" 2>/dev/null &
  issuers+=($!)
done
sleep 2
crash_server
for p in "${issuers[@]}"; do wait "$p" || true; done
cat "$work"/primary-ids.* >"$work/primary-ids"
primary_count="$(wc -l <"$work/primary-ids")"
primary_max="$(sort -n "$work/primary-ids" | tail -n 1)"
echo "the primary's clients received $primary_count IDs before its kill -9 (the last $primary_max)"

on_cluster 2
promote
equals "promoted, the standby is a primary" "SELECT pg_is_in_recovery()" "f"
# Its clock reads a time the primary passed: it refuses until the clock passes the primary's
# last mark, then issues. 20 batches of 1000 IDs.
: >"$work/promoted-ids"
take_ids 20 "$work/promoted-ids"
promoted_count="$(wc -l <"$work/promoted-ids")"
promoted_min="$(sort -n "$work/promoted-ids" | sed -n 1p)"
dups="$(sort "$work/primary-ids" "$work/promoted-ids" | uniq -d | wc -l)"
echo "the promoted standby (clock 10 s back): $refusals refusals (clock_moved_backwards), then $promoted_count IDs from $promoted_min; $dups IDs also the primary's"
check "the promoted standby refuses nothing but clock_moved_backwards ${other:+(it refused: $other)}" test -z "$other"
check "the promoted standby, same node ID, clock 10 s back: $promoted_count IDs, every one above the primary's last ($promoted_min > $primary_max)" \
  test "$primary_count" -gt 0 -a "$promoted_count" = 20000 -a "${promoted_min:-0}" -gt "${primary_max:-0}"
check "no ID of the promoted standby is one the primary issued ($dups of $((primary_count + promoted_count)))" \
  test "$dups" = 0
stop_server

# ---- Leased node IDs: the promoted standby leases a node ID of its own. Cluster 2 (now a
# primary) serves, cluster 1 is made its standby.
configure "${LEASED[@]}"
start_server
primary_node="$(node_of)"
make_standby "$port2" "$data1"
on_cluster 1
configure "${LEASED[@]}"
start_server
refuses "a standby with flakery.database_url refuses next_id in recovery" \
  "SELECT flakery.next_id()" "^ERROR:  invalid_argument: this server is a standby in recovery"
on_cluster 2
crash_server
on_cluster 1
promote
standby_node="$(node_of)"
echo "leased node IDs: the primary $primary_node, its promoted standby $standby_node"
check "a promoted standby with flakery.database_url leases a node ID of its own ($standby_node, the primary's $primary_node)" \
  bash -c '[[ "$1" =~ ^[0-9]+/[0-9]+$ && "$2" =~ ^[0-9]+/[0-9]+$ && "$1" != "$2" ]]' _ "$standby_node" "$primary_node"
stop_server

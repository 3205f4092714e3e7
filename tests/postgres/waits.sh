# Sourced by tests/postgres/run.sh after standby.sh (its two clusters and helpers): the
# extension waits as PostgreSQL does (docs/postgres.md, "Synchronous standbys"). With the
# synchronous standby's WAL receiver stopped (SIGSTOP), a cancel, a statement timeout, a
# terminate and a fast shutdown each end the wait of the backend that writes the mark (in
# SyncRep) and of those queued behind it (on the extension's condition variable), checked as an
# order of events: the session is seen waiting, the interrupt is sent, the session's error
# arrives, and only then is the receiver resumed. A terminated writer gives the writing back.
# A session that lowers its own synchronous_commit still waits; flakery.synchronous_mark = off,
# a server setting that no session can change, does not. Then 1,000 marks under
# synchronous_commit = remote_apply against a healthy standby, none refused (the primary's
# clock sped up 1,000 times by faketime, so that many calls need a new mark).

# sync_pair [FAKETIME]: cluster 1 made anew and started (its clock changed by FAKETIME), and
# cluster 2 made anew as its synchronous standby. Leaves cluster 1 current.
# fresh_cluster: cluster 1 stopped and made anew (initdb), current.
fresh_cluster() {
  on_cluster 2
  [ -z "$pid" ] || stop_server
  on_cluster 1
  [ -z "$pid" ] || stop_server
  rm -rf "$data1"
  as_pg "$PGBIN/initdb" -D "$data1" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1 ||
    { cat "$work/initdb.log" >&2; exit 1; }
}
sync_pair() {
  fresh_cluster
  # No timer of the primary's that its sped-up clock would fire at once.
  configure "${NODE[@]}" wal_sender_timeout=0 checkpoint_timeout=1d autovacuum=off
  start_server ${1:+"$1"}
  psql_q "CREATE EXTENSION flakery" >/dev/null
  make_standby "$port1" "$data2"
  on_cluster 2
  configure "${NODE[@]}"
  start_server
  on_cluster 1
  # Synchronous once the standby runs (before, the commits above would wait for it).
  make_synchronous
}

declare -A session_pid
# session NAME SQL: a psql session named NAME (its application_name) runs SQL on cluster 1 in
# the background; its output goes to $work/NAME.out.
session() {
  PGAPPNAME="$1" "$PGBIN/psql" -X -q -A -t -h "$work" -p "$port" -U postgres -c "$2" \
    >"$work/$1.out" 2>&1 &
  session_pid[$1]=$!
}
# signal FUNCTION NAME: pg_cancel_backend or pg_terminate_backend of the session NAME.
signal() {
  psql_q "SELECT $1(pid) FROM pg_stat_activity WHERE application_name = '$2'" >/dev/null
}
# waits_on WHAT NAME EVENT: the session NAME is seen waiting on EVENT (pg_stat_activity).
waits_on() {
  local seen=""
  for _ in $(seq 1 300); do
    seen="$(psql_q "SELECT coalesce(wait_event, 'none') FROM pg_stat_activity WHERE application_name = '$2'")"
    [ "$seen" = "$3" ] && break
    sleep 0.1
  done
  check "$1 (waits on $3; seen: ${seen:-no session})" test "$seen" = "$3"
}
receiver_stopped() {
  local stat
  stat="$(cat "/proc/$stopped_receiver/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" = T ]
}
# ends_while_stopped WHAT NAME PATTERN: after an interrupt was sent, the session NAME ends, its
# output matching PATTERN, while the standby's WAL receiver is still stopped.
ends_while_stopped() {
  local session="${session_pid[$2]}"
  for _ in $(seq 1 600); do
    alive "$session" || break
    sleep 0.1
  done
  if alive "$session"; then
    fail "$1: the session had not ended 60 s after, the standby still stopped"
  elif ! receiver_stopped; then
    fail "$1: the standby's WAL receiver was not stopped any more when the session ended"
  elif grep -Eq -- "$3" "$work/$2.out"; then
    pass "$1"
  else
    fail "$1: the session's output was: $(cat "$work/$2.out")"
  fi
}
NOT_CONFIRMED="ERROR:  lease_lost: the synchronous standby did not confirm the high-water mark"
TERMINATED="terminating connection due to administrator command"

# ---- The synchronous standby's WAL receiver stopped.
sync_pair
stopped_receiver="$(walreceiver_of "$pid2")"
check "the synchronous standby's WAL receiver found ($stopped_receiver)" test -n "$stopped_receiver"
trap 'kill -CONT "$stopped_receiver" 2>/dev/null || true; lease_cleanup; cleanup' EXIT
kill -STOP "$stopped_receiver"
# Past the look-ahead of the last mark: the next ID needs a new one.
sleep 1

session writer "SELECT flakery.next_id()"
waits_on "the backend that writes the mark waits for the stopped standby" writer SyncRep
session canceled "SELECT flakery.next_id()"
session timed_out "SET statement_timeout = '3s'; SELECT flakery.next_id()"
session terminated "SELECT flakery.next_id()"
waits_on "a second session waits for the writer on the extension's condition variable" canceled Extension
waits_on "a third one too" terminated Extension
signal pg_cancel_backend canceled
ends_while_stopped "pg_cancel_backend ends the wait of a queued session (canceling statement)" \
  canceled "ERROR:  canceling statement due to user request"
ends_while_stopped "statement_timeout ends the wait of a queued session" \
  timed_out "ERROR:  canceling statement due to statement timeout"
signal pg_terminate_backend terminated
ends_while_stopped "pg_terminate_backend ends the wait of a queued session" terminated "$TERMINATED"
signal pg_cancel_backend writer
ends_while_stopped "pg_cancel_backend ends the writer's wait for the standby, which refuses (lease_lost)" \
  writer "$NOT_CONFIRMED"

# A writer terminated: the writing is given back, and the next session takes it.
session writer2 "SELECT flakery.next_id()"
waits_on "a new writer waits for the standby" writer2 SyncRep
session next "SELECT flakery.next_id()"
waits_on "a session queues behind it" next Extension
signal pg_terminate_backend writer2
ends_while_stopped "pg_terminate_backend ends the writer's wait for the standby" writer2 "$TERMINATED"
waits_on "the queued session then writes the mark itself (the terminated writer gave the writing back)" \
  next SyncRep
signal pg_cancel_backend next
ends_while_stopped "and its wait ends with a cancel" next "$NOT_CONFIRMED"

# synchronous_commit is the session's: it decides nothing for the mark.
session local "SET synchronous_commit = local; SELECT flakery.next_id()"
waits_on "a session that SETs synchronous_commit = local still waits for the standby when it writes a mark" \
  local SyncRep
signal pg_cancel_backend local
ends_while_stopped "and refuses when its wait is canceled" local "$NOT_CONFIRMED"
refuses "a session cannot SET flakery.synchronous_mark" \
  "SET flakery.synchronous_mark = off" 'parameter "flakery.synchronous_mark" cannot be changed now'
# reload_setting VALUE: flakery.synchronous_mark set in postgresql.auto.conf, reloaded, and seen.
reload_setting() {
  if [ "$1" = default ]; then
    psql_q "ALTER SYSTEM RESET flakery.synchronous_mark" >/dev/null
  else
    psql_q "ALTER SYSTEM SET flakery.synchronous_mark = $1" >/dev/null
  fi
  psql_q "SELECT pg_reload_conf()" >/dev/null
  local want="${2:-$1}"
  for _ in $(seq 1 100); do
    [ "$(psql_q "SHOW flakery.synchronous_mark")" = "$want" ] && break
    sleep 0.1
  done
}
reload_setting off
equals "with flakery.synchronous_mark = off (reloaded), next_id issues without the stopped standby" \
  "SET statement_timeout = '60s'; SELECT flakery.next_id() > 0" "t"
reload_setting default on
# The mark that next_id wrote covers the next 500 ms: past it, the next ID needs a new one.
sleep 1

# A fast shutdown ends every wait (the postmaster itself then waits for its WAL sender).
session writer3 "SELECT flakery.next_id()"
waits_on "another writer waits for the standby" writer3 SyncRep
session queued "SELECT flakery.next_id()"
waits_on "a session queues behind it" queued Extension
kill -INT "$pid"
ends_while_stopped "a fast shutdown ends the writer's wait" writer3 "$TERMINATED"
ends_while_stopped "a fast shutdown ends the queued session's wait" queued "$TERMINATED"
kill -CONT "$stopped_receiver"
while alive "$pid"; do sleep 0.1; done
pid=""

# ---- 1,000 marks under remote_apply, the standby healthy: none refused. The primary's clock
# runs 1,000 times fast: 500 ms of look-ahead pass in 0.5 ms, and many calls write a mark.
sync_pair "+0 x1000"
start_lsn="$(psql_q "SELECT pg_current_wal_insert_lsn()")"
marks=0
: >"$work/marks.out"
: >"$work/marks.err"
for _ in $(seq 1 80); do
  yes "SELECT flakery.next_id();" | head -n 250 |
    PGOPTIONS="-c synchronous_commit=remote_apply" "$PGBIN/psql" -X -q -A -t -h "$work" \
      -p "$port" -U postgres >>"$work/marks.out" 2>>"$work/marks.err" || true
  end_lsn="$(psql_q "SELECT pg_current_wal_insert_lsn()")"
  marks="$({ as_pg "$PGBIN/pg_waldump" -p "$data/pg_wal" -s "$start_lsn" -e "$end_lsn" 2>/dev/null || true; } |
    grep -c "^rmgr: custom174 " || true)"
  [ "$marks" -lt 1000 ] || break
done
refused="$(grep -c "ERROR" "$work/marks.err" || true)"
issued="$(wc -l <"$work/marks.out")"
echo "remote_apply: $marks marks in the WAL, $issued IDs issued, $refused refused ($(head -n 1 "$work/marks.err"))"
check "1,000 marks under synchronous_commit = remote_apply with a healthy synchronous standby: none refused ($marks marks, $refused refused)" \
  test "$marks" -ge 1000 -a "$refused" = 0 -a "$issued" -gt 0
# What follows gets a cluster without a synchronous standby or a mark ahead of the clock.
fresh_cluster

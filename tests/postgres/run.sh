#!/usr/bin/env bash
# The PostgreSQL extension (docs/postgres.md) against a real PostgreSQL 15 that this script
# starts on 127.0.0.1 with temporary data and stops by PID: the SQL surface and its markings,
# many sessions inserting with DEFAULT flakery.next_id() (duplicates counted), every refusal,
# pg_dump/pg_restore of a table that uses it, a kill -9 of the postmaster followed by
# restarts with the clock set back (faketime), node IDs leased by the extension's background
# worker (lease.sh: a lease table in another PostgreSQL server; lease_mysql.sh: in MariaDB;
# lease_zookeeper.sh: ZooKeeper), a parallel query and a kill -9 of one backend (backends.sh),
# a streaming standby promoted after a kill -9 of its primary (standby.sh), and every wait for a
# stopped synchronous standby ended by a cancel, a timeout, a terminate or a shutdown, and
# 1,000 marks under remote_apply (waits.sh).
#
# It builds the extension with plain cargo (no cargo-pgrx: PGRX_PG_CONFIG_PATH names
# pg_config) and generates its SQL script from the schema pgrx embeds in the library
# (postgres/sqlgen), installs the three files into PostgreSQL's directories, and removes them
# when it ends.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
ensure_cargo

# Release, the build that ships: dist/build.sh postgres (tests/dist, in another lane of
# tests/run.sh) runs the very same cargo command, so the two areas share one build (the second
# waits on cargo's lock of postgres/target and finds it fresh) instead of making an unoptimized
# one here and a release one there.
PG_PROFILE=release
source tests/postgres/cluster.sh

# refuses WHAT SQL PATTERN: the statement fails, and its message matches PATTERN.
refuses() {
  local out
  if out="$(psql_q "$2" 2>&1)"; then
    fail "$1: it succeeded ($out)"
  elif grep -Eq -- "$3" <<<"$out"; then
    pass "$1"
  else
    fail "$1: the message was: $out"
  fi
}
# equals WHAT SQL EXPECTED
equals() {
  local out
  out="$(psql_q "$2" 2>&1)" || true
  if [ "$out" = "$3" ]; then pass "$1"; else fail "$1: expected '$3', got '$out'"; fi
}

# ---- The SQL surface (the server loads flakery at start, with a node ID).
configure "${NODE[@]}"
start_server
psql_q "CREATE EXTENSION flakery" >/dev/null
equals "every function in schema flakery, with its volatility, strictness and parallel safety" \
  "SELECT string_agg(p.proname || ':' || p.provolatile::text || p.proisstrict::int || p.proparallel::text, ' ' ORDER BY p.proname)
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'flakery'" \
  "compose:i1s decode:i1s from_base32:i1s from_base62:i1s layouts:i1s next_id:v1s next_ids:v1s to_base32:i1s to_base62:i1s"
equals "compose at the twitter epoch with every other field 0 is ID 0" \
  "SELECT flakery.compose('2010-11-04 01:42:54.657+00')" "0"
expected=$(((1 << 22) | (1 << 17) | (2 << 12) | 3))
equals "compose places datacenter, worker and sequence as the twitter layout says" \
  "SELECT flakery.compose('2010-11-04 01:42:54.658+00', 1, 2, 3)" "$expected"
equals "decode takes it apart (time as timestamptz, UTC)" \
  "SET timezone = 'UTC'; SELECT (d).time, (d).timestamp_ms, (d).datacenter_id, (d).worker_id, (d).sequence, (d).fields FROM (SELECT flakery.decode($expected) AS d) s" \
  '2010-11-04 01:42:54.658+00|1288834974658|1|2|3|{"time": 1, "worker": 2, "sequence": 3, "datacenter": 1}'
equals "a layout by spec string, with a constant field, round-trips through compose and decode" \
  "SELECT (flakery.decode(flakery.compose('2020-01-01+00', 0, 5, 9, 'vesta-min-granularity', '{\"version\": 0, \"method\": 2}'), 'vesta-min-granularity')).fields->>'method'" "2"
equals "an unsigned layout (discord) reads an ID of 2^63 and above as the bigint of the same bits" \
  "SELECT id < 0 AND (flakery.decode(id, 'discord')).timestamp_ms = 4102444800000 FROM (SELECT flakery.compose('2100-01-01+00', 1, 1, 1, 'discord') AS id) s" "t"
equals "base 32 and base 62 round-trip and sort as the IDs do" \
  "SELECT bool_and(flakery.from_base32(flakery.to_base32(i)) = i AND flakery.from_base62(flakery.to_base62(i)) = i)
      AND array_agg(flakery.to_base32(i) ORDER BY i) = array_agg(flakery.to_base32(i) ORDER BY flakery.to_base32(i) COLLATE \"C\")
     FROM (SELECT (random() * 9.2e18)::bigint AS i FROM generate_series(1, 500)) s" "t"
equals "layouts() lists the presets with their spec strings" \
  "SELECT count(*) || ' ' || (SELECT spec FROM flakery.layouts() WHERE name = 'instagram') FROM flakery.layouts()" \
  "9 time:41,worker:13,sequence:10;epoch=1314220021721;unit=ms"

# ---- next_id as a column default.
# ord: the order in which each session inserted its rows.
# No unique constraint: duplicates are counted, not refused.
psql_q "CREATE TABLE t (id bigint DEFAULT flakery.next_id(), session int, ord bigserial)" >/dev/null
equals "next_id stamps the configured node (datacenter 3, worker 7)" \
  "SELECT (d).datacenter_id || '/' || (d).worker_id FROM (SELECT flakery.decode(flakery.next_id()) AS d) s" "3/7"
equals "next_ids(n) gives n increasing IDs" \
  "SELECT count(*) = 10000 AND bool_and(id > prev) FROM (SELECT id, lag(id, 1, 0::bigint) OVER (ORDER BY ord) AS prev FROM flakery.next_ids(10000) WITH ORDINALITY AS x(id, ord)) s" "t"
refuses "SET of a node setting in a session is refused (postmaster context)" \
  "SET flakery.worker_id = 8" "cannot be changed without restarting the server"

# Many sessions at once, each inserting with the default.
SESSIONS=16
PER_SESSION=3000
echo "INSERT INTO t (session) VALUES (:client_id);" >"$work/insert.sql"
if "$PGBIN/pgbench" -n -h "$work" -p "$port" -U postgres -c "$SESSIONS" -j 4 -t "$PER_SESSION" -f "$work/insert.sql" postgres >"$work/pgbench.log" 2>&1; then
  rows="$(psql_q "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || count(DISTINCT session) FROM t WHERE session IS NOT NULL")"
  read -r total distinct sessions <<<"$rows"
  echo "concurrent inserts: $total rows, $distinct distinct IDs, $sessions sessions, $((total - distinct)) duplicates"
  check "$SESSIONS sessions x $PER_SESSION inserts with DEFAULT flakery.next_id(): every row, no duplicate" \
    test "$total" = "$((SESSIONS * PER_SESSION))" -a "$distinct" = "$total" -a "$sessions" = "$SESSIONS"
else
  cat "$work/pgbench.log" >&2
  fail "pgbench with $SESSIONS sessions inserting with the default failed"
fi
equals "each session's IDs increase in the order it inserted them" \
  "SELECT count(*) FROM (SELECT id < lag(id) OVER (PARTITION BY session ORDER BY ord) AS down FROM t WHERE session IS NOT NULL) s WHERE down" "0"

# ---- Bad arguments: the core's codes, nothing returned.
refuses "decode of a negative ID under a signed layout" "SELECT flakery.decode(-1)" "^ERROR:  invalid_argument: "
refuses "a layout that does not parse" "SELECT flakery.decode(1, 'time:99')" "^ERROR:  invalid_layout: "
refuses "compose with a negative worker ID" "SELECT flakery.compose(now(), 0, -1)" "invalid_argument: .*worker_id"
refuses "compose with a worker ID the layout cannot hold" "SELECT flakery.compose(now(), 0, 32)" "invalid_argument: .*worker_id"
refuses "compose before the layout's epoch" "SELECT flakery.compose('2000-01-01+00')" "invalid_argument: .*before the epoch"
refuses "compose with fields that are not an object of integers" \
  "SELECT flakery.compose(now(), 0, 0, 0, 'vesta-min-granularity', '{\"version\": \"x\"}')" "invalid_argument: field version"
refuses "from_base32 of text that is not base 32" "SELECT flakery.from_base32('not base 32!')" "^ERROR:  invalid_argument: "
refuses "from_base62 of text that is not base 62" "SELECT flakery.from_base62('!!')" "^ERROR:  invalid_argument: "
refuses "next_ids of a negative count" "SELECT flakery.next_ids(-1)" "invalid_argument: n is -1"
# sqlstate_of SQL: the SQLSTATE of the error the statement raises.
sqlstate_of() {
  "$PGBIN/psql" -X -q -A -t -v VERBOSITY=verbose -h "$work" -p "$port" -U postgres -d postgres -c "$1" 2>&1 |
    sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\): .*/\1/p'
}
check "an argument error's SQLSTATE is 22023 (invalid_parameter_value)" \
  [ "$(sqlstate_of "SELECT flakery.decode(-1)")" = 22023 ]

# ---- pg_dump and pg_restore of a table whose key defaults to next_id.
psql_q "CREATE DATABASE source" >/dev/null
DB=source psql_q "CREATE EXTENSION flakery; CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT flakery.next_id(), item text);
  INSERT INTO orders (item) SELECT 'item ' || i FROM generate_series(1, 100) i" >/dev/null
"$PGBIN/pg_dump" -Fc -h "$work" -p "$port" -U postgres -d source -f "$work/source.dump"
psql_q "CREATE DATABASE restored" >/dev/null
if "$PGBIN/pg_restore" -h "$work" -p "$port" -U postgres -d restored --exit-on-error "$work/source.dump" 2>"$work/restore.log"; then
  DB=restored equals "the restored table has the rows and its default" \
    "SELECT (SELECT count(*) FROM orders) || ' ' || pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'orders'::regclass" \
    "100 flakery.next_id()"
  DB=restored equals "an insert into the restored table takes a new ID above every restored one" \
    "INSERT INTO orders (item) VALUES ('after') RETURNING id > (SELECT max(id) FROM orders WHERE item <> 'after')" "t"
else
  cat "$work/restore.log" >&2
  fail "pg_restore of a table that uses flakery.next_id()"
fi

# ---- A crash, then the clock set back: the mark in the data directory keeps IDs above.
psql_q "INSERT INTO t (session) SELECT NULL FROM generate_series(1, 1000)" >/dev/null
before="$(psql_q "SELECT max(id) FROM t")"
crash_server
check "the mark file is in the data directory" test -s "$data/flakery.mark"
start_server -60
refuses "after kill -9 of the postmaster, a restart with the clock 60 s back refuses (no lower ID)" \
  "INSERT INTO t (session) VALUES (-1) RETURNING id" "^ERROR:  clock_moved_backwards: "
equals "and inserted nothing" "SELECT count(*) FROM t WHERE session = -1" "0"
stop_server
start_server
equals "a restart with the clock right goes on above every ID issued before the crash" \
  "INSERT INTO t (session) VALUES (-2) RETURNING id > $before" "t"
stop_server

# ---- Refusals of the node's configuration (each a restart with other settings).
# refuses_with SETTINGS... -- WHAT PATTERN: restarts with SETTINGS; next_id refuses.
refuses_with() {
  local settings=()
  while [ "$1" != "--" ]; do settings+=("$1"); shift; done
  shift
  configure "${settings[@]}"
  start_server
  refuses "$1" "SELECT flakery.next_id()" "$2"
  stop_server
}
refuses_with shared_preload_libraries=flakery -- \
  "no node ID set: refuses, naming what to set" \
  "^ERROR:  invalid_argument: no node ID: set flakery.worker_id and flakery.datacenter_id in postgresql.conf"
refuses_with shared_preload_libraries=flakery flakery.worker_id=7 -- \
  "a worker without the datacenter the layout has: refuses" \
  "^ERROR:  invalid_argument: flakery.worker_id is set but flakery.datacenter_id is not"
refuses_with shared_preload_libraries=flakery flakery.datacenter_id=3 flakery.worker_id=32 -- \
  "a worker ID the layout cannot hold: refuses" "^ERROR:  invalid_argument: .*worker_id"
refuses_with shared_preload_libraries=flakery "flakery.layout='time:41,nonsense'" flakery.worker_id=1 -- \
  "a layout that does not parse: refuses, naming flakery.layout" "^ERROR:  invalid_layout: flakery.layout"
refuses_with flakery.datacenter_id=3 flakery.worker_id=7 -- \
  "not in shared_preload_libraries: refuses, naming it" \
  "^ERROR:  invalid_argument: flakery is not in shared_preload_libraries"
configure flakery.datacenter_id=3 flakery.worker_id=7
start_server
equals "without shared_preload_libraries the functions of IDs still work" "SELECT flakery.to_base62(0)" "00000000000"
stop_server
cp "$data/flakery.mark" "$work/mark.saved"
echo "not a mark" >"$data/flakery.mark"
refuses_with "${NODE[@]}" -- "a garbled mark file: refuses (lease_lost), naming the file" \
  "^ERROR:  lease_lost: the high-water mark file .*flakery.mark: it is unreadable"
cp "$work/mark.saved" "$data/flakery.mark"

# ---- Parallel workers, and a kill -9 of one backend.
source tests/postgres/backends.sh

# ---- Node IDs leased by the background worker: a lease table in another server (PostgreSQL,
# MariaDB), ZooKeeper.
source tests/postgres/lease.sh
source tests/postgres/lease_mysql.sh
source tests/postgres/lease_zookeeper.sh

# ---- A streaming standby promoted after a kill -9 of its primary: the mark is in the WAL.
source tests/postgres/standby.sh

# ---- Every wait for a synchronous standby can be ended; remote_apply refuses no mark.
source tests/postgres/waits.sh

# ---- The docs' sql blocks as written: every block of README.md and docs/*.md marked
# <!-- doctest: tests/postgres --> (the docs tests cannot run them, having no server, and fail
# on a sql block that uses the extension without the mark: tests/docs/blocks.py). Each runs in
# a database of its own on the node the docs configure (datacenter 1, worker 7); a block that
# decodes must show that node.
doc_blocks="$work/doc-blocks"
python3 tests/docs/blocks.py --postgres-blocks "$doc_blocks" README.md docs/*.md
check "the README's PostgreSQL quick start is among the marked blocks" \
  grep -qx "README.md:[0-9]*" "$doc_blocks"/*.where
configure shared_preload_libraries=flakery flakery.datacenter_id=1 flakery.worker_id=7
start_server
for block in "$doc_blocks"/*.sql; do
  n="$(basename "$block" .sql)"
  where="$(cat "$doc_blocks/$n.where")"
  psql_q "CREATE DATABASE doc_$n" >/dev/null
  if block_out="$("$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres \
    -d "doc_$n" -f "$block" 2>&1)"; then
    if grep -q "flakery.decode" "$block" && ! grep -q "|1|7|" <<<"$block_out"; then
      fail "$where: runs, but no decoded row shows datacenter 1, worker 7: $block_out"
    else
      pass "$where: the block runs as written"
    fi
  else
    fail "$where: $block_out"
  fi
done
stop_server

finish postgres

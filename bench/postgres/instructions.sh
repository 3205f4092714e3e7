#!/usr/bin/env bash
# Instructions, not time: what one flakery.next_id() call and one INSERT whose key defaults to
# it cost in a PostgreSQL 15 backend, beside nextval() and bigserial, for one or more builds of
# the extension (callgrind's instruction count). It compares builds (the release profile of
# postgres/Cargo.toml) on a loaded machine, where bench/postgres/run.sh's wall-clock figures
# vary more than the builds differ (docs/postgres.md, "Build cost").
#   bash bench/postgres/instructions.sh [LIB.so...]
# LIB: a built libflakery_pg.so (default: postgres/target/release/libflakery_pg.so, as
# tests/postgres builds it). Each is loaded by its path into a single-user backend (postgres
# --single) of a throw-away cluster: nothing goes into PostgreSQL's directories.
# A benchmark, never a test: it prints figures and asserts nothing about them.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || apt_install postgresql-15
need valgrind valgrind
[ $# -gt 0 ] || set -- postgres/target/release/libflakery_pg.so
CALLS=200000
ROWS=50000

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
libs=()
for lib in "$@"; do
  [ -f "$lib" ] || { echo "bench/postgres: no $lib" >&2; exit 1; }
  cp "$lib" "$work/lib${#libs[@]}.so"
  libs+=("$lib")
done
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi
}
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$work"
as_pg "$PGBIN/initdb" -D "$work/data" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log" >&2; exit 1; }

# single [LIB_INDEX] [VALGRIND...]: a single-user backend that runs stdin's statements, one a
# line, with library LIB_INDEX preloaded and the node the benchmark's server has.
single() {
  local preload=()
  [ -n "${1:-}" ] && preload=(-c "shared_preload_libraries=$work/lib$1.so" -c flakery.datacenter_id=3 -c flakery.worker_id=7)
  shift || true
  as_pg "$@" "$PGBIN/postgres" --single -D "$work/data" "${preload[@]}" postgres
}
# Each library's next_id under a name of its own; not loaded here (two copies in one backend
# would define the same settings twice).
{
  echo "SET check_function_bodies = off; CREATE SEQUENCE plain_seq; CREATE TABLE k_bigserial (id bigserial PRIMARY KEY, v int);"
  for i in "${!libs[@]}"; do
    echo "SET check_function_bodies = off; CREATE FUNCTION next_id_$i() RETURNS bigint STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS '$work/lib$i.so', 'next_id_wrapper'; CREATE TABLE k_$i (id bigint PRIMARY KEY DEFAULT next_id_$i(), v int);"
  done
} | single >"$work/setup.log" 2>&1
if grep -E "ERROR|FATAL" "$work/setup.log" >&2; then exit 1; fi

# instructions LIB_INDEX SQL: the instructions of a backend's whole life (start, SQL, exit).
instructions() {
  local out
  out="$(echo "$2" | single "$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null 2>&1)"
  if grep -E "ERROR|FATAL" <<<"$out" >&2; then exit 1; fi
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out"
}
per() { python3 -c 'import sys; a, b, n = map(int, sys.argv[1:]); print(f"{(a - b) / n:.1f}")' "$@"; }

echo "instructions (callgrind) in a single-user PostgreSQL 15 backend: one call over $CALLS rows less count(1), one INSERT over $ROWS rows"
printf '%-50s %14s %14s %16s %18s\n' "build" "next_id/call" "nextval/call" "INSERT next_id" "INSERT bigserial"
for i in "${!libs[@]}"; do
  count="$(instructions "$i" "SELECT count(1) FROM generate_series(1, $CALLS)")"
  next_id="$(instructions "$i" "SELECT count(next_id_$i()) FROM generate_series(1, $CALLS)")"
  nextval="$(instructions "$i" "SELECT count(nextval('plain_seq')) FROM generate_series(1, $CALLS)")"
  # The backend's start and the TRUNCATE are in both INSERT figures alike.
  insert="$(instructions "$i" "TRUNCATE k_$i; INSERT INTO k_$i (v) SELECT 1 FROM generate_series(1, $ROWS)")"
  serial="$(instructions "$i" "TRUNCATE k_bigserial; INSERT INTO k_bigserial (v) SELECT 1 FROM generate_series(1, $ROWS)")"
  printf '%-50s %14s %14s %16s %18s\n' "${libs[$i]}" "$(per "$next_id" "$count" "$CALLS")" \
    "$(per "$nextval" "$count" "$CALLS")" "$(per "$insert" 0 "$ROWS")" "$(per "$serial" 0 "$ROWS")"
done

#!/usr/bin/env bash
# The PostgreSQL extension beside PostgreSQL's own keys (docs/benchmarks.md#postgresql), on a
# throw-away PostgreSQL 15 on 127.0.0.1 (tests/postgres/cluster.sh builds, installs and starts
# it):
# - inserts per second with pgbench, CLIENTS connections for SECONDS each, into a table whose
#   primary key defaults to flakery.next_id(), bigserial, gen_random_uuid(), and Instagram's
#   PL/pgSQL next_id (its published function: nextval() % 1024 and the clock), and pgEdge's
#   snowflake.nextval() when its source is at hand (below);
# - the cost of one call, server-side (no round trip): SELECT count(f()) over N rows of
#   generate_series, for flakery.next_id(), nextval() and snowflake.nextval().
# pgEdge's extension (github.com/pgEdge/snowflake) is not a Debian package: PGEDGE_SNOWFLAKE_SRC
# names a checkout of its source (a directory, or a git directory whose HEAD is taken), which is
# built here with PGXS and installed beside flakery's files, removed on exit. Without it the
# table says the row was not measured.
# A benchmark, never a test: it prints figures and asserts nothing about them.
#   bash bench/postgres/run.sh [--md FILE [--page PAGE]] [SECONDS] [CLIENTS]
# --md FILE: the figures also as the markdown table of docs/benchmarks.md#postgresql, with the
# load and the settings (bench/run.sh writes bench/results/postgres.md); --page PAGE: that
# table also into the page's `<!-- bench:postgres -->` block (bench/run.sh --update-docs).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
ensure_cargo
md=""
page=""
if [ "${1:-}" = "--md" ]; then
  md="${2:?--md needs a file}"
  shift 2
fi
if [ "${1:-}" = "--page" ]; then
  page="${2:?--page needs a file}"
  shift 2
fi
SECONDS_EACH="${1:-10}"
CLIENTS="${2:-8}"
CALLS=2000000
ROUNDS=2

source tests/postgres/cluster.sh

# ---- pgEdge's snowflake, built from its source when PGEDGE_SNOWFLAKE_SRC names it.
pgedge=""
pgedge_why="not measured: PGEDGE_SNOWFLAKE_SRC names no source of github.com/pgEdge/snowflake"
pgedge_installed=()
if [ -n "${PGEDGE_SNOWFLAKE_SRC:-}" ]; then
  pgedge_build="$work/pgedge-src"
  mkdir -p "$pgedge_build"
  if [ -f "$PGEDGE_SNOWFLAKE_SRC/snowflake.c" ]; then
    cp -r "$PGEDGE_SNOWFLAKE_SRC/." "$pgedge_build/"
  else
    git --git-dir="$PGEDGE_SNOWFLAKE_SRC" archive HEAD | tar -x -C "$pgedge_build"
  fi
  pgedge_commit="$(git --git-dir="$PGEDGE_SNOWFLAKE_SRC" rev-parse --short HEAD 2>/dev/null ||
    git -C "$PGEDGE_SNOWFLAKE_SRC" rev-parse --short HEAD 2>/dev/null || echo "?")"
  if make -C "$pgedge_build" USE_PGXS=1 PG_CONFIG="$PGBIN/pg_config" >"$work/pgedge-build.log" 2>&1; then
    pgedge_installed=("$pkglibdir/snowflake.so")
    for f in "$pgedge_build"/snowflake.control "$pgedge_build"/snowflake--*.sql; do
      pgedge_installed+=("$extdir/$(basename "$f")")
    done
    for f in "${pgedge_installed[@]}"; do
      [ ! -e "$f" ] || { echo "bench/postgres: $f exists already: not replacing it" >&2; exit 1; }
    done
    trap 'rm -f "${pgedge_installed[@]}"; cleanup' EXIT
    install -m 755 "$pgedge_build/snowflake.so" "$pkglibdir/snowflake.so"
    install -m 644 "$pgedge_build"/snowflake.control "$pgedge_build"/snowflake--*.sql "$extdir/"
    pgedge="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$pgedge_build/snowflake.control")"
    echo "pgEdge snowflake $pgedge (commit $pgedge_commit) built from $PGEDGE_SNOWFLAKE_SRC"
  else
    tail -n 20 "$work/pgedge-build.log" >&2
    pgedge_why="not measured: its source at $PGEDGE_SNOWFLAKE_SRC did not build here"
  fi
fi

settings=("shared_buffers = 256MB" "synchronous_commit = off")
# pgEdge's node number: a setting of its own, 1 to 1023, refused unset.
[ -n "$pgedge" ] && settings+=("snowflake.node = 5")
configure "${NODE[@]}" "${settings[@]}"
start_server

psql_q "CREATE EXTENSION flakery;
CREATE SEQUENCE insta_seq;
-- Instagram's function as published (Sharding & IDs at Instagram, 2012), shard 5.
CREATE FUNCTION insta_next_id(OUT result bigint) AS \$\$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('insta_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
\$\$ LANGUAGE PLPGSQL;
CREATE TABLE k_flakery (id bigint PRIMARY KEY DEFAULT flakery.next_id(), v int);
CREATE TABLE k_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE k_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
CREATE TABLE k_instagram (id bigint PRIMARY KEY DEFAULT insta_next_id(), v int);
CREATE SEQUENCE plain_seq;" >/dev/null
keys=(flakery bigserial uuid instagram)
if [ -n "$pgedge" ]; then
  psql_q "CREATE EXTENSION snowflake;
CREATE TABLE k_pgedge (id bigint PRIMARY KEY DEFAULT snowflake.nextval(), v int);" >/dev/null
  keys+=(pgedge)
fi

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo
echo "--- inserts per second, $CLIENTS clients, $SECONDS_EACH s each (pgbench, prepared), best of $ROUNDS rounds in turn"
declare -A tps
for round in $(seq "$ROUNDS"); do
  for key in "${keys[@]}"; do
    echo "INSERT INTO k_$key (v) VALUES (1);" >"$work/insert_$key.sql"
    out="$("$PGBIN/pgbench" -n -M prepared -h "$work" -p "$port" -U postgres -c "$CLIENTS" -j 2 \
      -T "$SECONDS_EACH" -f "$work/insert_$key.sql" postgres 2>&1)" || { echo "$out" >&2; exit 1; }
    got="$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -n 1)"
    echo "  round $round: $key $got"
    tps[$key]="$(python3 -c 'import sys; print(max(map(float, sys.argv[1:])))' "$got" "${tps[$key]:-0}")"
  done
done
for key in "${keys[@]}"; do printf '%-10s %10.0f inserts/s\n' "$key" "${tps[$key]}"; done
python3 -c 'import sys; f, b = map(float, sys.argv[1:]); print(f"flakery / bigserial: {f / b:.3f}x")' \
  "${tps[flakery]}" "${tps[bigserial]}"

echo
load_inserts="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "--- one call, server-side: SELECT count(f()) FROM generate_series(1, $CALLS), best of 3"
per_call() {
  local best="" ms
  for _ in 1 2 3; do
    ms="$(psql_q "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) SELECT count($1) FROM generate_series(1, $CALLS)" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Execution Time"])')"
    best="$(python3 -c 'import sys; a = sys.argv[1]; b = float(sys.argv[2]); print(b if not a else min(float(a), b))' "$best" "$ms")"
  done
  python3 -c 'import sys; print(f"{float(sys.argv[1]) * 1e6 / int(sys.argv[2]):.1f}")' "$best" "$CALLS"
}
baseline="$(per_call "1")"
declare -A call_ns
calls=("flakery.next_id()" "nextval('plain_seq')")
[ -n "$pgedge" ] && calls+=("snowflake.nextval()")
for f in "${calls[@]}"; do
  ns="$(per_call "$f")"
  call_ns[$f]="$(python3 -c "print(f'{$ns - $baseline:.0f}')")"
  printf '%-22s %7s ns a row, %6s ns above count(1)\n' "$f" "$ns" "${call_ns[$f]}"
done
echo
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "load after: $load_after"
if [ -n "$md" ]; then
  ratio() { python3 -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.2f}")' "$1" "$2"; }
  count() { python3 -c 'import sys; print(f"{float(sys.argv[1]):,.0f}")' "$1"; }
  {
    echo "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), $CLIENTS pgbench clients," \
      "$SECONDS_EACH s each, best of $ROUNDS rounds; one call: best of 3 over $CALLS rows, less" \
      "count(1). $(nproc) cores, load average $load_inserts after the inserts, $load_after at the end" \
      "(bench/postgres/run.sh)."
    echo
    echo "| key | inserts/s | against bigserial | one call |"
    echo "|---|---|---|---|"
    echo "| \`flakery.next_id()\` | $(count "${tps[flakery]}") | $(ratio "${tps[flakery]}" "${tps[bigserial]}")× | ${call_ns["flakery.next_id()"]} ns |"
    echo "| \`bigserial\` (\`nextval\`) | $(count "${tps[bigserial]}") | 1.00× | ${call_ns["nextval('plain_seq')"]} ns |"
    echo "| \`gen_random_uuid()\` | $(count "${tps[uuid]}") | $(ratio "${tps[uuid]}" "${tps[bigserial]}")× | |"
    echo "| Instagram's PL/pgSQL \`next_id\` | $(count "${tps[instagram]}") | $(ratio "${tps[instagram]}" "${tps[bigserial]}")× | |"
    if [ -n "$pgedge" ]; then
      echo "| pgEdge's \`snowflake.nextval()\` ($pgedge, commit $pgedge_commit, built from source) | $(count "${tps[pgedge]}") | $(ratio "${tps[pgedge]}" "${tps[bigserial]}")× | ${call_ns["snowflake.nextval()"]} ns |"
    else
      echo "| pgEdge's \`snowflake.nextval()\` | $pgedge_why | | |"
    fi
  } >"$md"
  echo "bench/postgres: the table in $md"
  if [ -n "$page" ]; then
    PYTHONPATH=bench python3 -c 'import sys; from reporting.page import write_block; write_block(sys.argv[1], "postgres", open(sys.argv[2]).read(), "the PostgreSQL figures")' "$page" "$md"
  fi
fi
stop_server

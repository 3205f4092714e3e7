# Sourced by tests/postgres/run.sh and bench/postgres/run.sh (after tests/lib.sh, from the
# repository's root): installs PostgreSQL 15 and what the build needs, builds the extension with
# plain cargo (no cargo-pgrx: PGRX_PG_CONFIG_PATH names pg_config) and its SQL script with
# postgres/sqlgen, installs the three files into PostgreSQL's directories (removed on exit),
# and makes a cluster in a temporary directory, served on a Unix socket in it (no TCP port: one
# picked free and bound later could be taken in between by another test's connection) by a
# postmaster that start_server starts and stop_server / crash_server stop by PID.

PG_MAJOR=15
PGBIN="/usr/lib/postgresql/$PG_MAJOR/bin"
apt_install "postgresql-$PG_MAJOR" "postgresql-server-dev-$PG_MAJOR" libclang-dev clang faketime ||
  skip_or_fail "cannot install PostgreSQL $PG_MAJOR's server headers, clang or faketime"
[ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/pg_config" ] || skip_or_fail "PostgreSQL $PG_MAJOR is not installed"
need faketime faketime

# ---- Build (its own target directory: the extension's link flags differ from the workspace's).
export PGRX_PG_CONFIG_PATH="$PGBIN/pg_config"
export CARGO_TARGET_DIR="$PWD/postgres/target"
build_started=$SECONDS
# PG_PROFILE: cargo's profile (release unless the sourcing script says otherwise).
PG_PROFILE="${PG_PROFILE:-release}"
quiet cargo build --profile "$PG_PROFILE" --locked --manifest-path postgres/Cargo.toml --workspace
echo "built the extension and its SQL generator in $((SECONDS - build_started)) s"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' postgres/Cargo.toml | head -n 1)"
so="$CARGO_TARGET_DIR/$PG_PROFILE/libflakery_pg.so"
sql="$(mktemp)"
"$CARGO_TARGET_DIR/$PG_PROFILE/flakery-pg-sqlgen" "$so" postgres/flakery.control "$version" >"$sql"

pkglibdir="$("$PGBIN/pg_config" --pkglibdir)"
extdir="$("$PGBIN/pg_config" --sharedir)/extension"
installed=("$pkglibdir/flakery.so" "$extdir/flakery.control" "$extdir/flakery--$version.sql")
for f in "${installed[@]}"; do
  [ ! -e "$f" ] || skip_or_fail "$f exists already (another install of flakery): not replacing it"
done

work="$(mktemp -d)"
chmod 755 "$work"
pid=""
cleanup() {
  [ -n "$pid" ] && stop_server
  rm -f "${installed[@]}" "$sql"
  rm -rf "$work"
}
trap cleanup EXIT
install -m 755 "$so" "$pkglibdir/flakery.so"
sed "s/@CARGO_VERSION@/$version/" postgres/flakery.control >"$extdir/flakery.control"
install -m 644 "$sql" "$extdir/flakery--$version.sql"

# ---- The server: as the postgres user when run as root (PostgreSQL refuses root).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi
}
data="$work/data"
# Only the socket's name (.s.PGSQL.PORT in $work): nothing listens on TCP.
port=5432
[ "$(id -u)" -eq 0 ] && chown postgres: "$work"
as_pg "$PGBIN/initdb" -D "$data" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1 ||
  { cat "$work/initdb.log" >&2; exit 1; }

# configure [SETTING=VALUE...]: postgresql.conf's flakery lines, replaced by these.
configure() {
  sed -i '/^# flakery test/,$d' "$data/postgresql.conf"
  {
    echo "# flakery test"
    echo "listen_addresses = ''"
    echo "port = $port"
    echo "unix_socket_directories = '$work'"
    echo "max_connections = 40"
    for setting in "$@"; do echo "$setting"; done
  } >>"$data/postgresql.conf"
}
NODE=(shared_preload_libraries=flakery flakery.datacenter_id=3 flakery.worker_id=7)

# start_server [FAKETIME_OFFSET]: starts the postmaster (its clock offset by faketime) and
# waits until it answers; the postmaster's PID is in $pid. With CLOCK_FILE set, the postmaster
# reads its offset from that file each time it reads the clock (libfaketime, no cache), so
# that a test can set the clock back under a running server.
faketime_lib="$(dpkg -L libfaketime 2>/dev/null | grep '/libfaketime\.so\.1$' | head -n 1)"
start_server() {
  local log="$work/server.log"
  if [ -n "${CLOCK_FILE:-}" ]; then
    as_pg env LD_PRELOAD="$faketime_lib" FAKETIME_TIMESTAMP_FILE="$CLOCK_FILE" FAKETIME_NO_CACHE=1 \
      "$PGBIN/postgres" -D "$data" >>"$log" 2>&1 &
  elif [ -n "${1:-}" ]; then
    as_pg faketime -f "$1" "$PGBIN/postgres" -D "$data" >>"$log" 2>&1 &
  else
    as_pg "$PGBIN/postgres" -D "$data" >>"$log" 2>&1 &
  fi
  local tries=0
  until "$PGBIN/pg_isready" -q -h "$work" -p "$port"; do
    tries=$((tries + 1))
    if [ "$tries" -gt 600 ]; then tail -n 20 "$log" >&2; echo "the server did not start" >&2; exit 1; fi
    sleep 0.1
  done
  pid="$(head -n 1 "$data/postmaster.pid")"
}
stop_server() {
  kill -INT "$pid" 2>/dev/null || true
  while alive "$pid"; do sleep 0.1; done
  pid=""
}
# alive PID: the process exists and is not a zombie (a postmaster's orphaned children are
# reaped by whatever PID 1 is, which in a container may never happen).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}
# crash_server: kill -9 of the postmaster and of every process it forked, as a machine that
# loses power does; the data directory stays as it was.
crash_server() {
  local children
  children="$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)"
  kill -KILL "$pid"
  for child in $children; do kill -KILL "$child" 2>/dev/null || true; done
  for p in "$pid" $children; do while alive "$p"; do sleep 0.1; done; done
  pid=""
}
# psql_q SQL: one statement as the superuser, unaligned rows; fails on any error.
psql_q() {
  "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$work" -p "$port" -U postgres -d "${DB:-postgres}" -c "$1"
}
# take_ids BATCHES FILE: BATCHES calls of next_ids(1000) on the current cluster, their IDs
# appended to FILE, each refusal with clock_moved_backwards (a clock behind the mark) waited out,
# 900 calls at most; sets $refusals, and $other to any other refusal.
take_ids() {
  local batches=0 out
  refusals=0 other=""
  for _ in $(seq 1 900); do
    if out="$(psql_q "SELECT flakery.next_ids(1000)" 2>&1)"; then
      echo "$out" >>"$2"
      batches=$((batches + 1))
      [ "$batches" -lt "$1" ] || break
    elif grep -q "^ERROR:  clock_moved_backwards: " <<<"$out"; then
      refusals=$((refusals + 1))
      sleep 0.1
    else
      other="$out"
      break
    fi
  done
}
# child_named POSTMASTER PATTERN: the PIDs of the postmaster's processes whose command line
# matches PATTERN (a background worker with no database connection is not in pg_stat_activity).
child_named() {
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    if grep -q "$2" /proc/"$child"/cmdline 2>/dev/null; then echo "$child"; fi
  done
}

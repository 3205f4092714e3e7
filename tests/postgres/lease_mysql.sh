# Sourced by tests/postgres/run.sh after lease.sh (whose helpers it uses): the lease worker with
# a lease table in MariaDB (flakery.database_url=mysql://...), started by tests/db/dbserver.py
# on 127.0.0.1 and stopped by PID. Two clusters take distinct node IDs; MariaDB killed: next_id
# refuses once the grant runs out, and goes on once it is back; the password shows nowhere.
bash tests/db/install.sh >/dev/null || skip_or_fail "Debian's MariaDB server could not be installed"
mariadb_json="$(python3 tests/db/dbserver.py start mariadb)" ||
  skip_or_fail "tests/db/dbserver.py cannot start a MariaDB server for the lease table"
mariadb_dir="$(field_of "$mariadb_json" dir)"
mariadb_password="$(field_of "$mariadb_json" password)"
trap 'python3 tests/db/dbserver.py stop "$mariadb_dir" >/dev/null 2>&1 || true; lease_cleanup; cleanup' EXIT

MARIADB_LEASED=(shared_preload_libraries=flakery "flakery.database_url='$(field_of "$mariadb_json" url)'"
  flakery.namespace=pgmy "flakery.session_timeout_ms=$TERM_MS")
two_clusters "MariaDB lease table" "${MARIADB_LEASED[@]}"
held="$(python3 tests/db/dbserver.py sql "$mariadb_dir" "SELECT count(*) FROM flakery_node_leases WHERE namespace = 'pgmy' AND holder IS NOT NULL" 2>&1 || true)"
check "the lease table in MariaDB holds both clusters' claims (found: $held)" test "$held" = 2
outage_then_stop "the MariaDB lease table's server (kill -9)" flakery.database_url "$mariadb_password" \
  python3 tests/db/dbserver.py kill "$mariadb_dir" -- \
  python3 tests/db/dbserver.py restart "$mariadb_dir"
python3 tests/db/dbserver.py stop "$mariadb_dir" >/dev/null
trap 'lease_cleanup; cleanup' EXIT

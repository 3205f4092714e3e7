# Sourced by tests/postgres/run.sh after lease.sh (whose helpers it uses): the lease worker
# with ZooKeeper, started by tests/zookeeper's harness on 127.0.0.1 and stopped by PID. Two
# clusters take distinct node IDs; ZooKeeper stopped (SIGSTOP): next_id refuses once the grant
# runs out, and goes on once it runs again; the connect string's password shows nowhere.
bash tests/zookeeper/install.sh >/dev/null || skip_or_fail "Debian's zookeeper package could not be installed"
zk_json="$(python3 tests/zookeeper/zkserver.py start)" ||
  skip_or_fail "tests/zookeeper/zkserver.py cannot start a ZooKeeper server"
zk_pid="$(field_of "$zk_json" pid)"
zk_dir="$(field_of "$zk_json" dir)"
zk_password=zksecret42
zk_connect="flakery:$zk_password@$(field_of "$zk_json" connect)"
trap 'python3 tests/zookeeper/zkserver.py resume "$zk_pid" >/dev/null 2>&1 || true;
  python3 tests/zookeeper/zkserver.py stop "$zk_pid" "$zk_dir" >/dev/null 2>&1 || true;
  lease_cleanup; cleanup' EXIT

ZOOKEEPER=(shared_preload_libraries=flakery "flakery.zookeeper='$zk_connect'"
  flakery.namespace=pgzk "flakery.session_timeout_ms=$TERM_MS")
two_clusters ZooKeeper "${ZOOKEEPER[@]}"
outage_then_stop "ZooKeeper (SIGSTOP)" flakery.zookeeper "$zk_password" \
  python3 tests/zookeeper/zkserver.py pause "$zk_pid" -- \
  python3 tests/zookeeper/zkserver.py resume "$zk_pid"
# Stopped here, not only by the trap: the scripts sourced after this one set traps of their own.
python3 tests/zookeeper/zkserver.py stop "$zk_pid" "$zk_dir" >/dev/null
trap 'lease_cleanup; cleanup' EXIT
if alive "$zk_pid"; then fail "the ZooKeeper of the lease test is still running"; else pass "the ZooKeeper of the lease test is stopped"; fi

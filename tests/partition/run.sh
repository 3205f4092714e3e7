#!/usr/bin/env bash
# Real network partitions between ZooKeeper and the generators that lease node IDs from it,
# and a client of `flakery serve` cut off from its server (client_fallback.py, on loopback
# through a proxy it kills).
#
# A ZooKeeper server and two generator processes (the holder A and its would-be successor B)
# each run in a network namespace of their own (lease-zk-PID, lease-a-PID, lease-b-PID),
# joined by veth pairs on 10.213.0.0/29; the link to A is cut and healed with iptables (both
# ways, and one way) and slowed by a delaying proxy in ZooKeeper's namespace (the kernel of
# these machines has no netem qdisc). tests/partition/partition.py runs the scenario
# and checks it. The namespaces (and with them every veth, iptables rule and netem qdisc) and
# the server are removed by the trap below, also when the test fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
[ "$(id -u)" -eq 0 ] || skip_or_fail "network namespaces need root"
need ip iproute2
need tc iproute2
need iptables iptables
need python3 python3
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"
unset_flakery_env

# A client's fallback cut off from its server (tests/partition/client_fallback.py, on
# loopback): `flakery serve` and the client's hammer example, from the command tests/rust and
# tests/client build them with (`cargo test --workspace`: fresh in a CI run, nothing compiled
# again).
echo "building flakery and the client's hammer (cargo test --workspace --no-run) ..."
hammer="$(cargo test --workspace --locked --no-run --message-format=json | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "hammer" and "example" in m["target"]["kind"]:
        print(m["executable"])')"
flakery_bin="$(target_dir)/debug/flakery"
[ -x "$hammer" ] && [ -x "$flakery_bin" ] || { echo "FAIL: could not build flakery and the hammer" >&2; exit 1; }
check "client_fallback.py (a client's fallback cut off from its server)" \
  python3 tests/partition/client_fallback.py --flakery "$flakery_bin" --hammer "$hammer"

# The streamer is a test binary of tests/zookeeper's build (built there, found fresh here).
CARGO_TARGET_DIR="$(zookeeper_tests_target_dir)"
export CARGO_TARGET_DIR
bin="$(cargo test -p flakery-zookeeper --features system-tests --locked --test keeper_partition --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "keeper_partition":
        print(m["executable"])')"
[ -x "$bin" ] || { echo "FAIL: could not build the partition streamer" >&2; exit 1; }

ZK_NS="lease-zk-$$"
A_NS="lease-a-$$"
B_NS="lease-b-$$"
zk_info=""

cleanup() {
  set +e
  if [ -n "$zk_info" ]; then
    read -r zk_pid zk_dir < <(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["pid"], d["dir"])' "$zk_info")
    python3 tests/zookeeper/zkserver.py stop "$zk_pid" "$zk_dir" >/dev/null 2>&1
  fi
  for ns in "$A_NS" "$B_NS" "$ZK_NS"; do
    # Any process left in a namespace is ours (started below): end it by its PID.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
}
trap cleanup EXIT

# ZK namespace: 10.213.0.1 towards A (10.213.0.2), 10.213.0.5 towards B (10.213.0.6).
for ns in "$ZK_NS" "$A_NS" "$B_NS"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
link() { # link NS_PEER ZK_IF PEER_IF ZK_ADDR PEER_ADDR
  ip link add "$2" netns "$ZK_NS" type veth peer name "$3" netns "$1"
  ip -n "$ZK_NS" addr add "$4/30" dev "$2"
  ip -n "$1" addr add "$5/30" dev "$3"
  ip -n "$ZK_NS" link set "$2" up
  ip -n "$1" link set "$3" up
}
link "$A_NS" "lzka$$" "lza$$" 10.213.0.1 10.213.0.2
link "$B_NS" "lzkb$$" "lzb$$" 10.213.0.5 10.213.0.6

# The test server listens on 127.0.0.1 of its namespace; the namespace forwards its veth
# addresses' port to it (route_localnet is this namespace's own setting).
zk_info="$(ip netns exec "$ZK_NS" python3 tests/zookeeper/zkserver.py start)"
port="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["port"])' "$zk_info")"
ip netns exec "$ZK_NS" sysctl -qw net.ipv4.conf.all.route_localnet=1
ip netns exec "$ZK_NS" iptables -t nat -A PREROUTING -p tcp --dport "$port" \
  -j DNAT --to-destination "127.0.0.1:$port"

# A reaches the server through the delaying proxy on 10.213.0.1:2182.
delay_file="$(mktemp -t lease-partition-delay.XXXXXX)"
echo 0 >"$delay_file"
ip netns exec "$ZK_NS" python3 tests/partition/delay_proxy.py 10.213.0.1 2182 127.0.0.1 "$port" \
  "$delay_file" &
trap 'cleanup; rm -f "$delay_file"' EXIT
for _ in $(seq 100); do
  ip netns exec "$ZK_NS" python3 -c 'import socket; socket.create_connection(("10.213.0.1", 2182), 1).close()' \
    2>/dev/null && break
  sleep 0.05
done

check "partition.py (cuts, heals and slows the link to the holder)" \
  python3 tests/partition/partition.py --bin "$bin" --port "$port" --delay-file "$delay_file" \
  --zk-ns "$ZK_NS" --a-ns "$A_NS" --b-ns "$B_NS"
finish partition

"""Clients against servers whose node IDs are leased from a real ZooKeeper, while servers lose
their leases: one paused (SIGSTOP) past its session timeout while a new server takes its node
ID, then resumed; one whose ephemeral node is deleted by hand while a new server takes that
node ID at once. Every ID any client or probe was handed is counted for duplicates. And
ZooKeeper itself stalled: every server refuses, the one moment the clients' calls may fail."""

import http.client
import json
import os
import signal
import threading
import time

import pytest
from kazoo.client import KazooClient

import zkserver  # tests/zookeeper (on the path through tests/server's harness)
from conftest import Hammer, duplicates, free_port, stop_process, url

SESSION_MS = 2000
DEADLINE_MS = 2000  # each client call's (the client's `timeout`)
NAMESPACE = "client-lease"


@pytest.fixture
def zk():
    with zkserver.start() as server:
        yield server


@pytest.fixture
def kazoo(zk):
    client = KazooClient(hosts=zk.connect)
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


def wait_for(what, predicate, failsafe=60):
    """Polls until `predicate` holds; the failsafe only keeps a broken run from hanging."""
    deadline = time.monotonic() + failsafe
    while not predicate():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.05)


def held(kazoo):
    """The node IDs (znode names) held in the namespace now."""
    path = f"/flakery/{NAMESPACE}/nodes"
    return set(kazoo.get_children(path)) if kazoo.exists(path) else set()


def node_of(server):
    """The server's node ID as (datacenter, worker), from /v1/layout."""
    status, _, layout = server.get_json("/v1/layout")
    assert status == 200 and layout["node"]["source"] == "zookeeper", layout
    return layout["node"]["datacenter_id"], layout["node"]["worker_id"]


TWITTER_EPOCH_MS = 1288834974657


def node_in(id_):
    """(datacenter, worker) of a `twitter` ID: 41 bits of time, 5 + 5 of node, 12 of sequence."""
    return (id_ >> 17) & 0x1F, (id_ >> 12) & 0x1F


def unix_ms_of(id_):
    return (id_ >> 22) + TWITTER_EPOCH_MS


def metric(server, name):
    _, _, body = server.get("/metrics")
    return sum(float(line.rsplit(" ", 1)[1]) for line in body.decode().splitlines()
               if line.startswith(name))


def lease_losses(server):
    return metric(server, "flakery_lease_losses_total")


def hammer(urls, seconds):
    """A client process of 4 threads taking IDs one at a time from `urls`, in that order."""
    return Hammer(urls, "--threads", 4, "--seconds", seconds, "--calls", 400000,
                  "--pause-us", 50, "--request-timeout-ms", 500, "--timeout-ms", DEADLINE_MS,
                  "--max-age-ms", 2000, "--prefer-first", 1)


def calls_failed_only_in_stalls(report, stalls):
    """A call fails at once (servers_unavailable) when every server of its client failed twice
    in a row and is backing off (docs/client.md, "Failover and deadlines"), and a server
    refuses (503 lease_lost) while ZooKeeper has not confirmed its lease within half the
    session timeout, counted as a lease loss (`stalls`, of a server on every client's list).
    A loaded machine can delay ZooKeeper that long: then every server refuses at once, and the
    calls of that moment fail by design. With no such stall, no call may fail."""
    if not stalls:
        assert report["failed"] == {}, (report["failed"], report["errors"])
        return
    assert set(report["failed"]) <= {"servers_unavailable"}, report
    assert all("503 lease_lost" in e for e in report["errors"]), report["errors"]


class Probe:
    """Threads asking one server for IDs directly, each request on a connection of its own:
    those sent while the server is stopped wait in its listen queue and are answered the
    moment it resumes. Records (sent, answered, status, id or error code)."""

    def __init__(self, server, threads=8):
        self.server = server
        self.answers = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.ask) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def ask(self):
        while not self.stopping.is_set():
            sent = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
            try:
                conn.request("GET", "/v1/id")
                reply = conn.getresponse()
                body = json.loads(reply.read())
                status = reply.status
                got = int(body["id"]) if status == 200 else body["error"]["code"]
            except (OSError, ValueError) as e:
                status, got = None, repr(e)
            finally:
                conn.close()
            with self.lock:
                self.answers.append((sent, time.monotonic(), status, got))
            time.sleep(0.002)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(90)
        return self.answers

    def ids(self):
        return [got for _, _, status, got in self.answers if status == 200]


def test_servers_that_lose_their_zookeeper_lease_never_hand_out_a_duplicate(zk, kazoo, servers):
    env = {"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": NAMESPACE,
           "FLAKERY_SESSION_TIMEOUT_MS": str(SESSION_MS)}
    znodes = {}  # each server's ephemeral node, by name

    def start(port=None):
        before = held(kazoo)
        server = servers(env=env, port=port)
        [znodes[server]] = held(kazoo) - before
        return server

    a, b, c = start(), start(), start()
    nodes = {s: node_of(s) for s in (a, b, c)}
    assert len(set(nodes.values())) == 3, nodes
    # The two servers started later to take over the lost node IDs: their ports are in every
    # client's list from the start (refused until they listen), so clients mix their IDs with
    # whatever the servers that lost their leases might still hand out.
    d_port, e_port = free_port(), free_port()
    urls = [url(a), url(b), url(c), f"http://127.0.0.1:{d_port}", f"http://127.0.0.1:{e_port}"]
    orders = [urls, urls[1:] + urls[:1], urls[2:] + urls[:2],
              [urls[0], urls[2], urls[1]] + urls[3:]]
    hammers = [hammer(order, 20) for order in orders]
    probes = []
    time.sleep(1)

    # 1. A is paused past its session timeout: ZooKeeper ends its session, its node ID is
    # free, and D takes it. A is resumed still believing, for a moment, that it holds it.
    a_node = nodes[a]
    a_probe = Probe(a)
    probes.append(a_probe)
    stop_process(a.pid)
    stopped_at = time.monotonic()
    stopped_ms = time.time() * 1000
    try:
        wait_for("A's ephemeral node expired", lambda: len(held(kazoo)) == 2)
        d = start(d_port)
        assert znodes[d] == znodes[a] and node_of(d) == a_node, \
            "D did not take the node ID A lost: the test would show nothing"
        # Stopped for three client deadlines at least: a call that waited on A would show.
        while time.monotonic() < stopped_at + 3 * DEADLINE_MS / 1000:
            time.sleep(0.05)
    finally:
        # Both read before SIGCONT: a loaded test process may run again only after A has
        # answered the requests queued while it was stopped (its first refusals).
        resumed_ms = time.time() * 1000
        resumed_at = time.monotonic()
        os.kill(a.pid, signal.SIGCONT)
    wait_for("A ready again", lambda: a.get("/readyz")[0] == 200)

    # 2. B's ephemeral node is deleted by hand, and E takes that node ID at once, while B
    # still holds a confirmed term under it.
    b_probe = Probe(b)
    probes.append(b_probe)
    losses_before = lease_losses(b)
    kazoo.delete(f"/flakery/{NAMESPACE}/nodes/{znodes[b]}")
    e = servers(env=env, port=e_port)  # takes the lowest free node ID: B's, unless B was first
    wait_for("B noticed it lost its lease", lambda: lease_losses(b) > losses_before)
    wait_for("B ready again", lambda: b.get("/readyz")[0] == 200)

    total, ok, longest, reports = [], 0, 0, []
    for process in hammers:
        [report], ids = process.wait()
        reports.append(report)
        ok += report["ok"]
        longest = max(longest, report["longest_ms"])
        total.extend(ids)
    for report in reports:  # C is in every client's list and never touched by the test
        calls_failed_only_in_stalls(report, lease_losses(c))
    for probe in probes:
        probe.stop()
        total.extend(probe.ids())
    after = [r for r in a_probe.answers if r[1] >= resumed_at]
    refused = [r for r in after if r[2] == 503]
    late = [unix_ms_of(r[3]) - stopped_ms for r in after
            if r[2] == 200 and node_in(r[3]) == a_node]  # ms past `stopped_ms`
    print(f"{len(total)} IDs from 16 client threads in 4 processes and 2 probes; A stopped "
          f"{resumed_at - stopped_at:.2f} s; longest client call {longest} ms; node IDs "
          f"A {a_node} (then D {node_of(d)}), B {nodes[b]} (deleted; B then {node_of(b)}, "
          f"E {node_of(e)}); A after its resume: {len(refused)} refusals, "
          f"{sum(1 for r in after if r[2] == 200)} IDs, {len(late)} of them under its old "
          f"node ID, stamped at most {max(late, default=0):.0f} ms past the clock read after "
          f"the stop; C's lease losses {lease_losses(c)}")
    assert ok > 10000
    assert duplicates(total) == 0, f"{duplicates(total)} duplicates"
    # No client call waited on the stopped server (an order of events): the longest call,
    # bounded by its deadline, was shorter than the time A stayed stopped.
    assert longest < (resumed_at - stopped_at) * 1000, (longest, resumed_at - stopped_at)

    # A refused while it had no lease: once resumed, it answered 503s naming the lost lease,
    # and no ID it made after its resume (an ID's time is A's clock, the host's) carries the
    # node ID that D had taken. (IDs made before the stop may be answered after the resume;
    # `resumed_ms` is read before SIGCONT, `stopped_ms` after the kill, which this loaded
    # process may read late: IDs made just before the stop can be stamped after it.)
    assert refused, "A answered no 503 after it was resumed without its lease"
    assert {r[3] for r in refused} <= {"lease_lost", "coordinator_unavailable"}, refused
    zombie = [r for r in after if r[2] == 200 and node_in(r[3]) == a_node
              and unix_ms_of(r[3]) >= resumed_ms]
    assert not zombie, f"A handed out IDs under the node ID D held: {zombie[:3]}"


def test_calls_fail_only_while_zookeeper_leaves_every_lease_unconfirmed(zk, servers):
    """What `calls_failed_only_in_stalls` relies on: ZooKeeper paused (SIGSTOP, as a loaded
    machine can starve it) past half the session timeout leaves every server's lease
    unconfirmed: each counts a lease loss and refuses, and the calls of that moment fail with
    servers_unavailable naming the refusals (the assertion of a run without a stall fails)."""
    env = {"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": NAMESPACE,
           "FLAKERY_SESSION_TIMEOUT_MS": str(SESSION_MS)}
    three = [servers(env=env) for _ in range(3)]
    client = hammer([url(s) for s in three], 8)
    wait_for("the client took IDs", lambda: metric(three[0], "flakery_ids_issued_total"))
    zk.pause()
    try:
        wait_for("every server's lease unconfirmed", lambda: all(lease_losses(s) for s in three))
        # Held past the stock the client had (its blocks last about max_age / 4).
        time.sleep(DEADLINE_MS / 1000)
    finally:
        zk.resume()
    [report], _ = client.wait()
    stalls = lease_losses(three[0])
    print(f"stalls {stalls}; {report['ok']} calls answered, failed {report['failed']}")
    assert stalls and report["failed"].get("servers_unavailable"), report
    calls_failed_only_in_stalls(report, stalls)
    with pytest.raises(AssertionError):
        calls_failed_only_in_stalls(report, 0)

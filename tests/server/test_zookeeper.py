"""A ZooKeeper-leased server: 503 and /readyz 503 while the lease may be lost, recovery after;
a stalled renewal holding up neither /healthz nor the thread count; the lease released on
SIGTERM."""

import json
import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from kazoo.client import KazooClient
from prometheus_client.parser import text_string_to_metric_families

import zkserver

SESSION_MS = 2000


@pytest.fixture(scope="module")
def zk():
    with zkserver.start() as server:
        yield server


def wait_for(what, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def held_nodes(zk, namespace):
    client = KazooClient(hosts=zk.connect)
    client.start(timeout=10)
    try:
        path = f"/flakery/{namespace}/nodes"
        return client.get_children(path) if client.exists(path) else []
    finally:
        client.stop()
        client.close()


def grpc_health(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        reply = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def lease_held_metric(server):
    _, _, body = server.get("/metrics")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    return families["flakery_lease_held"].samples[0].value


def test_paused_zookeeper_gives_503_then_recovers(zk, start_server):
    s = start_server(env={"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": "server-pause",
                          "FLAKERY_SESSION_TIMEOUT_MS": str(SESSION_MS)})
    _, _, layout = s.get_json("/v1/layout")
    assert layout["node"]["source"] == "zookeeper"
    assert s.get("/v1/id")[0] == 200
    zk.pause()
    try:
        wait_for("/readyz 503", lambda: s.get("/readyz")[0] == 503, 3 * SESSION_MS / 1000 + 5)
        status, headers, body = s.get("/v1/id")
        assert status == 503 and headers["retry-after"] == "1"
        assert json.loads(body)["error"]["code"] in ("lease_lost", "coordinator_unavailable")
        assert s.get("/v1/ids?count=10")[0] == 503
        assert s.get("/genid")[0] == 503 and s.get("/api/snowflake/get/k")[0] == 503
        assert s.get("/healthz")[0] == 200  # the process is up; only readiness falls
        assert lease_held_metric(s) == 0
        wait_for("gRPC health NOT_SERVING", lambda: grpc_health(s) == "NOT_SERVING", 3)
        # Past the session timeout, still refusing.
        time.sleep(SESSION_MS / 1000 + 0.5)
        assert s.get("/v1/id")[0] == 503 and s.get("/readyz")[0] == 503
    finally:
        zk.resume()
    wait_for("/readyz 200 again", lambda: s.get("/readyz")[0] == 200, 30)
    status, _, body = s.get_json("/v1/id")
    assert status == 200 and int(body["id"]) > 0
    assert lease_held_metric(s) == 1
    wait_for("gRPC health SERVING", lambda: grpc_health(s) == "SERVING", 3)
    events = [e.get("fields", {}).get("event") for e in s.log_events()]
    assert "lease_lost" in events and "lease_held" in events


def threads_of(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def test_a_stalled_lease_stalls_neither_health_nor_threads(zk, start_server):
    s = start_server(env={"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": "server-stall",
                          "FLAKERY_SESSION_TIMEOUT_MS": str(SESSION_MS)})
    assert s.get("/v1/id")[0] == 200
    threads_before = threads_of(s.pid)
    zk.pause()
    statuses, worst, peak = [], 0.0, threads_before
    try:
        until = time.time() + 2 * SESSION_MS / 1000

        def ask():
            while time.time() < until:
                try:
                    statuses.append(s.get("/v1/id")[0])
                except OSError as e:
                    statuses.append(repr(e))
        askers = [threading.Thread(target=ask) for _ in range(32)]
        for a in askers:
            a.start()
        while time.time() < until:
            started = time.time()
            assert s.get("/healthz")[0] == 200
            worst = max(worst, time.time() - started)
            peak = max(peak, threads_of(s.pid))
            time.sleep(0.02)
        for a in askers:
            a.join(30)
    finally:
        zk.resume()
    print(f"statuses {sorted(set(map(str, statuses)))}, /healthz worst {worst:.3f} s, "
          f"threads {threads_before} -> peak {peak}")
    assert 503 in statuses, "the lease was never lost: the test saw no stall"
    # Renewing blocks (up to a quarter of the session timeout, waiting for ZooKeeper): on a
    # blocking thread, a few at a time, never on the threads that answer everything else.
    assert worst < 0.25, f"/healthz took {worst:.3f} s while the lease stalled"
    assert peak <= threads_before + 16, f"threads {threads_before} -> {peak}"


def test_sigterm_releases_the_zookeeper_lease(zk, start_server):
    s = start_server(env={"FLAKERY_ZOOKEEPER": zk.connect, "FLAKERY_NAMESPACE": "server-term",
                          "FLAKERY_SESSION_TIMEOUT_MS": "10000"})
    assert len(held_nodes(zk, "server-term")) == 1
    assert s.terminate() == 0
    # Released explicitly, not left to expire with the 10 s session.
    assert held_nodes(zk, "server-term") == []

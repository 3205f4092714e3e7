"""The Python surface of ZooKeeper leases, against a real server (Debian's zookeeper package,
started by tests/zookeeper/zkserver.py). In CI a missing ZooKeeper is a failure."""

import gc
import os
import shutil
import sys
import threading

import pytest

import flakery

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "zookeeper"))
import zkserver  # noqa: E402

HAVE_ZOOKEEPER = os.path.exists("/usr/share/java/zookeeper.jar") and shutil.which("java")
if not HAVE_ZOOKEEPER and os.environ.get("CI") != "true":
    pytest.skip("!!! ZooKeeper is not installed: ZooKeeper tests SKIPPED !!!", allow_module_level=True)


@pytest.fixture(scope="module")
def zk():
    with zkserver.start() as server:
        yield server


def test_generators_lease_distinct_ids_and_give_them_back(zk):
    options = dict(zookeeper=zk.connect, namespace="python-api", session_timeout_ms=4000)
    with flakery.Generator(**options) as first, flakery.Generator(**options) as second:
        assert first.source == second.source == "zookeeper"
        assert first.worker_id != second.worker_id or first.datacenter_id != second.datacenter_id
        ids = first.next_ids(10_000) + second.next_ids(10_000)
        assert len(set(ids)) == 20_000
        taken = (first.datacenter_id, first.worker_id)
    assert first.closed
    with pytest.raises(flakery.LeaseLostError) as info:
        first.next_id()
    assert info.value.code == "lease_lost"
    # The context manager released the lease: the lowest ID is free again at once.
    with flakery.Generator(**options) as third:
        assert (third.datacenter_id, third.worker_id) == taken
        assert third.next_id() > max(ids[:10_000])


def test_a_two_bit_namespace_is_exhausted_by_the_fifth(zk):
    options = dict(
        zookeeper=zk.connect,
        namespace="python-exhausted",
        layout="time:41,worker:2,sequence:12;epoch=1288834974657",
        session_timeout_ms=4000,
    )
    held = [flakery.Generator(**options) for _ in range(4)]
    assert sorted(g.worker_id for g in held) == [0, 1, 2, 3]
    with pytest.raises(flakery.WorkerIdsExhaustedError) as info:
        flakery.Generator(**options)
    assert info.value.code == "worker_ids_exhausted"
    for generator in held:
        generator.close()


def test_zookeeper_down_is_coordinator_unavailable():
    address = zkserver.connect_string_of_closed_port()
    with pytest.raises(flakery.CoordinatorUnavailableError) as info:
        flakery.Generator(zookeeper=address, session_timeout_ms=2000)
    assert info.value.code == "coordinator_unavailable"
    assert address in str(info.value)


def test_the_default_generator_reads_flakery_zookeeper(zk, run_python):
    out = run_python(
        "import flakery; flakery.next_id(); g = flakery.default_generator(); print(g.source)",
        FLAKERY_ZOOKEEPER=zk.connect,
        FLAKERY_NAMESPACE="python-default",
        FLAKERY_SESSION_TIMEOUT_MS="4000",
    )
    assert out.strip() == "zookeeper"


def _connections_to(port):
    """Established TCP connections whose far end is 127.0.0.1:port (a client's side)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[2].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                    count += 1
    return count


def test_a_dropped_generator_returns_while_zookeeper_is_paused(zk):
    """Drop signals the release and returns at once: the release is carried in the background
    (docs/spec.md#the-generators-slow-path). The server is stopped before the drop and resumed
    only after it: the drop returned while the server could answer nothing, and while the
    lease's client still waited for it (its connection open: a client that gave up on the
    release closes it)."""
    # A long session: the release waits up to half of it for the server before giving up.
    options = dict(zookeeper=zk.connect, namespace="python-drop", session_timeout_ms=20000)
    generator = flakery.Generator(**options)
    taken = (generator.datacenter_id, generator.worker_id)
    generator.next_ids(10)
    assert _connections_to(zk.port) == 1
    zk.pause()
    try:
        del generator
        gc.collect()
        assert _connections_to(zk.port) == 1, "the drop waited until the release gave up"
    finally:
        zk.resume()
    # The node ID comes free again (released in the background, or expired with the session).
    while True:
        with flakery.Generator(**options) as again:
            if (again.datacenter_id, again.worker_id) == taken:
                break


def test_close_releases_the_gil_while_it_waits_for_zookeeper(zk):
    """close() waits for the release without the GIL: another Python thread runs while it waits
    (here it resumes the paused server, so that close's release is answered)."""
    options = dict(zookeeper=zk.connect, namespace="python-close", session_timeout_ms=4000)
    generator = flakery.Generator(**options)
    generator.next_ids(10)
    closing = threading.Event()
    close_returned = False
    seen = []

    def resume_while_closing():
        closing.wait()
        # Runs only once the main thread gives the GIL up: inside close(), or after it.
        seen.append(close_returned)
        zk.resume()

    interval = sys.getswitchinterval()
    # The main thread keeps the GIL until it gives it up itself.
    sys.setswitchinterval(1000)
    helper = threading.Thread(target=resume_while_closing)
    helper.start()
    zk.pause()
    try:
        closing.set()
        generator.close()
        close_returned = True
    finally:
        sys.setswitchinterval(interval)
        helper.join()
        zk.resume()
    assert seen == [False], "the other thread ran only after close() returned"
    assert generator.closed

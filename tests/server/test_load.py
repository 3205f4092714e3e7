"""Concurrency and shutdown: many clients at once, then SIGTERM under load."""

import http.client
import json
import multiprocessing
import signal
import threading
import time

from conftest import Server

CLIENTS = 16
IDS_PER_CLIENT = 10_000


def take_ids(port, n, out):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    ids = []
    for _ in range(n):
        c.request("GET", "/v1/id", headers={"Accept": "text/plain"})
        r = c.getresponse()
        assert r.status == 200
        ids.append(int(r.read()))
    c.close()
    out.put(ids)


def test_sixteen_clients_get_distinct_increasing_ids(start_server):
    s = start_server("--worker-id", "4")
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=take_ids, args=(s.port, IDS_PER_CLIENT, queue))
             for _ in range(CLIENTS)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    every = [i for ids in results for i in ids]
    assert len(every) == CLIENTS * IDS_PER_CLIENT
    assert len(set(every)) == len(every), "duplicate IDs"
    for ids in results:
        assert all(a < b for a, b in zip(ids, ids[1:])), "a client's IDs went down"


def hammer(port, stop, answered, broken, errors):
    """Asks for big batches until stopped; records each answer complete, or how it failed."""
    while not stop.is_set():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            while not stop.is_set():
                c.request("GET", "/v1/ids?count=20000")
                r = c.getresponse()
                body = r.read()  # raises IncompleteRead if cut off mid-answer
                if r.status != 200:
                    broken.append(f"status {r.status}")
                    continue
                ids = json.loads(body)["ids"]
                if len(ids) != 20000:
                    broken.append(f"{len(ids)} IDs")
                answered.append(time.monotonic())
        except http.client.IncompleteRead as e:
            broken.append(f"cut off mid-answer: {e!r}")
        except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine) as e:
            # Closed between answers (or refused after the listener closed): not an answer lost.
            errors.append(repr(e))
            time.sleep(0.01)
        finally:
            c.close()


def test_sigterm_under_load_finishes_answers_and_releases_the_lease(start_server, tmp_path):
    lease_dir = tmp_path / "leases"
    s = start_server(env={"FLAKERY_LEASE_DIR": str(lease_dir)})
    stop = threading.Event()
    answered, broken, errors = [], [], []
    threads = [threading.Thread(target=hammer, args=(s.port, stop, answered, broken, errors))
               for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    assert answered, f"no answers before SIGTERM: {errors[:3]}"
    sent_at = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    rc = s.proc.wait(30)
    stop.set()
    for t in threads:
        t.join(60)
    assert rc == 0, s.logs()
    assert not broken, broken[:5]
    # Requests in flight when the signal came were answered in full.
    assert any(t > sent_at for t in answered), "no request in flight at SIGTERM was answered"
    events = [e.get("fields", {}).get("event") for e in s.log_events()]
    assert events.count("started") == 1 and "stopping" in events and events[-1] == "stopped"
    # The node ID is free again: another server takes it at once (the ZooKeeper test checks
    # that the lease is given back explicitly rather than left to expire).
    again = Server([], {"FLAKERY_LEASE_DIR": str(lease_dir)})
    try:
        _, _, body = again.get_json("/v1/layout")
        assert body["node"]["source"] == "host_lease"
        assert body["node"]["worker_id"] == 0 and body["node"]["datacenter_id"] == 0
    finally:
        again.stop()

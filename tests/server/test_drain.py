"""A rolling restart of three servers behind a real haproxy (docs/ops/haproxy.cfg as written,
retries off) under load: no request fails and no ID repeats, because each server answers
/readyz 503 from SIGTERM on and keeps serving for the drain delay."""

import http.client
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

from conftest import ROOT, free_port

HAPROXY_CFG = os.path.join(ROOT, "docs", "ops", "haproxy.cfg")
# Longer than haproxy's `inter 1s fall 2` in the file: the documented rule.
DRAIN_MS = 3000


class Haproxy:
    """haproxy on a documented configuration (docs/ops/haproxy.cfg unless `cfg`), with the
    addresses replaced (or each text of `replace` by its value) and an admin socket added to
    read the servers' state of `backend`."""

    def __init__(self, lb_port, server_ports, cfg=HAPROXY_CFG, replace=None, backend="flakery"):
        self.dir = tempfile.mkdtemp(prefix="haproxy-test-")
        self.socket = os.path.join(self.dir, "admin.sock")
        self.backend = backend
        with open(cfg) as f:
            config = f.read()
        if replace is None:
            replace = {"127.0.0.1:8080": f"127.0.0.1:{lb_port}"}
            for i, port in enumerate(server_ports, start=1):
                replace[f"127.0.0.1:808{i}"] = f"127.0.0.1:{port}"
        for text, value in replace.items():
            assert text in config, text
            config = config.replace(text, value)
        config = config.replace("global\n", f"global\n    stats socket {self.socket} level admin\n", 1)
        self.cfg = os.path.join(self.dir, "haproxy.cfg")
        with open(self.cfg, "w") as f:
            f.write(config)
        self.log = open(os.path.join(self.dir, "haproxy.log"), "w")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", self.cfg],
                                     stdout=self.log, stderr=self.log)

    def states(self, column="status"):
        """{server name: "UP"/"DOWN"/... (or another column: check_status)} from `show stat`."""
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket)
            s.sendall(b"show stat\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        lines = data.decode().splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
        return {r["svname"]: r[column] for r in rows if r["pxname"] == self.backend
                and r["svname"] not in ("FRONTEND", "BACKEND")}

    def wait_for(self, name, status, column="status"):
        deadline = time.time() + 60  # a safety net against a hang, not a measure
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"haproxy exited {self.proc.returncode}")
            try:
                if self.states(column).get(name, "").startswith(status):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"haproxy never saw {name} {status}: {self.states()}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


def test_haproxy_config_as_documented_is_valid():
    out = subprocess.run(["haproxy", "-c", "-f", HAPROXY_CFG], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    with open(HAPROXY_CFG) as f:
        config = f.read()
    assert re.search(r"^\s*retries 0$", config, re.M), "the tested file must not retry"
    assert not re.search(r"^\s*option redispatch", config, re.M)


def test_rolling_restart_behind_haproxy_fails_no_request(start_server):
    ports = [free_port() for _ in range(3)]
    env = {"FLAKERY_DRAIN_DELAY_MS": str(DRAIN_MS)}

    def start(i):
        return start_server("--worker-id", str(i + 1), env=env, port=ports[i])

    servers = [start(i) for i in range(3)]
    lb_port = free_port()
    lb = Haproxy(lb_port, ports)
    stop = threading.Event()
    ids, failures, answered = [], [], [0]
    lock = threading.Lock()

    def load():
        conn = None
        while not stop.is_set():
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", lb_port, timeout=30)
                conn.request("GET", "/v1/id", headers={"Accept": "text/plain"})
                response = conn.getresponse()
                body = response.read()
                with lock:
                    answered[0] += 1
                    if response.status == 200:
                        ids.append(int(body))
                    else:
                        failures.append((response.status, body[:200]))
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    failures.append(repr(e))
                conn = None
        if conn is not None:
            conn.close()

    clients = [threading.Thread(target=load) for _ in range(4)]
    try:
        for i in range(3):
            lb.wait_for(f"flakery{i + 1}", "UP")
        for c in clients:
            c.start()
        for i in range(3):
            with lock:
                before = answered[0]
            old = servers[i]
            old.proc.send_signal(signal.SIGTERM)
            # haproxy takes it out while it still serves (the drain delay) ...
            lb.wait_for(f"flakery{i + 1}", "DOWN")
            assert old.proc.poll() is None, "the server stopped before haproxy took it out"
            assert old.proc.wait(60) == 0, old.logs()
            # ... and puts the new one in on the same address once /readyz says so.
            servers[i] = start(i)
            lb.wait_for(f"flakery{i + 1}", "UP")
            with lock:
                assert answered[0] > before, "no request went through during the restart"
    finally:
        stop.set()
        for c in clients:
            c.join(60)
        lb.stop()
    print(f"{answered[0]} requests through haproxy, {len(ids)} IDs, failures: {failures[:5]}")
    assert failures == [], f"{len(failures)} failed requests: {failures[:5]}"
    assert len(ids) == len(set(ids)), "an ID was issued twice"
    assert len(ids) == answered[0]
    events = [e.get("fields", {}).get("event") for e in servers[0].log_events()]
    assert "started" in events


def test_sigterm_turns_readiness_first_then_serves_through_the_drain(start_server):
    """In order: SIGTERM; /readyz 503 `draining` while ID requests are still answered (with
    `Connection: close`); then the process exits 0, having logged no error or warning."""
    s = start_server(env={"FLAKERY_DRAIN_DELAY_MS": "60000"})
    assert s.get("/readyz")[0] == 200
    s.proc.send_signal(signal.SIGTERM)
    deadline = time.time() + 30  # a safety net against a hang, not a measure
    while s.get("/readyz")[0] != 503:
        assert time.time() < deadline, "/readyz never turned 503 after SIGTERM"
        time.sleep(0.01)
    status, headers, body = s.get_json("/readyz")
    assert status == 503 and body["error"]["code"] == "draining"
    assert headers["retry-after"] == "1"
    status, headers, _ = s.get("/v1/id")
    assert status == 200 and headers.get("connection") == "close"
    assert s.proc.poll() is None, "stopped during the drain delay"
    # A second signal ends the delay.
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(30) == 0
    events = s.log_events()
    names = [e.get("fields", {}).get("event") for e in events]
    assert names.index("draining") < names.index("stopping") < names.index("stopped"), names
    loud = [e for e in events if e.get("level") in ("ERROR", "WARN")]
    assert loud == [], loud

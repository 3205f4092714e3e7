"""Starts the real `flakery serve` binary on a free loopback port and stops it by PID."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import http.client

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "zookeeper"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from sigstop import stop_process  # noqa: E402,F401  (the client's tests take it from here)
from ports import listen_port  # noqa: E402

BINARY = os.environ.get("FLAKERY_BIN", os.path.join(ROOT, "target", "debug", "flakery"))


def free_port() -> int:
    return listen_port()


class Server:
    """`ssl_context`: the server serves TLS (its args give the files), and this context is how
    the harness itself talks to it (tests/server/test_tls.py)."""

    def __init__(self, args=(), env=None, wait_ready=True, port=None, ssl_context=None,
                 host="127.0.0.1"):
        self.port = port or free_port()
        self.ssl_context = ssl_context
        self.log = tempfile.NamedTemporaryFile(prefix="server-test-", suffix=".log", delete=False)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
        full_env["FLAKERY_LEASE_DIR"] = tempfile.mkdtemp(prefix="server-test-lease-")
        full_env["FLAKERY_LOG_FORMAT"] = "json"
        # Stop at once unless a test is about draining (tests/server/test_drain.py).
        full_env["FLAKERY_DRAIN_DELAY_MS"] = "0"
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--listen", f"{host}:{self.port}", *args],
            env=full_env, stdout=self.log, stderr=self.log,
        )
        deadline = time.time() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.logs()}")
            try:
                status, _, _ = self.get("/healthz")
                if status == 200 and (not wait_ready or self.get("/readyz")[0] == 200):
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"server did not come up: {self.logs()}")
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def conn(self, timeout=10):
        if self.ssl_context is not None:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=self.ssl_context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None):
        c = self.conn()
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read()
        finally:
            c.close()

    def get(self, path, headers=None):
        return self.request("GET", path, headers=headers)

    def get_json(self, path, headers=None):
        status, headers_, body = self.get(path, headers)
        return status, headers_, json.loads(body)

    def logs(self) -> str:
        with open(self.log.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def log_events(self):
        events = []
        for line in self.logs().splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
        return events

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def terminate(self, timeout=30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.log.name)


@pytest.fixture
def start_server():
    servers = []

    def start(*args, env=None, wait_ready=True, port=None, ssl_context=None, host="127.0.0.1"):
        server = Server(args, env, wait_ready, port, ssl_context, host)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def server():
    s = Server(["--worker-id", "7", "--datacenter-id", "3"])
    yield s
    s.stop()

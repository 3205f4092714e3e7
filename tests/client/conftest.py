"""Servers for the client's tests: tests/server's harness (the real `flakery serve` on a free
loopback port, stopped by PID), and the client's hammer (client/examples/hammer.rs)."""

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "server_harness", os.path.join(ROOT, "tests", "server", "conftest.py"))
server_harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(server_harness)

Server = server_harness.Server
free_port = server_harness.free_port
stop_process = server_harness.stop_process
BINARY = server_harness.BINARY
HAMMER = os.environ.get("FLAKERY_HAMMER", os.path.join(ROOT, "target", "debug", "examples", "hammer"))


@pytest.fixture
def servers():
    """Starts servers that share one lease directory (so each leases a worker ID of its own,
    and one restarted keeps to its mark); stops every one started, restarts included."""
    started = []
    lease_dir = tempfile.mkdtemp(prefix="client-test-lease-")

    def start(*args, env=None, port=None):
        server = Server(args, {"FLAKERY_LEASE_DIR": lease_dir, **(env or {})}, True, port)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
    shutil.rmtree(lease_dir, ignore_errors=True)


class Hammer:
    """One hammer process: its IDs are read from its files when it has exited."""

    def __init__(self, urls, *args, env=None):
        self.dir = tempfile.mkdtemp(prefix="client-hammer-")
        self.prefix = os.path.join(self.dir, "ids")
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [HAMMER, "--servers", ",".join(urls), "--out", self.prefix, *map(str, args)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
            start_new_session=True)  # its forked children in its group: stopped with it

    def wait(self, failsafe=120):
        """Waits for it (the failsafe only keeps a hung run from hanging the suite), and
        answers each process's report and every ID handed out."""
        try:
            out, err = self.proc.communicate(timeout=failsafe)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise
        assert self.proc.returncode == 0, f"hammer exited {self.proc.returncode}: {err}"
        reports = [json.loads(line) for line in out.splitlines() if line.strip()]
        ids = []
        for name in os.listdir(self.dir):
            with open(os.path.join(self.dir, name), "rb") as f:
                data = f.read()
            ids.extend(int.from_bytes(data[i:i + 8], "little", signed=True)
                       for i in range(0, len(data), 8))
        shutil.rmtree(self.dir, ignore_errors=True)
        return reports, ids


def url(server):
    return f"http://127.0.0.1:{server.port}"


def flakery(*args, env=None, failsafe=60):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    full_env.update(env or {})
    return subprocess.run([BINARY, *args], capture_output=True, text=True, env=full_env,
                          timeout=failsafe)


def duplicates(ids):
    seen = set()
    dup = 0
    for i in ids:
        if i in seen:
            dup += 1
        seen.add(i)
    return dup

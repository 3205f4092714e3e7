"""Shared by the tests: they run against the installed package, never the source tree."""

import http.server
import itertools
import os
import pathlib
import socket
import threading
import time

import pytest

import flakery

REPO_ROOT = pathlib.Path(os.environ.get("FLAKERY_REPO_ROOT", pathlib.Path(__file__).parents[2]))


def pytest_report_header() -> str:
    return f"flakery {flakery.__version__} from {pathlib.Path(flakery.__file__).parent}"


@pytest.fixture
def repo_root() -> pathlib.Path:
    return REPO_ROOT


@pytest.fixture
def run_python():
    """Runs code in a fresh interpreter (the process-wide generator reads the environment
    once) with FLAKERY_* variables set as given, and returns its standard output."""
    import subprocess
    import sys

    def run(code: str, **env: str) -> str:
        # FLAKERY_LEASE_DIR is the harness's (run.sh): in a container nothing leases without it.
        environ = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("FLAKERY_") or k == "FLAKERY_LEASE_DIR"
        }
        environ.update(env)
        done = subprocess.run(
            [sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run


class _Ids(http.server.BaseHTTPRequestHandler):
    """A tiny `flakery serve`: its layout and increasing IDs (docs/server.md's two routes a
    client uses), on 127.0.0.1; enough for a client's whole path through the network."""

    next = itertools.count(1 << 40)
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"
    # The headers and the body go out as two writes: with Nagle's algorithm the second waits
    # for the client's delayed ACK (40 ms a request).
    disable_nagle_algorithm = True

    def do_GET(self):
        if self.path == "/v1/layout":
            body = b'{"spec":"twitter"}'
        elif self.path.startswith("/v1/ids?count="):
            count = int(self.path.split("=", 1)[1])
            with self.lock:
                body = "".join(f"{next(self.next)}\n" for _ in range(count)).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _SlowIds(_Ids):
    """As _Ids, each answer of IDs sent at least 0.3 s after its request."""

    def do_GET(self):
        if self.path.startswith("/v1/ids"):
            time.sleep(0.3)
        super().do_GET()


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def tiny_server():
    yield from _serve(_Ids)


@pytest.fixture
def slow_server():
    yield from _serve(_SlowIds)


@pytest.fixture
def closed_port():
    """Makes URLs of ports of 127.0.0.1 that nothing listens on (bound, then closed)."""

    def make() -> str:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return f"http://127.0.0.1:{s.getsockname()[1]}"

    return make

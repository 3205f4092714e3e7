"""What the TLS tests share: the test certificates (tests/tls_certs.py), client contexts, a
server started with a pair, and a recording TCP proxy."""

import os
import shutil
import socket
import ssl
import sys
import tempfile
import threading

import pytest

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))
from tls_certs import make_certs  # noqa: E402

TOKEN = "tls-test-token-5f2c9a"


@pytest.fixture(scope="session")
def certs():
    """name -> path of every file of tests/tls_certs.py's FILES."""
    dir = tempfile.mkdtemp(prefix="server-test-certs-")
    files = make_certs(dir)
    yield files
    shutil.rmtree(dir, ignore_errors=True)


def client_context(certs, client=None, verify=True, alpn=("http/1.1",), max_version=None):
    """A client context that trusts the test CA (or checks nothing), with ALPN and
    optionally a client certificate, `client` being "client" or "other-client"."""
    if verify:
        ctx = ssl.create_default_context(cafile=certs["ca.pem"])
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if client:
        ctx.load_cert_chain(certs[f"{client}.crt"], certs[f"{client}.key"])
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    if max_version:
        ctx.maximum_version = max_version
    return ctx


def tls_args(certs, cert="server", *extra):
    return ("--tls-cert", certs[f"{cert}.crt"], "--tls-key", certs[f"{cert}.key"], *extra)


def der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def tls_socket(port, ctx, host="localhost"):
    """A TLS connection to 127.0.0.1:port, the name `host` checked."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    return ctx.wrap_socket(raw, server_hostname=host)


class RecordingProxy:
    """Forwards every connection to 127.0.0.1:target and keeps every byte, both ways."""

    def __init__(self, target):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.recorded = bytearray()
        self.threads = []
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((client, upstream), (upstream, client)):
                t = threading.Thread(target=self._pump, args=(a, b), daemon=True)
                t.start()
                self.threads.append(t)

    def _pump(self, src, dst):
        try:
            while chunk := src.recv(65536):
                with self.lock:
                    self.recorded += chunk
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def bytes(self):
        with self.lock:
            return bytes(self.recorded)

    def close(self):
        self.listener.close()
        for t in self.threads:
            t.join(30)

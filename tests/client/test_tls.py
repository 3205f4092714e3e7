"""Every surface's Client over TLS against real `flakery serve --tls-cert` servers, with the
certificates of tests/tls_certs.py: one pair of servers shared by the surfaces (Rust, CLI,
Python, C, Go, Node), each surface taking IDs from both while the first is killed midway (then
started again on its port for the next), with no duplicate; the failures (unknown CA, expired,
wrong host name, mutual TLS without a client certificate) with `tls_failed` and their cause on
the Rust client (its tests/tls.rs), the CLI and Python, mutual TLS on every surface; a token
over http:// to a host that is not loopback refused with its code on every surface."""

import http.client
import os
import signal
import ssl
import sys
import tempfile
import time

import pytest

from conftest import ROOT, Hammer, Server, duplicates, flakery
from test_bindings import artifact, clean_env, run

sys.path.insert(0, os.path.join(ROOT, "tests"))
from tls_certs import make_certs  # noqa: E402  (the one maker of test certificates)

import flakery as flakery_py  # noqa: E402

HALF = 500
A_WORKER, B_WORKER = 1, 2


class TlsServer(Server):
    """`flakery serve` with a certificate of the test CA; the harness's own requests (its
    readiness) go over TLS without checking the certificate, which some of these are meant to
    fail, and with the client certificate, which the server of mutual TLS asks for."""

    def __init__(self, certs, name, *args, lease_dir, port=None):
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE
        self.context.load_cert_chain(certs["client.crt"], certs["client.key"])
        tls = ["--tls-cert", certs[f"{name}.crt"], "--tls-key", certs[f"{name}.key"]]
        super().__init__([*tls, *args], {"FLAKERY_LEASE_DIR": lease_dir}, True, port)

    def conn(self, timeout=10):
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                           context=self.context)

    @property
    def url(self):
        return f"https://localhost:{self.port}"


class Servers:
    """The pair (`a` killed by each surface, started again on its port) and one server per
    failure."""

    def __init__(self, certs, lease_dir):
        self.certs, self.lease_dir = certs, lease_dir
        start = lambda name, *args: TlsServer(certs, name, *args, lease_dir=lease_dir)  # noqa: E731
        self.a = start("server", "--worker-id", str(A_WORKER))
        self.b = start("server", "--worker-id", str(B_WORKER))
        self.expired = start("expired", "--worker-id", "3")
        self.wrong_host = start("wrong-host", "--worker-id", "4")
        self.mtls = start("server", "--worker-id", "5", "--tls-client-ca", certs["ca.pem"])
        self.all = [self.a, self.b, self.expired, self.wrong_host, self.mtls]

    def pair(self):
        """The pair's URLs, `a` first, `a` started again if a surface killed it."""
        if self.a.proc.poll() is not None:
            self.a = TlsServer(self.certs, "server", "--worker-id", str(A_WORKER),
                               lease_dir=self.lease_dir, port=self.a.port)
            self.all.append(self.a)
        return f"{self.a.url},{self.b.url}"

    def env(self, out):
        """What a surface's program reads: the pair, the CA, whom to kill, where to write."""
        env = clean_env()
        env.update({
            "FLAKERY_TEST_TLS_SERVERS": self.pair(),
            "FLAKERY_TEST_TLS_CA": self.certs["ca.pem"],
            "FLAKERY_TEST_TLS_KILL": str(self.a.pid),
            "FLAKERY_TEST_TLS_MTLS_SERVER": self.mtls.url,
            "FLAKERY_TEST_TLS_OUT": str(out),
        })
        return env


@pytest.fixture(scope="module")
def tls():
    with tempfile.TemporaryDirectory(prefix="client-tls-") as dir:
        certs = make_certs(os.path.join(dir, "certs"))
        lease_dir = os.path.join(dir, "leases")
        os.mkdir(lease_dir)
        servers = Servers(certs, lease_dir)
        try:
            yield servers
        finally:
            for server in servers.all:
                server.stop()


def worker(id):
    return (id >> 12) & 0x3FF  # twitter: 10 bits of node ID above 12 of sequence


def check_across_the_kill(ids):
    """1000 IDs, none twice: the first half from `a`, the second from `b` (asked after `a`
    was killed, which the first surface's half shows it asked first)."""
    assert len(ids) == 2 * HALF, len(ids)
    assert duplicates(ids) == 0
    assert {worker(i) for i in ids[:HALF]} == {A_WORKER}, "the first server first"
    assert {worker(i) for i in ids[HALF:]} == {B_WORKER}, "the second once the first is dead"


def read_ids(path):
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


def test_rust_client_over_tls_across_a_kill(tls):
    # The hammer's client reads the CA from FLAKERY_SERVER_CA, as any Rust program's does.
    servers = tls.pair().split(",")
    hammer = Hammer(servers, "--threads", 2, "--seconds", 3, "--calls", 10**6,
                    "--pause-us", 200, "--prefer-first", 1,
                    env={"FLAKERY_SERVER_CA": tls.certs["ca.pem"]})
    time.sleep(1)
    os.kill(tls.a.pid, signal.SIGKILL)
    reports, ids = hammer.wait()
    assert all(not r["failed"] for r in reports), reports
    assert duplicates(ids) == 0
    assert {worker(i) for i in ids} == {A_WORKER, B_WORKER}, "IDs from both, over TLS"


def test_cli_over_tls_across_a_kill(tls):
    servers = tls.pair()
    ca = tls.certs["ca.pem"]
    ids = []
    for half in range(2):
        r = flakery("next", "--server", servers, "--server-ca", ca, "-n", str(HALF))
        assert r.returncode == 0, r.stderr
        ids += [int(x) for x in r.stdout.split()]
        if half == 0:
            os.kill(tls.a.pid, signal.SIGKILL)
            tls.a.proc.wait()
    assert len(ids) == 2 * HALF and duplicates(ids) == 0
    assert {worker(i) for i in ids[HALF:]} == {B_WORKER}


@pytest.mark.parametrize("server, ca, cause", [
    ("b", "other-ca.pem", "unknown CA"),
    ("expired", "ca.pem", "expired"),
    ("wrong_host", "ca.pem", "wrong host name"),
    ("mtls", "ca.pem", "no client certificate"),
])
def test_each_tls_failure_has_its_code_on_the_cli_and_python(tls, server, ca, cause):
    url, ca = getattr(tls, server).url, tls.certs[ca]
    r = flakery("next", "--server", url, "--server-ca", ca)
    assert r.returncode == 1
    assert r.stderr.startswith("flakery: tls_failed: "), r.stderr
    assert cause in r.stderr, r.stderr
    client = flakery_py.Client(servers=url, server_ca=ca, timeout_ms=5000)
    with pytest.raises(flakery_py.TlsFailedError) as e:
        client.next_id()
    assert e.value.code == "tls_failed" and cause in str(e.value), e.value


def test_mutual_tls_takes_the_client_certificate(tls):
    certs = tls.certs
    r = flakery("next", "--server", tls.mtls.url, "--server-ca", certs["ca.pem"],
                "--client-cert", certs["client.crt"], "--client-key", certs["client.key"])
    assert r.returncode == 0, r.stderr
    client = flakery_py.Client(servers=tls.mtls.url, server_ca=certs["ca.pem"],
                               client_cert=certs["client.crt"], client_key=certs["client.key"])
    assert worker(client.next_id()) == 5
    assert "BEGIN" not in repr(client) and certs["client.key"] not in repr(client)
    # A certificate of another CA is refused as none is.
    other = flakery_py.Client(servers=tls.mtls.url, server_ca=certs["ca.pem"],
                              client_cert=certs["other-client.crt"],
                              client_key=certs["other-client.key"])
    with pytest.raises(flakery_py.TlsFailedError, match="refused this client's certificate"):
        other.next_id()


def test_python_client_over_tls_across_a_kill(tls):
    client = flakery_py.Client(servers=tls.pair(), server_ca=tls.certs["ca.pem"],
                               prefer_first=True, prefetch=False, min_block=100,
                               max_block=100)
    ids = client.next_ids(HALF)
    os.kill(tls.a.pid, signal.SIGKILL)
    tls.a.proc.wait()
    ids += client.next_ids(HALF)
    check_across_the_kill(ids)


def test_a_token_in_clear_is_refused_on_the_cli_and_python():
    r = flakery("next", "--server", "http://10.0.0.1:9", "--token", "s3cret-cli")
    assert r.returncode == 1
    assert r.stderr.startswith("flakery: invalid_argument: --send-token-in-clear"), r.stderr
    assert "s3cret-cli" not in r.stderr
    with pytest.raises(flakery_py.InvalidArgumentError, match="send_token_in_clear") as e:
        flakery_py.Client(servers="http://10.0.0.1:9", token="s3cret-py")
    assert "s3cret-py" not in str(e.value)


def test_c_client_over_tls(tls, tmp_path):
    out = tmp_path / "ids"
    printed = run([artifact("FLAKERY_CLIENT_TLS_C_TEST")], tls.env(out))
    assert printed.strip().endswith(" 0 failed"), printed
    check_across_the_kill(read_ids(out))


def test_go_client_over_tls(tls, tmp_path):
    out = tmp_path / "ids"
    env = tls.env(out)
    env["PKG_CONFIG_PATH"] = artifact("FLAKERY_CLIENT_GO_PKG_CONFIG")
    for key in ("GOCACHE", "GOPATH", "HOME", "PATH", "CGO_ENABLED", "GOTOOLCHAIN", "GOPROXY",
                "GOFLAGS"):
        if key in os.environ:
            env[key] = os.environ[key]
    printed = run(["go", "test", "-count=1", "-v", "-run", "^TestClientTLS$", "."], env,
                  cwd=os.path.join(ROOT, "go"))
    assert "--- PASS: TestClientTLS" in printed
    check_across_the_kill(read_ids(out))


def test_node_client_over_tls(tls, tmp_path):
    artifact("FLAKERY_CLIENT_NODE_BUILT")
    out = tmp_path / "ids"
    printed = run(["node", "--test", "tests/client/tls.test.mjs"], tls.env(out))
    assert "# fail 0" in printed and "# pass 3" in printed
    check_across_the_kill(read_ids(out))

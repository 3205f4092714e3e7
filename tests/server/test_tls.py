"""`flakery serve --tls-cert/--tls-key`: every route over TLS with HTTP/1.1 and HTTP/2 (ALPN)
and gRPC, mutual TLS, the certificates a verifying client refuses, a bad pair at start, and the
warning for a token on a plain listener that is not loopback. Certificates: tests/tls_certs.py.
"""

import json
import os
import signal
import socket
import ssl
import subprocess
import time

import grpc
import h2.connection
import h2.config
import h2.events
import pytest

from conftest import BINARY, free_port
from test_grpc import pb  # noqa: F401  (the fixture)
from tlsutil import TOKEN, certs, client_context, tls_args, tls_socket  # noqa: F401

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def h2_get(sock, path, headers):
    """One HTTP/2 GET on a TLS socket that negotiated h2: (status, body)."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                                header_encoding="utf-8"))
    conn.initiate_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [(":method", "GET"), (":path", path), (":scheme", "https"),
                               (":authority", "localhost"), *headers.items()], end_stream=True)
    sock.sendall(conn.data_to_send())
    status, body = None, b""
    for _ in range(1000):
        data = sock.recv(65536)
        assert data, "the server closed the HTTP/2 connection"
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                status = int(dict(event.headers)[":status"])
            elif isinstance(event, h2.events.DataReceived):
                body += event.data
                conn.acknowledge_received_data(event.flow_controlled_length, stream)
            elif isinstance(event, h2.events.StreamEnded):
                return status, body
        sock.sendall(conn.data_to_send())
    raise AssertionError("no end of stream")


def test_every_route_over_http1_http2_and_grpc(start_server, certs, pb):  # noqa: F811
    ids_pb2, ids_pb2_grpc = pb
    s = start_server(*tls_args(certs), "--worker-id", "9", env={"FLAKERY_SERVER_TOKEN": TOKEN},
                     ssl_context=client_context(certs))
    # HTTP/1.1 (ALPN http/1.1), the names checked by a verifying client: both localhost
    # and 127.0.0.1 are in the certificate.
    for path in ["/v1/id", "/v1/ids?count=10", "/v1/layout", "/genid",
                 "/api/snowflake/get/x", "/v1/decode/1", "/metrics"]:
        status, _, body = s.get(path, AUTH)
        assert status == 200, (path, body)
        assert s.get(path)[0] == 401, path
    _, _, one = s.get_json("/v1/id", AUTH)
    assert (int(one["id"]) >> 12) & 31 == 9
    with tls_socket(s.port, client_context(certs), host="localhost") as sock:
        assert sock.selected_alpn_protocol() == "http/1.1"
    # HTTP/2 chosen by ALPN.
    with tls_socket(s.port, client_context(certs, alpn=("h2", "http/1.1"))) as sock:
        assert sock.selected_alpn_protocol() == "h2"
        status, body = h2_get(sock, "/v1/ids?count=5", AUTH)
        assert status == 200 and len(json.loads(body)["ids"]) == 5
    # gRPC over TLS, the CA given to grpc.
    with open(certs["ca.pem"], "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    with grpc.secure_channel(f"localhost:{s.port}", creds) as ch:
        stub = ids_pb2_grpc.IdsStub(ch)
        metadata = [("authorization", f"Bearer {TOKEN}")]
        got = stub.NextIds(ids_pb2.NextIdsRequest(count=100), metadata=metadata).ids
        assert len(got) == 100 and (got[0] >> 12) & 31 == 9
    # Plain HTTP to the TLS port gets no HTTP answer.
    with socket.create_connection(("127.0.0.1", s.port), timeout=30) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = raw.recv(100)
        assert not answer.startswith(b"HTTP/")
    started = [e for e in s.log_events() if e.get("fields", {}).get("event") == "started"]
    assert started[0]["fields"]["tls"] == "on"


def test_an_http_1_0_client_is_served_over_tls(start_server, certs):  # noqa: F811
    # As `curl --http1.0` offers it: "http/1.0" alone in ALPN.
    s = start_server(*tls_args(certs), "--worker-id", "3", ssl_context=client_context(certs))
    with tls_socket(s.port, client_context(certs, alpn=("http/1.0",))) as sock:
        assert sock.selected_alpn_protocol() == "http/1.0"
        sock.sendall(b"GET /v1/id HTTP/1.0\r\nHost: localhost\r\n\r\n")
        answer = b""
        for _ in range(100):  # until the server closes (HTTP/1.0 without keep-alive)
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.0 200 "), answer


def handshake_refusal(port, ctx):
    """The alert by which the server refuses this client in the TLS handshake (TLS 1.3
    finishes the client's side first: the refusal is the alert read next, before any HTTP);
    None if it answered."""
    try:
        with tls_socket(port, ctx) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            return None if sock.recv(100) else "closed"
    except ssl.SSLError as e:
        return str(e)


def test_mutual_tls_refuses_a_client_without_a_certificate_of_the_ca(start_server, certs,
                                                                    pb):  # noqa: F811
    ids_pb2, ids_pb2_grpc = pb
    ok = client_context(certs, client="client")
    s = start_server(*tls_args(certs, "server", "--tls-client-ca", certs["ca.pem"]),
                     "--worker-id", "9", ssl_context=ok)
    assert s.get_json("/v1/id")[0] == 200
    for version in (None, ssl.TLSVersion.TLSv1_2):
        refusal = handshake_refusal(s.port, client_context(certs, max_version=version))
        assert "alert certificate required" in refusal, refusal
        refusal = handshake_refusal(
            s.port, client_context(certs, client="other-client", max_version=version))
        assert "alert unknown ca" in refusal, refusal
    # With TLS 1.2 the client's certificate is checked before the handshake ends.
    with pytest.raises(ssl.SSLError):
        tls_socket(s.port, client_context(certs, max_version=ssl.TLSVersion.TLSv1_2)).close()
    # gRPC alike: with the client pair it is served, without it never reaches a service.
    def read(name):
        with open(certs[name], "rb") as f:
            return f.read()

    for pair, served in (("client", True), (None, False), ("other-client", False)):
        creds = grpc.ssl_channel_credentials(
            read("ca.pem"), read(f"{pair}.key") if pair else None,
            read(f"{pair}.crt") if pair else None)
        with grpc.secure_channel(f"localhost:{s.port}", creds) as ch:
            stub = ids_pb2_grpc.IdsStub(ch)
            if served:
                assert len(stub.NextIds(ids_pb2.NextIdsRequest(count=3)).ids) == 3
            else:
                with pytest.raises(grpc.RpcError) as e:
                    stub.NextIds(ids_pb2.NextIdsRequest(count=3), timeout=30)
                assert e.value.code() == grpc.StatusCode.UNAVAILABLE, pair
    started = [e for e in s.log_events() if e.get("fields", {}).get("event") == "started"]
    assert started[0]["fields"]["tls"] == "mutual"


@pytest.mark.parametrize("cert,host,why", [
    ("expired", "localhost", "certificate has expired"),
    ("wrong-host", "localhost", "Hostname mismatch"),
    ("wrong-host", "127.0.0.1", "IP address mismatch"),
])
def test_a_verifying_client_refuses_a_bad_server_certificate(start_server, certs, cert, host,
                                                             why):  # noqa: F811
    s = start_server(*tls_args(certs, cert), "--worker-id", "9",
                     ssl_context=client_context(certs, verify=False))
    assert s.get_json("/v1/id")[0] == 200  # served, to a client that checks nothing
    with pytest.raises(ssl.SSLCertVerificationError) as e:
        tls_socket(s.port, client_context(certs), host=host).close()
    assert why in e.value.verify_message, e.value.verify_message
    # The server said so at start, for the expired one only.
    warned = [e for e in s.log_events()
              if e.get("fields", {}).get("event") == "tls_certificate_out_of_date"]
    assert len(warned) == (1 if cert == "expired" else 0), s.logs()
    if warned:
        assert warned[0]["fields"]["not_after"] == "2020-01-02T00:00:00Z"


def start_failure(*args):
    """Runs `flakery serve` expecting it to refuse to start: (exit code, its output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    done = subprocess.run([BINARY, "serve", "--listen", f"127.0.0.1:{free_port()}",
                           "--worker-id", "1", *args], env=env, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout + done.stderr


def test_a_bad_pair_at_start_is_refused_naming_the_file(certs, tmp_path):  # noqa: F811
    secret = "c2VjcmV0IGtleSBieXRlcyBuZXZlciBzaG93bg"
    bad_key = tmp_path / "bad.key"
    bad_key.write_text(f"-----BEGIN PRIVATE KEY-----\n{secret}!!\n-----END PRIVATE KEY-----\n")
    missing = tmp_path / "missing.crt"
    cases = [
        (("--tls-cert", certs["server.crt"], "--tls-key", certs["server2.key"]),
         [certs["server.crt"], certs["server2.key"], "not a pair"]),
        (("--tls-cert", certs["server.crt"], "--tls-key", str(bad_key)),
         ["--tls-key", str(bad_key)]),
        (("--tls-cert", certs["server.key"], "--tls-key", certs["server.key"]),
         ["--tls-cert", certs["server.key"], "no certificate"]),
        (("--tls-cert", str(missing), "--tls-key", certs["server.key"]),
         ["--tls-cert", str(missing)]),
        (("--tls-cert", certs["server.crt"]), ["--tls-cert and --tls-key"]),
        (("--tls-client-ca", certs["ca.pem"]), ["--tls-client-ca"]),
        (("--tls-cert", certs["server.crt"], "--tls-key", certs["server.key"],
          "--tls-client-ca", certs["server.key"]), ["--tls-client-ca", certs["server.key"]]),
    ]
    with open(certs["server.key"]) as f:
        key_lines = [line for line in f.read().splitlines() if "-----" not in line]
    for args, named in cases:
        code, out = start_failure(*args)
        assert code != 0, args
        for text in named:
            assert text in out, (args, out)
        assert secret not in out and all(line not in out for line in key_lines), out


def test_one_warning_for_a_token_on_a_plain_listener_not_loopback(start_server, certs):  # noqa: F811
    def warnings(server):
        return [e for e in server.log_events()
                if e.get("fields", {}).get("event") == "token_in_clear"]

    token = {"FLAKERY_SERVER_TOKEN": TOKEN}
    # 0.0.0.0 answers on 127.0.0.1 too; the token keeps the routes closed meanwhile.
    plain = start_server("--worker-id", "1", env=token, host="0.0.0.0")
    assert len(warnings(plain)) == 1
    assert TOKEN not in plain.logs()
    for server in (start_server("--worker-id", "2", env=token),
                   start_server(*tls_args(certs), "--worker-id", "3", env=token,
                                host="0.0.0.0", ssl_context=client_context(certs)),
                   start_server("--worker-id", "4", host="0.0.0.0")):
        assert warnings(server) == []


def test_what_one_client_sends_makes_no_warning(start_server, certs):  # noqa: F811
    # rustls warns of an IP address sent as SNI (wrk and openssl send one): a log line per
    # connection that any client could make, kept at debug.
    s = start_server(*tls_args(certs), "--worker-id", "3", ssl_context=client_context(certs))
    for _ in range(3):
        subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{s.port}",
                        "-servername", "127.0.0.1"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
    assert s.get_json("/v1/id")[0] == 200
    assert [e for e in s.log_events() if e["level"] == "WARN"] == []


def test_sighup_without_tls_is_logged_not_fatal(start_server):
    s = start_server("--worker-id", "3")
    s.proc.send_signal(signal.SIGHUP)
    for _ in range(600):  # bounded turns until the line (an order of events)
        if s.proc.poll() is not None or any(
                e.get("fields", {}).get("event") == "sighup" for e in s.log_events()):
            break
        time.sleep(0.05)
    assert s.proc.poll() is None, s.logs()
    assert s.get_json("/v1/id")[0] == 200

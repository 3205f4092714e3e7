"""`flakery serve` TLS under use: the pair rotated on SIGHUP and by a Secret-volume style
symlink swap while clients take IDs, a bad new pair kept out, clients that stall in the
handshake, and a recording proxy that finds no token or ID on the wire."""

import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import threading
import time

import grpc

from test_grpc import pb  # noqa: F401  (the fixture)
from tlsutil import (TOKEN, RecordingProxy, certs, client_context, der,  # noqa: F401
                     tls_args, tls_socket)

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def events(server, name):
    return [e for e in server.log_events() if e.get("fields", {}).get("event") == name]


def wait_for_event(server, name, count=1):
    """Waits for the log line, in bounded turns (an order of events, not a speed)."""
    for _ in range(600):
        if len(events(server, name)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {name} in the log: {server.logs()}")


def install(certs, dir, name):
    """Puts the pair NAME in DIR/tls.crt and DIR/tls.key, each by an atomic rename."""
    for ext in ("crt", "key"):
        shutil.copy(certs[f"{name}.{ext}"], os.path.join(dir, f"tls.{ext}.new"))
        os.replace(os.path.join(dir, f"tls.{ext}.new"), os.path.join(dir, f"tls.{ext}"))


def served_cert(port, certs):
    with tls_socket(port, client_context(certs)) as sock:
        return sock.getpeercert(binary_form=True)


def take_id(conn):
    conn.request("GET", "/v1/id", headers=AUTH)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body)
    return int(body.split(b'"')[3])


def test_rotation_on_sighup_under_load_fails_no_request(start_server, certs, tmp_path):  # noqa: F811
    install(certs, tmp_path, "server")
    ctx = client_context(certs)
    s = start_server("--tls-cert", str(tmp_path / "tls.crt"), "--tls-key",
                     str(tmp_path / "tls.key"), "--worker-id", "3",
                     env={"FLAKERY_SERVER_TOKEN": TOKEN, "FLAKERY_TLS_WATCH_S": "0"},
                     ssl_context=ctx)
    old, new = der(certs["server.crt"]), der(certs["server2.crt"])
    stop, reloaded = threading.Event(), threading.Event()
    failures, ids = [], []
    rounds_after = [0] * 4
    kept_log = [[] for _ in range(4)]  # (after the reload?, local port, served cert)
    fresh_log = [[] for _ in range(4)]

    def client(i):
        kept = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=30, context=ctx)
        try:
            while not stop.is_set():
                after = reloaded.is_set()
                got = [take_id(kept)]
                kept_log[i].append((after, kept.sock.getsockname()[1],
                                    kept.sock.getpeercert(binary_form=True)))
                fresh = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=30,
                                                    context=ctx)
                got.append(take_id(fresh))
                fresh_log[i].append((after, fresh.sock.getpeercert(binary_form=True)))
                fresh.close()
                ids.extend(got)
                if after:
                    rounds_after[i] += 1
        except Exception as e:  # noqa: BLE001  (any failure is the test's failure)
            failures.append(repr(e))
        finally:
            kept.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    # Ten rounds of every client before and after the reload; the bounds on these waits are
    # safety nets against a hang, not a measure.
    for _ in range(6000):
        if failures or all(len(log) >= 10 for log in fresh_log):
            break
        time.sleep(0.01)
    install(certs, tmp_path, "server2")
    s.proc.send_signal(signal.SIGHUP)
    wait_for_event(s, "tls_reloaded")
    reloaded.set()
    for _ in range(6000):
        if failures or all(n >= 10 for n in rounds_after):
            break
        time.sleep(0.01)
    stop.set()
    for t in threads:
        t.join(60)
    assert failures == []
    assert all(n >= 10 for n in rounds_after), rounds_after
    assert len(ids) == len(set(ids))
    for i in range(4):
        # One kept-alive connection throughout, opened before the reload: the old
        # certificate's session, still answering after it.
        assert len({port for _, port, _ in kept_log[i]}) == 1
        assert {cert for _, _, cert in kept_log[i]} == {old}
        assert any(after for after, _, _ in kept_log[i])
        # New connections: the old certificate before, the new one after.
        assert {cert for after, cert in fresh_log[i] if not after} <= {old, new}
        assert {cert for after, cert in fresh_log[i] if after} == {new}
    assert events(s, "tls_reloaded")[0]["fields"]["cause"] == "SIGHUP"

    # A bad pair on the next SIGHUP: the one serving stays, the log says why, without the key.
    secret = "bm90IGEga2V5IGJ1dCBhIHNlY3JldA"
    with open(tmp_path / "tls.key", "w") as f:
        f.write(f"-----BEGIN PRIVATE KEY-----\n{secret}!!\n-----END PRIVATE KEY-----\n")
    s.proc.send_signal(signal.SIGHUP)
    wait_for_event(s, "tls_reload_failed")
    failed = events(s, "tls_reload_failed")[0]
    assert str(tmp_path / "tls.key") in failed["fields"]["message"]
    assert secret not in s.logs()
    assert served_cert(s.port, certs) == new
    assert s.get_json("/v1/id", AUTH)[0] == 200


def test_a_symlink_swap_as_kubelet_does_reloads(start_server, certs, tmp_path):  # noqa: F811
    # A Secret volume: DIR/tls.crt -> ..data/tls.crt, ..data -> ..<timestamp> (swapped whole).
    def version(name, pair):
        os.mkdir(tmp_path / name)
        shutil.copy(certs[f"{pair}.crt"], tmp_path / name / "tls.crt")
        shutil.copy(certs[f"{pair}.key"], tmp_path / name / "tls.key")
        os.symlink(name, tmp_path / "..data_tmp")
        os.replace(tmp_path / "..data_tmp", tmp_path / "..data")

    version("..2026_01", "server")
    for ext in ("crt", "key"):
        os.symlink(f"..data/tls.{ext}", tmp_path / f"tls.{ext}")
    s = start_server("--tls-cert", str(tmp_path / "tls.crt"), "--tls-key",
                     str(tmp_path / "tls.key"), "--worker-id", "3",
                     env={"FLAKERY_TLS_WATCH_S": "1"}, ssl_context=client_context(certs))
    assert served_cert(s.port, certs) == der(certs["server.crt"])
    version("..2026_02", "server2")
    wait_for_event(s, "tls_reloaded")
    assert events(s, "tls_reloaded")[0]["fields"]["cause"] == "files changed"
    assert served_cert(s.port, certs) == der(certs["server2.crt"])


def stallers(port, n):
    """N connections that send the first bytes of a ClientHello and then nothing."""
    socks = []
    for _ in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        sock.sendall(b"\x16\x03\x01\x02\x00\x01")
        socks.append(sock)
    return socks


def is_open(sock):
    """Whether the server has neither closed nor answered this connection, without waiting."""
    timeout = sock.gettimeout()
    sock.settimeout(0)
    try:
        sock.recv(1, socket.MSG_PEEK)  # an alert, or b"" when closed
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.settimeout(timeout)


def test_clients_stalled_in_the_handshake_starve_no_one(start_server, certs):  # noqa: F811
    ctx = client_context(certs)
    # While they stall, others are served beside them.
    s = start_server(*tls_args(certs), "--worker-id", "3", "--max-connections", "8",
                     "--header-timeout-s", "30", ssl_context=ctx)
    stalled = stallers(s.port, 4)
    for _ in range(3):
        assert s.get_json("/v1/id")[0] == 200
    assert all(is_open(sock) for sock in stalled)
    for sock in stalled:
        sock.close()
    # And they give their slots back at the handshake timeout: the server closes them. (Six
    # slots for four: the harness's own connections, closed just before, may not be gone yet.)
    s = start_server(*tls_args(certs), "--worker-id", "4", "--max-connections", "6",
                     "--header-timeout-s", "1", ssl_context=ctx)
    stalled = stallers(s.port, 4)
    for sock in stalled:
        try:
            assert sock.recv(100) == b""  # closed by the server (a 60 s guard, not a bound)
        except ConnectionResetError:
            pass
        sock.close()
    assert s.get_json("/v1/id")[0] == 200
    # Each had a slot (none was refused at the accept): the handshake timeout closed them.
    _, _, metrics = s.get("/metrics")
    assert b"\nflakery_connections_refused_total 0\n" in metrics


def closed_by_server(sock):
    """Reads until the server closes (a 60 s socket guard, not a bound): whatever it sent
    first (HTTP/2's SETTINGS), then the end."""
    for _ in range(100):
        try:
            if sock.recv(4096) == b"":
                return True
        except (ConnectionResetError, ssl.SSLEOFError):
            return True
    return False


def test_silent_connections_give_their_slot_back(start_server, certs):  # noqa: F811
    # Every slot held by a client that finished its handshake (either protocol), or on plain
    # HTTP sent one byte (a prefix of HTTP/2's preface), and then nothing: the server closes
    # each, and a real client is served, none refused.
    ctx = client_context(certs)
    s = start_server(*tls_args(certs), "--worker-id", "6", "--max-connections", "6",
                     "--header-timeout-s", "1", ssl_context=ctx)
    idle = [tls_socket(s.port, client_context(certs, alpn=alpn))
            for alpn in (["h2"], ["h2"], ["http/1.1"], ["http/1.1"])]
    assert [sock.selected_alpn_protocol() for sock in idle] == ["h2", "h2", "http/1.1",
                                                                 "http/1.1"]
    plain = start_server("--worker-id", "7", "--max-connections", "6",
                         "--header-timeout-s", "1")
    idle_plain = [socket.create_connection(("127.0.0.1", plain.port), timeout=60)
                  for _ in range(4)]
    for sock in idle_plain:
        sock.sendall(b"P")
    for server, socks in ((s, idle), (plain, idle_plain)):
        assert all(closed_by_server(sock) for sock in socks)
        for sock in socks:
            sock.close()
        assert server.get_json("/v1/id")[0] == 200
        _, _, metrics = server.get("/metrics")
        assert b"\nflakery_connections_refused_total 0\n" in metrics


def forms(i):
    """An ID as it could appear on the wire in clear: decimal, hex, 8 bytes either order, and
    protobuf's varint."""
    varint, n = bytearray(), i
    while True:
        byte, n = n & 0x7F, n >> 7
        varint.append(byte | (0x80 if n else 0))
        if not n:
            break
    return [str(i).encode(), format(i, "x").encode(), struct.pack(">q", i),
            struct.pack("<q", i), bytes(varint)]


def take_through(port, certs, pb):  # noqa: F811
    """53 IDs over HTTP/1.1 and 50 over gRPC from 127.0.0.1:port, over TLS when `certs`."""
    ids_pb2, ids_pb2_grpc = pb
    conn = (http.client.HTTPSConnection("127.0.0.1", port, timeout=30,
                                        context=client_context(certs)) if certs
            else http.client.HTTPConnection("127.0.0.1", port, timeout=30))
    got = [take_id(conn) for _ in range(3)]
    conn.request("GET", "/v1/ids?count=50", headers=AUTH)
    got += [int(x) for x in json.loads(conn.getresponse().read())["ids"]]
    conn.close()
    if certs:
        with open(certs["ca.pem"], "rb") as f:
            channel = grpc.secure_channel(f"127.0.0.1:{port}",
                                          grpc.ssl_channel_credentials(f.read()))
    else:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    with channel:
        stub = ids_pb2_grpc.IdsStub(channel)
        got += stub.NextIds(ids_pb2.NextIdsRequest(count=50),
                            metadata=[("authorization", f"Bearer {TOKEN}")]).ids
    return got


def test_nothing_readable_on_the_wire(start_server, certs, pb):  # noqa: F811
    token = {"FLAKERY_SERVER_TOKEN": TOKEN}
    # The recorder finds the token and the IDs on a plain connection (decimal in JSON, varints
    # in gRPC's protobuf)...
    plain = start_server("--worker-id", "5", env=token)
    proxy = RecordingProxy(plain.port)
    ids = take_through(proxy.port, None, pb)
    proxy.close()
    wire = proxy.bytes()
    assert TOKEN.encode() in wire and all(str(i).encode() in wire for i in ids[:53])
    assert all(forms(i)[4] in wire for i in ids[53:])
    # ...and neither on a TLS one.
    s = start_server(*tls_args(certs), "--worker-id", "6", env=token,
                     ssl_context=client_context(certs))
    proxy = RecordingProxy(s.port)
    ids = take_through(proxy.port, certs, pb)
    proxy.close()
    wire = proxy.bytes()
    assert len(ids) == 103 and len(wire) > 1000
    assert TOKEN.encode() not in wire
    for i in ids:
        assert not any(form in wire for form in forms(i)), i

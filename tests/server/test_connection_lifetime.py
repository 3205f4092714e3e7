"""How long a connection may hold its slot: one whose answers cannot be written is closed after
`--header-timeout-s`, an idle HTTP/2 connection gets GOAWAY even when it answers PINGs, and a
duration flag too long for the clock is refused at start."""

import os
import select
import socket
import struct
import subprocess
import time

from conftest import BINARY, free_port

HEADER_TIMEOUT_S = 2
REQUEST = b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n"
# Generous: only a server that never closes such connections gets near it.
PATIENCE_S = 120


def connections_open(server):
    """The server's own `flakery_connections_open` (this scrape's connection included), or
    None while it refuses the scrape (every slot taken)."""
    try:
        status, _, body = server.get("/metrics")
    except OSError:
        return None
    assert status == 200
    for line in body.decode().splitlines():
        if line.startswith("flakery_connections_open "):
            return int(float(line.split()[1]))
    raise AssertionError("no flakery_connections_open in /metrics")


def pipeline_without_reading(port):
    """A client with a tiny receive buffer that pipelines requests and never reads: the
    server's answers fill both sockets' buffers, then the server stops reading requests too.
    Returns once its own sends stay blocked for a second."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    batch = REQUEST * 100
    for _ in range(100_000):
        _, writable, _ = select.select([], [sock], [], 1.0)
        if not writable:
            return sock
        try:
            sock.send(batch)
        except BlockingIOError:
            pass
    raise AssertionError("the server kept reading requests it could not answer")


def closed_by_server(sock):
    """Whether the server has closed (or reset) this connection, without reading it."""
    events = select.poll()
    events.register(sock, select.POLLHUP | select.POLLERR | select.POLLRDHUP)
    return bool(events.poll(0))


def test_a_client_that_never_reads_its_answers_loses_its_connection(start_server):
    """Pipelined requests whose answers are never read held the connection and its
    `--max-connections` slot for good: hyper stops reading heads while it cannot write, so no
    header timer ran. Now the connection is closed once its writes have been blocked for
    `--header-timeout-s`, and the slots come back."""
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S),
                     "--max-connections", "3")
    hostile = [pipeline_without_reading(s.port) for _ in range(2)]
    try:
        deadline = time.monotonic() + PATIENCE_S
        while connections_open(s) != 1:  # only the scrape's own
            assert time.monotonic() < deadline, \
                f"connections that cannot be written still open after {PATIENCE_S} s"
            time.sleep(0.2)
        # Closed by the server (the client never closed them), and a new client is served.
        assert all(closed_by_server(sock) for sock in hostile)
        assert s.get("/v1/id")[0] == 200
    finally:
        for sock in hostile:
            sock.close()
    assert s.proc.poll() is None


def h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) \
        + struct.pack(">I", stream) + payload


SETTINGS, PING, GOAWAY, HEADERS = 4, 6, 7, 1


def test_an_idle_http2_connection_that_answers_pings_gets_goaway(start_server):
    """A raw h2c client asks once, then only acknowledges SETTINGS and answers the server's
    keep-alive PINGs, as every HTTP/2 library does by itself: it was never closed, and held
    its slot for good. Now, idle for `--header-timeout-s`, it gets GOAWAY, then EOF."""
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S))
    sock = socket.create_connection(("127.0.0.1", s.port))
    # GET /v1/id in HPACK: :method GET, :scheme http, :path /v1/id, :authority x.
    head = b"\x82\x86\x04\x06/v1/id\x01\x01x"
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(SETTINGS, 0, 0)
                 + h2_frame(HEADERS, 0x5, 1, head))
    seen, pings, buffer = [], 0, b""
    deadline = time.monotonic() + PATIENCE_S
    try:
        while True:
            assert time.monotonic() < deadline, \
                f"still open after {PATIENCE_S} s: frames {seen}, {pings} PINGs answered"
            readable, _, _ = select.select([sock], [], [], 1.0)
            if not readable:
                continue
            data = sock.recv(65536)
            if not data:
                break
            buffer += data
            while len(buffer) >= 9:
                length = int.from_bytes(buffer[:3], "big")
                if len(buffer) < 9 + length:
                    break
                kind, flags, payload = buffer[3], buffer[4], buffer[9:9 + length]
                buffer = buffer[9 + length:]
                seen.append(kind)
                if kind == SETTINGS and not flags & 1:
                    sock.sendall(h2_frame(SETTINGS, 1, 0))
                if kind == PING and not flags & 1:
                    pings += 1
                    sock.sendall(h2_frame(PING, 1, 0, payload))
    finally:
        sock.close()
    assert HEADERS in seen, seen  # the request was answered
    assert GOAWAY in seen, f"closed without GOAWAY: {seen}"
    # Only frames the client could ignore came after the GOAWAY.
    assert set(seen[seen.index(GOAWAY):]) <= {GOAWAY, PING, SETTINGS}, seen
    assert s.proc.poll() is None


DURATION_FLAGS = [
    ("--header-timeout-s", "FLAKERY_HEADER_TIMEOUT_S", "86400"),
    ("--request-timeout-s", "FLAKERY_REQUEST_TIMEOUT_S", "86400"),
    ("--shutdown-grace-s", "FLAKERY_SHUTDOWN_GRACE_S", "86400"),
    ("--tls-watch-s", "FLAKERY_TLS_WATCH_S", "86400"),
    ("--drain-delay-ms", "FLAKERY_DRAIN_DELAY_MS", "86400000"),
]


def test_a_duration_too_long_for_the_clock_is_refused_at_start():
    """`--header-timeout-s 18446744073709551615` was taken, and the first connection panicked
    the server (the clock plus it overflows). Every duration flag and its variable now refuse
    more than a day at start: exit 2, the flag and the most named, no panic."""
    too_long = str(2**64 - 1)
    for flag, variable, most in DURATION_FLAGS:
        for args, extra_env in (([flag, too_long], {}), ([], {variable: too_long})):
            env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
            env.update(extra_env)
            run = subprocess.run(
                [BINARY, "serve", "--worker-id", "5", "--listen", f"127.0.0.1:{free_port()}",
                 *args],
                env=env, capture_output=True, text=True, timeout=PATIENCE_S)
            said = run.stdout + run.stderr
            assert run.returncode == 2, (flag, extra_env, run.returncode, said)
            assert flag in said and most in said and "panicked" not in said, said

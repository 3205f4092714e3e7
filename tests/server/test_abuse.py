"""Malformed and oversized requests, a slowloris client and a connection flood: the server
answers with 4xx (never a crash or hang), keeps serving others, and its memory stays bounded."""

import json
import resource
import socket
import threading
import time

HEADER_TIMEOUT_S = 2


def raw(port, data, timeout=5.0):
    """Sends raw bytes, returns what the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            pass
        return b"".join(chunks)


def still_open(sock):
    """Whether the server has neither closed nor answered this connection yet."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)  # an answer, or b"" when closed
    except BlockingIOError:
        return True  # nothing to read yet: still open and unanswered
    except OSError:
        pass  # reset
    return False


def test_malformed_requests_get_4xx(start_server):
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S))
    assert raw(s.port, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert raw(s.port, b"GET /v1/id HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n").startswith(b"HTTP/1.1 400")
    huge_header = b"GET /v1/id HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
    assert raw(s.port, huge_header).startswith(b"HTTP/1.1 431")
    assert raw(s.port, b"\x00\xff" * 1000)[:12] in (b"", b"HTTP/1.1 400")
    for path in ["/v1/decode/%ff%fe", "/v1/ids?count=%00", "/v1/id?format=%ff", "/expid?id=99999999999999999999",
                 "/makeid?time=-5", "/transtime?time=99999999999999999999", "/v1/ids?count=1&count=2"]:
        status, _, body = s.get(path)
        assert 400 <= status < 500, (path, status, body)
    status, _, _ = s.request("POST", "/v1/id")
    assert status == 405
    assert s.get("/healthz")[0] == 200
    assert s.proc.poll() is None


def test_slowloris_is_dropped_and_others_are_served(start_server):
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S))
    slow = socket.create_connection(("127.0.0.1", s.port))
    slow.sendall(b"GET /v1/id HTTP/1.1\r\n")
    closed_after = None
    served_while_held = 0
    started = time.monotonic()
    try:
        for i in range(30):
            try:
                slow.sendall(b"X-Slow-%d: y\r\n" % i)
            except OSError:
                closed_after = time.monotonic() - started
                break
            # An order of events: another client is answered while the slowloris still
            # holds its connection (a server busy with it would answer only once it let go).
            assert s.get("/v1/id")[0] == 200
            if still_open(slow):
                served_while_held += 1
            time.sleep(0.5)
    finally:
        slow.close()
    assert served_while_held > 0, "no other client was served while a slowloris held on"
    # Dropped by the header timeout while it was still sending (30 lines, 0.5 s apart).
    assert closed_after is not None, "the slowloris was never dropped"


def read_answer(sock):
    """One HTTP/1.1 answer with a Content-Length, read whole."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "closed before the answer's head"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        chunk = sock.recv(4096)
        assert chunk, "closed before the answer's body"
        body += chunk
    return head, body


def test_header_timeout_holds_after_the_first_answer(start_server):
    # A kept-alive connection's later heads are timed too (server/src/header_timer.rs): one
    # sent slowly after a first answer is dropped while it is still being sent, and one never
    # begun is closed, as the first request's.
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S))
    slow = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    idle = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    try:
        for sock in (slow, idle):
            sock.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n")
            head, body = read_answer(sock)
            assert head.startswith(b"HTTP/1.1 200") and b'"id"' in body
        slow.sendall(b"GET /v1/id HTTP/1.1\r\n")
        closed = False
        for i in range(30):
            try:
                slow.sendall(b"X-Slow-%d: y\r\n" % i)
            except OSError:
                closed = True
                break
            time.sleep(0.5)
        assert closed, "a slow second head was never dropped"
        # The idle one was closed meanwhile (a 60 s socket guard, not a bound).
        try:
            assert idle.recv(1) == b"", "an idle kept-alive connection answered unasked"
        except ConnectionResetError:
            pass
    finally:
        slow.close()
        idle.close()


def test_connection_flood_keeps_serving_with_bounded_memory(start_server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    s = start_server("--worker-id", "5", "--header-timeout-s", str(HEADER_TIMEOUT_S),
                     "--max-connections", "5000")
    baseline = s.rss_kib()
    flood = []
    try:
        for _ in range(3000):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", s.port))
            except BlockingIOError:
                pass
            flood.append(c)
        time.sleep(0.5)
        # An order of events: a client is answered while the flood's connections are still
        # open (a server stuck on them would answer only once they were dropped).
        assert s.get("/v1/id")[0] == 200, "not served during a flood of idle connections"
        # The first of them, accepted first, is still held open and unanswered: the server
        # answered beside it, not after dropping it at the header timeout.
        assert still_open(flood[0]), "the flood was gone before the answer"
        peak = s.rss_kib()
        # Idle connections are closed after the header timeout (those still in the listen
        # backlog a little later, once accepted).
        open_ = set(flood)
        deadline = time.monotonic() + HEADER_TIMEOUT_S + 15
        while open_ and time.monotonic() < deadline:
            time.sleep(0.5)
            for c in list(open_):
                try:
                    if c.recv(1) == b"":
                        open_.discard(c)
                except BlockingIOError:
                    pass
                except OSError:
                    open_.discard(c)
        assert not open_, f"{len(open_)} of {len(flood)} idle connections still open"
    finally:
        for c in flood:
            c.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert peak - baseline < 100 * 1024, f"RSS grew {peak - baseline} KiB for 3000 connections"
    assert s.get("/v1/id")[0] == 200


def test_over_the_connection_limit_is_closed_and_in_flight_bound_answers_503(start_server):
    s = start_server("--worker-id", "5", "--max-connections", "20", "--max-in-flight", "2",
                     "--header-timeout-s", "30")
    held = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(19)]
    try:
        for h in held:
            h.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", s.port))
        extra.settimeout(5)
        extra.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n")
        # A 20th connection is still within the limit; a 21st is closed unanswered.
        assert extra.recv(100).startswith(b"HTTP/1.1 200")
        over = socket.create_connection(("127.0.0.1", s.port))
        over.settimeout(5)
        try:
            over.sendall(b"GET /v1/id HTTP/1.1\r\nHost: x\r\n\r\n")
            assert over.recv(100) == b""
        except ConnectionResetError:
            pass
        extra.close()
        over.close()
    finally:
        for h in held:
            h.close()
    time.sleep(0.3)
    # Many big batches at once with 2 allowed in flight: some are refused with 503 + Retry-After.
    statuses = []

    def big():
        statuses.append(s.request("GET", "/v1/ids?count=100000")[:2])

    threads = [threading.Thread(target=big) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    codes = [st for st, _ in statuses]
    assert codes.count(200) >= 2 and 503 in codes, codes
    assert all(h.get("retry-after") == "1" for st, h in statuses if st == 503)


# --- answers made but not sent (docs/server.md#limits) ---------------------------------------

MIB = 1024 * 1024
# The bound docs/server.md states for hostile clients that never read: growth under it.
MEMORY_GROWTH_BOUND_KIB = 100 * 1024


def generate_stubs():
    import subprocess
    import sys
    import tempfile
    from conftest import ROOT
    out = tempfile.mkdtemp(prefix="server-test-grpc-")
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT}/server/proto",
                    f"--python_out={out}", f"--grpc_python_out={out}", "flakery/v1/ids.proto"],
                   check=True)
    sys.path.insert(0, out)
    from flakery.v1 import ids_pb2, ids_pb2_grpc
    return ids_pb2, ids_pb2_grpc


def open_all(client, opener, limit=256):
    """Opens up to `limit` streams (fewer when the server's stream limit is reached)."""
    opened = []
    for _ in range(limit):
        sid = opener()
        if sid is None:
            break
        opened.append(sid)
    return opened


def well_behaved_client_is_served(s, stub, ids_pb2):
    status, headers, body = s.get("/v1/ids?count=100000")
    assert status == 200, (status, body[:200])
    assert len(json.loads(body)["ids"]) == 100000
    assert len(stub.NextIds(ids_pb2.NextIdsRequest(count=100000)).ids) == 100000
    streamed = [i for m in stub.StreamIds(ids_pb2.StreamIdsRequest(count=20000)) for i in m.ids]
    assert len(streamed) == 20000


def test_clients_that_never_read_hold_bounded_memory_and_others_are_served(start_server):
    """Four HTTP/2 connections with a receive window of 0, each opening as many streams of
    `/v1/ids?count=100000` as the server allows; two more asking gRPC NextIds(100000) the same
    way; a grpcio client with StreamIds calls it never reads. The server's memory stays within
    the documented bound while a well-behaved client is served, and returns after they go."""
    import grpc
    from h2client import H2Client, varint

    ids_pb2, ids_pb2_grpc = generate_stubs()
    s = start_server("--worker-id", "5")
    # grpcio shares one connection among channels to one address unless told not to.
    own = [("grpc.use_local_subchannel_pool", 1)]
    good = grpc.insecure_channel(f"127.0.0.1:{s.port}", options=own)
    stub = ids_pb2_grpc.IdsStub(good)
    well_behaved_client_is_served(s, stub, ids_pb2)  # warm: threads, pools, first buffers
    baseline = s.rss_kib()

    hostile = [H2Client(s.port, window=0) for _ in range(6)]
    unread = grpc.insecure_channel(f"127.0.0.1:{s.port}", options=own)
    try:
        streams = []
        for client in hostile[:4]:
            streams.append(open_all(client, lambda c=client: c.get("/v1/ids?count=100000")))
        next_ids = b"\x08" + varint(100000)
        for client in hostile[4:]:
            streams.append(open_all(
                client, lambda c=client: c.grpc("/flakery.v1.Ids/NextIds", next_ids)))
        unread_stub = ids_pb2_grpc.IdsStub(unread)
        never_read = [unread_stub.StreamIds(ids_pb2.StreamIdsRequest(count=10**9))
                      for _ in range(64)]
        assert all(len(opened) >= 100 for opened in streams), [len(o) for o in streams]
        # Every stream is answered (headers need no window): made and held, or refused.
        for client, opened in zip(hostile, streams):
            assert client.wait(lambda c=client, o=opened: all(sid in c.headers for sid in o)), \
                f"{sum(sid in client.headers for sid in opened)} of {len(opened)} answered"
        held = s.rss_kib()
        well_behaved_client_is_served(s, stub, ids_pb2)
        peak = max(held, s.rss_kib())
        print(f"RSS {baseline // 1024} MiB at start, {peak // 1024} MiB under hostile clients")
        assert peak - baseline < MEMORY_GROWTH_BOUND_KIB, \
            f"RSS grew {(peak - baseline) // 1024} MiB under clients that never read"
        http_statuses = [hostile[i].headers[sid][":status"]
                         for i in range(4) for sid in streams[i]]
        assert "200" in http_statuses and "503" in http_statuses, set(http_statuses)
        refused = [hostile[0].headers[sid] for sid in streams[0]
                   if hostile[0].headers[sid][":status"] == "503"]
        assert all(h["content-type"] == "application/json" and h["retry-after"] == "1"
                   for h in refused)
        grpc_codes = [hostile[i].headers[sid].get("grpc-status") for i in (4, 5)
                      for sid in streams[i]]
        assert "14" in grpc_codes, set(grpc_codes)  # UNAVAILABLE: overloaded
        assert any(h.get("grpc-message", "").startswith("overloaded")
                   for i in (4, 5) for h in hostile[i].headers.values())

        for call in never_read:
            call.cancel()
    finally:
        for client in hostile:
            client.close()
        unread.close()
    # What they held is given back: the budget (the next full batches are made again), and
    # the memory (large answers live in mappings of their own, returned when freed).
    for _ in range(3):
        well_behaved_client_is_served(s, stub, ids_pb2)
    after = s.rss_kib()
    print(f"RSS {after // 1024} MiB after they left")
    good.close()
    assert after - baseline < 40 * 1024, \
        f"RSS stayed {(after - baseline) // 1024} MiB above the start after the clients left"
    assert s.proc.poll() is None


def test_memory_is_given_back_after_a_burst_of_large_answers(start_server):
    """Rounds of 40 clients at once each asking for 100000 IDs and reading after a pause: the
    allocator must return what the answers held (on glibc a raised mmap threshold put them on
    a heap that was never given back: 10 to 36 MiB kept after five rounds in our runs, 850 MB
    in the report)."""
    # A budget that admits them all: this is about the allocator, not the budget.
    s = start_server("--worker-id", "5", "--max-unsent-bytes", str(1 << 30))
    for _ in range(3):
        assert s.get("/v1/ids?count=100000")[0] == 200
    baseline = s.rss_kib()

    def big(statuses):
        c = s.conn(timeout=60)
        try:
            c.request("GET", "/v1/ids?count=100000")
            r = c.getresponse()
            time.sleep(0.5)
            statuses.append((r.status, len(json.loads(r.read())["ids"])))
        finally:
            c.close()

    for _ in range(5):
        statuses = []
        threads = [threading.Thread(target=big, args=(statuses,)) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert statuses.count((200, 100000)) == 40, statuses
    after = s.rss_kib()
    print(f"RSS {baseline // 1024} MiB before five rounds, {after // 1024} MiB after")
    assert after - baseline < 8 * 1024, \
        f"RSS stayed {(after - baseline) // 1024} MiB above the start after the answers were sent"

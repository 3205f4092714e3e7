"""flakery-client against real servers: chaos, fork, tokens, garbage, every server down."""

import http.server
import os
import sys
import signal
import socketserver
import subprocess
import threading
import time

from conftest import ROOT, Hammer, Server, duplicates, flakery, free_port, stop_process, url

sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import blocks  # noqa: E402  (tests/docs' reader of code blocks)


def test_next_from_servers_prints_their_ids(servers):
    a = servers("--worker-id", "5", "--datacenter-id", "1")
    r = flakery("next", "--server", url(a), "-n", "5", "--format", "base62")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert len(lines) == 5 and all(len(line) == 11 for line in lines), r.stdout
    assert lines == sorted(lines) and len(set(lines)) == 5
    r = flakery("next", "--server", f"http://127.0.0.1:{free_port()},{url(a)}", "-n", "3")
    assert r.returncode == 0, r.stderr
    decoded = flakery("decode", *r.stdout.split())
    assert decoded.stdout.count("worker 5") == 3, decoded.stdout


def test_many_clients_while_servers_are_killed_paused_and_restarted(servers):
    """Three servers, four client processes of four threads; meanwhile one server is paused
    (SIGSTOP) past the request timeout, one killed (SIGKILL) and started again on its port,
    one stopped (SIGTERM) and started again, then the first killed for good, longer than a
    call's deadline. At least two servers answer at every moment: no call may fail."""
    a, b, c = servers(), servers(), servers()
    # Each process asks the servers in its own order, the first first: two start at `a`,
    # the server that ends down for good.
    orders = [[a, b, c], [a, c, b], [b, c, a], [c, a, b]]
    hammers = [Hammer([url(s) for s in order], "--threads", 4, "--seconds", 10,
                      "--calls", 400000, "--pause-us", 50, "--request-timeout-ms", 500,
                      "--timeout-ms", 2000, "--max-age-ms", 2000, "--prefer-first", 1)
               for order in orders]
    time.sleep(1)
    stop_process(a.pid)
    time.sleep(1.5)
    os.kill(a.pid, signal.SIGCONT)
    b_port = b.port
    os.kill(b.pid, signal.SIGKILL)
    b.proc.wait()
    time.sleep(0.5)
    servers(port=b_port)
    c_port = c.port
    assert c.terminate() == 0
    servers(port=c_port)
    time.sleep(0.5)
    os.kill(a.pid, signal.SIGKILL)
    a.proc.wait()
    total, ok = [], 0
    for hammer in hammers:
        reports, ids = hammer.wait()
        assert len(reports) == 1
        report = reports[0]
        assert report["failed"] == {}, report
        ok += report["ok"]
        total.extend(ids)
    print(f"{len(total)} IDs from 16 threads in 4 processes over 3 servers")
    assert ok == len(total) and ok > 10000
    assert duplicates(total) == 0


def test_a_forked_child_never_hands_out_the_parents_block(servers):
    """The parent takes two IDs (so it holds a block, and its thread holds it for
    lock-free calls), forks four children that each take one on that thread and 2000 more,
    then takes 2000 itself: nobody's IDs are anybody else's."""
    a = servers()
    reports, ids = Hammer([url(a)], "--forks", 4, "--calls", 2000, "--threads", 2).wait()
    assert len(reports) == 5
    assert all(r["failed"] == {} for r in reports), reports
    assert len(ids) == 5 * 2 * 2000 + 2 + 4
    assert duplicates(ids) == 0


def test_a_bad_token_is_a_clear_error_without_the_token(servers):
    secret = "right-token-4f1c"
    a = servers(env={"FLAKERY_SERVER_TOKEN": secret})
    wrong = "wrong-token-9e2d"
    for args, env in [
        (["--token", wrong], None),
        ([], {"FLAKERY_SERVER_TOKEN": wrong}),
        ([], None),
    ]:
        r = flakery("next", "--server", url(a), *args, env=env)
        assert r.returncode == 1, r
        assert r.stderr.startswith("flakery: unauthorized: "), r.stderr
        assert url(a) in r.stderr and "401" in r.stderr
        assert wrong not in r.stderr and secret not in r.stderr and r.stdout == ""
    r = flakery("next", "--server", url(a), env={"FLAKERY_SERVER_TOKEN": secret})
    assert r.returncode == 0, r.stderr


def test_every_server_down_is_a_clear_error(servers):
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    r = flakery("next", "--server", dead[0], "--server", dead[1])
    assert r.returncode == 1
    assert r.stderr.startswith("flakery: servers_unavailable: "), r.stderr
    assert dead[0] in r.stderr and dead[1] in r.stderr, r.stderr


def test_a_call_returns_while_every_server_is_paused(servers):
    """The order of events: with both servers stopped (SIGSTOP) the call fails, and it has
    ended before they are resumed."""
    a, b = servers(), servers()
    stop_process(a.pid)
    stop_process(b.pid)
    try:
        r = flakery("next", "--server", f"{url(a)},{url(b)}")
        assert r.returncode == 1
        assert r.stderr.startswith("flakery: servers_unavailable: "), r.stderr
        assert "timed out" in r.stderr or "Timeout" in r.stderr or "timeout" in r.stderr, r.stderr
        assert a.proc.poll() is None and b.proc.poll() is None
    finally:
        os.kill(a.pid, signal.SIGCONT)
        os.kill(b.pid, signal.SIGCONT)
    r = flakery("next", "--server", f"{url(a)},{url(b)}")
    assert r.returncode == 0, r.stderr


class Garbage(http.server.BaseHTTPRequestHandler):
    """A server that gives a right layout and a wrong batch (`Garbage.kind` says which)."""
    kind = "endless"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/layout":
            spec = b"twitter;epoch=2020-01-01" if Garbage.kind == "layout" else b"twitter"
            return self.send(200, "application/json", b'{"spec":"' + spec + b'"}')
        kind = Garbage.kind
        if kind == "endless":
            # Half a gigabyte of lines of IDs, sent as fast as it is read.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(512 * 1024 * 1024))
            self.end_headers()
            chunk = b"".join(b"%d\n" % (10**17 + i) for i in range(50000))
            sent = 0
            try:
                while sent < 512 * 1024 * 1024:
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
        elif kind == "json":
            self.send(200, "application/json", b'{"ids":["1"]}')
        elif kind == "decreasing":
            self.send(200, "text/plain", b"5\n4\n3\n2\n1\n")
        elif kind == "binary":
            self.send(200, "text/plain", os.urandom(64))
        elif kind == "status":
            self.send(418, "text/html", b"<html>teapot</html>")
        elif kind == "unready":
            self.send(503, "application/json",
                      b'{"error":{"code":"lease_lost","message":"the node ID lease is lost"}}')


def serve_garbage():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Garbage)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_server_that_answers_garbage_is_a_clear_error_in_bounded_memory():
    server = serve_garbage()
    garbage = f"http://127.0.0.1:{server.server_address[1]}"
    peak_kib = {}
    try:
        for kind, said in [
            ("endless", "more than the"),
            ("json", "application/json"),
            ("decreasing", "after a larger or equal one"),
            ("binary", ""),
            ("status", "418"),
            ("layout", "layout 'twitter;epoch=2020-01-01'"),
        ]:
            Garbage.kind = kind
            proc = subprocess.Popen(
                [os.environ.get("FLAKERY_BIN"), "next", "--server", garbage, "-n", "5"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")})
            _, _, rusage = os.wait4(proc.pid, 0)
            err = proc.stderr.read()
            assert err.startswith("flakery: bad_answer: "), (kind, err)
            assert said in err, (kind, err)
            peak_kib[kind] = rusage.ru_maxrss
        # The endless answer is 512 MiB; the client reads what 5 IDs can take. A child's peak
        # includes this process's before the exec: each is compared with a short answer's.
        assert peak_kib["endless"] < peak_kib["json"] + 32 * 1024, peak_kib
    finally:
        server.shutdown()


def test_a_server_answering_503_is_skipped(servers):
    """A server whose lease is lost answers 503: the client takes its IDs from another, and
    with no other it fails with servers_unavailable naming the 503."""
    garbage = serve_garbage()
    unready = f"http://127.0.0.1:{garbage.server_address[1]}"
    Garbage.kind = "unready"
    try:
        r = flakery("next", "--server", unready)
        assert r.returncode == 1
        assert r.stderr.startswith("flakery: servers_unavailable: "), r.stderr
        assert "503 lease_lost: the node ID lease is lost" in r.stderr, r.stderr
        good = servers("--worker-id", "12")
        for _ in range(4):  # each process starts at a server of its own: both orders
            r = flakery("next", "--server", f"{unready},{url(good)}", "-n", "2")
            assert r.returncode == 0, r.stderr
            decoded = flakery("decode", *r.stdout.split())
            assert decoded.stdout.count("worker 12") == 2, decoded.stdout
    finally:
        garbage.shutdown()


def test_the_rust_quick_start_of_the_docs_runs(servers, tmp_path):
    """docs/client.md's Rust block, its two URLs replaced by two servers started here,
    compiled against the client and the core, run."""
    from pathlib import Path
    [block] = [b for b in blocks.parse(Path(ROOT, "docs", "client.md")) if b.lang == "rust"]
    a, b = servers("--worker-id", "9"), servers("--worker-id", "9", "--datacenter-id", "1")
    assert "http://127.0.0.1:8080" in block.text and "http://127.0.0.1:8081" in block.text
    source = block.text.replace("http://127.0.0.1:8080", url(a)).replace(
        "http://127.0.0.1:8081", url(b))
    (tmp_path / "quick.rs").write_text(source)
    built = subprocess.run(
        ["rustc", "--edition", "2021", "-o", str(tmp_path / "quick"), str(tmp_path / "quick.rs"),
         "--extern", f"flakery_client={os.environ['FLAKERY_CLIENT_RLIB']}",
         "--extern", f"flakery={os.environ['FLAKERY_CORE_RLIB']}",
         "-L", f"dependency={os.environ['FLAKERY_DEPS']}"],
        capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(tmp_path / "quick")], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    first, second = ran.stdout.splitlines()
    assert first.endswith(" worker 9"), ran.stdout
    assert len(second) == 11, ran.stdout

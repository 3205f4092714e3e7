"""Every refusal on every route is the documented error (docs/server.md#routes):
`{"error":{"code":"…","message":"…"}}` as application/json, with a stable code, whatever
refused it (a handler, the framework's extractors and method router, the guard), over
HTTP/1.1 and HTTP/2. The Vesta and Leaf routes keep their own answers; what they share with
the rest is that a repeated parameter is refused."""

import json
import socket

import pytest

from h2client import H2Client

V1_GET = ["/v1/id", "/v1/ids", "/v1/decode/1", "/v1/layout", "/healthz", "/readyz", "/metrics"]
COMPAT_GET = ["/genid", "/expid", "/makeid", "/transtime", "/api/snowflake/get/k",
              "/decodeSnowflakeId"]


def assert_error(status, headers, body, want_status, want_code, what):
    assert status == want_status, (what, status, body[:300])
    assert headers.get("content-type") == "application/json", (what, headers)
    doc = json.loads(body)
    assert list(doc) == ["error"] and sorted(doc["error"]) == ["code", "message"], (what, doc)
    assert doc["error"]["code"] == want_code, (what, doc)
    assert isinstance(doc["error"]["message"], str) and doc["error"]["message"], (what, doc)


@pytest.fixture(scope="module")
def small_budget(request):
    from conftest import Server
    s = Server(["--worker-id", "4", "--max-unsent-bytes", "2000000", "--request-timeout-s", "1",
                "--max-body-bytes", "1024"])
    yield s
    s.stop()


def check(s, method, path, want_status, want_code, body=None, headers=None):
    status, h, data = s.request(method, path, body=body, headers=headers or {})
    assert_error(status, h, data, want_status, want_code, f"{method} {path}")
    return h


def test_unknown_routes_and_wrong_methods(small_budget):
    s = small_budget
    for path in ["/", "/v2/id", "/v1/ids/", "/v1/decode", "/v1/decode/1/2", "/%FF"]:
        check(s, "GET", path, 404, "not_found")
    for path in V1_GET + COMPAT_GET:
        for method in ["POST", "PUT", "DELETE", "PATCH"]:
            h = check(s, method, path, 405, "method_not_allowed")
            assert "GET" in h["allow"], (path, h)
    h = check(s, "GET", "/v1/compose", 405, "method_not_allowed")
    assert h["allow"] == "POST"


def test_bad_queries_and_paths(small_budget):
    s = small_budget
    # A repeated parameter, on every route: never the first or the last value taken (but
    # Leaf's /decodeSnowflakeId, which joins the values as Leaf does: test_compat.py).
    for path in V1_GET + ["/v1/compose"] + [p for p in COMPAT_GET if p != "/decodeSnowflakeId"]:
        method = "POST" if path == "/v1/compose" else "GET"
        for query in ["?count=5&count=6", "?format=base32&format=base62", "?id=1&id=2",
                      "?x=1&x=1", "?id=1&%69d=2"]:
            check(s, method, path + query, 400, "invalid_argument")
    # A parameter a route does not take, or a value it cannot read.
    for path in ["/v1/id?cont=5", "/v1/ids?cuont=5", "/v1/decode/1?count=1", "/v1/id?format=%FF",
                 "/v1/ids?format=base64", "/v1/ids?count=", "/v1/ids?count=%00"]:
        check(s, "GET", path, 400, "invalid_argument")
    # A path that is not UTF-8 once decoded, or not an ID.
    for path in ["/v1/decode/%FF", "/v1/decode/%C3%28", "/v1/decode/abc", "/v1/decode/%20"]:
        check(s, "GET", path, 400, "invalid_argument")
    check(s, "GET", "/v1/decode/" + "9" * 30, 400, "invalid_argument")


def test_bad_bodies(small_budget):
    s = small_budget
    json_type = {"Content-Type": "application/json"}
    for body in [b"", b"{", b"[]", b"null", b'{"timestamp_ms":"x"}', b'{"timestamp_ms":1,"x":1}',
                 b"\xff\xfe"]:
        check(s, "POST", "/v1/compose", 400, "invalid_argument", body, json_type)
    for content_type in [None, "text/plain", "application/x-www-form-urlencoded"]:
        headers = {"Content-Type": content_type} if content_type else {}
        check(s, "POST", "/v1/compose", 415, "unsupported_media_type", b'{"timestamp_ms":1}',
              headers)
    check(s, "POST", "/v1/compose", 413, "body_too_large",
          json.dumps({"timestamp_ms": 1, "fields": {f"f{i}": i for i in range(200)}}), json_type)


def raw_http1(port, head: bytes):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
        head_part, _, rest = data.partition(b"\r\n\r\n")
        lines = head_part.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = dict((k.lower(), v.strip()) for k, v in (l.split(":", 1) for l in lines[1:]))
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = c.recv(65536)
            if not chunk:
                break
            rest += chunk
        return status, headers, rest


def test_long_uris_and_heads_over_http1(small_budget):
    s = small_budget
    check(s, "GET", "/v1/id?format=" + "x" * 9000, 414, "uri_too_long")
    check(s, "GET", "/nothing/" + "x" * 9000, 414, "uri_too_long")
    status, h, body = raw_http1(
        s.port, b"GET /v1/id HTTP/1.1\r\nHost: x\r\n" + b"".join(
            b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(20)) + b"\r\n")
    assert_error(status, h, body, 431, "headers_too_large", "20 KB of headers")
    # Past what the transport reads at all, its own bare 431: the status still says why.
    status, _, _ = raw_http1(s.port, b"GET /v1/id HTTP/1.1\r\nHost: x\r\nX-Big: "
                             + b"a" * 100_000 + b"\r\n\r\n")
    assert status == 431


def h2_answer(client, sid):
    assert client.wait(lambda: sid in client.ended or sid in client.reset), \
        (client.goaway, client.reset)
    return client.headers.get(sid), bytes(client.data.get(sid, b""))


def test_errors_over_http2(small_budget):
    s = small_budget
    client = H2Client(s.port)
    try:
        for path, status, code in [("/v1/ids?count=5&count=6", "400", "invalid_argument"),
                                   ("/v1/decode/%FF", "400", "invalid_argument"),
                                   ("/nope", "404", "not_found"),
                                   ("/v1/id?format=" + "x" * 9000, "414", "uri_too_long")]:
            headers, body = h2_answer(client, client.get(path))
            assert_error(int(headers[":status"]), headers, body, int(status), code, path)
        # A header list over the guard's bound: the JSON 431.
        pad = [(f"x-pad-{i}", "a" * 1000) for i in range(20)]
        headers, body = h2_answer(client, client.get("/v1/id", pad))
        assert_error(int(headers[":status"]), headers, body, 431, "headers_too_large", "h2 20 KB")
        # One far over it, in many headers across CONTINUATION frames: still a 431 on that
        # stream (from the transport), not COMPRESSION_ERROR for the whole connection.
        pad = [(f"x-pad-{i}", "a" * 1000) for i in range(100)]
        headers, _ = h2_answer(client, client.get("/v1/id", pad))
        assert headers is not None and headers[":status"] == "431", (headers, client.goaway)
        assert client.goaway is None
        headers, body = h2_answer(client, client.get("/v1/id"))
        assert headers[":status"] == "200", "the connection still serves"
    finally:
        client.close()


def test_timeout_and_overload_are_json(small_budget):
    s = small_budget
    # A body that never finishes: 408 when the request's time is up.
    status, h, body = raw_http1(
        s.port, b"POST /v1/compose HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100\r\n\r\n{\"timestamp_ms\":")
    assert_error(status, h, body, 408, "timeout", "slow body")
    # An answer larger than this server's budget for unsent answers: 503 with Retry-After.
    h = check(s, "GET", "/v1/ids?count=100000", 503, "overloaded")
    assert h["retry-after"] == "1"
    status, _, _ = s.get("/v1/ids?count=1000")
    assert status == 200, "a smaller answer fits"

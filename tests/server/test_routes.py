"""Every HTTP route of `flakery serve` and its status codes, against the real binary."""

import json
import os
import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

import subprocess

from conftest import BINARY, ROOT

TWITTER_EPOCH = 1288834974657


def decode_twitter(i):
    return {
        "timestamp_ms": (i >> 22) + TWITTER_EPOCH,
        "datacenter_id": (i >> 17) & 31,
        "worker_id": (i >> 12) & 31,
        "sequence": i & 4095,
    }


def test_one_id_is_a_decimal_string_of_this_node(server):
    status, headers, body = server.get_json("/v1/id")
    assert status == 200 and headers["content-type"] == "application/json"
    assert isinstance(body["id"], str) and body["id"].isdigit()
    parts = decode_twitter(int(body["id"]))
    assert (parts["datacenter_id"], parts["worker_id"]) == (3, 7)


def test_batch_is_increasing_and_capped(server):
    status, _, body = server.get_json("/v1/ids?count=1000")
    ids = [int(x) for x in body["ids"]]
    assert status == 200 and len(ids) == 1000
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert len(server.get_json("/v1/ids?count=100000")[2]["ids"]) == 100000
    for bad in ["0", "100001", "-1", "abc", "1e3", "99999999999999999999"]:
        status, _, body = server.get_json(f"/v1/ids?count={bad}")
        assert status == 400, bad
        assert body["error"]["code"] == "invalid_argument"
        assert "count" in body["error"]["message"]


def test_batches_that_straddle_a_tick_stay_whole_and_increasing(start_server):
    # A batch of up to 4096 takes what the current tick has left on the fast path and the
    # rest on a blocking thread: asked back to back, most of these straddle a tick.
    s = start_server("--worker-id", "1")
    c = s.conn()
    every = []
    for count in [4096, 3000, 4096, 1, 4095, 4096, 2048, 4096] * 4:
        c.request("GET", f"/v1/ids?count={count}")
        r = c.getresponse()
        ids = [int(x) for x in json.loads(r.read())["ids"]]
        assert r.status == 200 and len(ids) == count
        every += ids
    c.close()
    assert all(a < b for a, b in zip(every, every[1:])), "IDs went down or repeated"


def test_text_plain_gives_bare_lines(server):
    status, headers, body = server.get("/v1/ids?count=5", {"Accept": "text/plain"})
    assert status == 200 and headers["content-type"].startswith("text/plain")
    lines = body.decode().splitlines()
    assert len(lines) == 5 and all(line.isdigit() for line in lines)
    status, _, body = server.get("/v1/id", {"Accept": "text/plain"})
    assert status == 200 and re.fullmatch(rb"\d+\n", body)


@pytest.mark.parametrize("fmt,length,alphabet", [
    ("base32", 13, "0123456789ABCDEFGHJKMNPQRSTVWXYZ"),
    ("base62", 11, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
])
def test_text_forms_sort_as_ids_and_decode_back(server, fmt, length, alphabet):
    _, _, body = server.get_json(f"/v1/ids?count=50&format={fmt}")
    texts = body["ids"]
    assert all(len(t) == length and set(t) <= set(alphabet) for t in texts)
    assert texts == sorted(texts) and len(set(texts)) == 50
    _, _, one = server.get_json(f"/v1/id?format={fmt}")
    assert len(one["id"]) == length
    status, _, decoded = server.get_json(f"/v1/decode/{texts[0]}?format={fmt}")
    assert status == 200 and decoded["worker_id"] == 7
    value = 0
    for ch in texts[0]:
        value = value * len(alphabet) + alphabet.index(ch)
    assert decoded["id"] == str(value)


def test_decode_answers_the_clis_json_line(server):
    """One JSON form of a decoded ID (core/src/decoded_json.rs): `GET /v1/decode/{id}` answers,
    byte for byte, the line `flakery decode --json` prints, the ID a string in both."""
    _, _, body = server.get_json("/v1/id")
    status, headers, raw = server.get(f"/v1/decode/{body['id']}")
    assert status == 200 and headers["content-type"] == "application/json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    line = subprocess.run([BINARY, "decode", "--json", body["id"]], env=env, check=True,
                          capture_output=True, text=True, timeout=60).stdout
    assert raw.decode() == line.rstrip("\n")
    assert json.loads(raw)["id"] == body["id"]


def test_bad_format_is_400(server):
    status, _, body = server.get_json("/v1/id?format=hex")
    assert status == 400 and body["error"]["code"] == "invalid_argument"
    status, _, body = server.get_json("/v1/decode/!!!!!!!!!!!!!?format=base32")
    assert status == 400 and body["error"]["code"] == "invalid_argument"


def test_decode(server):
    i = (1000 << 22) | (3 << 17) | (7 << 12) | 5
    status, _, body = server.get_json(f"/v1/decode/{i}")
    assert status == 200
    assert body == {
        "id": str(i), "timestamp_ms": TWITTER_EPOCH + 1000, "time": "2010-11-04T01:42:55.657Z",
        "datacenter_id": 3, "worker_id": 7, "sequence": 5,
        "fields": {"time": 1000, "datacenter": 3, "worker": 7, "sequence": 5},
    }
    for bad in ["-1", "abc", "9223372036854775808", "1.5"]:
        status, _, body = server.get_json(f"/v1/decode/{bad}")
        assert status == 400 and body["error"]["code"] == "invalid_argument", bad


def test_compose_is_decode_inverted(server):
    parts = {"timestamp_ms": TWITTER_EPOCH + 1000, "datacenter_id": 3, "worker_id": 7, "sequence": 5}
    status, _, body = server.request("POST", "/v1/compose", json.dumps(parts),
                                     {"Content-Type": "application/json"})
    assert status == 200
    assert json.loads(body) == {"id": str((1000 << 22) | (3 << 17) | (7 << 12) | 5)}
    for bad in [b"{", b"[]", b'{"timestamp_ms": "x"}', b'{"timestamp_ms": 1, "extra": 1}',
                json.dumps({**parts, "worker_id": 32}).encode(),
                json.dumps({**parts, "sequence": -1}).encode()]:
        status, _, body = server.request("POST", "/v1/compose", bad,
                                         {"Content-Type": "application/json"})
        assert status == 400, bad
        assert json.loads(body)["error"]["code"] == "invalid_argument"


def test_oversized_body_is_refused_with_json(server):
    big = json.dumps({"timestamp_ms": 1, "fields": {f"f{i}": i for i in range(5000)}})
    assert len(big) > 16 * 1024
    status, _, body = server.request("POST", "/v1/compose", big, {"Content-Type": "application/json"})
    assert status == 413
    assert json.loads(body)["error"]["code"] == "body_too_large"


def test_layout(server):
    status, _, body = server.get_json("/v1/layout")
    assert status == 200
    assert body["preset"] == "twitter" and body["unit"] == "ms"
    assert body["capacity"]["ids_per_second"] == 4096000
    assert body["exhausted_at"] == "2080-07-10T17:30:30.209Z"
    assert body["node"] == {"datacenter_id": 3, "worker_id": 7, "source": "explicit"}
    assert [f["name"] for f in body["fields"]] == ["time", "datacenter", "worker", "sequence"]


def test_health_ready_and_not_found(server):
    assert server.get_json("/healthz")[:2][0] == 200
    assert server.get_json("/readyz")[0] == 200
    status, _, body = server.get_json("/no/such/route")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _, body = server.get_json("/v1/id/extra")
    assert status == 404


def test_metrics_parse_and_count(server):
    server.get("/v1/ids?count=10")
    server.get("/v1/ids?count=0")
    status, headers, body = server.get("/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    issued = families["flakery_ids_issued"].samples[0].value
    assert issued >= 10
    requests = {(s.labels["route"], s.labels["status"]): s.value
                for s in families["flakery_requests"].samples}
    assert requests[("/v1/ids", "200")] >= 1 and requests[("/v1/ids", "400")] >= 1
    assert families["flakery_lease_held"].samples[0].value == 1
    assert families["flakery_worker_id"].samples[0].value == 7
    assert families["flakery_datacenter_id"].samples[0].value == 3
    assert "flakery_request_duration_seconds" in families
    assert "flakery_sequence_waits" in families and "flakery_clock_backwards" in families
    _, _, again = server.get("/metrics")
    later = {f.name: f for f in text_string_to_metric_families(again.decode())}
    assert later["flakery_ids_issued"].samples[0].value == issued  # /metrics issues nothing


def slow_path_counts(server):
    _, _, body = server.get("/metrics")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    return (families["flakery_sequence_waits"].samples[0].value,
            families["flakery_ticks_borrowed"].samples[0].value)


@pytest.mark.parametrize("policy", ["wait", "borrow"])
def test_metrics_count_the_used_up_ticks(start_server, policy):
    # 100,000 IDs need at least 25 ticks of 4,096 (twitter): one request uses up 24 of them,
    # which the wait policy waits out and the borrow policy takes ahead of the clock.
    s = start_server("--worker-id", "1", "--sequence-policy", policy)
    assert slow_path_counts(s) == (0, 0)
    status, _, body = s.get_json("/v1/ids?count=100000")
    assert status == 200 and len(set(body["ids"])) == 100_000
    waits, borrowed = slow_path_counts(s)
    if policy == "wait":
        assert waits >= 5 and borrowed == 0, (waits, borrowed)
    else:
        assert borrowed >= 5 and waits == 0, (waits, borrowed)


def test_token_guards_all_but_health(start_server):
    s = start_server("--worker-id", "1", env={"FLAKERY_SERVER_TOKEN": "s3cret-token-value"})
    for path in ["/v1/id", "/v1/ids?count=2", "/v1/layout", "/metrics", "/genid",
                 "/api/snowflake/get/x", "/v1/decode/1"]:
        status, headers, body = s.get(path)
        assert status == 401, path
        assert json.loads(body)["error"]["code"] == "unauthorized"
        assert s.get(path, {"Authorization": "Bearer wrong"})[0] == 401
        assert s.get(path, {"Authorization": "Bearer s3cret-token-valu"})[0] == 401
        assert s.get(path, {"Authorization": "Bearer s3cret-token-value"})[0] == 200, path
    assert s.get("/healthz")[0] == 200 and s.get("/readyz")[0] == 200
    assert "s3cret-token-value" not in s.logs()
    s.terminate()
    assert "s3cret-token-value" not in s.logs()


def load_vectors():
    with open(os.path.join(ROOT, "tests", "vectors", "decode.json")) as f:
        return json.load(f)


def vesta_rest_vectors():
    """The published REST answers quoted in tests/vectors/decode.json (Vesta's REST guide)."""
    out = []
    for v in load_vectors():
        published = v.get("published", "")
        if "expid?id=" in published:
            out.append((v["layout"], published))
    assert len(out) >= 2
    return out


@pytest.mark.parametrize("layout,published", vesta_rest_vectors())
def test_vesta_rest_paths_answer_as_vesta(start_server, layout, published):
    s = start_server("--layout", layout, "--worker-id", "1", env={"TZ": "Asia/Shanghai"})
    checked = 0
    for m in re.finditer(r"/expid\?id=(\d+) -> (\{[^}]*\})", published):
        status, _, body = s.get_json(f"/expid?id={m.group(1)}")
        assert status == 200 and body == json.loads(m.group(2))
        assert s.get(f"/expid?id={m.group(1)}")[2] == m.group(2).encode()  # Vesta's key order
        checked += 1
    for m in re.finditer(r"/transtime\?time=(\d+) -> (\w{3} \w{3} \d\d [\d:]+ CST \d{4})", published):
        status, headers, body = s.get(f"/transtime?time={m.group(1)}")
        assert status == 200 and body.decode() == m.group(2)
        checked += 1
    for m in re.finditer(r"/makeid\?(\S+) -> (\d+)", published):
        status, _, body = s.get(f"/makeid?{m.group(1)}")
        assert status == 200 and body.decode() == m.group(2)
        checked += 1
    assert checked >= 2
    status, headers, body = s.get("/genid")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    _, _, parts = s.get_json(f"/expid?id={int(body)}")
    assert parts["machine"] == 1 and parts["genMethod"] == 0
    assert s.get("/expid")[0] == 400 and s.get("/expid?id=x")[0] == 400
    assert s.get("/makeid?time=x")[0] == 400 and s.get("/transtime")[0] == 400


def test_vesta_preset_vector_round_trips(start_server):
    s = start_server("--layout", "vesta-max-peak", "--field", "method=2", "--worker-id", "1022",
                     env={"TZ": "Asia/Shanghai"})
    # vesta-max-peak vector from tests/vectors/decode.json: expId of 2319542600899494910.
    _, _, body = s.get_json("/expid?id=2319542600899494910")
    assert body == {"genMethod": 2, "machine": 1022, "seq": 0, "time": 12758739, "type": 0, "version": 0}
    assert s.get("/transtime?time=12758739")[2] == b"Thu May 28 16:05:39 CST 2015"
    # Left out, genMethod, machine, type and version are the server's own.
    assert s.get("/makeid?time=12758739&seq=0")[2] == b"2319542600899494910"
    status, _, body = s.get("/genid")
    _, _, parts = s.get_json(f"/expid?id={int(body)}")
    assert parts["machine"] == 1022 and parts["genMethod"] == 2


def test_leaf_paths_answer_as_leaf(start_server):
    s = start_server("--worker-id", "7", "--datacenter-id", "1", env={"TZ": "Asia/Shanghai"})
    # LeafMonitorController.decodeSnowflakeId's documented answer.
    leaf_id = ((1567733700834 - TWITTER_EPOCH) << 22) | (39 << 12) | 3448
    status, _, body = s.get_json(f"/decodeSnowflakeId?snowflakeId={leaf_id}")
    assert status == 200
    assert body == {"timestamp": "1567733700834(2019-09-06 09:35:00.834)",
                    "sequenceId": "3448", "workerId": "39"}  # key order: test_compat.py
    status, _, body = s.get_json("/decodeSnowflakeId?snowflakeId=12ab")
    assert status == 200 and body == {"errorMsg": "snowflake Id反解析发生异常!"}
    status, headers, body = s.get("/api/snowflake/get/leaf-segment-test")
    assert status == 200 and body.isdigit()
    _, _, decoded = s.get_json(f"/decodeSnowflakeId?snowflakeId={int(body)}")
    assert decoded["workerId"] == str(1 * 32 + 7)


# core/src/decimal.rs's REFUSED_EXAMPLES: what every surface refuses as decimal text.
NOT_CANONICAL = ["+3", "03", " 5", "5 ", "\u20035", "-0", "0x10", "1e3", "\uff11", "",
                 "18446744073709551616", "-"]


def test_decimal_parameters_are_canonical_decimal_only(server):
    from urllib.parse import quote
    for bad in NOT_CANONICAL:
        q = quote(bad, safe="")
        status, _, body = server.get_json(f"/v1/ids?count={q}")
        assert status == 400, bad
        assert body["error"]["code"] == "invalid_argument", bad
        assert body["error"]["message"].startswith("count="), body
        if bad:
            status, _, body = server.get_json(f"/v1/decode/{q}")
            assert status == 400, bad
            assert body["error"]["code"] == "invalid_argument", bad
        # The compatibility routes answer in their own forms; none of these is a value.
        for path in [f"/makeid?time={q}", f"/makeid?time=1&seq={q}", f"/transtime?time={q}",
                     f"/expid?id={q}"]:
            status, _, _ = server.get(path)
            assert status >= 400, (path, status)
        # Leaf's route reads its parameter with Java's Long.parseLong, as Leaf does (a sign
        # is taken there): the one reader of decimal text that is not the core's, on purpose.
        status, _, raw = server.get(f"/decodeSnowflakeId?snowflakeId={q}")
        if java_parse_long(bad) is not None:
            assert b"errorMsg" not in raw, (bad, raw)
        else:
            assert b"errorMsg" in raw, (bad, raw)
    # The canonical forms are read.
    assert len(server.get_json("/v1/ids?count=5")[2]["ids"]) == 5
    assert server.get("/makeid?time=1&seq=0")[0] == 200


def java_parse_long(text):
    """Java's Long.parseLong as Python's unicodedata sees it: a sign, then decimal digits of
    the basic plane (Java reads UTF-16 chars, so a supplementary digit is two non-digits)."""
    import unicodedata
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or any(ord(c) > 0xFFFF or unicodedata.category(c) != "Nd" for c in digits):
        return None
    value = int("".join(str(unicodedata.decimal(c)) for c in digits))
    value = -value if text[:1] == "-" else value
    return value if -2**63 <= value < 2**63 else None


def test_serve_flags_and_variables_are_canonical_decimal_only(start_server):
    import subprocess
    from conftest import BINARY
    for bad in ["+3", "03", " 5", "-0", "0x10"]:
        for args, env in [([f"--worker-id={bad}"], {}),
                          (["--worker-id", "1", f"--max-in-flight={bad}"], {}),
                          (["--worker-id", "1"], {"FLAKERY_MAX_BORROW_MS": bad})]:
            run_env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
            run_env.update(env)
            out = subprocess.run([BINARY, "serve", "--listen", "127.0.0.1:0", *args], env=run_env,
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode != 0, (args, env)
            assert "invalid_argument" in out.stderr and "plain decimal" in out.stderr, out.stderr

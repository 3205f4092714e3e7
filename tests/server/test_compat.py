"""The Vesta and Leaf drop-in routes against the answers of Vesta and Leaf themselves
(tests/vectors/compat_routes.json, java_date.json; tests/vectors/README.md says how each was made)."""

import json
import os
import re
import subprocess

import pytest

from conftest import BINARY, ROOT, Server


def vectors(name):
    with open(os.path.join(ROOT, "tests", "vectors", name), encoding="utf-8") as f:
        return json.load(f)


ROUTES = vectors("compat_routes.json")
JAVA_DATES = vectors("java_date.json")


def peer_body(vector, peer):
    answer = vector[peer]
    return answer if isinstance(answer, str) else answer["body"]


def check_flakery(vector, status, headers, body):
    """flakery's answer against the vector's `flakery` (tests/vectors/compat_routes.json, made_by)."""
    want = vector["flakery"]
    assert status == want["status"], body
    if "same_as" in want:
        for peer in want["same_as"]:
            assert body.decode() == peer_body(vector, peer), peer
            if isinstance(vector[peer], dict):
                assert status == vector[peer]["status"], peer
    elif want.get("shape") == "decimal":
        assert body.isdigit(), body
    elif "error_code" in want:
        error = json.loads(body)["error"]
        assert error["code"] == want["error_code"]
        assert want.get("message_contains", "") in error["message"]
    else:
        assert body.decode() == want["body"]


@pytest.mark.parametrize("vector", ROUTES["vesta"], ids=lambda v: v["path"])
def test_vesta_routes_answer_as_vesta_itself(start_server, vector):
    s = start_server(*vector["server"], env={"TZ": "UTC"})
    status, headers, body = s.get(vector["path"])
    check_flakery(vector, status, headers, body)
    if "error_code" not in vector["flakery"]:
        # The netty server's content type, byte for byte.
        assert headers["content-type"] == vector["vesta_netty"]["content_type"] == "text/plain"


def test_vesta_answers_are_bare_text_everywhere(start_server):
    s = start_server("--layout", "vesta-min-granularity", "--worker-id", "3")
    for path in ["/genid", "/transtime?time=1", "/makeid?time=1&seq=2"]:
        status, headers, _ = s.get(path)
        assert status == 200 and headers["content-type"].startswith("text/plain"), path
    status, headers, body = s.get("/expid?id=4611686018427388931")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert body == b'{"genMethod":0,"machine":3,"seq":1,"time":0,"type":1,"version":0}'
    # A parameter given twice is refused rather than one of them guessed at.
    assert s.get("/makeid?time=1&seq=2&seq=3")[0] == 400


@pytest.mark.parametrize("field", ["type=1", "version=1"])
def test_a_field_vesta_never_stamps_is_refused_at_start(field):
    out = subprocess.run(
        [BINARY, "serve", "--listen", "127.0.0.1:0", "--layout", "vesta-max-peak", "--field", field],
        capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")},
    )
    assert out.returncode != 0
    assert f"--field {field} contradicts layout 'vesta-max-peak'" in out.stderr


def java_zones():
    zones = {}
    for v in JAVA_DATES:
        zones.setdefault(v["tz"], []).append(v)
    return sorted(zones.items())


@pytest.mark.parametrize("tz,rows", java_zones(), ids=lambda z: z if isinstance(z, str) else "")
def test_transtime_writes_dates_as_java_25(start_server, tz, rows):
    s = start_server("--layout", "vesta-min-granularity", env={"TZ": tz})
    epoch = 1420041600000
    for row in rows:
        status, _, body = s.get(f"/transtime?time={row['unix_ms'] - epoch}")
        assert status == 200 and body.decode() == row.get("flakery", row["java25"]), row


@pytest.mark.parametrize("vector", ROUTES["leaf"], ids=lambda v: v["path"])
def test_leaf_answers_byte_for_byte(start_server, vector):
    s = start_server("--worker-id", "7", env={"TZ": vector["tz"]})
    status, headers, body = s.get(vector["path"])
    leaf = vector["leaf"]
    if "flakery" in vector:
        check_flakery(vector, status, headers, body)
        if vector["flakery"].get("same_content_type"):
            assert headers["content-type"] == leaf["content_type"]
        return
    assert (status, headers["content-type"]) == (leaf["status"], leaf["content_type"])
    if "<Unix ms>" in leaf["body"]:
        # Spring's error timestamp: the time of the answer, in Unix ms.
        before, after = leaf["body"].split("<Unix ms>")
        text = body.decode()
        assert text.startswith(before) and text.endswith(after), text
        assert text[len(before):len(text) - len(after)].isdigit()
    else:
        assert body.decode() == leaf["body"]


def test_time_left_is_a_metric_and_a_start_up_warning(start_server):
    import time
    end_ms = 1420041600000 + (1 << 30) * 1000  # vesta-max-peak: 30 bits of seconds
    before = time.time() * 1000
    s = start_server("--layout", "vesta-max-peak", "--worker-id", "1",
                     env={"FLAKERY_EXHAUSTION_WARNING_DAYS": "10000"})
    _, _, body = s.get("/metrics")
    after = time.time() * 1000
    left = [float(line.split()[1]) for line in body.decode().splitlines()
            if line.startswith("flakery_layout_time_left_seconds ")]
    assert len(left) == 1
    assert (end_ms - after) / 1000 - 1 <= left[0] <= (end_ms - before) / 1000 + 1
    warnings = [e for e in s.log_events() if e.get("fields", {}).get("event") == "layout_running_out"]
    assert len(warnings) == 1 and "2049-01-09" in warnings[0]["fields"]["message"]
    quiet = start_server("--layout", "vesta-max-peak", "--worker-id", "2")
    assert not [e for e in quiet.log_events() if "layout_running_out" in json.dumps(e)]

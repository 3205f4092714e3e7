"""`GET /v1/ids` as 8-byte little-endian words (`Accept: application/octet-stream`,
docs/server.md#routes): the same IDs, and the same refusals (status, JSON error body, headers)
as the text answer, whichever limit refuses."""

import json
import struct

import pytest

WORDS = "application/octet-stream"
# What flakery's client sends: a server older than the binary answer reads the first type.
CLIENT_ACCEPT = "text/plain;q=0.5, application/octet-stream"


def words(body):
    assert len(body) % 8 == 0, len(body)
    return list(struct.unpack(f"<{len(body) // 8}q", body))


@pytest.mark.parametrize("accept", [WORDS, CLIENT_ACCEPT, "application/json, APPLICATION/OCTET-STREAM;q=0.9"])
def test_words_are_increasing_ids_of_this_node(server, accept):
    status, headers, body = server.get("/v1/ids?count=5000", {"Accept": accept})
    assert status == 200
    assert headers["content-type"] == WORDS
    assert headers["content-length"] == str(8 * 5000)
    ids = words(body)
    assert len(ids) == 5000 and all(a < b for a, b in zip(ids, ids[1:]))
    _, _, decoded = server.get_json(f"/v1/decode/{ids[-1]}")
    assert (decoded["worker_id"], decoded["datacenter_id"]) == (7, 3)
    # One ID by default, as the text answer.
    assert len(words(server.get("/v1/ids", {"Accept": accept})[2])) == 1


@pytest.mark.parametrize("accept,content_type", [
    ("text/plain", "text/plain; charset=utf-8"),
    (f"{WORDS};q=0", "application/json"),
    ("", "application/json"),
])
def test_words_only_when_asked(server, accept, content_type):
    status, headers, _ = server.get("/v1/ids?count=3", {"Accept": accept} if accept else {})
    assert (status, headers["content-type"]) == (200, content_type)


def test_a_text_form_asked_for_is_text(server):
    status, headers, body = server.get("/v1/ids?count=3&format=base62", {"Accept": CLIENT_ACCEPT})
    assert (status, headers["content-type"]) == (200, "text/plain; charset=utf-8")
    assert len(body.splitlines()) == 3


def same_refusal(server, path, extra=None):
    """The refusal of `path` asked as words equals the one asked as lines and as JSON."""
    answers = []
    for accept in [WORDS, CLIENT_ACCEPT, "text/plain", "application/json"]:
        status, headers, body = server.get(path, {"Accept": accept, **(extra or {})})
        kept = {k: v for k, v in headers.items() if k not in ("date",)}
        answers.append((status, kept, json.loads(body)))
    assert all(a == answers[0] for a in answers), answers
    assert answers[0][1]["content-type"] == "application/json"
    return answers[0]


def test_refusals_are_the_text_routes(server):
    for path, status, code in [
        ("/v1/ids?count=0", 400, "invalid_argument"),
        ("/v1/ids?count=100001", 400, "invalid_argument"),
        ("/v1/ids?count=-1", 400, "invalid_argument"),
        ("/v1/ids?count=01", 400, "invalid_argument"),
        ("/v1/ids?count=2&count=2", 400, "invalid_argument"),
        ("/v1/ids?count=2&bogus=1", 400, "invalid_argument"),
        ("/v1/ids?format=base64", 400, "invalid_argument"),
    ]:
        got = same_refusal(server, path)
        assert (got[0], got[2]["error"]["code"]) == (status, code), (path, got)


def test_token_and_overload_refusals_are_the_text_routes(start_server):
    # An eighth of 200000 bytes a connection: 100000 IDs fit neither as text nor as words.
    s = start_server("--worker-id", "9", "--max-unsent-bytes", "200000",
                     env={"FLAKERY_SERVER_TOKEN": "s3cret-token"})
    got = same_refusal(s, "/v1/ids?count=10")
    assert (got[0], got[2]["error"]["code"]) == (401, "unauthorized")
    auth = {"Authorization": "Bearer s3cret-token"}
    got = same_refusal(s, "/v1/ids?count=100000", auth)
    assert (got[0], got[2]["error"]["code"]) == (503, "overloaded")
    assert got[1]["retry-after"] == "1"
    # What fits is answered: 1000 words are 8000 bytes.
    status, headers, body = s.get("/v1/ids?count=1000", {"Accept": WORDS, **auth})
    assert status == 200 and len(words(body)) == 1000

"""Published IDs decode as their origins decode them."""

import datetime
import json
import os

import pytest

import flakery

UTC = datetime.timezone.utc


def test_discord_docs_example():
    # discord.com/developers/docs/reference#snowflakes
    parts = flakery.decode(175928847299117063, layout="discord")
    assert parts.timestamp_ms == 1462015105796
    assert parts.datetime == datetime.datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=UTC)
    assert parts.datacenter_id == 1  # Discord's "internal worker ID"
    assert parts.worker_id == 0  # Discord's "internal process ID"
    assert parts.sequence == 7  # Discord's "increment"


def test_wikipedia_example():
    # en.wikipedia.org/wiki/Snowflake_ID: a tweet by Twitter
    parts = flakery.decode(1541815603606036480)
    assert parts.timestamp_ms == 1656432460105
    assert parts.datetime == datetime.datetime(2022, 6, 28, 16, 7, 40, 105000, tzinfo=UTC)
    assert parts.datetime.isoformat(timespec="milliseconds") == "2022-06-28T16:07:40.105+00:00"
    assert (parts.datacenter_id, parts.worker_id, parts.sequence) == (11, 26, 0)


def load_vectors():
    from conftest import REPO_ROOT

    with open(REPO_ROOT / "tests" / "vectors" / "decode.json") as f:
        return json.load(f)


VECTORS = load_vectors()


def test_the_vectors_are_there():
    assert len(VECTORS) >= 20


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{v['layout']}:{v['id']}")
def test_published_vectors(vector):
    id = int(vector["id"])
    layout = flakery.Layout(vector["layout"])
    parts = flakery.decode(id, layout=vector["layout"])
    assert parts.id == id
    published = vector["timestamp_ms"]
    assert 0 <= parts.timestamp_ms - published <= vector.get("timestamp_tolerance_ms", 0)
    if vector.get("decoded_timestamp_ms") is not None:
        assert parts.timestamp_ms == vector["decoded_timestamp_ms"]
    if vector.get("decoded_timestamp_utc"):
        assert parts.datetime == datetime.datetime.fromisoformat(vector["decoded_timestamp_utc"])
    assert parts.datetime.tzinfo is not None
    kinds = {f.kind for f in layout.fields}
    for key, kind in (("datacenter_id", "datacenter"), ("worker_id", "worker")):
        if vector[key] is None:  # the layout has no such field: flakery reports 0
            assert kind not in kinds and getattr(parts, key) == 0
        else:
            assert getattr(parts, key) == vector[key], key
    assert parts.sequence == vector["sequence"]
    for name, value in vector["fields"].items():
        assert parts.fields[name] == value, name
    # compose is the inverse of decode
    constants = {
        f.name: parts.fields[f.name] for f in layout.fields if f.kind == "constant"
    }
    if id < 2**63 and not any(f.kind == "constant" and f.shift == 63 and parts.fields[f.name] for f in parts.layout.fields):
        assert flakery.compose(
            timestamp_ms=parts.timestamp_ms,
            datacenter_id=parts.datacenter_id,
            worker_id=parts.worker_id,
            sequence=parts.sequence,
            fields=constants,
            layout=vector["layout"],
        ) == id


def unsigned_vectors():
    with open(os.path.join(os.path.dirname(__file__), "..", "vectors", "unsigned.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("v", unsigned_vectors(), ids=lambda v: v["id"])
def test_discord_ids_are_unsigned(v):
    """tests/vectors/unsigned.json (from @sapphire/snowflake): Discord IDs up to 2^64-1."""
    parts = flakery.decode(int(v["id"]), layout=v["layout"])
    assert parts.id == int(v["id"])
    assert flakery.decode(v["id"], layout=v["layout"]) == parts
    assert (parts.timestamp_ms, parts.datacenter_id, parts.worker_id, parts.sequence) == (
        v["timestamp_ms"], v["datacenter_id"], v["worker_id"], v["sequence"])
    assert flakery.compose(timestamp_ms=parts.timestamp_ms, datacenter_id=parts.datacenter_id,
                           worker_id=parts.worker_id, sequence=parts.sequence,
                           layout=v["layout"]) == int(v["id"])


def test_ids_above_2_pow_63_only_under_an_unsigned_layout():
    assert flakery.Layout("discord").unsigned and not flakery.Layout("twitter").unsigned
    with pytest.raises(flakery.InvalidArgumentError, match="signed"):
        flakery.decode(2**63, layout="twitter")
    with pytest.raises(flakery.InvalidArgumentError):
        flakery.decode(2**64, layout="discord")


def test_a_layout_tells_its_time_left():
    import time
    before = time.time() * 1000
    left = flakery.Layout("twitter").time_left_ms
    after = time.time() * 1000
    end = flakery.Layout("twitter").exhausted_at_ms
    assert end - after - 1 <= left <= end - before + 1
    assert flakery.Layout("baidu").time_left_ms == 0

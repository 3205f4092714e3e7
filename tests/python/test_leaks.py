"""Native memory (issue 33): every public call of the package, made 100,000 times and more,
leaves the process's memory where it was. tracemalloc sees only Python's allocator; a
leak of the Rust side (a buffer, a string, an error never freed) shows only in the
process's resident set, read from /proc/self/statm after a garbage collection.

Each test runs its round of calls WARMUP times first (allocators, caches and pymalloc's
arenas reach their steady size), then ROUNDS times, and bounds the growth over the second
run. A leak of 30 bytes a call grows it by 3 MB over 100,000 calls; the growth measured
without one was 0 to 53 kB, so the bound of 1.5 MB is far from both. Breaking the binding
once (a Rust `Box::leak` of 32 bytes in decode) failed test_layout_and_decode (24 MB) and
test_client_calls (5.2 MB, its one `client.decode` a round).
"""

import datetime
import gc
import os
import pickle

import pytest

import flakery

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/statm"), reason="reads the resident set from /proc"
)

WARMUP = 20_000
ROUNDS = 100_000
BOUND = 1_500_000
PAGE = os.sysconf("SC_PAGE_SIZE")
WHEN = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
NAIVE = datetime.datetime(2024, 1, 1)


def resident() -> int:
    gc.collect()
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def assert_no_growth(one_round, rounds=ROUNDS, warmup=WARMUP):
    for i in range(warmup):
        one_round(i)
    before = resident()
    for i in range(rounds):
        one_round(i)
    grown = resident() - before
    print(f"{one_round.__name__}: {rounds} rounds grew the resident set by {grown} bytes")
    assert grown < BOUND, (
        f"{rounds} rounds of {one_round.__name__} grew the process by {grown:,} bytes "
        f"(bound {BOUND:,}): native memory that is never freed"
    )


def refused(error_class, call, *args, **kwargs):
    """Calls `call`, which must raise `error_class` (its message read, as a user's log would)."""
    try:
        call(*args, **kwargs)
    except error_class as error:
        assert error.code and str(error)
    else:
        raise AssertionError(f"{call} did not raise {error_class.__name__}")


def test_generator_calls():
    generator = flakery.Generator(worker_id=11, sequence_policy="borrow")
    flakery.next_id()  # the process-wide generator, made once

    def generator_round(i):
        generator.next_id()
        generator.next_ids(3)
        generator.next_id_text()
        generator.next_id_text("base32")
        generator.next_id_text("base62")
        (generator.datacenter_id, generator.worker_id, generator.source)
        (generator.sequence_policy, generator.closed, generator.layout)
        flakery.next_id()
        flakery.next_ids(2)
        flakery.default_generator()

    assert_no_growth(generator_round)
    generator.close()


def test_generators_made_and_closed():
    """A generator's own memory (its engine, its layout) is freed when it is closed and
    dropped; a `with` block closes it."""

    def make_round(i):
        with flakery.Generator(worker_id=12, layout="sonyflake", fields=None) as generator:
            generator.next_id()
        flakery.Generator(
            layout="vesta-max-peak", worker_id=3, fields={"method": 2}, random_sequence_start=True
        ).next_id()

    assert_no_growth(make_round)


def test_layout_and_decode():
    layout = flakery.Layout("time:41,worker:10,sequence:12;epoch=2020-01-01T00:00:00Z")
    generator = flakery.Generator(worker_id=13)
    ids = generator.next_ids(1000)

    def decode_round(i):
        id = ids[i % 1000]
        decoded = flakery.decode(id)
        (decoded.id, decoded.timestamp_ms, decoded.datetime, decoded.datacenter_id)
        (decoded.worker_id, decoded.sequence, decoded.fields, decoded.layout)
        assert decoded == generator.decode(str(id)) and not decoded < decoded and hash(decoded)
        layout_decoded = flakery.decode(str(id), layout)
        pickle.loads(pickle.dumps(layout_decoded))
        flakery.decode(id, "vesta-max-peak").fields
        flakery.Layout(f"time:41,datacenter:5,worker:5,sequence:12;epoch={i % 10 + 2000}-01-01T00:00:00Z")
        flakery.Layout.preset("discord")
        for field in layout.fields:
            (field.name, field.kind, field.bits, field.shift, field.default, hash(field))
        capacity = layout.capacity
        (capacity.ids_per_tick, capacity.ids_per_second, capacity.node_ids, hash(capacity))
        (capacity.datacenter_ids, capacity.worker_ids, capacity.max_tick, capacity.exhausted_at_ms)
        (layout.epoch_ms, layout.epoch, layout.unit, layout.total_bits, layout.preset_name)
        (layout.exhausted_at_ms, layout.time_left_ms, layout.unsigned, layout.exhausted_at)
        layout.describe()
        assert layout == pickle.loads(pickle.dumps(layout)) and hash(layout)

    assert_no_growth(decode_round)


def test_presets_compose_and_text():
    def compose_round(i):
        id = flakery.compose(timestamp_ms=1_700_000_000_000 + i, worker_id=i % 32, sequence=7)
        flakery.compose(
            timestamp_ms=1_500_000_000_000, worker_id=5, fields={"method": 1}, layout="vesta-max-peak"
        )
        flakery.compose(timestamp=WHEN, datacenter_id=1, worker_id=2, layout=flakery.Layout("discord"))
        assert flakery.from_base32(flakery.to_base32(id)) == id
        assert flakery.from_base62(flakery.to_base62(str(id))) == id
        if i % 100 == 0:
            flakery.Layout.presets()

    assert_no_growth(compose_round)


def test_errors_raised_and_caught():
    """Every refusal builds an error (a message, a code, an exception object): none may stay."""
    closed = flakery.Generator(worker_id=14)
    closed.close()

    def error_round(i):
        refused(flakery.InvalidLayoutError, flakery.Layout, f"time:41,worker:{i % 9 + 30}")
        refused(flakery.InvalidLayoutError, flakery.decode, 1, "no-such-preset")
        refused(flakery.InvalidArgumentError, flakery.decode, -1 - i)
        refused(flakery.InvalidArgumentError, flakery.decode, "not an id")
        refused(flakery.InvalidArgumentTypeError, flakery.decode, 1.5)
        refused(flakery.InvalidArgumentError, flakery.from_base32, "!!")
        refused(flakery.InvalidArgumentError, flakery.from_base62, "z" * 40)
        refused(flakery.InvalidArgumentError, flakery.to_base62, -5)
        refused(flakery.InvalidArgumentError, flakery.compose, timestamp_ms=0, worker_id=1 << 20)
        refused(flakery.InvalidArgumentError, flakery.compose, timestamp_ms=1, fields={"x": 1})
        refused(flakery.InvalidArgumentError, flakery.compose, timestamp=NAIVE)
        refused(flakery.InvalidArgumentError, flakery.Generator, worker_id=5000)
        refused(flakery.InvalidArgumentError, flakery.Generator, worker_id=1, max_borrow_ms=-1)
        refused(flakery.LeaseLostError, closed.next_id)
        refused(flakery.LeaseLostError, closed.next_ids, 5)
        refused(flakery.LeaseLostError, closed.next_id_text, "base62")
        refused(flakery.InvalidArgumentError, flakery.next_ids, -1)
        refused(flakery.InvalidArgumentError, flakery.Client, servers="ftp://127.0.0.1:1")

    assert_no_growth(error_round)


def test_client_calls(tiny_server, closed_port):
    """IDs through the network (small blocks: a request every few calls) and from a fallback
    when no server answers, and every refusal of a client without one."""
    client = flakery.Client(servers=tiny_server, min_block=16, max_block=64, token="t0ken")
    down = closed_port()
    with_fallback = flakery.Client(servers=down, fallback=flakery.Generator(worker_id=15))
    without = flakery.Client(servers=[down, closed_port()])

    def client_round(i):
        client.next_id()
        client.next_ids(3)
        client.next_id_text("base62")
        (client.layout, client.servers, repr(client))
        client.decode(i + 1)
        with_fallback.next_id()
        refused(flakery.ServersUnavailableError, without.next_id)
        refused(flakery.ServersUnavailableError, without.next_ids, 2)

    assert_no_growth(client_round)
    for c in (client, with_fallback, without):
        c.close()


def test_clients_made_and_closed(tiny_server):
    def make_round(i):
        with flakery.Client(servers=tiny_server, min_block=16, max_block=16) as client:
            if i % 10 == 0:
                client.next_id()  # the client's thread and connection, made and ended
        refused(flakery.InvalidArgumentError, flakery.Client, servers="http://u:p@127.0.0.1:1")

    assert_no_growth(make_round)

"""The public API: module functions, Generator, Layout, Decoded, compose."""

import datetime
import inspect
import os
import pickle
import threading
import time

import pytest

import flakery

UTC = datetime.timezone.utc


def test_public_names():
    for name in flakery.__all__:
        assert hasattr(flakery, name), name
    assert isinstance(flakery.__version__, str) and flakery.__version__


def test_a_client_has_the_calls_of_a_generator():
    """Switching between embedded and central is one line (docs/client.md): every call a
    Client has beside `servers` a Generator has too, and the reverse for the calls that make
    or read IDs, with the same signature."""
    def calls(cls):
        return {name for name in dir(cls) if not name.startswith("_") or name in ("__enter__", "__exit__")}

    shared = calls(flakery.Client) - {"servers"}
    assert shared <= calls(flakery.Generator), shared - calls(flakery.Generator)
    assert {"next_id", "next_ids", "next_id_text", "decode", "layout", "close"} <= shared
    for name in shared - {"layout"}:
        assert (inspect.signature(getattr(flakery.Client, name))
                == inspect.signature(getattr(flakery.Generator, name))), name


def test_module_next_id_and_next_ids():
    a = flakery.next_id()
    batch = flakery.next_ids(1000)
    b = flakery.next_id()
    assert isinstance(a, int) and type(a) is int
    assert isinstance(batch, list) and len(batch) == 1000
    assert all(type(i) is int for i in batch)
    assert a < batch[0] and batch == sorted(set(batch)) and batch[-1] < b
    assert 0 < a < 2**63
    assert flakery.next_ids(0) == []


def test_module_next_id_slow_path(run_python):
    """`flakery.next_id()` is a plain C function whose hot path is the core's; its slow path
    (the first call, which makes the process-wide generator; each used-up tick, waited out
    without the GIL; errors) goes through the pyo3 function. In a fresh process: the first ID
    comes from the slow path, then 20,000 IDs cross at least four used-up ticks (4,096 a
    millisecond), every one larger than the last; and the function takes no arguments."""
    code = """
import flakery
ids = [flakery.next_id() for _ in range(20_000)]
assert all(a < b for a, b in zip(ids, ids[1:])), "not increasing"
ticks = len({flakery.decode(i).timestamp_ms for i in ids})
assert ticks >= 5, ticks
more = [flakery.next_id() for _ in range(20_000)]
assert ids[-1] < more[0] and all(a < b for a, b in zip(more, more[1:]))
try:
    flakery.next_id(1)
    refused = "no"
except TypeError:
    refused = "TypeError"
print(ticks >= 5, refused)
"""
    assert run_python(code, FLAKERY_WORKER_ID="3").split() == ["True", "TypeError"]


def test_default_generator():
    shared = flakery.default_generator()
    assert isinstance(shared, flakery.Generator)
    layout = os.environ.get("FLAKERY_LAYOUT") or "twitter"
    assert shared.layout == flakery.Layout(layout)
    before = flakery.next_id()
    with shared as same:  # closing the process-wide generator does nothing
        assert same is shared
        assert same.next_id() > before
    assert not shared.closed
    assert flakery.next_id() > before


def test_default_generator_reads_the_environment(run_python):
    out = run_python(
        "import flakery\n"
        "g = flakery.default_generator()\n"
        "print(g.layout, g.datacenter_id, g.worker_id, g.source)\n"
        "d = flakery.decode(flakery.next_id(), layout=g.layout)\n"
        "print(d.datacenter_id, d.worker_id)\n"
        "g2 = flakery.Generator()\n"
        "print(g2.layout, g2.datacenter_id, g2.worker_id, g2.source)\n",
        FLAKERY_LAYOUT="discord",
        FLAKERY_WORKER_ID="7",
        FLAKERY_DATACENTER_ID="3",
    )
    assert out.splitlines() == ["discord 3 7 environment", "3 7", "discord 3 7 environment"]


def test_generator_defaults():
    generator = flakery.Generator(worker_id=3)
    assert generator.layout == flakery.Layout(os.environ.get("FLAKERY_LAYOUT") or "twitter")
    assert generator.worker_id == 3
    assert generator.source == "explicit"
    assert generator.sequence_policy == "wait"
    assert not generator.closed
    assert repr(generator).startswith("Generator(layout=")
    assert "worker_id=3" in repr(generator) and "source='explicit'" in repr(generator)


def test_generator_options():
    layout = flakery.Layout("discord")
    generator = flakery.Generator(
        layout=layout,
        datacenter_id=2,
        worker_id=31,
        sequence_policy="borrow",
        max_borrow_ms=50,
        backwards_tolerance_ms=10,
        random_sequence_start=True,
        fields={},
    )
    assert generator.layout == layout
    assert (generator.datacenter_id, generator.worker_id) == (2, 31)
    assert generator.sequence_policy == "borrow"
    ids = generator.next_ids(20_000)
    assert ids == sorted(set(ids))
    parts = generator.decode(ids[-1])
    assert (parts.datacenter_id, parts.worker_id) == (2, 31)
    assert parts.layout == layout


def test_lease_options_are_passed_through(tmp_path):
    # Explicit node IDs come first, so these are accepted and not used.
    generator = flakery.Generator(
        worker_id=4,
        zookeeper="127.0.0.1:1/flakery",
        namespace="tests",
        session_timeout_ms=5000,
        lease_dir=tmp_path,
    )
    assert generator.source == "explicit"
    assert flakery.Generator(worker_id=4, lease_dir=str(tmp_path)).worker_id == 4


def test_generator_none_means_not_given():
    generator = flakery.Generator(
        layout=None, datacenter_id=None, worker_id=9, sequence_policy=None, max_borrow_ms=None,
        backwards_tolerance_ms=None, random_sequence_start=None, fields=None,
    )  # type: ignore[arg-type]
    assert generator.sequence_policy == "wait" and generator.worker_id == 9


def test_constant_fields():
    generator = flakery.Generator(layout="vesta-min-granularity", worker_id=5, fields={"method": 2})
    parts = generator.decode(generator.next_id())
    assert parts.fields["version"] == 0
    assert parts.fields["type"] == 1  # the layout's default
    assert parts.fields["method"] == 2
    assert parts.worker_id == 5
    assert "method=2" in repr(parts)


def test_context_manager_closes():
    with flakery.Generator(worker_id=2) as generator:
        generator.next_id()
        assert not generator.closed
    assert generator.closed
    with pytest.raises(flakery.LeaseLostError):
        generator.next_id()
    with pytest.raises(RuntimeError):
        with flakery.Generator(worker_id=2) as other:
            raise RuntimeError("propagates")
    assert other.closed


def test_read_only_properties():
    generator = flakery.Generator(worker_id=1)
    for name in ("layout", "datacenter_id", "worker_id", "source", "sequence_policy", "closed"):
        with pytest.raises(AttributeError):
            setattr(generator, name, 0)


def test_generator_is_not_picklable():
    with pytest.raises(TypeError):
        pickle.dumps(flakery.Generator(worker_id=1))


def test_next_ids_sizes_and_borrowing():
    generator = flakery.Generator(worker_id=6, sequence_policy="borrow")
    for n in (1, 63, 64, 65, 4095, 4096, 4097, 16384, 16385, 100_000):
        ids = generator.next_ids(n)
        assert len(ids) == n and ids == sorted(set(ids)), n
    # A million in borrow mode: more than one millisecond's sequence, taken from the ticks
    # ahead (that borrowing never waits is checked on the fake clock: core/tests/generator/,
    # borrow_policy_uses_future_ticks_up_to_its_bound; speed lives in bench/).
    ids = generator.next_ids(1_000_000)
    assert ids == sorted(set(ids))


def ran_alongside(call):
    """Whether another Python thread ran while call() was in progress, and how long it took.
    A thread that records the time as fast as it can runs alongside. A forced switch just
    before the call, or just after it returns, may give that thread the GIL for one 5 ms
    switch interval, so only stamps more than 15 ms from either end count. With the GIL held
    throughout the call, there are none."""
    stamps = []
    stop = threading.Event()

    def record():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    thread = threading.Thread(target=record)
    thread.start()
    try:
        time.sleep(0.01)
        start = time.perf_counter()
        call()
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    return any(start + 0.015 < t < end - 0.015 for t in stamps), end - start


def test_a_waiting_batch_releases_the_gil():
    generator = flakery.Generator(worker_id=7)  # wait: 4096 IDs per ms at most
    ran, took = ran_alongside(lambda: generator.next_ids(400_000))  # about 100 ms of waits
    assert took > 0.05, took
    assert ran


def test_a_waiting_next_id_releases_the_gil():
    # Two IDs a second: a call after the second's two waits for the next second.
    generator = flakery.Generator(layout="time:41,sequence:1;epoch=0;unit=s", worker_id=0)
    for _ in range(5):  # until a wait is long enough to tell (each is up to 1 s)
        while generator.decode(generator.next_id()).sequence != 1:
            pass  # until this second's two IDs are used up
        ran, took = ran_alongside(generator.next_id)
        if took > 0.1:
            assert ran, took
            return
    pytest.fail("no next_id() waited 100 ms")


def test_threads_share_a_generator():
    generator = flakery.Generator(worker_id=8)
    per_thread = 100_000
    results = [[] for _ in range(8)]
    barrier = threading.Barrier(8)

    def work(out):
        barrier.wait()
        next_id = generator.next_id
        for _ in range(per_thread):
            out.append(next_id())

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = set()
    for ids in results:
        assert len(ids) == per_thread
        assert all(a < b for a, b in zip(ids, ids[1:])), "per-thread order"
        everything.update(ids)
    assert len(everything) == 8 * per_thread


def test_threads_share_the_default_generator_with_batches():
    results = [[] for _ in range(8)]

    def work(out):
        for _ in range(10):
            out.extend(flakery.next_ids(10_000))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(ids == sorted(ids) for ids in results)
    assert len(set().union(*results)) == 800_000


# Layouts


def test_layout_parse_and_print():
    twitter = flakery.Layout("twitter")
    assert str(twitter) == "twitter"
    assert repr(twitter) == "Layout('twitter')"
    assert twitter == flakery.Layout.preset("twitter")
    assert twitter == flakery.Layout("time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;unit=ms")
    assert hash(twitter) == hash(flakery.Layout(str(twitter)))
    assert twitter != flakery.Layout("discord")
    assert twitter != "twitter"
    assert twitter.preset_name == "twitter"
    custom = flakery.Layout("time:40,worker:11,sequence:12;epoch=2020-01-01T00:00:00Z")
    assert custom.preset_name is None
    assert str(custom) == "time:40,worker:11,sequence:12;epoch=1577836800000;unit=ms"
    assert flakery.Layout(str(custom)) == custom
    shifted = flakery.Layout("discord;epoch=2015-01-01T00:00:00Z")
    assert flakery.Layout(str(shifted)) == shifted
    assert pickle.loads(pickle.dumps(custom)) == custom
    assert len({twitter, flakery.Layout("twitter"), custom}) == 2


def test_layout_properties():
    twitter = flakery.Layout("twitter")
    assert [(f.name, f.kind, f.bits, f.shift) for f in twitter.fields] == [
        ("time", "time", 41, 22),
        ("datacenter", "datacenter", 5, 17),
        ("worker", "worker", 5, 12),
        ("sequence", "sequence", 12, 0),
    ]
    assert twitter.epoch_ms == 1288834974657
    assert twitter.epoch == datetime.datetime(2010, 11, 4, 1, 42, 54, 657000, tzinfo=UTC)
    assert twitter.unit == "ms"
    assert twitter.total_bits == 63
    capacity = twitter.capacity
    assert capacity.ids_per_tick == 4096
    assert capacity.ids_per_second == 4_096_000
    assert capacity.datacenter_ids == 32
    assert capacity.worker_ids == 32
    assert capacity.node_ids == 1024
    assert capacity.max_tick == 2**41 - 1
    assert twitter.exhausted_at_ms == capacity.exhausted_at_ms == 1288834974657 + 2**41
    assert twitter.exhausted_at == datetime.datetime(2080, 7, 10, 17, 30, 30, 209000, tzinfo=UTC)
    assert twitter.exhausted_at.tzinfo is not None
    assert "4096 IDs/tick/node" in twitter.describe()
    assert capacity == flakery.Layout.preset("twitter").capacity != flakery.Layout("discord").capacity
    assert "ids_per_tick=4096" in repr(capacity)
    assert repr(twitter.fields[0]) == "Field(name='time', kind='time', bits=41, shift=22)"


def test_presets():
    presets = flakery.Layout.presets()
    assert list(presets) == [
        "twitter", "discord", "instagram", "sonyflake", "sonyflake-v2", "baidu",
        "vesta-max-peak", "vesta-min-granularity", "safe53",
    ]
    for name, layout in presets.items():
        assert str(layout) == name
        assert flakery.Layout.preset(name) == layout
    sonyflake = presets["sonyflake"]
    assert sonyflake.unit == "10ms"
    assert [f.name for f in sonyflake.fields] == ["time", "sequence", "worker"]
    assert sonyflake.capacity.worker_ids == 65536 and sonyflake.capacity.ids_per_second == 25600
    assert presets["baidu"].unit == "s"
    assert presets["baidu"].exhausted_at == datetime.datetime(2024, 11, 20, 13, 24, 16, tzinfo=UTC)
    vesta = presets["vesta-min-granularity"]
    assert [(f.name, f.kind, f.default) for f in vesta.fields][:3] == [
        ("version", "constant", 0), ("type", "constant", 1), ("method", "constant", 0),
    ]
    assert presets["safe53"].exhausted_at_ms > 0 and presets["safe53"].total_bits == 53
    with pytest.raises(flakery.InvalidLayoutError, match="unknown preset"):
        flakery.Layout.preset("time:41,sequence:12;epoch=0")


def test_layout_is_immutable():
    layout = flakery.Layout("twitter")
    with pytest.raises(AttributeError):
        layout.unit = "s"  # type: ignore[misc]


# Decoded


def test_decoded_object():
    parts = flakery.decode(175928847299117063, layout="discord")
    assert parts.id == 175928847299117063
    assert parts.timestamp_ms == 1462015105796
    assert parts.datetime == datetime.datetime(2016, 4, 30, 11, 18, 25, 796000, tzinfo=UTC)
    assert parts.datetime.utcoffset() == datetime.timedelta(0)
    assert (parts.datacenter_id, parts.worker_id, parts.sequence) == (1, 0, 7)
    assert parts.fields == {"time": 41944705796, "datacenter": 1, "worker": 0, "sequence": 7}
    assert list(parts.fields) == ["time", "datacenter", "worker", "sequence"]
    parts.fields["time"] = 0  # a copy
    assert parts.fields["time"] == 41944705796
    assert parts.layout == flakery.Layout("discord")
    assert repr(parts) == (
        "Decoded(id=175928847299117063, timestamp_ms=1462015105796, "
        "time='2016-04-30T11:18:25.796Z', datacenter_id=1, worker_id=0, sequence=7, "
        "layout='discord')"
    )
    with pytest.raises(AttributeError):
        parts.sequence = 8  # type: ignore[misc]


def test_decoded_equality_hash_order_pickle():
    a = flakery.decode(175928847299117063, "discord")
    b = flakery.decode(175928847299117063, flakery.Layout("discord"))
    c = flakery.decode(175928847299117064, "discord")
    other_layout = flakery.decode(175928847299117063, "twitter")
    assert a == b and hash(a) == hash(b)
    assert a != c and a != other_layout
    assert a < c and c > a and a <= b and a >= b
    assert sorted([c, a]) == [a, c]
    assert len({a, b, c, other_layout}) == 3
    assert a != 175928847299117063
    assert pickle.loads(pickle.dumps(a)) == a


def test_decode_accepts_index_ints():
    class Id:
        def __index__(self):
            return 175928847299117063

    assert flakery.decode(Id(), "discord").sequence == 7  # type: ignore[arg-type]


def test_decode_extremes():
    assert flakery.decode(0).timestamp_ms == 1288834974657
    top = flakery.decode(2**63 - 1)
    assert top.sequence == 4095 and top.worker_id == 31 and top.datacenter_id == 31
    assert top.datetime.year == 2080
    # A layout whose time outlives datetime: the milliseconds are exact, the datetime refuses.
    far = flakery.decode(2**62, layout="time:50,sequence:13;epoch=0")
    assert far.timestamp_ms == 2**49
    with pytest.raises(OverflowError):
        far.datetime


# Compose


def test_compose_discord_example():
    assert flakery.compose(
        timestamp_ms=1462015105796, datacenter_id=1, worker_id=0, sequence=7, layout="discord"
    ) == 175928847299117063
    when = datetime.datetime(2016, 4, 30, 13, 18, 25, 796999, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
    assert flakery.compose(timestamp=when, datacenter_id=1, sequence=7, layout="discord") == 175928847299117063


@pytest.mark.parametrize("name", list(flakery.Layout.presets()))
def test_compose_decode_round_trip_every_preset(name):
    layout = flakery.Layout.preset(name)
    unit_ms = {"ms": 1, "10ms": 10, "s": 1000}[layout.unit]
    kinds = {f.kind: f for f in layout.fields}
    top = lambda kind: (1 << kinds[kind].bits) - 1 if kind in kinds else 0  # noqa: E731
    constants = {f.name: (1 << f.bits) - 1 for f in layout.fields if f.kind == "constant" and f.shift + f.bits < 64}
    for timestamp_ms in (layout.epoch_ms, layout.epoch_ms + 123_456_789, layout.exhausted_at_ms - 1):
        for datacenter_id, worker_id, sequence in ((0, 0, 0), (top("datacenter"), top("worker"), top("sequence")), (1 if "datacenter" in kinds else 0, 1, 1)):
            id = flakery.compose(
                timestamp_ms=timestamp_ms, datacenter_id=datacenter_id, worker_id=worker_id,
                sequence=sequence, fields=constants, layout=layout,
            )
            assert 0 <= id < 2**63
            parts = flakery.decode(id, layout=name)
            assert parts.timestamp_ms == timestamp_ms - (timestamp_ms - layout.epoch_ms) % unit_ms
            assert (parts.datacenter_id, parts.worker_id, parts.sequence) == (datacenter_id, worker_id, sequence)
            for constant, value in constants.items():
                assert parts.fields[constant] == value
            assert flakery.compose(
                timestamp=parts.datetime, datacenter_id=datacenter_id, worker_id=worker_id,
                sequence=sequence, fields=constants, layout=name,
            ) == id
    if name != "baidu":  # baidu has run out of time: it decodes, it does not generate
        generator = flakery.Generator(layout=layout, worker_id=1)
        before = int(time.time() * 1000)
        parts = generator.decode(generator.next_id())
        assert parts.worker_id == 1
        assert before - unit_ms - 5 <= parts.timestamp_ms <= int(time.time() * 1000) + 5

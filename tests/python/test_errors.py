"""Every error: its code, its classes, its message."""

import pickle

import pytest

import flakery

CODES = {
    flakery.InvalidLayoutError: "invalid_layout",
    flakery.InvalidArgumentError: "invalid_argument",
    flakery.TimeExhaustedError: "time_exhausted",
    flakery.ClockMovedBackwardsError: "clock_moved_backwards",
    flakery.LeaseLostError: "lease_lost",
    flakery.CoordinatorUnavailableError: "coordinator_unavailable",
    flakery.WorkerIdsExhaustedError: "worker_ids_exhausted",
    flakery.ForkedError: "forked",
    # A Client's (tests/client/test_python_client.py raises them against real servers).
    flakery.ServersUnavailableError: "servers_unavailable",
    flakery.UnauthorizedError: "unauthorized",
    flakery.BadAnswerError: "bad_answer",
    flakery.TlsFailedError: "tls_failed",
}


def test_one_class_per_code():
    assert sorted(CODES.values()) == sorted(set(CODES.values()))
    for cls, code in CODES.items():
        assert issubclass(cls, flakery.FlakeryError)
        assert issubclass(cls, Exception)
        assert cls.code == code
        assert cls(f"a {code}").code == code
    assert issubclass(flakery.InvalidLayoutError, ValueError)
    assert issubclass(flakery.InvalidArgumentError, ValueError)
    for cls in set(CODES) - {flakery.InvalidLayoutError, flakery.InvalidArgumentError}:
        assert not issubclass(cls, ValueError), cls


def test_wrong_type_class():
    cls = flakery.InvalidArgumentTypeError
    assert issubclass(cls, flakery.InvalidArgumentError)
    assert issubclass(cls, TypeError)
    assert issubclass(cls, ValueError)
    assert cls.code == "invalid_argument"


@pytest.mark.parametrize("cls", [*CODES, flakery.InvalidArgumentTypeError])
def test_errors_pickle(cls):
    error = pickle.loads(pickle.dumps(cls("the message")))
    assert type(error) is cls
    assert str(error) == "the message"
    assert error.code == cls.code


@pytest.mark.parametrize("bad", [1.5, 1.0, None, b"1", [1], True])
def test_decode_wrong_type(bad):
    with pytest.raises(TypeError) as info:
        flakery.decode(bad)
    error = info.value
    assert isinstance(error, flakery.InvalidArgumentTypeError)
    assert isinstance(error, flakery.InvalidArgumentError)
    assert error.code == "invalid_argument"
    assert "id must be an int" in str(error)


@pytest.mark.parametrize(
    "bad, words",
    [
        (-1, "negative"),
        (-(2**70), "negative"),
        (2**63, "larger than the largest ID"),
        (2**64, "larger than the largest ID"),
        (10**30, "larger than the largest ID"),
    ],
)
def test_decode_out_of_range(bad, words):
    with pytest.raises(ValueError) as info:
        flakery.decode(bad)
    error = info.value
    assert type(error) is flakery.InvalidArgumentError
    assert error.code == "invalid_argument"
    assert words in str(error)
    assert not isinstance(error, TypeError)


def test_decode_bits_above_layout():
    # safe53 uses 53 bits: an ID with a higher bit set is not one of its IDs.
    with pytest.raises(flakery.InvalidArgumentError, match="53 bits"):
        flakery.decode(2**60, layout="safe53")


def test_worker_id_too_large_for_its_field():
    with pytest.raises(ValueError) as info:
        flakery.Generator(worker_id=99)
    assert type(info.value) is flakery.InvalidArgumentError
    assert info.value.code == "invalid_argument"
    assert "worker_id 99 does not fit in 5 bits" in str(info.value)
    with pytest.raises(flakery.InvalidArgumentError, match="datacenter_id 32"):
        flakery.Generator(datacenter_id=32, worker_id=0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"worker_id": "1"}, "worker_id"),
        ({"worker_id": 1.0}, "worker_id"),
        ({"datacenter_id": True}, "datacenter_id"),
        ({"layout": 5}, "layout"),
        ({"sequence_policy": 1}, "sequence_policy"),
        ({"max_borrow_ms": "1s"}, "max_borrow_ms"),
        ({"backwards_tolerance_ms": 1.5}, "backwards_tolerance_ms"),
        ({"random_sequence_start": "yes"}, "random_sequence_start"),
        ({"fields": ["method"]}, "fields"),
        ({"fields": {"method": "2"}, "layout": "vesta-max-peak"}, "field 'method'"),
        ({"zookeeper": 2181}, "zookeeper"),
        ({"lease_dir": 3}, "lease_dir"),
    ],
)
def test_generator_wrong_types(kwargs, name):
    with pytest.raises(TypeError) as info:
        flakery.Generator(**kwargs)
    assert isinstance(info.value, flakery.InvalidArgumentTypeError)
    assert info.value.code == "invalid_argument"
    assert str(info.value).startswith(f"{name} must be")


def test_generator_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        flakery.Generator("twitter")  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        # The field's real range, whatever the int: the layout's, not a u64's.
        ({"worker_id": -1}, "worker_id -1 does not fit in 5 bits (0 to 31)"),
        ({"worker_id": 2**64}, "worker_id 18446744073709551616 does not fit in 5 bits (0 to 31)"),
        ({"worker_id": 32}, "worker_id 32 does not fit in 5 bits (0 to 31)"),
        ({"layout": "instagram", "worker_id": -5}, "worker_id -5 does not fit in 13 bits (0 to 8191)"),
        ({"layout": "instagram", "datacenter_id": -1}, "no datacenter field, so datacenter_id must be 0, not -1"),
        ({"sequence_policy": "later"}, "sequence_policy 'later' is not 'wait' or 'borrow'"),
        ({"layout": "vesta-max-peak", "fields": {"nope": 1}}, "no constant field 'nope'"),
        ({"layout": "vesta-max-peak", "fields": {"method": 4}}, "method 4 does not fit in 2 bits"),
        ({"layout": "instagram", "datacenter_id": 1}, "no datacenter field"),
    ],
)
def test_generator_bad_values(kwargs, words):
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.Generator(**kwargs)
    assert not isinstance(info.value, TypeError)
    assert words in str(info.value)


@pytest.mark.parametrize("bad", ["x", 1.5, None, True])
def test_next_ids_wrong_type(bad):
    for call in (flakery.next_ids, flakery.Generator(worker_id=1).next_ids):
        with pytest.raises(TypeError) as info:
            call(bad)
        assert isinstance(info.value, flakery.InvalidArgumentTypeError)
        assert info.value.code == "invalid_argument"


def test_next_ids_negative():
    with pytest.raises(flakery.InvalidArgumentError, match="not -1"):
        flakery.Generator(worker_id=1).next_ids(-1)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("", "empty"),
        ("snowflake", "unknown preset 'snowflake'"),
        ("time:41,worker:10;epoch=0", "needs a 'sequence' field"),
        ("time:41,worker:x,sequence:12;epoch=0", "width 'x'"),
        ("twitter;unit=week", "unit 'week'"),
        ("twitter;color=red", "unknown option 'color'"),
        ("time:41,sequence:12", "needs an epoch"),
    ],
)
def test_invalid_layouts(spec, words):
    for make in (flakery.Layout, lambda s: flakery.Generator(layout=s, worker_id=0),
                 lambda s: flakery.decode(1, layout=s)):
        with pytest.raises(ValueError) as info:
            make(spec)
        assert type(info.value) is flakery.InvalidLayoutError
        assert info.value.code == "invalid_layout"
        assert words in str(info.value)


def test_layout_wrong_type():
    with pytest.raises(flakery.InvalidArgumentTypeError, match="spec must be a str"):
        flakery.Layout(41)  # type: ignore[arg-type]
    with pytest.raises(flakery.InvalidArgumentTypeError, match="layout must be a str or a flakery.Layout"):
        flakery.decode(1, layout=["twitter"])  # type: ignore[arg-type]


def test_baidu_has_run_out_of_time():
    generator = flakery.Generator(layout="baidu", worker_id=1)
    for call in (generator.next_id, lambda: generator.next_ids(10), lambda: generator.next_ids(10_000)):
        with pytest.raises(flakery.TimeExhaustedError) as info:
            call()
        assert info.value.code == "time_exhausted"
        assert "ran out of time at 2024-11-20T13:24:16.000Z" in str(info.value)
        assert not isinstance(info.value, ValueError)
    # Old Baidu IDs still decode.
    assert flakery.decode(8192, layout="baidu").worker_id == 1


def test_layout_whose_epoch_is_in_the_future():
    generator = flakery.Generator(layout="twitter;epoch=2999-01-01T00:00:00Z", worker_id=1)
    with pytest.raises(flakery.TimeExhaustedError, match="before the epoch"):
        generator.next_id()


def test_closed_generator_raises_lease_lost():
    generator = flakery.Generator(worker_id=1)
    generator.next_id()
    generator.close()
    generator.close()  # twice is fine
    assert generator.closed
    with pytest.raises(flakery.LeaseLostError) as info:
        generator.next_id()
    assert info.value.code == "lease_lost"
    with pytest.raises(flakery.LeaseLostError):
        generator.next_ids(100_000)


def test_compose_errors():
    with pytest.raises(flakery.InvalidArgumentError, match="sequence 4096 does not fit in 12 bits"):
        flakery.compose(timestamp_ms=1600000000000, sequence=4096)
    with pytest.raises(flakery.InvalidArgumentError, match="before the epoch"):
        flakery.compose(timestamp_ms=0)
    with pytest.raises(flakery.InvalidArgumentError, match="no worker field|worker_id"):
        flakery.compose(timestamp_ms=1600000000000, worker_id=1 << 5)
    with pytest.raises(flakery.InvalidArgumentError, match="not both"):
        flakery.compose(timestamp_ms=1600000000000, timestamp=flakery.decode(1).datetime)  # type: ignore[call-overload]
    with pytest.raises(flakery.InvalidArgumentTypeError, match="needs timestamp_ms"):
        flakery.compose()  # type: ignore[call-overload]
    with pytest.raises(flakery.InvalidArgumentTypeError, match="timestamp_ms must be an int"):
        flakery.compose(timestamp_ms="now")  # type: ignore[call-overload]
    with pytest.raises(flakery.InvalidArgumentTypeError, match="timestamp must be a datetime"):
        flakery.compose(timestamp=1600000000000)  # type: ignore[call-overload]
    with pytest.raises(flakery.InvalidArgumentError, match="timezone-aware"):
        import datetime

        flakery.compose(timestamp=datetime.datetime(2020, 1, 1))
    with pytest.raises(flakery.InvalidArgumentError, match="no constant field 'colour'"):
        flakery.compose(timestamp_ms=1600000000000, layout="vesta-max-peak", fields={"colour": 1})
    with pytest.raises(flakery.InvalidArgumentError, match="bit 63"):
        flakery.compose(timestamp_ms=1600000000000, layout="vesta-max-peak", fields={"version": 1})


def test_misconfigured_environment_fails_on_use(run_python):
    out = run_python(
        "import flakery\n"
        "try:\n"
        "    flakery.next_id()\n"
        "except flakery.InvalidArgumentError as e:\n"
        "    print(e.code, e)\n",
        FLAKERY_WORKER_ID="seven",
    )
    assert out.startswith("invalid_argument FLAKERY_WORKER_ID='seven' is not a non-negative integer")
    out = run_python(
        "import flakery\n"
        "try:\n"
        "    flakery.next_id()\n"
        "except flakery.InvalidLayoutError as e:\n"
        "    print(e.code)\n",
        FLAKERY_LAYOUT="time:41",
    )
    assert out == "invalid_layout\n"


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"worker_id": -1}, "worker_id -1 does not fit in 5 bits (0 to 31)"),
        ({"sequence": 2**70, "layout": "sonyflake"}, "sequence 1180591620717411303424 does not fit in 8 bits (0 to 255)"),
        ({"datacenter_id": -3, "layout": "discord"}, "datacenter_id -3 does not fit in 5 bits (0 to 31)"),
    ],
)
def test_compose_names_the_fields_real_range(kwargs, words):
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.compose(timestamp_ms=1_700_000_000_000, **kwargs)
    assert str(info.value) == words


def test_generator_range_follows_flakery_layout(run_python):
    out = run_python(
        "import flakery\n"
        "try:\n"
        "    flakery.Generator(worker_id=-1)\n"
        "except flakery.InvalidArgumentError as e:\n"
        "    print(e)\n",
        FLAKERY_LAYOUT="instagram",
    )
    assert out.strip() == "worker_id -1 does not fit in 13 bits (0 to 8191)"


# core/src/decimal.rs's REFUSED_EXAMPLES: what every surface refuses as decimal text.
NOT_CANONICAL = ["+3", "03", " 5", "5 ", "\u20035", "-0", "0x10", "1e3", "\uff11", "",
                 "18446744073709551616", "-"]


@pytest.mark.parametrize("bad", NOT_CANONICAL)
def test_id_strings_are_canonical_decimal_only(bad):
    with pytest.raises(flakery.InvalidArgumentError) as raised:
        flakery.decode(bad)
    assert raised.value.code == "invalid_argument"
    assert "plain decimal" in str(raised.value) or "larger than" in str(raised.value)
    assert flakery.decode("0").id == 0


def test_environment_integers_are_canonical_decimal_only(run_python):
    code = (
        "import flakery\n"
        "try:\n"
        "    flakery.next_id()\n"
        "except flakery.InvalidArgumentError as e:\n"
        "    print(e.code, e)\n"
    )
    # Empty is unset (an empty line of an EnvironmentFile), not a value.
    for bad in [b for b in NOT_CANONICAL if b.strip()]:
        for name in ["FLAKERY_WORKER_ID", "FLAKERY_DATACENTER_ID"]:
            env = {name: bad, "FLAKERY_WORKER_ID": "1"} if name != "FLAKERY_WORKER_ID" else {name: bad}
            out = run_python(code, **env)
            assert out.startswith(f"invalid_argument {name}="), (bad, out)


def test_a_host_name_that_is_not_utf8_is_no_panic(run_python):
    # In a UTS namespace of the child's own, the host name is 64 bytes that are not UTF-8
    # (read as U+FFFD, three bytes each); the database lease cut it to 64 bytes inside a
    # character and raised PanicException.
    out = run_python(
        "import ctypes, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "NEWUTS, NEWUSER = 0x04000000, 0x10000000\n"
        "if libc.unshare(NEWUTS) != 0 and libc.unshare(NEWUSER | NEWUTS) != 0:\n"
        "    raise OSError(ctypes.get_errno(), 'unshare')\n"
        "socket.sethostname(b'\\xff' * 64)\n"
        "import flakery\n"
        "try:\n"
        "    flakery.Generator(database_url='postgres://u@127.0.0.1:1/ids?sslmode=disable')\n"
        "except flakery.CoordinatorUnavailableError as e:\n"
        "    print(e.code)\n"
    )
    assert out.strip() == "coordinator_unavailable", out

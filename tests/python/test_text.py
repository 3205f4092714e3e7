"""The text forms: to_base32/from_base32, to_base62/from_base62, Generator.next_id_text."""

import random

import pytest

import flakery

MAX = 2**63 - 1
FORMS = [
    ("base32", flakery.to_base32, flakery.from_base32, 13),
    ("base62", flakery.to_base62, flakery.from_base62, 11),
]


def sample_ids() -> list[int]:
    ids = [0, 1, MAX, MAX - 1]
    for bits in range(1, 63):
        ids += [2**bits - 1, 2**bits, 2**bits + 1]
    rng = random.Random(15)
    ids += [rng.getrandbits(1 + i % 63) for i in range(500)]
    return ids


def test_known_values() -> None:
    assert flakery.to_base32(0) == "0000000000000"
    assert flakery.to_base32(MAX) == "7ZZZZZZZZZZZZ"
    assert flakery.to_base32(175928847299117063) == "04W86BB0G4007"
    assert flakery.to_base62(0) == "00000000000"
    assert flakery.to_base62(MAX) == "AzL8n0Y58m7"
    assert flakery.to_base62(175928847299117063) == "0Czks0tP37X"
    # The ID is taken as decode takes it: an int or its decimal str.
    assert flakery.to_base62("175928847299117063") == "0Czks0tP37X"


@pytest.mark.parametrize("name,to,back,length", FORMS)
def test_round_trip(name, to, back, length) -> None:
    for id in sample_ids():
        text = to(id)
        assert len(text) == length, (name, id)
        assert back(text) == id, (name, id, text)


@pytest.mark.parametrize("name,to,back,length", FORMS)
def test_order(name, to, back, length) -> None:
    with flakery.Generator(worker_id=1) as generator:
        ids = sample_ids() + generator.next_ids(1000)
    assert sorted(to(id) for id in ids) == [to(id) for id in sorted(ids)]


def test_base32_reads_any_case_and_aliases() -> None:
    assert flakery.from_base32("7zzzzzzzzzzzz") == MAX
    assert flakery.from_base32("O4W86BBOG4OO7") == 175928847299117063
    assert flakery.from_base32("000000000000I") == 1
    assert flakery.from_base32("000000000000l") == 1
    assert flakery.from_base62("0000000000z") == 61
    assert flakery.from_base62("0000000000Z") == 35


@pytest.mark.parametrize(
    "call,text,words",
    [
        (flakery.from_base32, "000000000000U", "character 13 ('U')"),
        (flakery.from_base32, "0000-00000000", "character 5 ('-')"),
        (flakery.from_base32, "00000000000é0", "'é'"),
        (flakery.from_base62, "00000000_00", "character 9 ('_')"),
        (flakery.from_base32, "", "exactly 13"),
        (flakery.from_base62, "0" * 12, "exactly 11"),
        (flakery.from_base32, "8000000000000", "2^63-1"),
        (flakery.from_base62, "AzL8n0Y58m8", "2^63-1"),
        (flakery.from_base62, "zzzzzzzzzzz", "2^63-1"),
    ],
)
def test_bad_strings(call, text, words) -> None:
    with pytest.raises(flakery.InvalidArgumentError) as info:
        call(text)
    assert info.value.code == "invalid_argument"
    assert isinstance(info.value, ValueError)
    assert words in str(info.value)


@pytest.mark.parametrize("call", [flakery.to_base32, flakery.to_base62])
def test_ids_without_a_text_form(call) -> None:
    for bad in (-1, 2**63):
        with pytest.raises(flakery.InvalidArgumentError):
            call(bad)
    with pytest.raises(flakery.InvalidArgumentTypeError):
        call(1.5)


@pytest.mark.parametrize("call", [flakery.from_base32, flakery.from_base62])
def test_from_needs_a_str(call) -> None:
    for bad in (5, b"0000000000000", None):
        with pytest.raises(flakery.InvalidArgumentTypeError, match="text must be a str"):
            call(bad)


def test_decode_takes_decimal_strings() -> None:
    assert flakery.decode("175928847299117063", "discord").sequence == 7
    # Canonical decimal only (docs/spec.md#decimal-text): padding is refused, not trimmed.
    with pytest.raises(flakery.InvalidArgumentError, match="plain decimal"):
        flakery.decode(" 175928847299117063 ", "discord")
    with flakery.Generator(worker_id=3) as generator:
        assert generator.decode(str(generator.next_id())).worker_id == 3
    for bad, words in [("12x", "not an ID"), ("-5", "negative"), ("9223372036854775808", "2^63-1")]:
        with pytest.raises(flakery.InvalidArgumentError, match=words.replace("^", r"\^")):
            flakery.decode(bad)
    with pytest.raises(flakery.InvalidArgumentTypeError, match="id must be an int or a decimal str"):
        flakery.decode(1.5)


def test_a_generator_makes_ids_as_text() -> None:
    with flakery.Generator(worker_id=5) as generator:
        texts = [generator.next_id_text(f) for f in ("decimal", "base32", "base62")]
        texts.append(generator.next_id_text())
        ids = [int(texts[0]), flakery.from_base32(texts[1]), flakery.from_base62(texts[2]),
               int(texts[3])]
        assert [len(t) for t in texts[1:3]] == [13, 11]
        assert ids == sorted(set(ids)), "each a new ID, increasing"
        assert {generator.decode(i).worker_id for i in ids} == {5}
        with pytest.raises(flakery.InvalidArgumentError, match="hex"):
            generator.next_id_text("hex")
        with pytest.raises(flakery.InvalidArgumentTypeError, match="format must be a str"):
            generator.next_id_text(32)

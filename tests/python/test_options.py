"""flakery.Generator's keywords are the options table (core/src/option_table/, which renders
docs/spec.md#generator-options, a Rust test keeping the two equal), and flakery.Client's the
client's table (docs/client.md#options): their names, their order, keyword-only, and the
defaults the table gives; messages name options as Python spells them."""

import inspect
import pathlib

import pytest

import flakery

ROOT = pathlib.Path(__file__).resolve().parents[2]


def table(doc: str = "spec.md", heading: str = "### Generator options") -> "list[list[str]]":
    """The rows of the first table under `heading` in docs/`doc`, each a list of its cells."""
    lines = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    lines = lines.split(heading)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def check_keywords(cls: type, rows: "list[list[str]]", column: int) -> None:
    """`cls`'s keywords are the table's names in `column`, in order, keyword-only, each with
    the default the table's column of defaults (the ninth) gives."""
    parameters = inspect.signature(cls).parameters
    names = [row[column].strip("`") for row in rows]
    assert list(parameters) == names
    for name, row in zip(names, rows):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        default = row[8].removesuffix(" ms")
        expected = {"`wait`": "wait", "true": True, "false": False}.get(default)
        if default.isdigit():
            expected = int(default)
        assert parameters[name].default == expected, (name, default)


def test_the_keywords_are_the_table():
    rows = table()
    assert len(rows) == 14
    check_keywords(flakery.Generator, rows, 0)


def test_the_client_keywords_are_the_client_table():
    rows = table("client.md", "## Options")
    assert len(rows) == 15
    # The Python column: the Rust name, but `_ms` where Rust takes a Duration.
    check_keywords(flakery.Client, rows, 1)


SERVER = "http://127.0.0.1:1"  # never asked: the options are checked first


@pytest.mark.parametrize("cls, kwargs, message", [
    (flakery.Generator, dict(sequence_policy="sometimes", worker_id=1),
     r"^sequence_policy 'sometimes' is"),
    (flakery.Generator, dict(worker_id=32), r"^worker_id 32 does not fit"),
])
def test_a_message_names_the_option_as_python_spells_it(cls, kwargs, message):
    with pytest.raises(flakery.InvalidArgumentError, match=message):
        cls(**kwargs)


def client_durations() -> "list[str]":
    """The Python keywords of the client's durations: the rows of docs/client.md#options whose
    default is in milliseconds (`max_age` in Rust, a `Duration`; `max_age_ms` in Python)."""
    rows = table("client.md", "## Options")
    return [row[1].strip("`") for row in rows if row[8].endswith(" ms")]


def test_the_client_durations_are_these():
    assert client_durations() == ["max_age_ms", "timeout_ms", "request_timeout_ms"]


@pytest.mark.parametrize("keyword", client_durations())
def test_a_client_duration_is_refused_as_python_wrote_it(keyword):
    """Named as Python spells it, the value as passed, in the keyword's unit: not the Rust
    name, nor a Rust `Duration` ("not 0ns")."""
    with pytest.raises(flakery.InvalidArgumentError) as refused:
        flakery.Client(servers=SERVER, **{keyword: 0})
    assert str(refused.value) == f"{keyword} must be at least 1, not 0"
    # The smallest it takes: the client is made (it asks no server yet).
    flakery.Client(servers=SERVER, **{keyword: 1}).close()

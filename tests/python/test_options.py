"""flakery.Generator's keywords are the options table (core/src/option_table/, which renders
docs/spec.md#generator-options, a Rust test keeping the two equal): their names, their order,
keyword-only, and the defaults the table gives; messages name options as Python spells them."""

import inspect
import pathlib

import pytest

import flakery

ROOT = pathlib.Path(__file__).resolve().parents[2]


def table() -> "list[list[str]]":
    """The rows of docs/spec.md#generator-options, each a list of its cells."""
    lines = (ROOT / "docs" / "spec.md").read_text(encoding="utf-8")
    lines = lines.split("### Generator options")[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_keywords_are_the_table():
    rows = table()
    assert len(rows) == 14
    parameters = inspect.signature(flakery.Generator).parameters
    assert list(parameters) == [row[0].strip("`") for row in rows]
    for row in rows:
        parameter = parameters[row[0].strip("`")]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        default = row[8]
        expected = {"1000": 1000, "`wait`": "wait", "false": False}.get(default)
        assert parameter.default == expected, (row[0], default)


def test_a_message_names_the_option_as_python_spells_it():
    with pytest.raises(flakery.InvalidArgumentError, match=r"^sequence_policy 'sometimes' is"):
        flakery.Generator(sequence_policy="sometimes", worker_id=1)
    with pytest.raises(flakery.InvalidArgumentError, match=r"^worker_id 32 does not fit"):
        flakery.Generator(worker_id=32)

"""The Python surface of database leases: the option's validation, and a real lease against
PostgreSQL (Debian's package, started by tests/db/dbserver.py). In CI a missing server is a
failure."""

import glob
import os
import shutil
import sys

import pytest

import flakery

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "db"))
import dbserver  # noqa: E402

SECRET = "s3cr3t-bindings2-pw"
HAVE_POSTGRES = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb")) and shutil.which("psql")
NEEDS_POSTGRES = pytest.mark.skipif(
    not HAVE_POSTGRES and os.environ.get("CI") != "true",
    reason="!!! PostgreSQL is not installed: database lease tests SKIPPED !!!",
)


@pytest.mark.parametrize(
    "url",
    [
        f"redis://flakery:{SECRET}@127.0.0.1:6379/0",
        f"flakery:{SECRET}@127.0.0.1:5432/flakery",
    ],
)
def test_a_url_of_another_scheme_is_invalid_argument_without_the_password(url):
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.Generator(database_url=url)
    assert info.value.code == "invalid_argument"
    assert "database URL" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_an_unknown_mode_is_invalid_argument():
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.Generator(database_url=f"postgres://u:{SECRET}@127.0.0.1:1/db", database_mode="leaf")
    assert info.value.code == "invalid_argument"
    assert "'leaf'" in str(info.value) and "baidu" in str(info.value)
    assert SECRET not in str(info.value)


def test_a_url_that_is_not_a_string_is_rejected():
    with pytest.raises(TypeError, match="database_url"):
        flakery.Generator(database_url=5432)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def postgres():
    with dbserver.start("postgres") as server:
        yield server


@NEEDS_POSTGRES
def test_two_generators_lease_distinct_node_ids_from_postgres(postgres):
    assert postgres.password in postgres.url
    options = dict(database_url=postgres.url, layout="time:41,worker:10,sequence:12;epoch=0")
    with flakery.Generator(**options) as first, flakery.Generator(**options) as second:
        assert first.source == second.source == "database"
        assert first.worker_id != second.worker_id
        for generator in (first, second):
            assert postgres.password not in repr(generator)
        ids = first.next_ids(1000) + second.next_ids(1000)
        assert len(set(ids)) == 2000


@NEEDS_POSTGRES
def test_a_server_that_refuses_the_password_never_shows_it(postgres):
    wrong = postgres.url.replace(postgres.password, SECRET)
    with pytest.raises(flakery.FlakeryError) as info:
        flakery.Generator(database_url=wrong)
    assert info.value.code == "coordinator_unavailable"
    assert "127.0.0.1" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)

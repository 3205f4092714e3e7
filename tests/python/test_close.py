"""close() is final (issue 33): a Client closed before its first call refuses every later
call, in this process and in a child forked after the close, with or without a fallback and
whether or not a server would answer."""

import os

import pytest

import flakery
from test_fork import run_in_child


def calls(client):
    """Every call that hands out IDs, each with what it raised (its error code) or 'ids'."""
    result = {}
    for name, call in [
        ("next_id", client.next_id),
        ("next_ids", lambda: client.next_ids(3)),
        ("next_id_text", lambda: client.next_id_text("base62")),
    ]:
        try:
            call()
            result[name] = "ids"
        except flakery.FlakeryError as error:
            result[name] = error.code
    return result


REFUSED = {"next_id": "invalid_argument", "next_ids": "invalid_argument", "next_id_text": "invalid_argument"}


@pytest.fixture(params=["server", "fallback"])
def unused_client(request):
    """A client that would hand out IDs (from a server, or from its fallback with none up),
    never called yet."""
    if request.param == "server":
        server = request.getfixturevalue("tiny_server")
        return flakery.Client(servers=server)
    down = request.getfixturevalue("closed_port")()
    return flakery.Client(servers=down, fallback=flakery.Generator(worker_id=21))


def test_a_client_closed_before_its_first_call_refuses_every_call(unused_client):
    unused_client.close()
    assert calls(unused_client) == REFUSED
    assert calls(unused_client) == REFUSED  # and again: nothing reopened it


def test_a_client_closed_after_use_refuses_every_call(tiny_server):
    client = flakery.Client(servers=tiny_server)
    client.next_ids(10)
    client.close()
    assert calls(client) == REFUSED


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_a_child_forked_after_the_close_refuses_too(unused_client):
    unused_client.close()
    assert run_in_child(lambda: calls(unused_client)) == REFUSED
    assert calls(unused_client) == REFUSED  # the parent, after its child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
def test_a_child_forked_after_a_used_client_closed_refuses_too(tiny_server):
    client = flakery.Client(servers=tiny_server)
    client.next_ids(10)
    client.close()
    assert run_in_child(lambda: calls(client)) == REFUSED

"""One Client.next_ids call, one deadline: the binding fills a large batch 16 Ki IDs at a time
without the GIL (bindings-python/src/source.rs), and each chunk had a deadline of its own, so
one call could last a timeout per chunk."""

import pytest

import flakery

CHUNK = 16 * 1024  # the binding's


def test_a_batch_of_chunks_fails_within_its_one_deadline(slow_server):
    """Each answer comes at least 0.3 s after its request, and each chunk needs one (blocks of
    exactly a chunk, no prefetch, one request at a time): the fourth cannot come before 1.2 s,
    after the call's one deadline of 1,016 ms (the timeout and 16 ms to make 65,536 IDs),
    however slow the machine. With a deadline a chunk, all four came."""
    with flakery.Client(
        servers=slow_server,
        min_block=CHUNK,
        max_block=CHUNK,
        prefetch=False,
        timeout_ms=1000,
        request_timeout_ms=1000,
    ) as client:
        with pytest.raises(flakery.ServersUnavailableError) as failed:
            client.next_ids(4 * CHUNK)
    assert failed.value.code == "servers_unavailable"
    assert "within 1016 ms (the timeout, 1000 ms, and 16 ms to make 65536 IDs" in str(failed.value)

"""fork(): a child never repeats its parent's IDs."""

import json
import multiprocessing
import os

import pytest

import flakery

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")


def run_in_child(body):
    """Forks; runs body() in the child and returns what it returned (JSON) to the parent."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 0
        try:
            os.close(read_end)
            with os.fdopen(write_end, "w") as out:
                json.dump(body(), out)
        except BaseException as error:  # noqa: BLE001
            status = 1
            try:
                os.write(2, f"child failed: {error!r}\n".encode())
            except OSError:
                pass
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
    return json.loads(text)


def test_fixed_identity_refuses_in_child_and_fresh_generator_does_not_collide():
    parent = flakery.Generator(worker_id=1)
    parent_ids = parent.next_ids(1000)

    def child():
        result = {}
        try:
            parent.next_id()
            result["inherited"] = "no error"
        except flakery.ForkedError as error:
            result["inherited"] = [error.code, str(error), isinstance(error, flakery.FlakeryError)]
        try:
            parent.next_ids(50_000)
            result["inherited_batch"] = "no error"
        except flakery.ForkedError as error:
            result["inherited_batch"] = error.code
        own = flakery.Generator(worker_id=2)
        result["ids"] = own.next_ids(5000) + [own.next_id() for _ in range(1000)]
        return result

    result = run_in_child(child)
    parent_ids += parent.next_ids(5000)  # the parent goes on, meanwhile and after
    code, message, is_flakery_error = result["inherited"]
    assert code == "forked" and is_flakery_error
    assert "fork()" in message and "worker 1" in message
    assert "Make a new generator in the child" in message
    assert result["inherited_batch"] == "forked"
    child_ids = result["ids"]
    assert len(set(child_ids)) == len(child_ids) == 6000
    assert not set(child_ids) & set(parent_ids)
    assert all(flakery.decode(i).worker_id == 2 for i in child_ids)


def test_default_generator_is_leased_anew_in_child():
    flakery.next_id()  # the parent's process-wide generator exists before the fork
    parent = flakery.default_generator()
    # tests/python/run.sh sets only FLAKERY_LEASE_DIR: the default is a host-local lease.
    assert parent.source == "host_lease", parent.source

    def child():
        ids = flakery.next_ids(10)
        generator = flakery.default_generator()
        return [[generator.datacenter_id, generator.worker_id], ids]

    child_node, child_ids = run_in_child(child)
    parent_ids = flakery.next_ids(10)
    assert child_node != [parent.datacenter_id, parent.worker_id]
    assert all(
        [d.datacenter_id, d.worker_id] == child_node for d in map(flakery.decode, child_ids)
    )
    assert not set(child_ids) & set(parent_ids)


def test_fixed_default_generator_refuses_in_child(run_python):
    code = """
import json, os, flakery
flakery.next_id()
read_end, write_end = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        flakery.next_id()
        report = ["ok", ""]
    except flakery.ForkedError as error:
        report = [error.code, str(error)]
    os.write(write_end, json.dumps(report).encode())
    os._exit(0)
os.close(write_end)
report = os.read(read_end, 4096).decode()
os.waitpid(pid, 0)
flakery.next_id()  # the parent goes on
print(report)
"""
    error_code, message = json.loads(run_python(code, FLAKERY_WORKER_ID="5"))
    assert error_code == "forked"
    assert "fork()" in message


def test_host_leased_generator_is_leased_anew_in_child(tmp_path):
    generator = flakery.Generator(lease_dir=str(tmp_path))
    assert generator.source == "host_lease"
    parent_worker = generator.worker_id
    parent_ids = generator.next_ids(1000)

    def child():
        ids = generator.next_ids(1000)
        return [generator.worker_id, generator.source, ids]

    worker, source, child_ids = run_in_child(child)
    assert source == "host_lease"
    assert worker != parent_worker  # the parent still holds its lease
    assert {flakery.decode(i).worker_id for i in child_ids} == {worker}
    parent_ids += generator.next_ids(1000)  # the parent is unaffected
    assert {flakery.decode(i).worker_id for i in parent_ids} == {parent_worker}
    assert not set(child_ids) & set(parent_ids)


def test_parent_keeps_working_after_fork():
    generator = flakery.Generator(worker_id=3)
    before = generator.next_id()
    run_in_child(lambda: None)
    assert generator.next_id() > before


# multiprocessing with the fork start method: the workers are children of fork().

POOL_PARENT = None


def use_parents_generator(_):
    try:
        POOL_PARENT.next_id()
    except flakery.ForkedError as error:
        return error.code
    return "no error"


def raise_in_worker(_):
    POOL_PARENT.next_id()


def own_generator_ids(worker_id):
    generator = flakery.Generator(worker_id=worker_id)
    return generator.next_ids(2000)


def test_multiprocessing_pool_with_fork():
    global POOL_PARENT
    POOL_PARENT = flakery.Generator(worker_id=20)
    parent_ids = POOL_PARENT.next_ids(2000)
    context = multiprocessing.get_context("fork")
    with context.Pool(processes=3) as pool:
        assert pool.map(use_parents_generator, range(6)) == ["forked"] * 6
        with pytest.raises(flakery.ForkedError) as info:  # the exception pickles back
            pool.apply(raise_in_worker, (0,))
        assert info.value.code == "forked"
        batches = pool.map(own_generator_ids, range(21, 27))
    parent_ids += POOL_PARENT.next_ids(2000)
    seen = set(parent_ids)
    assert len(seen) == 4000
    for worker_id, ids in zip(range(21, 27), batches):
        assert len(ids) == 2000 and ids == sorted(set(ids))
        assert not seen & set(ids)
        seen.update(ids)
        assert {flakery.decode(i).worker_id for i in ids} == {worker_id}

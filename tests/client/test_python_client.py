"""flakery.Client (the Python binding of flakery-client) against real servers: IDs from two
servers, one killed mid-way, every server down or paused, a bad token, fork(), the GIL
released while a call waits, and the quick start of docs/client.md. The package is the one
tests/client/run.sh installed into this venv."""

import os
import pickle
import signal
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

import flakery
from conftest import ROOT, duplicates, free_port, stop_process, url

sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import blocks  # noqa: E402  (tests/docs' reader of code blocks)

TOKEN = "python-token-7e1b"


def collect(client, threads, calls):
    """`calls` IDs on each of `threads` threads, by next_id, next_ids and next_id_text in turn;
    answers every ID and every error."""
    ids, errors = [], []
    lock = threading.Lock()

    def work(k):
        mine = []
        try:
            for i in range(calls // 10):
                mine.append(client.next_id())
                mine.extend(client.next_ids(8))
                mine.append(flakery.from_base62(client.next_id_text("base62")))
        except flakery.FlakeryError as error:
            with lock:
                errors.append(error)
        with lock:
            ids.extend(mine)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return ids, errors


def test_ids_from_two_servers_are_unique_and_theirs(servers):
    a = servers("--worker-id", "11")
    b = servers("--worker-id", "12")
    with flakery.Client(servers=[url(a), url(b)], min_block=16, max_block=256) as client:
        assert client.servers == [url(a), url(b)]
        assert str(client.layout) == "twitter"
        first = client.next_id()
        ids, errors = collect(client, threads=4, calls=2000)
        ids.append(first)
        assert errors == []
        assert len(ids) == 4 * 2000 + 1 and duplicates(ids) == 0
        workers = {client.decode(i).worker_id for i in ids}
        assert workers <= {11, 12} and workers, workers
        assert client.decode(str(first)).id == first
        assert len(client.next_id_text("base32")) == 13
        assert int(client.next_id_text()) > 0
        with pytest.raises(flakery.InvalidArgumentError):
            client.next_id_text("hex")
        with pytest.raises(flakery.InvalidArgumentError):
            client.next_ids(-1)
        assert client.next_ids(0) == []
    # Closed by the `with`: what it held is dropped, later calls fail with a stable code.
    with pytest.raises(flakery.InvalidArgumentError, match="closed"):
        client.next_id()
    with pytest.raises(flakery.InvalidArgumentError, match="closed"):
        client.next_ids(3)


def test_no_thread_outlives_close(servers):
    """close() ends the client's thread before it returns when that thread is between requests
    (client/tests/threads.rs): clients made, used and closed in a loop keep the process's
    threads where they were. Earlier tests' threads may still end: never more, not equal."""
    served = url(servers("--worker-id", "13"))
    refused = "http://127.0.0.1:1"  # nothing listens on port 1
    threads = lambda: len(os.listdir("/proc/self/task"))  # noqa: E731
    baseline = threads()
    for i in range(30):
        for server in (served, refused):
            client = flakery.Client(servers=server, min_block=16, max_block=16)
            try:
                client.next_id()
            except flakery.ServersUnavailableError:
                assert server == refused
            client.close()
            now = threads()
            assert now <= baseline, f"{now} threads after close() ({server}, {i}), {baseline} before"


def test_a_server_killed_mid_way_costs_no_id_and_no_call(servers):
    """Four threads take IDs from the first of two servers; it is killed (SIGKILL) once one
    thread has 500: every call still answers, from the second (each thread makes 1000 calls
    after the kill), and no ID is handed out twice."""
    a = servers("--worker-id", "21")
    b = servers("--worker-id", "22")
    client = flakery.Client(servers=[url(a), url(b)], prefer_first=True, max_block=64)
    ids, errors = [], []
    lock = threading.Lock()
    enough = threading.Event()
    killed = threading.Event()

    def work():
        mine, after = [], 0
        try:
            while after < 1000:
                mine.append(client.next_id())
                if len(mine) == 500:
                    enough.set()
                after += killed.is_set()
        except flakery.FlakeryError as error:
            errors.append(error)
        with lock:
            ids.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    enough.wait()
    os.kill(a.pid, signal.SIGKILL)
    a.proc.wait()
    killed.set()
    for w in workers:
        w.join()
    client.close()
    assert errors == []
    print(f"{len(ids)} IDs from 4 threads, the first server killed mid-way")
    assert duplicates(ids) == 0
    workers = [flakery.decode(i).worker_id for i in ids]
    assert set(workers) == {21, 22}, set(workers)
    # Each thread made 1000 calls after the kill: its last IDs are the second server's.
    assert workers[-1] == 22


def test_every_server_down_is_servers_unavailable(servers):
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    client = flakery.Client(servers=dead, timeout_ms=2000)
    for call in (client.next_id, lambda: client.next_ids(10), client.next_id_text):
        with pytest.raises(flakery.ServersUnavailableError) as info:
            call()
        assert info.value.code == "servers_unavailable"
        assert dead[0] in str(info.value) and dead[1] in str(info.value)
    error = pickle.loads(pickle.dumps(info.value))
    assert type(error) is flakery.ServersUnavailableError


def test_every_server_paused_fails_before_they_resume(servers):
    """The order of events: with both servers stopped (SIGSTOP) the call fails with
    servers_unavailable while they are still stopped; resumed, they answer again."""
    a, b = servers(), servers()
    client = flakery.Client(servers=[url(a), url(b)], timeout_ms=3000, request_timeout_ms=1000)
    stop_process(a.pid)
    stop_process(b.pid)
    try:
        with pytest.raises(flakery.ServersUnavailableError) as info:
            client.next_id()
        assert a.proc.poll() is None and b.proc.poll() is None
        assert url(a) in str(info.value) and url(b) in str(info.value)
    finally:
        os.kill(a.pid, signal.SIGCONT)
        os.kill(b.pid, signal.SIGCONT)
    client.close()
    assert flakery.Client(servers=[url(a), url(b)]).next_id() > 0


def test_a_bad_token_is_unauthorized_and_never_shown(servers, monkeypatch):
    a = servers(env={"FLAKERY_SERVER_TOKEN": TOKEN})
    wrong = "wrong-token-51d0"
    monkeypatch.delenv("FLAKERY_SERVER_TOKEN", raising=False)
    clients = [flakery.Client(servers=url(a), token=wrong), flakery.Client(servers=url(a))]
    monkeypatch.setenv("FLAKERY_SERVER_TOKEN", wrong)
    clients.append(flakery.Client(servers=url(a)))
    for client in clients:
        assert wrong not in repr(client)
        with pytest.raises(flakery.UnauthorizedError) as info:
            client.next_id()
        assert info.value.code == "unauthorized"
        assert "401" in str(info.value) and url(a) in str(info.value)
        assert wrong not in str(info.value) and TOKEN not in str(info.value)
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.Client(servers=url(a), token=" " + TOKEN)
    assert TOKEN not in str(info.value)
    with pytest.raises(flakery.InvalidArgumentError) as info:
        flakery.Client(servers=f"http://user:{TOKEN}@127.0.0.1:{a.port}")
    assert TOKEN not in str(info.value)
    monkeypatch.setenv("FLAKERY_SERVER_TOKEN", TOKEN)
    from_env = flakery.Client(servers=url(a))
    assert TOKEN not in repr(from_env)
    right = flakery.Client(servers=url(a), token=TOKEN)
    assert TOKEN not in repr(right)
    assert from_env.next_id() != right.next_id()


def test_a_forked_child_never_hands_out_the_parents_block(servers):
    """The parent holds a block of 1000 (it took one ID); a child of os.fork() takes 600 and
    the parent 600 more: had the child used the parent's stock, they would share 599."""
    a = servers()
    client = flakery.Client(servers=url(a), min_block=1000, max_block=1000)
    first = client.next_id()
    read, write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12 warns of fork() in a process with threads (the client's refiller):
        # the client is made for it, which is what this test shows.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read)
            child = client.next_ids(300) + [client.next_id() for _ in range(300)]
            os.write(write, repr(child).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    child = eval(text)  # a list of ints written by the child
    parent = [client.next_id() for _ in range(300)] + client.next_ids(300)
    assert len(child) == 600 and len(parent) == 600
    assert duplicates([first, *parent, *child]) == 0
    client.close()


@pytest.mark.parametrize("call", ["next_id", "next_ids", "next_id_text"])
def test_a_call_waiting_on_a_paused_server_leaves_the_gil(servers, call):
    """The order of events: a thread's call waits on a stopped server (SIGSTOP); meanwhile
    this thread runs Python, and the call is still waiting when it has; resumed, the server
    answers the call. A call that held the GIL would let this thread run only after it had
    given up (timeout_ms), and the check that it is still waiting would fail."""
    a = servers()
    client = flakery.Client(servers=url(a), timeout_ms=20000, request_timeout_ms=20000)
    stop_process(a.pid)
    started, done, answers = threading.Event(), threading.Event(), []

    def wait_for_ids():
        started.set()
        try:
            answers.append(getattr(client, call)(*([4] if call == "next_ids" else [])))
        except flakery.FlakeryError as error:
            answers.append(error)
        done.set()

    waiter = threading.Thread(target=wait_for_ids)
    try:
        waiter.start()
        started.wait()
        ran = 0
        for _ in range(50):
            done.wait(0.01)  # lets the waiter take the GIL and enter its call
            ran += sum(range(100))
        assert ran == 50 * 4950
        assert not done.is_set(), f"the call ended first: {answers}"
    finally:
        os.kill(a.pid, signal.SIGCONT)
    waiter.join()
    assert len(answers) == 1 and not isinstance(answers[0], Exception), answers


def test_arguments_are_checked_with_the_bindings_errors(servers, monkeypatch):
    a = servers()
    monkeypatch.setenv("FLAKERY_WORKER_ID", "1")  # for the process-wide generator
    for bad, cls in [
        (dict(servers=3), flakery.InvalidArgumentTypeError),
        (dict(servers=[3]), flakery.InvalidArgumentTypeError),
        (dict(servers="ftp://127.0.0.1:1"), flakery.InvalidArgumentError),
        (dict(servers=url(a), min_block=0), flakery.InvalidArgumentError),
        (dict(servers=url(a), min_block=20, max_block=10), flakery.InvalidArgumentError),
        (dict(servers=url(a), max_age_ms=0), flakery.InvalidArgumentError),
        (dict(servers=url(a), timeout_ms=-1), flakery.InvalidArgumentError),
        (dict(servers=url(a), prefetch=1), flakery.InvalidArgumentTypeError),
        (dict(servers=url(a), layout="nope"), flakery.InvalidLayoutError),
        (dict(servers=url(a), fallback="g"), flakery.InvalidArgumentTypeError),
        (dict(servers=url(a), fallback=flakery.default_generator()), flakery.InvalidArgumentError),
    ]:
        with pytest.raises(cls):
            flakery.Client(**bad)
    with pytest.raises(TypeError):
        flakery.Client(url(a))  # keyword-only, as Generator's
    with pytest.raises(flakery.InvalidArgumentError, match="FLAKERY_SERVERS"):
        flakery.Client()
    client = flakery.Client(servers=f" {url(a)} , ")
    assert client.servers == [url(a)]
    assert repr(client) == f"Client(servers=['{url(a)}'], layout='twitter')"
    with pytest.raises(flakery.InvalidArgumentTypeError):
        client.decode(1.5)
    with pytest.raises(flakery.InvalidArgumentTypeError):
        client.next_ids("3")
    with pytest.raises(TypeError):
        client.next_id(1)


def test_the_fallback_generator_answers_when_every_server_is_down(tmp_path):
    dead = f"http://127.0.0.1:{free_port()}"
    with flakery.Generator(worker_id=31, datacenter_id=3) as fallback:
        client = flakery.Client(servers=dead, fallback=fallback, timeout_ms=2000)
        ids = [client.next_id() for _ in range(3)] + client.next_ids(5)
        assert {(client.decode(i).datacenter_id, client.decode(i).worker_id) for i in ids} == {(3, 31)}
        assert duplicates(ids) == 0


def test_the_python_quick_start_of_the_docs_runs(servers, tmp_path):
    a, b = servers("--worker-id", "9"), servers("--worker-id", "9", "--datacenter-id", "1")
    [block] = [x for x in blocks.parse(Path(ROOT, "docs", "client.md"))
               if x.lang == "python" and "flakery.Client" in x.text]
    source = block.text.replace("http://127.0.0.1:8080", url(a)).replace(
        "http://127.0.0.1:8081", url(b))
    assert url(a) in source and url(b) in source
    (tmp_path / "quick.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    r = subprocess.run([sys.executable, str(tmp_path / "quick.py")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.splitlines()
    assert first.endswith(" worker 9"), r.stdout
    assert len(second) == 11, r.stdout

"""A fallback on a server's node ID, and close(), on every surface that has a Client: the
refusal and the closed client's failure are the client core's (client/src/shared.rs), and each
surface must pass them on with its code. A real server issues with datacenter 0, worker 11;
each client's fallback is on that node ID: its first call fails with invalid_argument naming
the node ID, and so does every later one. Python here; C (tests/client/fallback.c), Node
(tests/client/fallback.test.mjs) and Go (tests/client/gofallback/) are run against the same
server. With a partition: tests/partition/client_fallback.py."""

import os

import pytest

import flakery
from conftest import ROOT, free_port, url
from test_bindings import artifact, clean_env, run

NAMED = "(datacenter_id 0, worker_id 11)"


@pytest.fixture
def server_env(servers):
    server = servers("--worker-id", "11", "--datacenter-id", "0")
    env = clean_env()
    env["FLAKERY_TEST_FALLBACK_SERVER"] = url(server)
    return url(server), env


def refused(call):
    with pytest.raises(flakery.InvalidArgumentError) as caught:
        call()
    assert caught.value.code == "invalid_argument"
    assert NAMED in str(caught.value) and "fallback" in str(caught.value), str(caught.value)


def test_python_a_fallback_on_a_servers_node_is_refused(server_env):
    server, _ = server_env
    with flakery.Generator(worker_id=11, datacenter_id=0) as fallback:
        client = flakery.Client(servers=server, fallback=fallback, timeout_ms=5000)
        for call in (client.next_id, lambda: client.next_ids(3), lambda: client.next_id_text(),
                     client.next_id):
            refused(call)
        client.close()


def test_python_closed_is_final_in_a_forked_child_too(server_env):
    server, _ = server_env
    client = flakery.Client(servers=server)
    client.close()
    with pytest.raises(flakery.InvalidArgumentError, match="closed"):
        client.next_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            client.next_id()
            answer = b"handed out an ID"
        except flakery.InvalidArgumentError as error:
            answer = b"closed" if "closed" in str(error) else str(error).encode()
        except BaseException as error:  # noqa: BLE001  (the child reports whatever it got)
            answer = repr(error).encode()
        os.write(write, answer)
        os._exit(0)
    os.close(write)
    answer = os.read(read, 4096)
    os.close(read)
    os.waitpid(pid, 0)
    assert answer == b"closed", answer


def test_c_a_fallback_on_a_servers_node_is_refused(server_env):
    _, env = server_env
    env["FLAKERY_TEST_DEAD_SERVER"] = f"http://127.0.0.1:{free_port()}"
    out = run([artifact("FLAKERY_CLIENT_FALLBACK_C_TEST")], env)
    assert out.strip().endswith(" 0 failed")


def test_node_a_fallback_on_a_servers_node_is_refused(server_env):
    artifact("FLAKERY_CLIENT_NODE_BUILT")
    _, env = server_env
    out = run(["node", "--test", "tests/client/fallback.test.mjs"], env)
    assert "# fail 0" in out and "# pass 2" in out


def test_go_a_fallback_on_a_servers_node_is_refused(server_env):
    _, env = server_env
    env["PKG_CONFIG_PATH"] = artifact("FLAKERY_CLIENT_GO_PKG_CONFIG")
    for key in ("GOCACHE", "GOPATH", "HOME", "PATH", "CGO_ENABLED", "GOTOOLCHAIN", "GOPROXY",
                "GOFLAGS"):
        if key in os.environ:
            env[key] = os.environ[key]
    out = run(["go", "test", "-count=1", "-v", "."], env,
              cwd=os.path.join(ROOT, "tests", "client", "gofallback"))
    assert "--- PASS: TestAFallbackOnAServersNodeIsRefused" in out
    assert "--- PASS: TestClosedIsFinal" in out

"""The Client of the other bindings (C, Go, Node) against real servers: the servers started
here as test_client.py starts them, the bindings' own test programs run with their URLs in
the environment (tests/client/bindings.sh builds them)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY, ROOT, free_port, url

sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
import blocks  # noqa: E402  (tests/docs' reader of code blocks)

TOKEN = "binding-token-3c9f"


@pytest.fixture
def binding_env(servers):
    a, b = servers(), servers()
    token_server = servers(env={"FLAKERY_SERVER_TOKEN": TOKEN})
    env = clean_env()
    env.update({
        "FLAKERY_TEST_SERVERS": f"{url(a)},{url(b)}",
        "FLAKERY_TEST_TOKEN_SERVER": url(token_server),
        "FLAKERY_TEST_TOKEN": TOKEN,
        # Nothing listens there: the port was free a moment ago and nothing here binds it.
        "FLAKERY_TEST_DEAD_SERVER": f"http://127.0.0.1:{free_port()}",
        # For tests that start servers of their own to pause and kill (client.test.mjs).
        "FLAKERY_TEST_BIN": BINARY,
    })
    return env


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}


def run(command, env, cwd=ROOT, failsafe=300):
    r = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=failsafe)
    print(r.stdout)
    print(r.stderr)
    assert r.returncode == 0, f"{command[0]} exited {r.returncode}"
    return r.stdout


def artifact(name):
    value = os.environ.get(name)
    assert value, f"{name} is not set: run tests/client/run.sh, which builds it"
    return value


def test_c_client(binding_env):
    out = run([artifact("FLAKERY_CLIENT_C_TEST")], binding_env)
    assert out.strip().endswith(" 0 failed")


def test_go_client(binding_env):
    binding_env["PKG_CONFIG_PATH"] = artifact("FLAKERY_CLIENT_GO_PKG_CONFIG")
    for key in ("GOCACHE", "GOPATH", "HOME", "PATH", "CGO_ENABLED", "GOTOOLCHAIN", "GOPROXY",
                "GOFLAGS"):
        if key in os.environ:
            binding_env[key] = os.environ[key]
    out = run(["go", "test", "-count=1", "-v", "-run", "^TestClient", "."], binding_env,
              cwd=os.path.join(ROOT, "go"))
    assert "--- PASS: TestClientIDsFromGoroutinesAreUnique" in out
    assert "--- PASS: TestClientErrorsHaveTheClientCodes" in out
    assert "--- PASS: TestClientFallbackAnswersWhenEveryServerIsDown" in out


def test_node_client(binding_env):
    artifact("FLAKERY_CLIENT_NODE_BUILT")
    out = run(["node", "--test", "tests/client/client.test.mjs"], binding_env)
    assert "# fail 0" in out and "# pass " in out


def quick_start(lang, a, b):
    """docs/client.md's block of `lang`, its two URLs replaced by two servers started here."""
    [block] = [x for x in blocks.parse(Path(ROOT, "docs", "client.md")) if x.lang == lang]
    assert "http://127.0.0.1:8080" in block.text and "http://127.0.0.1:8081" in block.text
    return block.text.replace("http://127.0.0.1:8080", url(a)).replace(
        "http://127.0.0.1:8081", url(b))


def test_the_node_quick_start_of_the_docs_runs(servers, tmp_path):
    artifact("FLAKERY_CLIENT_NODE_BUILT")
    a, b = servers("--worker-id", "9"), servers("--worker-id", "9", "--datacenter-id", "1")
    source = quick_start("js", a, b).replace("from 'flakery'", f"from '{ROOT}/index.mjs'")
    (tmp_path / "quick.mjs").write_text(source)
    out = run(["node", str(tmp_path / "quick.mjs")], clean_env())
    first, second = out.splitlines()
    assert first.endswith(" worker 9"), out
    assert len(second) == 11, out


def test_the_c_quick_start_of_the_docs_runs(servers, tmp_path):
    a, b = servers("--worker-id", "9"), servers("--worker-id", "9", "--datacenter-id", "1")
    (tmp_path / "quick.c").write_text(quick_start("c", a, b))
    pc = artifact("FLAKERY_CLIENT_GO_PKG_CONFIG")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "--static", "flakery-static"],
                           env={**os.environ, "PKG_CONFIG_PATH": pc}, capture_output=True,
                           text=True, check=True).stdout.split()
    run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", str(tmp_path / "quick.c"), "-o",
         str(tmp_path / "quick"), *flags], clean_env())
    out = run([str(tmp_path / "quick")], clean_env())
    assert out.strip().endswith(" worker 9"), out

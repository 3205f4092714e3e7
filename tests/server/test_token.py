"""The bearer token: a server refuses to start with one that guards nothing (an empty line
`FLAKERY_SERVER_TOKEN=` in an EnvironmentFile), and `Bearer ` with nothing after it is refused
over HTTP/1.1, HTTP/2 and gRPC."""

import json
import os
import subprocess
import tempfile

import grpc
import pytest

from conftest import BINARY, free_port
from h2client import H2Client
from test_abuse import generate_stubs

TOKEN = "s3cret-token-value"


def start_refused(env_token=None, flag_token=None):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    env["FLAKERY_LEASE_DIR"] = tempfile.mkdtemp(prefix="server-test-lease-")
    if env_token is not None:
        env["FLAKERY_SERVER_TOKEN"] = env_token
    args = [BINARY, "serve", "--listen", f"127.0.0.1:{port}", "--worker-id", "1"]
    if flag_token is not None:
        args += ["--token", flag_token]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    return proc, port


@pytest.mark.parametrize("token", ["", " ", "\t", "   \t ", " s3cret", "s3cret ", "s3\x01cret"])
def test_a_token_that_guards_nothing_is_refused_at_start(token):
    for proc, port in [start_refused(env_token=token), start_refused(flag_token=token)]:
        assert proc.returncode != 0, proc.stderr
        assert "invalid_argument: the server token (FLAKERY_SERVER_TOKEN or --token)" \
            in proc.stderr, proc.stderr
        assert "serving IDs" not in proc.stderr
        if token.strip():
            assert token.strip() not in proc.stderr, "the token is never shown"


def test_bearer_with_nothing_after_it_is_refused_on_every_protocol(start_server):
    s = start_server("--worker-id", "1", env={"FLAKERY_SERVER_TOKEN": TOKEN})
    refused = ["", "Bearer ", "Bearer", "Bearer  ", "Bearer\t", "Basic " + TOKEN,
               "Bearer " + TOKEN[:-1], "Bearer " + TOKEN + "x", TOKEN]
    for value in refused:
        headers = {"Authorization": value} if value else {}
        status, h, body = s.get("/v1/id", headers)
        assert status == 401, repr(value)
        assert json.loads(body)["error"]["code"] == "unauthorized"
    for value in ["Bearer " + TOKEN, "bearer " + TOKEN, "BEARER " + TOKEN]:
        assert s.get("/v1/id", {"Authorization": value})[0] == 200, value

    # HTTP/2 passes header values as sent (HTTP/1.1 parsers drop the trailing space).
    client = H2Client(s.port)
    try:
        for value, want in [("Bearer ", "401"), ("Bearer", "401"), ("Bearer  ", "401"),
                            ("Bearer " + TOKEN, "200")]:
            sid = client.get("/v1/id", [("authorization", value)])
            assert client.wait(lambda: sid in client.ended)
            assert client.headers[sid][":status"] == want, repr(value)
    finally:
        client.close()

    ids_pb2, ids_pb2_grpc = generate_stubs()
    with grpc.insecure_channel(f"127.0.0.1:{s.port}") as channel:
        stub = ids_pb2_grpc.IdsStub(channel)
        for value in ["Bearer ", "Bearer", "bearer  "]:
            with pytest.raises(grpc.RpcError) as e:
                stub.NextId(ids_pb2.NextIdRequest(), metadata=[("authorization", value)])
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED, repr(value)
        ok = stub.NextId(ids_pb2.NextIdRequest(), metadata=[("authorization", "Bearer " + TOKEN)])
        assert ok.id > 0
    assert TOKEN not in s.logs()

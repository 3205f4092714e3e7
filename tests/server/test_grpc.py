"""flakery.v1.Ids and grpc.health.v1 with a real client generated from the committed .proto."""

import os
import subprocess
import sys
import tempfile

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from conftest import ROOT


@pytest.fixture(scope="module")
def pb():
    out = tempfile.mkdtemp(prefix="server-test-grpc-")
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT}/server/proto",
         f"--python_out={out}", f"--grpc_python_out={out}", "flakery/v1/ids.proto"],
        check=True,
    )
    sys.path.insert(0, out)
    from flakery.v1 import ids_pb2, ids_pb2_grpc  # noqa: E402
    return ids_pb2, ids_pb2_grpc


def channel(server):
    return grpc.insecure_channel(f"127.0.0.1:{server.port}")


def test_next_id_ids_stream_decode(pb, start_server):
    ids_pb2, ids_pb2_grpc = pb
    s = start_server("--worker-id", "9")
    with channel(s) as ch:
        stub = ids_pb2_grpc.IdsStub(ch)
        one = stub.NextId(ids_pb2.NextIdRequest()).id
        assert (one >> 12) & 31 == 9
        many = list(stub.NextIds(ids_pb2.NextIdsRequest(count=1000)).ids)
        assert len(many) == 1000 and many[0] > one
        assert all(a < b for a, b in zip(many, many[1:]))
        streamed = [i for msg in stub.StreamIds(ids_pb2.StreamIdsRequest(count=50000)) for i in msg.ids]
        assert len(streamed) == 50000 and streamed[0] > many[-1]
        assert all(a < b for a, b in zip(streamed, streamed[1:]))
        d = stub.Decode(ids_pb2.DecodeRequest(id=one))
        assert d.id == one and d.worker_id == 9 and dict(d.fields)["worker"] == 9
        assert d.time.endswith("Z")
        for call, request in [(stub.NextIds, ids_pb2.NextIdsRequest(count=0)),
                              (stub.NextIds, ids_pb2.NextIdsRequest(count=100001)),
                              (stub.Decode, ids_pb2.DecodeRequest(id=-1))]:
            with pytest.raises(grpc.RpcError) as e:
                call(request)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "invalid_argument" in e.value.details()
        with pytest.raises(grpc.RpcError) as e:
            list(stub.StreamIds(ids_pb2.StreamIdsRequest(count=0)))
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        health = health_pb2_grpc.HealthStub(ch)
        for service in ["", "flakery.v1.Ids"]:
            reply = health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_token_on_grpc(pb, start_server):
    ids_pb2, ids_pb2_grpc = pb
    s = start_server("--worker-id", "2", env={"FLAKERY_SERVER_TOKEN": "grpc-token"})
    with channel(s) as ch:
        stub = ids_pb2_grpc.IdsStub(ch)
        with pytest.raises(grpc.RpcError) as e:
            stub.NextId(ids_pb2.NextIdRequest())
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as e:
            stub.NextId(ids_pb2.NextIdRequest(), metadata=[("authorization", "Bearer nope")])
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        ok = stub.NextId(ids_pb2.NextIdRequest(), metadata=[("authorization", "Bearer grpc-token")])
        assert ok.id > 0
        health = health_pb2_grpc.HealthStub(ch)
        assert health.Check(health_pb2.HealthCheckRequest()).status == \
            health_pb2.HealthCheckResponse.SERVING

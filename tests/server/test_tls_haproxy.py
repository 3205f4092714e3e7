"""The two haproxy configurations of docs/server-tls.md, run as written (only addresses,
file names and the server name replaced) in front of two TLS servers: passthrough (the client
checks the servers' own certificate) and termination (haproxy's certificate to the client,
TLS again to the servers). Each health check must pass over TLS (`L7OK`), and IDs of both
servers come through to a client that checks haproxy's side."""

import http.client
import os

import pytest

from conftest import ROOT, free_port
from test_drain import Haproxy
from tlsutil import TOKEN, certs, client_context, tls_args  # noqa: F401

OPS = os.path.join(ROOT, "docs", "ops")


@pytest.mark.parametrize("name,backend", [("passthrough", "flakery_tls"),
                                          ("termination", "flakery")])
def test_haproxy_tls_as_documented(start_server, certs, tmp_path, name, backend):  # noqa: F811
    ports = [free_port() for _ in range(2)]
    for i, port in enumerate(ports):
        start_server(*tls_args(certs), "--worker-id", str(i + 1), port=port,
                     env={"FLAKERY_SERVER_TOKEN": TOKEN}, ssl_context=client_context(certs))
    lb_port = free_port()
    # haproxy's own certificate (termination): the chain and the key in one file.
    pem = tmp_path / "haproxy.pem"
    with open(certs["server.crt"]) as c, open(certs["server.key"]) as k:
        pem.write_text(c.read() + k.read())
    listen = "0.0.0.0:8443" if name == "passthrough" else "0.0.0.0:443"
    replace = {listen: f"127.0.0.1:{lb_port}", "10.0.0.1:8443": f"127.0.0.1:{ports[0]}",
               "10.0.0.2:8443": f"127.0.0.1:{ports[1]}", "flakery.internal": "localhost",
               "/etc/haproxy/flakery-ca.pem": certs["ca.pem"]}
    if name == "termination":
        replace["/etc/haproxy/ids.example.com.pem"] = str(pem)
    lb = Haproxy(lb_port, ports, cfg=os.path.join(OPS, f"haproxy-tls-{name}.cfg"),
                 replace=replace, backend=backend)
    try:
        for server in ("flakery1", "flakery2"):
            lb.wait_for(server, "L7OK", column="check_status")
        workers = set()
        for _ in range(8):
            # A new connection each time: passthrough balances connections.
            conn = http.client.HTTPSConnection("localhost", lb_port, timeout=30,
                                               context=client_context(certs))
            conn.request("GET", "/v1/id", headers={"Authorization": f"Bearer {TOKEN}"})
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, body
            workers.add((int(body.split(b'"')[3]) >> 12) & 31)
            conn.close()
        assert workers == {1, 2}
    finally:
        lb.stop()

#!/usr/bin/env python3
"""Certificates for the TLS tests of the database leases, made by the shared maker
(tests/tls_certs.py): a test CA, a server certificate and a client certificate it signed, and a
second CA that signed nothing. Python 3.11 stdlib only; `dbserver.py certs DIR` runs it.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tls_certs import make_ca, make_leaf  # noqa: E402

USER = "flakery"  # the database user of dbserver.py, named by the client certificate


def make_certs(dir: str) -> None:
    """Writes into `dir`: ca.pem (the CA), server.crt and server.key (for the name `localhost`
    only, so that a connection to 127.0.0.1 passes a chain check but not a name check), and
    other-ca.pem (a CA that signed nothing here), client.crt and client.key (for the user
    `flakery`, signed by the CA: PostgreSQL's clientcert=verify-full checks the CN against the
    user name). P-256 keys, valid for two days."""
    make_ca(dir, "ca")
    make_ca(dir, "other-ca")
    make_leaf(dir, "server", "ca", "localhost", "DNS:localhost")
    make_leaf(dir, "client", "ca", USER, usage="clientAuth")

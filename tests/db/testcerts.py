#!/usr/bin/env python3
"""Certificates for the TLS tests of the database leases, made with `openssl` (Debian's
openssl package): a test CA, a server certificate and a client certificate it signed, and a
second CA that signed nothing. Python 3.11 stdlib only; `dbserver.py certs DIR` runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess

USER = "flakery"  # the database user of dbserver.py, named by the client certificate


def make_certs(dir: str) -> None:
    """Writes a test CA and a server certificate signed by it, with `openssl`, into `dir`:
    ca.pem (the CA), server.crt and server.key (for the name `localhost` only, so that a
    connection to 127.0.0.1 passes a chain check but not a name check), and other-ca.pem (a
    CA that signed nothing here), client.crt and client.key (for the user `flakery`, signed by
    the CA). P-256 keys, valid for two days."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl not found (Debian's openssl package)")
    os.makedirs(dir, exist_ok=True)

    def run(*args: str) -> None:
        done = subprocess.run([openssl, *args], capture_output=True, text=True, cwd=dir,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")

    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for name in ("ca", "other-ca"):
        run("req", "-x509", *key, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
            "-subj", f"/CN=flakery test {name}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(dir, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"
                "basicConstraints=CA:FALSE\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "server.ext")
    # A client certificate for the user flakery (PostgreSQL's clientcert=verify-full checks
    # the CN against the user name).
    run("req", *key, "-keyout", "client.key", "-out", "client.csr", "-subj", f"/CN={USER}")
    with open(os.path.join(dir, "client.ext"), "w") as f:
        f.write("extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n")
    run("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "client.crt", "-days", "2", "-extfile", "client.ext")

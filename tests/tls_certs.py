#!/usr/bin/env python3
"""Test certificates for every TLS test (the server, its clients, ZooKeeper, the databases),
made with `openssl` (Debian's openssl package, 3.0+); Python 3.11 stdlib only.

    python3 tests/tls_certs.py DIR     # writes the set below into DIR, prints its file names

    sys.path.insert(0, "<repo>/tests"); from tls_certs import make_certs
    files = make_certs(DIR)            # {"ca.pem": "DIR/ca.pem", ...}, the names of FILES

Every key is P-256; every certificate but the expired one is valid for two days from now.
The names in FILES are a stable interface (other areas import them): add, never rename.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# What make_certs writes: file name -> what it is.
FILES = {
    "ca.pem": "the test CA (trust this one)",
    "ca.key": "its key",
    "other-ca.pem": "a second CA, trusted by nobody unless a test says so",
    "other-ca.key": "its key",
    "server.crt": "server certificate for DNS:localhost and IP:127.0.0.1, signed by ca.pem",
    "server.key": "its key",
    "server-chain.crt": "server.crt followed by ca.pem (a PEM chain, as cert-manager writes)",
    "server2.crt": "a second server certificate, same names, same CA (for rotation)",
    "server2.key": "its key",
    "expired.crt": "server certificate for localhost/127.0.0.1 that expired in 2020",
    "expired.key": "its key",
    "wrong-host.crt": "server certificate for DNS:wrong.example only, signed by ca.pem",
    "wrong-host.key": "its key",
    "client.crt": "client certificate (CN=flakery, clientAuth), signed by ca.pem",
    "client.key": "its key",
    "other-client.crt": "client certificate (CN=flakery, clientAuth), signed by other-ca.pem",
    "other-client.key": "its key",
    "server.p12": "server.key, server.crt, ca.pem as PKCS#12 (Java, ZooKeeper), P12_PASSWORD",
    "client.p12": "client.key, client.crt and ca.pem as PKCS#12, password P12_PASSWORD",
}
P12_PASSWORD = "flakery-test"

DAYS = "2"
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
SERVER_SAN = "DNS:localhost,IP:127.0.0.1"


def _openssl(dir: str, *args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl not found (Debian's openssl package)")
    done = subprocess.run([openssl, *args], capture_output=True, text=True, cwd=dir,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")


def make_ca(dir: str, name: str) -> None:
    """Writes a self-signed CA, DIR/NAME.pem and DIR/NAME.key."""
    os.makedirs(dir, exist_ok=True)
    _openssl(dir, "req", "-x509", *_KEY, "-keyout", f"{name}.key", "-out", f"{name}.pem",
             "-days", DAYS, "-subj", f"/CN=flakery test {name}",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")


def make_leaf(dir: str, name: str, ca: str, cn: str, san: str | None = None,
              usage: str = "serverAuth", expired: bool = False) -> None:
    """Writes DIR/NAME.crt and DIR/NAME.key, signed by the CA DIR/CA.pem: subject CN, the
    subjectAltName SAN (e.g. "DNS:localhost,IP:127.0.0.1") if given, extendedKeyUsage USAGE
    (serverAuth or clientAuth). `expired`: valid 2020-01-01..2020-01-02 only."""
    _openssl(dir, "req", *_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN={cn}")
    ext = f"{name}.ext"
    with open(os.path.join(dir, ext), "w") as f:
        if san:
            f.write(f"subjectAltName={san}\n")
        f.write(f"extendedKeyUsage={usage}\nbasicConstraints=CA:FALSE\n")
    if not expired:
        _openssl(dir, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem",
                 "-CAkey", f"{ca}.key", "-CAcreateserial", "-out", f"{name}.crt",
                 "-days", DAYS, "-extfile", ext)
        return
    # `openssl x509` (3.0) cannot date a certificate in the past; `openssl ca` can, with a
    # throwaway database of its own.
    db = f"{name}.ca"
    os.makedirs(os.path.join(dir, db), exist_ok=True)
    open(os.path.join(dir, db, "index.txt"), "w").close()
    with open(os.path.join(dir, db, "ca.cnf"), "w") as f:
        f.write(f"[ca]\ndefault_ca = d\n[d]\ndatabase = {db}/index.txt\n"
                f"new_certs_dir = {db}\nserial = {db}/serial\ndefault_md = sha256\n"
                "policy = p\nunique_subject = no\n[p]\ncommonName = supplied\n")
    with open(os.path.join(dir, db, "serial"), "w") as f:
        f.write("1000\n")
    _openssl(dir, "ca", "-batch", "-config", f"{db}/ca.cnf", "-cert", f"{ca}.pem",
             "-keyfile", f"{ca}.key", "-in", f"{name}.csr", "-out", f"{name}.crt",
             "-startdate", "20200101000000Z", "-enddate", "20200102000000Z",
             "-extfile", ext, "-notext")


def make_certs(dir: str) -> dict[str, str]:
    """Writes every file of FILES into DIR (created if missing); returns name -> path."""
    os.makedirs(dir, exist_ok=True)
    make_ca(dir, "ca")
    make_ca(dir, "other-ca")
    for name in ("server", "server2", "expired"):
        make_leaf(dir, name, "ca", "localhost", SERVER_SAN, expired=name == "expired")
    make_leaf(dir, "wrong-host", "ca", "wrong.example", "DNS:wrong.example")
    make_leaf(dir, "client", "ca", "flakery", usage="clientAuth")
    make_leaf(dir, "other-client", "other-ca", "flakery", usage="clientAuth")
    for name in ("server", "client"):
        _openssl(dir, "pkcs12", "-export", "-in", f"{name}.crt", "-inkey", f"{name}.key",
                 "-certfile", "ca.pem", "-name", name, "-out", f"{name}.p12",
                 "-passout", f"pass:{P12_PASSWORD}")
    with open(os.path.join(dir, "server-chain.crt"), "w") as out:
        for part in ("server.crt", "ca.pem"):
            with open(os.path.join(dir, part)) as f:
                out.write(f.read())
    return {name: os.path.join(dir, name) for name in FILES}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for name in make_certs(argv[0]):
        print(f"{name:18} {FILES[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

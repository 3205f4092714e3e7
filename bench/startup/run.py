#!/usr/bin/env python3
"""Start to first ID: `flakery next` from process start to its first line of output, for each
source of the node ID, on loopback (a benchmark: nothing here asserts a speed).

    python3 bench/startup/run.py FLAKERY_BIN OUT.json [--runs N] [--md OUT.md] [--page PAGE]

Starts throw-away servers with the tests' helpers (tests/db/dbserver.py: PostgreSQL and
MariaDB, serving TLS with a test CA; tests/zookeeper/zkserver.py: ZooKeeper, when Debian's
zookeeper is installed), then for each source one run that is not counted (it creates the
tables) and N counted runs, one after another. Writes OUT.json, and the table to OUT.md;
with --page, the block between `<!-- bench:startup -->` and `<!-- /bench:startup -->` in
PAGE. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "db"))
import dbserver  # noqa: E402  (puts tests/zookeeper on the path too)
sys.path.insert(0, os.path.join(ROOT, "bench"))
from reporting.page import write_block  # noqa: E402  (bench/reporting)
import zkserver  # noqa: E402

TARGET_MS = 50.0
NAMESPACE = "bench-startup"
BAIDU_LAYOUT = "baidu;epoch=2025-01-01T00:00:00Z"


def first_id_ms(binary: str, env: "dict[str, str]") -> float:
    """Milliseconds from starting `flakery next` to reading its first line (an ID)."""
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "next"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    _, err = proc.communicate(timeout=60)
    if proc.returncode != 0 or not line.strip().isdigit():
        raise RuntimeError((err or line).strip()[:300])
    return elapsed


def exit_ms(command: "list[str]") -> float:
    """Milliseconds from starting `command` to its exit."""
    started = time.perf_counter()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[:300])
    return elapsed


def connections(certs: str, pg, maria) -> "list[tuple[str, str, list[str]]]":
    """The database's own client connecting and running `SELECT 1`: the cost of a process
    start and a connection, which each lease row includes too."""
    ca = os.path.join(certs, "ca.pem")
    psql = dbserver.pg_bin("psql")
    mariadb = dbserver.which("mariadb", "mysql")
    my = [mariadb, "--no-defaults", "-h", "127.0.0.1", "-P", str(maria.port), "-u",
          dbserver.USER, f"-p{maria.password}", dbserver.DATABASE, "-e", "SELECT 1"]
    return [
        ("postgres", "psql", [psql, "-X", "-q", "-c", "SELECT 1", f"{pg.url}?sslmode=disable"]),
        ("postgres-tls", "psql",
         [psql, "-X", "-q", "-c", "SELECT 1", f"{pg.url}?sslmode=verify-ca&sslrootcert={ca}"]),
        ("mariadb", "mariadb", [*my, "--skip-ssl"]),
        ("mariadb-tls", "mariadb", [*my, "--ssl", f"--ssl-ca={ca}"]),
    ]


def sources(certs: str, pg, maria, zk, lease_dir: str) -> "list[tuple[str, str, dict[str, str]]]":
    ca = os.path.join(certs, "ca.pem")
    rows = [
        ("fixed", "fixed node ID (FLAKERY_WORKER_ID, FLAKERY_DATACENTER_ID)",
         {"FLAKERY_WORKER_ID": "1", "FLAKERY_DATACENTER_ID": "1"}),
        ("host", "host-local lease (FLAKERY_LEASE_DIR)", {"FLAKERY_LEASE_DIR": lease_dir}),
    ]
    for server, name, plain, tls in (
        (pg, "PostgreSQL 15", "sslmode=disable", f"sslmode=verify-ca&sslrootcert={ca}"),
        (maria, "MariaDB 10.11", "ssl-mode=DISABLED", f"ssl-mode=VERIFY_CA&ssl-ca={ca}"),
    ):
        kind = server.kind
        rows += [
            (f"{kind}", f"{name} lease", {"FLAKERY_DATABASE_URL": f"{server.url}?{plain}"}),
            (f"{kind}-tls", f"{name} lease over TLS (verify-ca)",
             {"FLAKERY_DATABASE_URL": f"{server.url}?{tls}"}),
            (f"{kind}-baidu", f"{name}, baidu mode (WORKER_NODE)",
             {"FLAKERY_DATABASE_URL": f"{server.url}?{plain}", "FLAKERY_DATABASE_MODE": "baidu",
              "FLAKERY_LAYOUT": BAIDU_LAYOUT}),
        ]
    if zk is not None:
        rows.append(("zookeeper", "ZooKeeper lease", {"FLAKERY_ZOOKEEPER": zk.connect}))
    return rows


def measure(binary: str, runs: int) -> "dict":
    base = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    base["FLAKERY_NAMESPACE"] = NAMESPACE
    work = tempfile.mkdtemp(prefix="sql-flakery-bench-startup-")
    zk = None
    servers = []
    try:
        certs = os.path.join(work, "certs")
        dbserver.make_certs(certs)
        pg = dbserver.start("postgres", tls_dir=certs)
        servers.append(pg)
        maria = dbserver.start("mariadb", tls_dir=certs)
        servers.append(maria)
        if os.path.exists(zkserver.ZK_JAR) and shutil.which("java"):
            zk = zkserver.start()
        lease_dir = os.path.join(work, "leases")
        os.makedirs(lease_dir, mode=0o700)
        results = []
        for key, name, env in sources(certs, pg, maria, zk, lease_dir):
            env = {**base, **env}
            row: dict = {"key": key, "name": name}
            try:
                first_id_ms(binary, env)  # creates the table, warms the server's caches
                times = [first_id_ms(binary, env) for _ in range(runs)]
                row.update(best_ms=min(times), median_ms=statistics.median(times), runs_ms=times)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                row["error"] = str(e)
            results.append(row)
            shown = (f"best {row['best_ms']:.1f} ms, median {row['median_ms']:.1f} ms"
                     if "error" not in row else f"error: {row['error']}")
            print(f"  {name}: {shown}", flush=True)
        connects = {}
        for key, client, command in connections(certs, pg, maria):
            try:
                exit_ms(command)
                times = [exit_ms(command) for _ in range(runs)]
                connects[key] = {"client": client, "best_ms": min(times),
                                 "median_ms": statistics.median(times), "runs_ms": times}
                print(f"  {key}: {client} SELECT 1: median {connects[key]['median_ms']:.1f} ms")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                connects[key] = {"client": client, "error": str(e)}
        return {"runs": runs, "target_ms": TARGET_MS, "zookeeper": zk is not None,
                "sources": results, "connections": connects}
    finally:
        if zk is not None:
            zk.stop()
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


def table(result: "dict", meta: "dict") -> str:
    rows = {r["key"]: r for r in result["sources"]}
    fixed = rows.get("fixed", {}).get("median_ms")
    lines = [
        f"`flakery next` from process start to its first ID ({meta['build']} build, every server "
        f"on 127.0.0.1, best and median of {result['runs']} runs after one not counted; "
        f"{meta['date']}, load average {meta['load']} before the run). The lease rows include "
        "the connection: TCP, authentication (PostgreSQL's SCRAM, MariaDB's native password) "
        "and the TLS handshake where said.",
        "",
        "| node ID source | best, ms | median, ms | median over a fixed node ID, ms |",
        "|---|--:|--:|--:|",
    ]
    for r in result["sources"]:
        if "error" in r:
            lines.append(f"| {r['name']} | error | | {r['error'][:80]} |")
            continue
        over = "" if fixed is None or r["key"] == "fixed" else f"{r['median_ms'] - fixed:+.1f}"
        lines.append(f"| {r['name']} | {r['best_ms']:.1f} | {r['median_ms']:.1f} | {over} |")
    connects = result.get("connections", {})
    names = {"postgres": "PostgreSQL", "postgres-tls": "PostgreSQL over TLS",
             "mariadb": "MariaDB", "mariadb-tls": "MariaDB over TLS"}
    shown = [f"{names.get(k, k)} {c['median_ms']:.1f} ms"
             for k, c in connects.items() if "median_ms" in c]
    if shown:
        lines += ["", "For scale, the databases' own command-line clients (`psql`, `mariadb`) "
                  "starting, connecting the same way and running `SELECT 1`, median: "
                  + "; ".join(shown) + "."]
    leases = [r for r in result["sources"]
              if r["key"] not in ("fixed", "host") and "median_ms" in r]
    if leases and fixed is not None:
        worst = max(leases, key=lambda r: r["median_ms"])
        over = worst["median_ms"] - fixed
        met = over < result["target_ms"]
        lines += ["", (
            f"Target: a coordinator's lease within {result['target_ms']:.0f} ms after the "
            f"connection is up. {'Met' if met else 'Missed'}: the slowest, {worst['name']}, "
            f"takes {over:.1f} ms more than a fixed node ID (median) with the connection "
            "itself included.")]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("out")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--md")
    parser.add_argument("--page")
    args = parser.parse_args()
    load = open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"
    meta = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "load": load,
            "build": "debug" if "/debug/" in args.binary else "release"}
    result = measure(os.path.abspath(args.binary), args.runs)
    result["meta"] = meta
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    text = table(result, meta)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.page:
        write_block(args.page, "startup", text, "the start-up figures")
    return 1 if any("error" in r for r in result["sources"]) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A client's fallback generator in a partition (tests/partition/run.sh runs it; loopback only).

One real `flakery serve` (twitter layout, a host-local lease in a directory of this test) and
three clients of it, each a hammer process (client/examples/hammer.rs):

- B draws from the server directly, on four threads, all along;
- A and C reach the server through a TCP proxy (tests/partition/delay_proxy.py, no delay),
  which is killed halfway: A and C are cut off from the server while B still draws from it;
- A's fallback is on the server's own node ID (read from one of the server's IDs): it is
  refused at its first block, every call failing with invalid_argument naming the node ID,
  and hands out no ID (before the refusal, such a client made 122,710 duplicates in 2 s);
- C's fallback leases its node ID in the server's own lease directory: after the cut it hands
  out the fallback's IDs, of another node ID, while B hands out the server's.

No ID is handed out twice over A, B and C, and both B and C handed out IDs made after the cut.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from ports import listen_port  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EPOCH_MS = 1288834974657  # twitter's
SECONDS = 8
CUT_AFTER_S = 3


def free_port() -> int:
    return listen_port()


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    env.update(extra)
    return env


def wait_until(ready, what: str, tries: int = 400) -> None:
    for _ in range(tries):
        if ready():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not ready")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def node_of(id_: int) -> tuple[int, int]:
    return (id_ >> 17) & 31, (id_ >> 12) & 31


def ms_of(id_: int) -> int:
    return (id_ >> 22) + EPOCH_MS


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
    print(f"  ok: {message}")


class Hammer:
    def __init__(self, binary: str, name: str, url: str, work: str, *args: str):
        self.name = name
        self.prefix = os.path.join(work, name)
        self.proc = subprocess.Popen(
            [binary, "--servers", url, "--out", self.prefix, "--seconds", str(SECONDS),
             "--calls", "100000000", "--timeout-ms", "2000", "--request-timeout-ms", "300",
             *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())

    def result(self) -> tuple[dict, list[int]]:
        # A failsafe for a hang (the hammer stops itself after SECONDS), not a bound on speed.
        out, err = self.proc.communicate(timeout=SECONDS + 120)
        assert self.proc.returncode == 0, f"{self.name} exited {self.proc.returncode}: {err}"
        [report] = [json.loads(line) for line in out.splitlines() if line.strip()]
        with open(f"{self.prefix}.{report['pid']}", "rb") as f:
            data = f.read()
        ids = [int.from_bytes(data[i:i + 8], "little", signed=True) for i in range(0, len(data), 8)]
        return report, ids


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--flakery", required=True)
    p.add_argument("--hammer", required=True)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="client-fallback-")
    lease_dir = os.path.join(work, "lease")
    os.mkdir(lease_dir)
    started: list[subprocess.Popen] = []
    try:
        port, proxy_port = free_port(), free_port()
        server = subprocess.Popen(
            [args.flakery, "serve", "--listen", f"127.0.0.1:{port}"],
            env=clean_env(FLAKERY_LEASE_DIR=lease_dir, FLAKERY_DRAIN_DELAY_MS="0"),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(server)
        direct = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(f"{direct}/readyz"), "the server")
        delay_file = os.path.join(work, "delay")
        with open(delay_file, "w") as f:
            f.write("0\n")
        proxy = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests", "partition", "delay_proxy.py"),
             "127.0.0.1", str(proxy_port), "127.0.0.1", str(port), delay_file])
        started.append(proxy)
        proxied = f"http://127.0.0.1:{proxy_port}"
        wait_until(lambda: answers(f"{proxied}/readyz"), "the proxy")
        with urllib.request.urlopen(f"{direct}/v1/ids?count=1", timeout=5) as r:
            datacenter, worker = node_of(int(json.loads(r.read())["ids"][0]))
        print(f"the server issues with datacenter_id {datacenter}, worker_id {worker}")

        # B is never cut off: a slow answer of a loaded machine is waited for.
        b = Hammer(args.hammer, "b", direct, work, "--threads", "4", "--timeout-ms", "10000",
                   "--request-timeout-ms", "5000")
        a = Hammer(args.hammer, "a", proxied, work, "--pause-us", "200",
                   "--fallback-node", f"{datacenter}:{worker}")
        c = Hammer(args.hammer, "c", proxied, work, "--pause-us", "200",
                   "--fallback-lease-dir", lease_dir)
        started += [a.proc, b.proc, c.proc]
        time.sleep(CUT_AFTER_S)
        proxy.kill()
        proxy.wait()
        cut_ms = time.time_ns() // 1_000_000
        print("A and C cut off from the server (the proxy killed); B draws on")
        (a_report, a_ids), (b_report, b_ids), (c_report, c_ids) = a.result(), b.result(), c.result()
        for name, report in (("A", a_report), ("B", b_report), ("C", c_report)):
            print(f"  {name}: {report['ok']} calls answered, failed {report['failed']}, "
                  f"first errors {report['errors'][:1]}")

        every = a_ids + b_ids + c_ids
        duplicates = len(every) - len(set(every))
        check(duplicates == 0, f"no ID handed out twice over {len(every)} ({duplicates})")
        named = f"(datacenter_id {datacenter}, worker_id {worker})"
        check(not a_ids and a_report["ok"] == 0, f"A handed out no ID ({len(a_ids)})")
        check(set(a_report["failed"]) == {"invalid_argument"}
              and all("fallback" in e and named in e for e in a_report["errors"]),
              f"A's every call was refused with invalid_argument naming {named}")
        check(all(node_of(i) == (datacenter, worker) for i in b_ids), "B's IDs are the server's")
        fallback_ids = [i for i in c_ids if node_of(i) != (datacenter, worker)]
        check(len(c_ids) > len(fallback_ids) > 0,
              f"C handed out the server's IDs, then {len(fallback_ids)} of its fallback's")
        check(not c_report["failed"].get("invalid_argument"), "C was never refused")
        check(any(ms_of(i) > cut_ms for i in b_ids), "B handed out IDs made after the cut")
        check(any(ms_of(i) > cut_ms for i in fallback_ids),
              "C's fallback handed out IDs made after the cut")
        print("client fallback: all checks passed")
        return 0
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)

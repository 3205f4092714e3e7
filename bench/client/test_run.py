#!/usr/bin/env python3
"""bench/client/run.py's page: the prose says what the figures of its own run say (bench/smoke.sh
runs this). Two made-up runs, one meeting every goal and one missing them: each sentence that
states a figure or a goal's outcome must follow the run, never a fixed text."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

failed = []
passed = 0


def check(name: str, ok: bool, text: str) -> None:
    global passed
    passed += ok
    if not ok:
        failed.append(f"{name}\n{text}")


def result(stock: float, sustained: float, share_3x8: float, cpu: float) -> dict:
    ceiling = 4_096_000.0
    rows = []
    for servers, clients, share in [(1, 1, 0.83), (1, 8, 1.01), (3, 1, 0.28), (3, 8, share_3x8)]:
        rows.append({"servers": servers, "clients": clients, "ceiling": ceiling * servers,
                     "ids_per_s": ceiling * servers * share, "share": share, "failed": 0,
                     "server_cpu_per_s": cpu / 2, "client_cpu_per_s": cpu / 2})
    return {"date": "2026-11-29 01:00 UTC", "mode": "full", "commit": "abc1234", "cores": 2,
            "load_before": [0.9, 1, 1], "load_after": [1.2, 1, 1], "seconds": 3, "rounds": 3,
            "ceiling_per_server": ceiling, "throughput": rows,
            "per_call": {run.EMBEDDED: 3.0, run.FROM_STOCK: stock, run.SUSTAINED: sustained,
                         "runs": 3}}


good = run.markdown(result(stock=4.2, sustained=8.1, share_3x8=0.97, cpu=1.9))
bad = run.markdown(result(stock=6.3, sustained=30.0, share_3x8=0.80, cpu=1.1))
for name, page, stock, sustained, share, outcome in [
        ("met", good, "4.2 ns", "8.1 ns", "97.0%", "met"),
        ("missed", bad, "6.3 ns", "30.0 ns", "80.0%", "not met")]:
    check(f"{name}: the call's figure and outcome", f"From the stock, {stock} against the embedded "
          f"generator's 3.0 ns" in page and f"the goal of 1.5x {outcome}." in page, page)
    check(f"{name}: sustained", f"with prefetch, {sustained} an ID" in page
          and f"the goal of 3x {outcome})" in page, page)
    check(f"{name}: three servers", f"8 processes took {share} of it (the goal of 95% with 8 "
          f"clients {outcome})" in page, page)
    check(f"{name}: tinyid's comparison from this run", f"call from its stock, {stock}" in page
          and "10 million needs at least 3 servers (12.3 million)" in page, page)
    check(f"{name}: over 100% named", "Figures over 100% (101.0% with 1 x 8)" in page, page)
check("the cores named as the limit when used", "The cores were the limit" in good
      and "The cores were the limit" not in bad, good + bad)
check("unused cores said when the goal is missed", "The cores were not all used" in bad, bad)
near = run.markdown(result(stock=4.2, sustained=8.1, share_3x8=0.9466, cpu=1.3))
check("a share just under the goal is not printed as the goal", "took 94.7% of it (the goal of "
      "95% with 8 clients not met)" in near, near)
smoke = result(4.2, 8.1, 0.97, 1.9)
smoke["throughput"] = [r for r in smoke["throughput"] if r["clients"] == 1]
del smoke["per_call"]
page = run.markdown(smoke)
check("a smoke run without the goal's row or the criterion figures still words its rows",
      "1 client process took" in page and "the goal of 95%" not in page
      and "Per call" not in page, page)

for f in failed:
    print("FAIL:", f)
print(f"{passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)

"""How far `flakery.next_id()`'s median burst is above its fastest, beside a bare C call's, on
this machine (docs/benchmarks.md, "Python: the median and the fastest burst"):

    FLAKERY_WORKER_ID=1 python bench/python/spread.py

Bursts of 1,000 calls after a millisecond boundary, as bench.py times them, with the GC off;
each burst also in the thread's CPU time (a thread descheduled on a busy machine does not
count), and `flakery.next_id()` interleaved with `(1).bit_length()` in blocks of 20 bursts, so
that both meet the same load. A gap that both show is the machine's; one that only next_id
shows (its int, the core's swap, the clock thread) is flakery's.
"""

import gc
import json
import os
import statistics
import time
from itertools import repeat

import flakery

from bench import wait_for_tick

BURST = 1000
BLOCK = 20


def block(f):
    """The wall and CPU time per call of BLOCK bursts of `f`."""
    wall, cpu = [], []
    gc.disable()
    try:
        for _ in range(BLOCK):
            wait_for_tick(1)
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            for _ in repeat(None, BURST):
                f()
            t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
            wall.append((t1 - t0) / BURST)
            cpu.append((c1 - c0) / BURST)
    finally:
        gc.enable()
    return wall, cpu


def main() -> None:
    calls = {"next_id": flakery.next_id, "floor": (1).bit_length}
    for f in calls.values():  # the first call makes the process-wide generator
        block(f)
    got = {name: ([], []) for name in calls}
    differences = []
    for _ in range(20):
        medians = {}
        for name, f in calls.items():
            wall, cpu = block(f)
            got[name][0].extend(wall)
            got[name][1].extend(cpu)
            medians[name] = statistics.median(cpu)
        differences.append(round(medians["next_id"] - medians["floor"], 1))
    out = {"load": os.getloadavg()[0]}
    for name, (wall, cpu) in got.items():
        for clock, v in (("wall", wall), ("cpu", cpu)):
            out[f"{name} {clock} min, median, ns"] = [round(min(v), 1), round(statistics.median(v), 1)]
    out["next_id less floor, cpu median of each block, ns"] = differences
    for key, value in out.items():
        print(f"{key}: {json.dumps(value)}")


if __name__ == "__main__":
    main()

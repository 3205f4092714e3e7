"""flakery beside the Python ID libraries a user would otherwise pick (run by bench/run.sh).

    python bench/python/bench.py --out results.json [--smoke]

Every generator is measured the same way (see bench/README part of the main README):
- per call: bursts of at most 1,000 calls (200 for sonyflake, 10 ms ticks) started right after
  a tick boundary of the wall clock, so no layout runs out of sequence numbers inside a burst;
  the median over the bursts of ns per call, the loop included (`for _ in repeat(None, k)`);
- sustained: a plain loop of calls for one second, IDs per second;
- batch: one batch of 1,000,000 IDs (the library's batch call, else a list comprehension) in a
  fresh child process, best of 3, with the growth of the process's peak RSS;
- two threads sharing one generator;
and the IDs made are checked: duplicates, order, and how far ahead of the clock they run.
The garbage collector is off while a figure is timed (as timeit does).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
import uuid
from importlib.metadata import PackageNotFoundError, version
from itertools import repeat
from typing import Any, Callable, Iterator, Optional

TWITTER_EPOCH_MS = 1288834974657
TWITTER_CEILING = 4_096_000.0
TWITTER_LAYOUT = "time 41 | datacenter 5 | worker 5 | sequence 12, 1 ms"
SONYFLAKE_EPOCH_MS = 1409529600000


def twitter_ms(i: int) -> int:
    return (i >> 22) + TWITTER_EPOCH_MS


def uuid_ms(i: int) -> int:
    return i >> 80


def sonyflake_ms(i: int) -> int:
    return (i >> 24) * 10 + SONYFLAKE_EPOCH_MS


class Peer:
    """One generator: how to call it once, what a user's loop calls, and its batch."""

    def __init__(
        self,
        key: str,
        name: str,
        library: str,
        config: str,
        layout: str,
        make: Callable[[], Any],
        *,
        one: Callable[[Any], Callable[[], Any]],
        user: Optional[Callable[[Any], Callable[[], Any]]] = None,
        batch: Optional[Callable[[Any, int], Any]] = None,
        batch_api: str = "[f() for _ in range(n)]",
        to_int: Callable[[Any], int] = int,
        ts: Optional[Callable[[int], int]] = twitter_ms,
        ceiling: Optional[float] = TWITTER_CEILING,
        tick_ms: int = 1,
        burst: int = 1000,
        batch_cap: Optional[int] = None,
        note: Optional[str] = None,
        threads_note: Optional[str] = None,
        flakery: bool = False,
    ) -> None:
        self.key, self.name, self.library, self.config, self.layout = key, name, library, config, layout
        self.make, self.one, self.user = make, one, user or one
        self.batch, self.batch_api = batch, batch_api
        self.to_int, self.ts, self.ceiling = to_int, ts, ceiling
        self.tick_ms, self.burst, self.batch_cap = tick_ms, burst, batch_cap
        self.note, self.threads_note, self.flakery = note, threads_note, flakery


def snowflake_id_user(g: Any) -> Callable[[], int]:
    """What a user of snowflake-id must write: next(gen) answers None when a ms runs out."""
    nxt = g.__next__

    def next_id() -> int:
        while True:
            v = nxt()
            if v is not None:
                return v

    return next_id


def peers(skipped: Optional[list[dict[str, str]]] = None) -> list[Peer]:
    """Every generator measured. A peer whose package is missing is left out and named in
    `skipped` (run.sh fails on that in CI)."""
    if skipped is None:
        skipped = []
    import flakery

    out = [
        Peer(
            "flakery-next_id", "flakery.next_id()", "flakery",
            "the process-wide generator (twitter, wait; node ID from the environment or a host-local lease); batch: flakery.next_ids(n)",
            TWITTER_LAYOUT, lambda: None,
            one=lambda _: flakery.next_id, batch=lambda _, n: flakery.next_ids(n),
            batch_api="flakery.next_ids(n)",
            note="wait: when a millisecond's 4,096 sequence numbers are used up it waits for the next",
            flakery=True,
        ),
        Peer(
            "flakery-borrow", "flakery Generator (borrow)", "flakery",
            "flakery.Generator(worker_id=1, sequence_policy='borrow', max_borrow_ms=86_400_000); batch: g.next_ids(n)",
            TWITTER_LAYOUT,
            lambda: flakery.Generator(worker_id=1, sequence_policy="borrow", max_borrow_ms=86_400_000),
            one=lambda g: g.next_id, batch=lambda g, n: g.next_ids(n), batch_api="g.next_ids(n)",
            note="borrow: takes the next millisecond's sequence numbers when one runs out, up to max_borrow_ms ahead of the clock",
            flakery=True,
        ),
    ]
    try:
        import uuid_utils

        out.append(Peer(
            "uuid_utils-uuid7", "uuid_utils.uuid7()", "uuid-utils", "uuid_utils.uuid7()",
            "UUIDv7, 128 bits: ms timestamp 48 | counter and random", lambda: None,
            one=lambda _: uuid_utils.uuid7, to_int=lambda u: u.int, ts=uuid_ms, ceiling=None,
            note="128-bit IDs (a Rust extension)",
        ))
    except ImportError as missing:
        skipped.append({"key": missing.name or str(missing), "reason": str(missing)})
    try:
        from snowflake import SnowflakeGenerator

        out.append(Peer(
            "snowflake-id", "snowflake-id", "snowflake-id",
            "SnowflakeGenerator(1, epoch=1288834974657); next(gen); a user's loop retries the None it answers when a ms runs out",
            "time 42 | instance 10 | sequence 12, 1 ms",
            lambda: SnowflakeGenerator(1, epoch=TWITTER_EPOCH_MS),
            one=lambda g: g.__next__, user=snowflake_id_user,
            note="pure Python; next(gen) returns None instead of waiting when a millisecond's sequence is used up",
            threads_note="not thread-safe (plain attributes, no lock)",
        ))
    except ImportError as missing:
        skipped.append({"key": missing.name or str(missing), "reason": str(missing)})
    try:
        import uuid6

        out.append(Peer(
            "uuid6-uuid7", "uuid6.uuid7()", "uuid6", "uuid6.uuid7()",
            "UUIDv7, 128 bits: ms timestamp 48 | counter and random", lambda: None,
            one=lambda _: uuid6.uuid7, to_int=lambda u: u.int, ts=uuid_ms, ceiling=None,
            note="pure Python; 128-bit IDs",
        ))
    except ImportError as missing:
        skipped.append({"key": missing.name or str(missing), "reason": str(missing)})
    try:
        from ulid import ULID

        out.append(Peer(
            "python-ulid", "python-ulid ULID()", "python-ulid", "ULID()",
            "ULID, 128 bits: ms timestamp 48 | random 80", lambda: None,
            one=lambda _: ULID, ts=uuid_ms, ceiling=None,
            note="pure Python; 128-bit IDs, random within a millisecond (not ordered there)",
        ))
    except ImportError as missing:
        skipped.append({"key": missing.name or str(missing), "reason": str(missing)})
    try:
        from sonyflake_turbo import SonyFlake

        out.append(Peer(
            "sonyflake-turbo", "sonyflake-turbo", "sonyflake-turbo",
            "SonyFlake(0x1337): next(sf); batch: sf(n)",
            "time 39 | machine 16 | sequence 8, 10 ms", lambda: SonyFlake(0x1337),
            one=lambda s: s.__next__, batch=lambda s, n: s(n), batch_api="sf(n)",
            ts=sonyflake_ms, ceiling=25_600.0, tick_ms=10, burst=200, batch_cap=25_600,
            note="10 ms ticks and an 8-bit sequence per machine ID: at most 25,600 IDs a second; bursts of 200 after a 10 ms boundary; the batch is 25,600 IDs (one second's worth), not 1,000,000 (39 s)",
            threads_note="12,800 IDs per thread: its layout makes 25,600 a second",
        ))
    except ImportError as missing:
        skipped.append({"key": missing.name or str(missing), "reason": str(missing)})
    out.append(Peer(
        "uuid4", "uuid.uuid4() (stdlib)", "python", "uuid.uuid4()",
        "UUIDv4, 128 bits: random 122", lambda: None,
        one=lambda _: uuid.uuid4, to_int=lambda u: u.int, ts=None, ceiling=None,
        note="random, not time-ordered; 128-bit IDs",
    ))
    return out


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def wait_for_tick(tick_ms: int) -> None:
    start = time.time_ns() // (1_000_000 * tick_ms)
    while time.time_ns() // (1_000_000 * tick_ms) == start:
        pass


def max_rss_bytes() -> int:
    """Peak RSS of this process's memory: VmHWM where Linux has it. Not ru_maxrss first: Linux
    carries that across execve from the process that forked, so a fresh child would start with
    its parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@contextlib.contextmanager
def gc_off() -> Iterator[None]:
    """No collection pauses inside a measurement."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def load_average() -> Optional[list[float]]:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def per_call(p: Peer, f: Callable[[], Any], rounds: int) -> dict[str, Any]:
    burst = p.burst
    for _ in range(3):  # warm up
        wait_for_tick(p.tick_ms)
        for _ in repeat(None, burst):
            f()
    ns = []
    clock = time.perf_counter_ns
    with gc_off():
        for _ in range(rounds):
            wait_for_tick(p.tick_ms)
            t0 = clock()
            for _ in repeat(None, burst):
                f()
            ns.append((clock() - t0) / burst)
    return {
        "ns": statistics.median(ns),
        "ns_min": min(ns),
        "ns_mean": statistics.fmean(ns),
        "calls": rounds * burst,
        "burst": burst,
        "tick_ms": p.tick_ms,
        "method": f"{rounds} bursts of {burst} calls, each started right after a {p.tick_ms} ms boundary; median of the bursts' ns per call (loop included)",
    }


def sustained(p: Peer, f: Callable[[], Any], seconds: float) -> dict[str, Any]:
    clock = time.perf_counter
    with gc_off():
        t0 = clock()
        end = t0 + seconds
        ids = 0
        while True:
            for _ in repeat(None, 1024):
                f()
            ids += 1024
            if clock() >= end:
                break
        dt = clock() - t0
        last = f()
    rate = ids / dt
    return {
        "seconds": dt,
        "ids": ids,
        "ids_per_s": rate,
        "ceiling_per_s": p.ceiling,
        "ceiling_ratio": rate / p.ceiling if p.ceiling else None,
        "not_increasing": None,
        "ahead_ms": p.ts(p.to_int(last)) - now_ms() if p.ts else None,
        "method": "a plain loop: for _ in repeat(None, 1024): f(), the clock read between runs of 1,024",
    }


def checks(p: Peer, ints: list[int], clock_after: int) -> dict[str, Any]:
    not_increasing = sum(1 for a, b in zip(ints, ints[1:]) if b <= a)
    return {
        "duplicates": len(ints) - len(set(ints)),
        "not_increasing": not_increasing,
        "ahead_ms": (max(p.ts(i) for i in ints) - clock_after) if (p.ts and ints) else None,
    }


def two_threads(p: Peer, per_thread: int) -> dict[str, Any]:
    g = p.make()
    f = p.user(g)
    runs: list[list[Any]] = [[], []]
    errors: list[str] = []

    def work(out: list[Any]) -> None:
        try:
            for _ in repeat(None, per_thread):
                out.append(f())
        except Exception as e:  # a peer that is not thread-safe may raise
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(r,)) for r in runs]
    with gc_off():
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
    after = now_ms()
    ints = [[p.to_int(i) for i in r] for r in runs]
    n = sum(len(r) for r in ints)
    whole = checks(p, ints[0] + ints[1], after)
    whole["not_increasing"] = sum(checks(p, r, after)["not_increasing"] for r in ints)
    return {
        "threads": 2,
        "per_thread": per_thread,
        "seconds": dt,
        "ns_per_id": dt * 1e9 / max(n, 1),
        "ids_per_s": n / dt,
        **whole,
        "errors": errors[:3],
        "note": "two threads share the GIL: at most one runs Python code at a time" + (f"; {p.threads_note}" if p.threads_note else ""),
    }


def child_batch(key: str, n: int, repeat_count: int) -> dict[str, Any]:
    """In a fresh process: one batch of the generator `key`, best of `repeat_count`."""
    p = next(p for p in peers() if p.key == key)
    if p.batch_cap:
        n = min(n, p.batch_cap)
    g = p.make()
    f = p.user(g)
    make = (lambda: p.batch(g, n)) if p.batch else (lambda: [f() for _ in range(n)])
    for _ in range(10):
        f()
    gc.collect()
    # The first batch gives the memory figure (one batch alive); the others only time.
    rss_before = max_rss_bytes()
    with gc_off():
        t0 = time.perf_counter()
        batch = make()
        best = time.perf_counter() - t0
        clock_after = now_ms()
        growth = max(0, max_rss_bytes() - rss_before)
        first = batch
        for _ in range(repeat_count - 1):
            batch = None
            t0 = time.perf_counter()
            batch = make()
            best = min(best, time.perf_counter() - t0)
        batch = first
    assert batch is not None and len(batch) == n, "a short batch"
    ints = [p.to_int(i) for i in batch]
    return {
        "n": n,
        "api": p.batch_api,
        "repeat": repeat_count,
        "ms": best * 1e3,
        "ns_per_id": best * 1e9 / n,
        "rss_growth_bytes": growth,
        "bytes_per_id": growth / n,
        "rss_note": "growth of a fresh process's peak RSS over its first batch (the list and its objects; the checks run on that batch)",
        **checks(p, ints, clock_after),
    }


def batch_in_child(key: str, n: int, repeat_count: int) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", key, "--n", str(n), "--repeat", str(repeat_count)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-2000:]}
    return json.loads(r.stdout)


def yardstick(n: int, rounds: int) -> dict[str, Any]:
    """The bar for next_ids: the same process, interleaved, best of `rounds` each."""
    import flakery

    g = flakery.Generator(worker_id=1, sequence_policy="borrow", max_borrow_ms=86_400_000)
    times: dict[str, list[float]] = {"next_ids": [], "range_1e18": [], "range_2e61": []}
    with gc_off():
        for _ in range(rounds):
            for name, fn in (
                ("next_ids", lambda: g.next_ids(n)),
                ("range_1e18", lambda: list(range(10**18, 10**18 + n))),
                ("range_2e61", lambda: list(range(2**61, 2**61 + n))),
            ):
                t0 = time.perf_counter()
                x = fn()
                times[name].append(time.perf_counter() - t0)
                del x
    best = {k: min(v) * 1e3 for k, v in times.items()}
    return {
        "n": n,
        "rounds": rounds,
        "next_ids_borrow_ms": best["next_ids"],
        "list_range_1e18_ms": best["range_1e18"],
        "list_range_2e61_ms": best["range_2e61"],
        "ratio": best["next_ids"] / best["range_1e18"],
        "method": "best of the rounds, interleaved in one process: g.next_ids(n) (borrow) against list(range(10**18, 10**18 + n)) and list(range(2**61, 2**61 + n))",
    }


def lib_version(name: str) -> str:
    if name == "python":
        return sys.version.split()[0]
    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child_batch(a.child, a.n, a.repeat)))
        return 0

    import flakery

    smoke = a.smoke
    rounds = 5 if smoke else 400
    seconds = 0.03 if smoke else 1.0
    n = 10_000 if smoke else 1_000_000
    batch_repeat = 1 if smoke else 3
    per_thread = 2_000 if smoke else 200_000
    load_before = load_average()
    started = time.time()
    result: dict[str, Any] = {
        "language": "python",
        "mode": "smoke" if smoke else "full",
        "python": sys.version.split()[0],
        "implementation": sys.implementation.name,
        "flakery_default_generator": repr(flakery.default_generator()),
        "load_before": load_before,
        "generators": [],
        "skipped": [],
    }
    for p in peers(result["skipped"]):
        print(f"--- {p.name}", file=sys.stderr, flush=True)
        g = p.make()
        entry: dict[str, Any] = {
            "key": p.key, "name": p.name, "library": p.library, "version": lib_version(p.library),
            "flakery": p.flakery, "config": p.config, "layout": p.layout,
            "ceiling_per_s": p.ceiling, "note": p.note,
        }
        entry["per_call"] = per_call(p, p.one(g), rounds if p.tick_ms == 1 else max(rounds // 4, 3))
        entry["sustained"] = sustained(p, p.user(p.make()), seconds)
        entry["batch"] = batch_in_child(p.key, n, batch_repeat)
        pt = min(per_thread, p.batch_cap // 2) if p.batch_cap else per_thread
        entry["threads"] = two_threads(p, pt)
        result["generators"].append(entry)
        gc.collect()
    # What the loop and a call of a C function with no arguments cost alone, measured the same
    # way: the floor under every per-call figure above (it is included in each of them).
    floor = Peer("floor", "(1).bit_length()", "python", "", "", lambda: None, one=lambda _: (1).bit_length, ts=None)
    result["call_floor"] = per_call(floor, floor.one(None), rounds)
    result["call_floor"]["what"] = "for _ in repeat(None, k): (1).bit_length() -- a loop calling a C method with no arguments that returns a cached int"
    print("--- next_ids against list(range(...))", file=sys.stderr, flush=True)
    result["next_ids_yardstick"] = yardstick(n, 1 if smoke else 7)
    result["load_after"] = load_average()
    result["seconds"] = time.time() - started
    text = json.dumps(result, indent=2)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

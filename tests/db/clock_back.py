#!/usr/bin/env python3
"""A restart with the clock really set back, against real servers (`faketime` on the client
only; the database keeps the true time).

usage: python3 tests/db/clock_back.py PATH/TO/flakery

For PostgreSQL and MariaDB (servers from dbserver.py), in a namespace of its own:
1. `flakery next -n 2000` leases the lowest node ID, issues, and gives the row back with its
   high-water mark at the last time it used;
2. the same under `faketime -f -0.9` (the clock 0.9 s behind, within the 1 s that is waited
   out): the same row, and every ID greater than every ID of the first run (it waits past
   the mark instead of reusing time);
3. under `faketime -f -10s`: refused with clock_moved_backwards (the local clock is compared
   with the database's at the lease: more than the 1 s waited out behind it), nothing on
   stdout, the password nowhere;
4. the mark alone: a run 0.9 s ahead (allowed beside the database's clock), then one 0.9 s
   behind, which the database's clock allows and which is 1.8 s behind the mark the first
   left, within the keeper's 6 s bound for a mark ahead: it waits past the mark and every ID
   is above the first's; then a run at the true time, 0.9 s behind the mark: it waits, every ID above the first's.
Exits non-zero with the reason on the first failed check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbserver  # noqa: E402


def fail(message: str) -> None:
    sys.stderr.write(f"clock_back: FAIL: {message}\n")
    sys.exit(1)


def flakery(cli: str, url: str, namespace: str, args: "list[str]",
            offset: "str | None" = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
    env.update(FLAKERY_DATABASE_URL=url, FLAKERY_NAMESPACE=namespace)
    command = [cli, *args]
    if offset is not None:
        command = ["faketime", "-f", offset, *command]
        # A real clock step moves CLOCK_REALTIME only. libfaketime also shifts CLOCK_MONOTONIC,
        # to the wall clock's value, and Rust's timed waits hand the kernel an absolute
        # monotonic deadline computed from it: decades away, so every timed wait never ends.
        env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def node_of(cli: str, ids: "list[int]") -> "set[tuple[int, int]]":
    done = subprocess.run([cli, "decode", "--json", *map(str, ids)], capture_output=True,
                          text=True, check=True)
    return {(d["datacenter_id"], d["worker_id"])
            for d in map(json.loads, done.stdout.splitlines())}


def check(cli: str, kind: str) -> None:
    with dbserver.start(kind) as db:
        namespace = f"sql2-clock-back-{kind}"
        first = flakery(cli, db.url, namespace, ["next", "-n", "2000"])
        if first.returncode != 0:
            fail(f"{kind}: the first run failed: {first.stderr.strip()}")
        used = [int(line) for line in first.stdout.split()]
        second = flakery(cli, db.url, namespace, ["next", "-n", "2000"], offset="-0.9")
        if second.returncode != 0:
            fail(f"{kind}: the run 0.9 s back failed: {second.stderr.strip()}")
        later = [int(line) for line in second.stdout.split()]
        if len(used) != 2000 or len(later) != 2000:
            fail(f"{kind}: {len(used)} and {len(later)} IDs, not 2000 each")
        nodes = node_of(cli, [used[0], used[-1], later[0], later[-1]])
        if len(nodes) != 1:
            fail(f"{kind}: not one node ID for both runs: {sorted(nodes)}")
        if min(later) <= max(used):
            fail(f"{kind}: the run 0.9 s back issued {min(later)}, not above the first "
                 f"run's {max(used)}: time reused")
        third = flakery(cli, db.url, namespace, ["next", "-n", "10"], offset="-10s")
        if third.returncode == 0 or third.stdout.strip():
            fail(f"{kind}: the run 10 s back issued {third.stdout.split()[:3]}")
        if "clock_moved_backwards" not in third.stderr:
            fail(f"{kind}: the run 10 s back failed otherwise: {third.stderr.strip()}")
        if db.password in third.stderr + second.stderr + first.stderr:
            fail(f"{kind}: the password was shown")
        ahead_ns = f"{namespace}-mark"
        ahead = flakery(cli, db.url, ahead_ns, ["next", "-n", "2000"], offset="+0.9")
        if ahead.returncode != 0:
            fail(f"{kind}: the run 0.9 s ahead failed: {ahead.stderr.strip()}")
        ahead_ids = [int(line) for line in ahead.stdout.split()]
        # 1.8 s behind the mark is within the keeper's bound for a mark ahead (6 s,
        # docs/keeper.md): it waits past the mark, then issues above the run ahead.
        behind = flakery(cli, db.url, ahead_ns, ["next", "-n", "10"], offset="-0.9")
        if behind.returncode != 0:
            fail(f"{kind}: 1.8 s behind the mark, failed: {behind.stderr.strip()}")
        behind_ids = [int(line) for line in behind.stdout.split()]
        if min(behind_ids) <= max(ahead_ids):
            fail(f"{kind}: 1.8 s behind the mark issued {min(behind_ids)}, not above the run "
                 f"ahead's {max(ahead_ids)}: time reused")
        true = flakery(cli, db.url, ahead_ns, ["next", "-n", "2000"])
        if true.returncode != 0:
            fail(f"{kind}: the run at the true time failed: {true.stderr.strip()}")
        true_ids = [int(line) for line in true.stdout.split()]
        if min(true_ids) <= max(ahead_ids):
            fail(f"{kind}: the run at the true time issued {min(true_ids)}, not above the run "
                 f"ahead's {max(ahead_ids)}: time reused")
        print(f"clock_back: {kind}: ok (node {nodes.pop()}; 0.9 s back: first ID "
              f"{min(later)} > {max(used)}; 10 s back: {third.stderr.strip()[:60]}...; "
              f"1.8 s behind the mark: waited, first ID {min(behind_ids)}; at the true time "
              f"after 0.9 s ahead: {min(true_ids)} > {max(ahead_ids)})")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if shutil.which("faketime") is None:
        fail("faketime is not installed (Debian's faketime)")
    for kind in dbserver.KINDS:
        check(os.path.abspath(sys.argv[1]), kind)


if __name__ == "__main__":
    main()

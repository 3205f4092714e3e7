"""The C ABI's figures (bench/c): a call through the C library in a plain loop and in bursts,
set against the core's own plain loop from the Rust run."""

from __future__ import annotations

from typing import Any, Optional

from .figures import by_key, get


def overhead_ns(r: dict[str, Any]) -> Optional[float]:
    """What a call through the C ABI adds to the core's, in a plain loop; None unmeasured."""
    c = r.get("c")
    core_tight = get(r.get("rust"), "core_tight_borrow", "ns")
    if c and c.get("tight_borrow") and core_tight is not None:
        return c["tight_borrow"]["ns"] - core_tight
    return None


def c_bar(r: dict[str, Any]) -> list[tuple[str, Optional[bool], str]]:
    c = r.get("c")
    d = overhead_ns(r)
    if d is not None:
        fb = get(by_key(r.get("rust") or {}).get("flakery-borrow"), "per_call", "ns")
        core_tight = get(r.get("rust"), "core_tight_borrow", "ns")
        return [(
            "C: a call through the C ABI ≤ 3 ns more than the core",
            d <= 3,
            f"{c['tight_borrow']['ns']:.2f} ns against {core_tight:.2f} ns in a plain loop (+{d:.2f} ns); in bursts {c['per_call']['ns']:.2f} ns against {fb if fb is not None else float('nan'):.2f} ns",
        )]
    reason = (c or {}).get("skipped") or "not measured"
    return [("C: a call through the C ABI ≤ 3 ns more than the core", None, reason)]

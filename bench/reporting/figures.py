"""Reading and formatting figures: shared by every source of figures and by the report."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Optional


def load(path: str) -> Optional[dict[str, Any]]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rust_versions(lock_path: str) -> dict[str, str]:
    versions: dict[str, str] = {}
    try:
        text = open(lock_path).read()
    except OSError:
        return versions
    for m in re.finditer(r'name = "([^"]+)"\nversion = "([^"]+)"', text):
        versions[m.group(1)] = m.group(2)
    return versions


def by_key(lang: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {g["key"]: g for g in lang.get("generators", [])}


def get(g: Optional[dict[str, Any]], *path: str) -> Optional[float]:
    cur: Any = g
    for p in path:
        if not isinstance(cur, dict) or cur.get(p) is None:
            return None
        cur = cur[p]
    return cur if isinstance(cur, (int, float)) else None


def fmt_ns(v: Optional[float]) -> str:
    if v is None:
        return "n/a"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def fmt_ratio(v: Optional[float]) -> str:
    if v is None or not math.isfinite(v):
        return ""
    return f"{v:.2f}×" if v < 10 else f"{v:.0f}×"


def fmt_rate(v: Optional[float]) -> str:
    if v is None:
        return "n/a"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    return f"{v / 1e3:.1f} k"


def ratio(peer: Optional[float], base: Optional[float]) -> Optional[float]:
    if peer is None or base is None or base <= 0:
        return None
    return peer / base


def times(peer: float, ours: float) -> str:
    """How flakery's time compares with a peer's, in words that stay true either way."""
    x, word = (peer / ours, "faster") if peer >= ours else (ours / peer, "slower")
    # Two decimals where the two are close (flakery and ferroid), one elsewhere.
    return f"{x:.2f}× {word} than" if x < 1.5 else f"{x:.1f}× {word} than"

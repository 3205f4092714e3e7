"""The headline figures of the docs (README.md, docs/index.md, docs/benchmarks.md): worded
here from the merged results, written into their `<!-- bench:NAME -->` blocks, and read back
by tests/docs/bench_figures.py."""

from __future__ import annotations

import math
import re
from typing import Any

from .c_abi import overhead_ns
from .figures import by_key, fmt_ns, fmt_rate, fmt_ratio, get, times
from .generators import RUST_PLAIN_CALL


def headline(r: dict[str, Any]) -> dict[str, str]:
    """The README's figures, from the merged results: `summary` (the opening sentence's) and
    `headline` (the "Fast where it counts" item). A language that was not measured says so."""
    rust = by_key(r.get("rust") or {})
    py = by_key(r.get("python") or {})
    node = by_key(r.get("node") or {})
    fb = get(rust.get(RUST_PLAIN_CALL), "per_call", "ns")
    pn = get(py.get("flakery-next_id"), "per_call", "ns")
    nn = get(node.get("flakery-nextId"), "per_call", "ns")
    ns = lambda v: f"{v:.0f} ns" if v is not None else "(not measured)"
    summary = f"about {ns(fb)} an ID in Rust, {ns(pn)} in Python, {ns(nn)} in Node"

    parts = []
    if fb is not None:
        peers = [(g["name"], get(g, "per_call", "ns")) for g in rust.values() if not g.get("flakery")]
        peers = [(n, v) for n, v in peers if v is not None]
        text = f"Rust {fb:.1f} ns a call"
        if peers:
            name, v = min(peers, key=lambda p: p[1])
            text += f", {times(v, fb)} the fastest Rust peer ({name.split(' (')[0]})"
        sn = get(rust.get("snowflaked"), "per_call", "ns")
        if sn is not None:
            text += f" and {times(sn, fb)} snowflaked"
        parts.append(text)
    else:
        parts.append("Rust not measured")
    if pn is not None:
        text = "Python `flakery.next_id()`"
        uu = get(py.get("uuid_utils-uuid7"), "per_call", "ns")
        sf = get(py.get("snowflake-id"), "per_call", "ns")
        cmp = []
        if uu is not None:
            cmp.append(f"{times(uu, pn)} `uuid_utils.uuid7()`")
        if sf is not None:
            cmp.append(f"{times(sf, pn)} `snowflake-id`")
        parts.append(f"{text} {pn:.1f} ns" + (", " + " and ".join(cmp) if cmp else ""))
    else:
        parts.append("Python not measured")
    if nn is not None:
        cmp = []
        sa = get(node.get("sapphire-snowflake"), "per_call", "ns")
        ns = get(node.get("nodejs-snowflake"), "per_call", "ns")
        if sa is not None:
            cmp.append(f"{times(sa, nn)} `@sapphire/snowflake` (which repeats IDs above 4,096 a millisecond)")
        if ns is not None:
            cmp.append(f"{times(ns, nn)} `nodejs-snowflake`")
        parts.append(f"Node `nextId()` {nn:.1f} ns" + (", " + " and ".join(cmp) if cmp else ""))
    else:
        parts.append("Node not measured")
    d = overhead_ns(r)
    if d is not None:
        parts.append(f"the C ABI adds {d:.1f} ns" if d >= 0 else f"the C ABI adds nothing ({d:.1f} ns)")
    return {"summary": summary, "headline": "; ".join(parts) + ".", "headline-table": headline_table(r)}


def headline_table(r: dict[str, Any]) -> str:
    """The "Headline" table of docs/benchmarks.md: flakery's figure per language and its
    nearest peers', from the same results as the tables below it."""
    rows = ["| | flakery | against |", "|---|---|---|"]

    def against(lang: dict[str, dict[str, Any]], ours: float, keys: list[tuple[str, str, str]]) -> str:
        out = []
        for key, label, note in keys:
            v = get(lang.get(key), "per_call", "ns")
            if v is not None:
                out.append(f"{label} {fmt_ns(v)} ns ({fmt_ratio(v / ours)}{note})")
        return ", ".join(out)

    rust = by_key(r.get("rust") or {})
    fb = get(rust.get(RUST_PLAIN_CALL), "per_call", "ns")
    if fb is not None:
        peers = sorted(
            ((g["key"], g["name"].split(" (")[0], "") for g in rust.values()
             if not g.get("flakery") and g["key"] in ("ferroid", "rs-snowflake", "snowflaked")),
            key=lambda k: get(rust.get(k[0]), "per_call", "ns") or math.inf,
        )
        rows.append(f"| Rust, per call | {fmt_ns(fb)} ns | {against(rust, fb, peers)} |")
    py = by_key(r.get("python") or {})
    pn = get(py.get("flakery-next_id"), "per_call", "ns")
    if pn is not None:
        keys = [("uuid_utils-uuid7", "uuid_utils", ""), ("snowflake-id", "snowflake-id", "")]
        rows.append(f"| Python, per call | {fmt_ns(pn)} ns (`flakery.next_id()`) | {against(py, pn, keys)} |")
    node = by_key(r.get("node") or {})
    nn = get(node.get("flakery-nextId"), "per_call", "ns")
    if nn is not None:
        keys = [("sapphire-snowflake", "@sapphire/snowflake", ", repeats IDs"), ("nodejs-snowflake", "nodejs-snowflake", "")]
        rows.append(f"| Node, per call | {fmt_ns(nn)} ns (`nextId()`) | {against(node, nn, keys)} |")
    java = by_key(r.get("java") or {})
    jn = get(java.get("flakery-nextId"), "per_call", "ns")
    if jn is not None:
        keys = [("cosid", "CosId", ""), ("tsid", "tsid-creator", "")]
        rows.append(f"| Java, per call | {fmt_ns(jn)} ns (`nextId()`) | {against(java, jn, keys)} |")
    d = overhead_ns(r)
    if d is not None:
        rows.append(f"| C ABI | {d:+.2f} ns over the core | |")
    w = rust.get("flakery-wait")
    rate, cr = get(w, "sustained", "ids_per_s"), get(w, "sustained", "ceiling_ratio")
    if rate is not None and cr is not None:
        rows.append(f"| Sustained, `wait`, twitter layout | {fmt_rate(rate)} IDs/s, {cr:.0%} of the layout's ceiling | |")
    return "\n".join(rows)


README_BLOCKS = ("summary", "headline")
# The blocks of figures in the docs, by file: README's sentence and list item, the same
# sentence on the site's first page, and the headline table of the benchmarks page.
DOC_BLOCKS = {
    "README.md": ("summary", "headline"),
    "docs/index.md": ("summary",),
    "docs/benchmarks.md": ("headline-table",),
}
TABLE_BLOCKS = ("headline-table",)


def readme_blocks(text: str) -> dict[str, str]:
    """The text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` for each block of
    figures in `text`: a paragraph's with its line breaks read as spaces, a table's as it is."""
    out = {}
    for name in (*README_BLOCKS, *TABLE_BLOCKS):
        m = re.search(rf"<!-- bench:{name} -->(.*?)<!-- /bench:{name} -->", text, re.S)
        if m:
            out[name] = m.group(1).strip() if name in TABLE_BLOCKS else " ".join(m.group(1).split())
    return out


def wrap(text: str, first: int, indent: str, width: int = 96) -> str:
    """`text` wrapped at `width` columns, its first line starting at column `first`."""
    lines, line, col = [], [], first
    for word in text.split():
        if line and col + 1 + len(word) > width:
            lines.append(" ".join(line))
            line, col = [], len(indent)
        col += len(word) + (1 if line else 0)
        line.append(word)
    lines.append(" ".join(line))
    return ("\n" + indent).join(lines)


def update_readme(text: str, figures: dict[str, str], names: tuple[str, ...] = README_BLOCKS) -> str:
    """`text` with each block `names` replaced by its figures: a paragraph's wrapped where the
    block starts, a table's on lines of its own."""
    for name in names:
        start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
        if start not in text or end not in text:
            raise ValueError(f"no {start} ... {end} block")
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        if name in TABLE_BLOCKS:
            # Blank lines around the table: a line that starts an HTML comment would otherwise
            # take the table into its HTML block.
            text = head + start + "\n\n" + figures[name] + "\n\n" + end + tail
            continue
        line_start = head.rfind("\n") + 1
        column = len(head) - line_start + len(start)
        indent = " " * (len(head[line_start:]) - len(head[line_start:].lstrip(" -")))
        text = head + start + wrap(figures[name], column, indent) + end + tail
    return text

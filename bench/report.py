"""Merges the per-language results of bench/run.sh, prints the table of ratios, checks the bar,
and draws the chart. Standard library only.

    python3 bench/report.py RAW_DIR OUT_DIR [--page docs/benchmarks.md] [--docs-root .]

RAW_DIR holds meta.json, rust.json, python.json, node.json and c.json (any may be missing);
OUT_DIR gets latest.json (everything, merged), table.md (the tables and the bar) and
chart.svg. With --page the block between `<!-- bench:results -->` and
`<!-- /bench:results -->` in that file is replaced by table.md; with --docs-root the headline
figures of README.md, docs/index.md and docs/benchmarks.md (the `<!-- bench:NAME -->` blocks of
DOC_BLOCKS) are written from the same results (`headline`; tests/docs/bench_figures.py checks
that they agree with bench/results/latest.json). Never fails on a timing.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any, Optional

# Per language, which flakery row each column is set against.
BASELINES = {
    "rust": {"per_call": "flakery-borrow", "sustained": "flakery-wait", "batch": "flakery-borrow", "threads": "flakery-borrow"},
    "python": {"per_call": "flakery-next_id", "sustained": "flakery-next_id", "batch": "flakery-borrow", "threads": "flakery-borrow"},
    "node": {"per_call": "flakery-nextId", "sustained": "flakery-nextId", "batch": "flakery-borrow", "threads": None},
}
TITLES = {"rust": "Rust", "python": "Python", "node": "Node"}


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


def checks_text(g: dict[str, Any]) -> str:
    notes = []
    for part, label in (("batch", "batch"), ("threads", "2 threads")):
        d = g.get(part)
        if not isinstance(d, dict):
            continue
        if d.get("error"):
            notes.append(f"{label}: error")
            continue
        if d.get("duplicates"):
            notes.append(f"**{d['duplicates']:,} duplicates** ({label})")
        if d.get("errors"):
            notes.append(f"{label}: raised {d['errors'][0][:40]}")
    ahead = max(
        (x for x in (get(g, "sustained", "ahead_ms"), get(g, "batch", "ahead_ms"), get(g, "threads", "ahead_ms")) if x is not None),
        default=None,
    )
    if ahead is not None and ahead > 1:
        notes.append(f"ran {ahead:,.0f} ms ahead of the clock")
    ni = get(g, "batch", "not_increasing")
    if ni:
        notes.append("not ordered" if g.get("layout", "").startswith(("UUIDv4", "ULID")) or ni > 1000 else f"{ni:,.0f} out of order")
    return "; ".join(notes) if notes else "unique, ordered"


def language_table(name: str, lang: dict[str, Any], rust_lock: dict[str, str]) -> list[str]:
    gens = by_key(lang)
    base = BASELINES[name]
    bk = {col: gens.get(key) if key else None for col, key in base.items()}
    lines = [
        f"**{TITLES[name]}**" + (f" ({lang['python']})" if name == "python" else f" ({lang['node']})" if name == "node" else ""),
        "",
        "| generator | per call, ns | ratio | sustained IDs/s (of ceiling) | ratio | batch of 1M, ms | ratio | batch memory, B/ID | 2 threads, ns/ID | ratio | checks |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for g in lang.get("generators", []):
        version = g.get("version") or rust_lock.get(g.get("library", ""), "")
        label = f"{g['name']} {version}".strip()
        pc = get(g, "per_call", "ns")
        rate = get(g, "sustained", "ids_per_s")
        cr = get(g, "sustained", "ceiling_ratio")
        b = g.get("batch") if isinstance(g.get("batch"), dict) else {}
        bn = get(g, "batch", "n")
        bms = get(g, "batch", "ms")
        bns = get(g, "batch", "ns_per_id")
        bmem = get(g, "batch", "bytes_per_id")
        th = get(g, "threads", "ns_per_id")
        batch_cell = "error" if b.get("error") else (fmt_ns(bms) if bn == 1_000_000 else (f"{fmt_ns(bms)} for {bn:,.0f}" if bms is not None else "n/a"))
        lines.append(
            "| " + " | ".join([
                label,
                fmt_ns(pc),
                fmt_ratio(ratio(pc, get(bk["per_call"], "per_call", "ns"))),
                (fmt_rate(rate) + (f" ({cr:.1%})" if cr is not None else "")),
                fmt_ratio(ratio(get(bk["sustained"], "sustained", "ids_per_s"), rate)),
                batch_cell,
                fmt_ratio(ratio(bns, get(bk["batch"], "batch", "ns_per_id"))),
                f"{bmem:.1f}" if bmem is not None else "n/a",
                fmt_ns(th) if g.get("threads") else "n/a",
                fmt_ratio(ratio(th, get(bk["threads"], "threads", "ns_per_id"))) if bk["threads"] else "",
                checks_text(g),
            ]) + " |"
        )
    floor = get(lang, "call_floor", "ns")
    if floor is not None:
        lines.append(f"\nEvery Python figure per call includes the loop and the call themselves: `{lang['call_floor']['what'].split(' -- ')[0]}` costs {floor:.1f} ns measured the same way.")
    if lang.get("skipped"):
        for s in lang["skipped"]:
            lines.append(f"\n*Skipped: {s['key']}: {s['reason']}*")
    lines.append("")
    return lines


def bar_checks(r: dict[str, Any]) -> list[tuple[str, Optional[bool], str]]:
    out: list[tuple[str, Optional[bool], str]] = []
    rust = by_key(r.get("rust") or {})
    py = by_key(r.get("python") or {})
    node = by_key(r.get("node") or {})

    fb = get(rust.get("flakery-borrow"), "per_call", "ns")
    if fb is not None:
        out.append(("Core: next_id() in borrow mode ≤ 15 ns", fb <= 15, f"{fb:.2f} ns per call"))
        peers = [(g["name"], get(g, "per_call", "ns")) for g in rust.values() if not g.get("flakery")]
        peers = [(n, v) for n, v in peers if v is not None]
        if peers:
            fastest = min(peers, key=lambda p: p[1])
            out.append((
                "Core: faster than every Rust peer's generator",
                all(fb < v for _, v in peers),
                f"flakery {fb:.2f} ns; fastest peer {fastest[0]} {fastest[1]:.2f} ns ({fastest[1] / fb:.2f}×)",
            ))
    else:
        out.append(("Core: next_id() in borrow mode ≤ 15 ns", None, "not measured"))
    fw = get(rust.get("flakery-wait"), "sustained", "ceiling_ratio")
    out.append((
        "Core: wait mode sustains ≥ 99% of 4,096,000 IDs/s",
        None if fw is None else fw >= 0.99,
        "not measured" if fw is None else f"{get(rust.get('flakery-wait'), 'sustained', 'ids_per_s'):,.0f} IDs/s, {fw:.2%}",
    ))

    pn = get(py.get("flakery-next_id"), "per_call", "ns")
    uu = get(py.get("uuid_utils-uuid7"), "per_call", "ns")
    sf = get(py.get("snowflake-id"), "per_call", "ns")
    floor = get(r.get("python"), "call_floor", "ns")
    net = ""
    if pn is not None and sf is not None and floor is not None and pn > floor:
        net = f"; less the {floor:.1f} ns that the loop and a bare call cost: {pn - floor:.1f} ns against {sf - floor:.1f} ns ({(sf - floor) / (pn - floor):.1f}×)"
    out.append((
        "Python: flakery.next_id() no slower than uuid_utils.uuid7()",
        None if pn is None or uu is None else pn <= uu,
        "not measured" if pn is None or uu is None else f"{pn:.1f} ns against {uu:.1f} ns ({uu / pn:.2f}×)",
    ))
    out.append((
        "Python: ≥ 10× faster than snowflake-id",
        None if pn is None or sf is None else sf >= 10 * pn,
        "not measured" if pn is None or sf is None else f"{pn:.1f} ns against {sf:.1f} ns ({sf / pn:.2f}×){net}",
    ))
    ps = get(py.get("flakery-next_id"), "sustained", "ceiling_ratio")
    out.append((
        "Python: a loop over next_id() sustains ≥ 99% of the ceiling",
        None if ps is None else ps >= 0.99,
        "not measured" if ps is None else f"{get(py.get('flakery-next_id'), 'sustained', 'ids_per_s'):,.0f} IDs/s, {ps:.2%}",
    ))
    y = (r.get("python") or {}).get("next_ids_yardstick")
    out.append((
        "Python: next_ids(1_000_000) borrow ≤ 1.5× list(range(10**18, 10**18 + 10**6))",
        None if not y else y["ratio"] <= 1.5,
        "not measured" if not y else f"{y['next_ids_borrow_ms']:.1f} ms against {y['list_range_1e18_ms']:.1f} ms ({y['ratio']:.2f}×; list(range(2**61, ...)): {y['list_range_2e61_ms']:.1f} ms)",
    ))

    nn = get(node.get("flakery-nextId"), "per_call", "ns")
    for key, name, times in (("sapphire-snowflake", "@sapphire/snowflake", 2), ("nodejs-snowflake", "nodejs-snowflake", 5)):
        v = get(node.get(key), "per_call", "ns")
        out.append((
            f"Node: nextId() ≥ {times}× faster than {name}",
            None if nn is None or v is None else v >= times * nn,
            "not measured (flakery for Node not built)" if nn is None else ("not measured" if v is None else f"{nn:.1f} ns against {v:.1f} ns ({v / nn:.2f}×)"),
        ))

    c = r.get("c")
    core_tight = get(r.get("rust"), "core_tight_borrow", "ns")
    if c and c.get("tight_borrow") and core_tight is not None:
        d = c["tight_borrow"]["ns"] - core_tight
        out.append((
            "C: a call through the C ABI ≤ 3 ns more than the core",
            d <= 3,
            f"{c['tight_borrow']['ns']:.2f} ns against {core_tight:.2f} ns in a plain loop (+{d:.2f} ns); in bursts {c['per_call']['ns']:.2f} ns against {fb if fb is not None else float('nan'):.2f} ns",
        ))
    else:
        reason = (c or {}).get("skipped") or "not measured"
        out.append(("C: a call through the C ABI ≤ 3 ns more than the core", None, reason))
    return out


def times(peer: float, ours: float) -> str:
    """How flakery's time compares with a peer's, in words that stay true either way."""
    x, word = (peer / ours, "faster") if peer >= ours else (ours / peer, "slower")
    # Two decimals where the two are close (flakery and ferroid), one elsewhere.
    return f"{x:.2f}× {word} than" if x < 1.5 else f"{x:.1f}× {word} than"


def headline(r: dict[str, Any]) -> dict[str, str]:
    """The README's figures, from the merged results: `summary` (the opening sentence's) and
    `headline` (the "Fast where it counts" item). A language that was not measured says so."""
    rust = by_key(r.get("rust") or {})
    py = by_key(r.get("python") or {})
    node = by_key(r.get("node") or {})
    fb = get(rust.get("flakery-borrow"), "per_call", "ns")
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
    c = r.get("c")
    core_tight = get(r.get("rust"), "core_tight_borrow", "ns")
    if c and c.get("tight_borrow") and core_tight is not None:
        d = c["tight_borrow"]["ns"] - core_tight
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
    fb = get(rust.get("flakery-borrow"), "per_call", "ns")
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
    c = r.get("c")
    core_tight = get(r.get("rust"), "core_tight_borrow", "ns")
    if c and c.get("tight_borrow") and core_tight is not None:
        rows.append(f"| C ABI | {c['tight_borrow']['ns'] - core_tight:+.2f} ns over the core | |")
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


def svg_chart(r: dict[str, Any]) -> str:
    """Per-call time of every generator, one panel per language, on a log scale."""
    panels = [(n, r[n]) for n in ("rust", "python", "node") if r.get(n) and r[n].get("generators")]
    row_h, label_w, plot_w, pad = 22, 250, 600, 14
    lo, hi = 1.0, 10_000.0
    height = 70 + sum(40 + row_h * len(p["generators"]) for _, p in panels)
    width = label_w + plot_w + 130
    x = lambda v: label_w + plot_w * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    meta = r.get("meta", {})
    sub = f"{meta.get('date', '')}, {meta.get('cpu', '')}, load average {meta.get('load_before', ['?'])[0]} before the run; orange: flakery; (N×): the peer's time over flakery's"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{pad}" y="24" font-size="16" font-weight="bold">Time per call, ns (log scale; bursts below each layout\'s ceiling; shorter is faster)</text>',
        f'<text x="{pad}" y="44" fill="#555">{esc(sub)}</text>',
    ]
    y0 = 70
    for name, lang in panels:
        gens = lang["generators"]
        base = get(by_key(lang).get(BASELINES[name]["per_call"]), "per_call", "ns")
        out.append(f'<text x="{pad}" y="{y0 + 14}" font-size="14" font-weight="bold">{TITLES[name]}</text>')
        top = y0 + 24
        bottom = top + row_h * len(gens)
        for t in (1, 10, 100, 1000, 10000):
            out.append(f'<line x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{bottom}" stroke="#ddd"/>')
            out.append(f'<text x="{x(t):.1f}" y="{top - 8}" fill="#777" font-size="10" text-anchor="middle">{t:,}</text>')
        for i, g in enumerate(gens):
            v = get(g, "per_call", "ns")
            yy = top + i * row_h
            color = "#e4572e" if g.get("flakery") else "#4c78a8"
            out.append(f'<text x="{label_w - 8}" y="{yy + 15}" text-anchor="end">{esc(g["name"])}</text>')
            if v is None:
                continue
            out.append(f'<rect x="{label_w}" y="{yy + 4}" width="{max(x(v) - label_w, 1):.1f}" height="{row_h - 8}" fill="{color}"/>')
            rt = ratio(v, base)
            tag = fmt_ns(v) + ("" if g.get("flakery") or rt is None else f"  ({fmt_ratio(rt)})")
            out.append(f'<text x="{x(v) + 6:.1f}" y="{yy + 15}" fill="#333">{esc(tag)}</text>')
        y0 = bottom + 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    raw, out_dir = argv[1], argv[2]
    page = argv[argv.index("--page") + 1] if "--page" in argv else None
    docs_root = argv[argv.index("--docs-root") + 1] if "--docs-root" in argv else None
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    r: dict[str, Any] = {"meta": load(os.path.join(raw, "meta.json")) or {}}
    for lang in ("rust", "python", "node", "c"):
        d = load(os.path.join(raw, f"{lang}.json"))
        if d is not None:
            r[lang] = d
    lock = rust_versions(os.path.join(root, "Cargo.lock"))
    if "rust" in r:
        for g in r["rust"]["generators"]:
            g.setdefault("version", lock.get(g["library"], "?"))
    bar = bar_checks(r)
    r["bar"] = [{"bar": b, "met": m, "figure": f} for b, m, f in bar]
    r["headline"] = headline(r)

    meta = r["meta"]
    md = [
        f"Run of {meta.get('date', '?')} ({meta.get('mode', '?')} mode), commit {meta.get('commit', '?')}: "
        f"{meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; load average {meta.get('load_before')} before, {meta.get('load_after')} after.",
        "",
        "Ratios are the peer's time over flakery's (sustained: flakery's IDs/s over the peer's), so above 1× "
        "means flakery is faster. Per call, each language is set against "
        "its plain call (Rust: the `borrow` generator; Python `flakery.next_id()`; Node `nextId()`); sustained against the "
        "`wait` generator; batch and threads against the `borrow` generator's `next_ids` / `next_id`.",
        "",
    ]
    for lang in ("rust", "python", "node"):
        if lang in r:
            md += language_table(lang, r[lang], lock)
        else:
            md += [f"**{TITLES[lang]}**: not run.", ""]
    md += ["<details markdown=\"1\"><summary>How each generator was configured</summary>", "",
           "| language | generator | configuration | layout | ceiling, IDs/s | note |", "|---|---|---|---|--:|---|"]
    for lang in ("rust", "python", "node"):
        for g in (r.get(lang) or {}).get("generators", []):
            ceiling = g.get("ceiling_per_s")
            md.append("| " + " | ".join([
                TITLES[lang], g["name"], f"`{g['config']}`".replace("|", "\\|"), g.get("layout", "").replace("|", "\\|"),
                f"{ceiling:,.0f}" if ceiling else "none", (g.get("note") or "").replace("|", "\\|"),
            ]) + " |")
    md += ["", "</details>", ""]
    md += ["**The bar**", "", "| bar | | figure |", "|---|---|---|"]
    for b, m, f in bar:
        md.append(f"| {b} | {'met' if m else 'missed' if m is False else 'not measured'} | {f} |")
    md.append("")
    table = "\n".join(md)

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "latest.json"), "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "chart.svg"), "w") as f:
        f.write(svg_chart(r))
    print(table)
    if page:
        text = open(page).read()
        start, end = "<!-- bench:results -->", "<!-- /bench:results -->"
        if start in text and end in text:
            head, rest = text.split(start, 1)
            _, tail = rest.split(end, 1)
            with open(page, "w") as f:
                f.write(head + start + "\n" + table + end + tail)
            # The page shows the chart beside the tables: a copy, since the site is built from docs/.
            with open(os.path.join(os.path.dirname(page), "benchmarks.svg"), "w") as f:
                f.write(svg_chart(r))
            print(f"(updated the results in {page})")
        else:
            print(f"(no {start} block in {page}: not updated)", file=sys.stderr)
    if docs_root:
        for name, blocks in DOC_BLOCKS.items():
            path = os.path.join(docs_root, name)
            try:
                updated = update_readme(open(path).read(), r["headline"], blocks)
            except (OSError, ValueError) as e:
                print(f"({path}: {e}: not updated)", file=sys.stderr)
                return 1
            with open(path, "w") as f:
                f.write(updated)
            print(f"(updated the headline figures in {path})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

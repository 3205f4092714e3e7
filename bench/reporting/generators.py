"""The Rust, Python and Node harnesses' figures (bench/rust, bench/python, bench/node): one
JSON per language with a `generators` list, each generator measured per call, sustained, in a
batch and on two threads, with its checks. Their tables and their part of the bar."""

from __future__ import annotations

from typing import Any, Optional

from .figures import by_key, fmt_ns, fmt_rate, fmt_ratio, get, ratio

LANGUAGES = ("rust", "python", "node")
# Rust's plain call: a generator as `Generator::builder().build()` makes it, with the default
# policy (`wait`), the policy of ferroid's atomic generator too (it spins when a millisecond is
# used up), and of Python's `flakery.next_id()` and Node's `nextId()`, the other languages'
# plain calls. Per call and in the bar it is the row flakery is judged by. The `borrow` row
# times the same hot path: bursts of 1,000 never use up a millisecond's 4,096, so no policy
# comes into play (each flakery row's `per_call.slow_path` counts 0 waits, 0 borrowed ticks),
# and the two rows differ by the run's noise alone; the bar prints both.
RUST_PLAIN_CALL = "flakery-wait"
# Per language, which flakery row each column is set against.
BASELINES = {
    "rust": {"per_call": RUST_PLAIN_CALL, "sustained": "flakery-wait", "batch": "flakery-borrow", "threads": "flakery-borrow"},
    "python": {"per_call": "flakery-next_id", "sustained": "flakery-next_id", "batch": "flakery-borrow", "threads": "flakery-borrow"},
    "node": {"per_call": "flakery-nextId", "sustained": "flakery-nextId", "batch": "flakery-borrow", "threads": None},
}
TITLES = {"rust": "Rust", "python": "Python", "node": "Node"}


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


def configuration_rows(r: dict[str, Any]) -> list[str]:
    """The rows of "How each generator was configured" for these languages."""
    rows = []
    for lang in LANGUAGES:
        for g in (r.get(lang) or {}).get("generators", []):
            ceiling = g.get("ceiling_per_s")
            rows.append("| " + " | ".join([
                TITLES[lang], g["name"], f"`{g['config']}`".replace("|", "\\|"), g.get("layout", "").replace("|", "\\|"),
                f"{ceiling:,.0f}" if ceiling else "none", (g.get("note") or "").replace("|", "\\|"),
            ]) + " |")
    return rows


Bar = list[tuple[str, Optional[bool], str]]


def rust_bar(r: dict[str, Any]) -> Bar:
    out: Bar = []
    rust = by_key(r.get("rust") or {})
    fb = get(rust.get("flakery-borrow"), "per_call", "ns")
    fp = get(rust.get(RUST_PLAIN_CALL), "per_call", "ns")
    if fb is not None:
        out.append(("Core: next_id() in borrow mode ≤ 15 ns", fb <= 15, f"{fb:.2f} ns per call"))
    else:
        out.append(("Core: next_id() in borrow mode ≤ 15 ns", None, "not measured"))
    peers = [(g["name"], get(g, "per_call", "ns")) for g in rust.values() if not g.get("flakery")]
    peers = [(n, v) for n, v in peers if v is not None]
    if fp is not None and peers:
        fastest = min(peers, key=lambda p: p[1])
        borrow = f"; borrow {fb:.2f} ns, the same hot path" if fb is not None else ""
        out.append((
            "Core: next_id() (the default, wait) faster than every Rust peer's generator",
            all(fp < v for _, v in peers),
            f"flakery {fp:.2f} ns (wait){borrow}; fastest peer {fastest[0]} {fastest[1]:.2f} ns ({fastest[1] / fp:.2f}×)",
        ))
    fw = get(rust.get("flakery-wait"), "sustained", "ceiling_ratio")
    out.append((
        "Core: wait mode sustains ≥ 99% of 4,096,000 IDs/s",
        None if fw is None else fw >= 0.99,
        "not measured" if fw is None else f"{get(rust.get('flakery-wait'), 'sustained', 'ids_per_s'):,.0f} IDs/s, {fw:.2%}",
    ))
    return out


def python_bar(r: dict[str, Any]) -> Bar:
    out: Bar = []
    py = by_key(r.get("python") or {})
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
    return out


def node_bar(r: dict[str, Any]) -> Bar:
    out: Bar = []
    node = by_key(r.get("node") or {})
    nn = get(node.get("flakery-nextId"), "per_call", "ns")
    for key, name, times in (("sapphire-snowflake", "@sapphire/snowflake", 2), ("nodejs-snowflake", "nodejs-snowflake", 5)):
        v = get(node.get(key), "per_call", "ns")
        out.append((
            f"Node: nextId() ≥ {times}× faster than {name}",
            None if nn is None or v is None else v >= times * nn,
            "not measured (flakery for Node not built)" if nn is None else ("not measured" if v is None else f"{nn:.1f} ns against {v:.1f} ns ({v / nn:.2f}×)"),
        ))
    return out

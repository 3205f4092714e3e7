"""The chart of bench/results/chart.svg (and docs/benchmarks.svg): time per call of every
generator, one panel per language, on a log scale."""

from __future__ import annotations

import math
from typing import Any

from .figures import by_key, fmt_ns, fmt_ratio, get, ratio
from .generators import BASELINES, TITLES

# The row each panel's ratios are set against: the other languages' per-call baseline, and
# Java's nextId() below the ceiling.
PANELS = {**{n: BASELINES[n]["per_call"] for n in BASELINES}, "java": "flakery-nextId"}
PANEL_TITLES = {**TITLES, "java": "Java (JMH)"}


def svg_chart(r: dict[str, Any]) -> str:
    """Per-call time of every generator, one panel per language, on a log scale."""
    panels = [(n, {**r[n], "generators": [g for g in r[n]["generators"] if n != "java" or get(g, "per_call", "ns") is not None]})
              for n in PANELS if r.get(n) and r[n].get("generators")]
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
        base = get(by_key(lang).get(PANELS[name]), "per_call", "ns")
        out.append(f'<text x="{pad}" y="{y0 + 14}" font-size="14" font-weight="bold">{PANEL_TITLES[name]}</text>')
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

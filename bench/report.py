"""Merges the per-language results of bench/run.sh, prints the table of ratios, checks the bar,
and draws the chart. Standard library only; the pieces are in bench/reporting/.

    python3 bench/report.py RAW_DIR OUT_DIR [--page docs/benchmarks.md] [--docs-root .]

RAW_DIR holds meta.json, rust.json, python.json, node.json, c.json and jmh.json (JMH's own
JSON of bench/java, `-rf json`); any may be missing. OUT_DIR gets latest.json (everything,
merged, Java's converted to the others' shape), table.md (the tables and the bar) and
chart.svg. With --page the block between `<!-- bench:results -->` and
`<!-- /bench:results -->` in that file is replaced by table.md; with --docs-root the headline
figures of README.md, docs/index.md and docs/benchmarks.md (the `<!-- bench:NAME -->` blocks of
DOC_BLOCKS) are written from the same results (`headline`; tests/docs/bench_figures.py checks
that they agree with bench/results/latest.json). Never fails on a timing; fails on a JMH file
it cannot read (reporting/jmh.py).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from reporting import c_abi, generators, jmh
from reporting.chart import svg_chart
from reporting.figures import load, rust_versions
from reporting.generators import LANGUAGES, TITLES, language_table

# What tests/docs/bench_figures.py reads: the one place the docs' figures are worded.
from reporting.headline import DOC_BLOCKS, headline, readme_blocks, update_readme  # noqa: F401


def bar_checks(r: dict[str, Any]) -> list[tuple[str, Any, str]]:
    return generators.rust_bar(r) + generators.python_bar(r) + generators.node_bar(r) + c_abi.c_bar(r) + jmh.java_bar(r)


def merge(raw: str, root: str) -> dict[str, Any]:
    """Every result in RAW_DIR, as latest.json holds them."""
    r: dict[str, Any] = {"meta": load(os.path.join(raw, "meta.json")) or {}}
    for lang in (*LANGUAGES, "c"):
        d = load(os.path.join(raw, f"{lang}.json"))
        if d is not None:
            r[lang] = d
    jmh_path = os.path.join(raw, "jmh.json")
    if os.path.exists(jmh_path):
        with open(jmh_path) as f:
            r["java"] = jmh.from_jmh(json.load(f), jmh.pom_versions(os.path.join(root, "bench/java/pom.xml")))
        # The JNI path's few benchmarks on Java 17 (bench/run.sh), beside Java 25's.
        jdk17_path = os.path.join(raw, "jmh17.json")
        if os.path.exists(jdk17_path):
            with open(jdk17_path) as f:
                r["java"]["jdk17"] = jmh.from_jmh(json.load(f), {})
        # Java 17's call again with the opt-in critical native (jmh.CRITICAL_FLAG).
        critical_path = os.path.join(raw, "jmh17crit.json")
        if os.path.exists(critical_path):
            with open(critical_path) as f:
                r["java"]["jdk17_critical"] = jmh.from_jmh(json.load(f), {})
    lock = rust_versions(os.path.join(root, "Cargo.lock"))
    if "rust" in r:
        for g in r["rust"]["generators"]:
            g.setdefault("version", lock.get(g["library"], "?"))
    return r


def table_md(r: dict[str, Any], bar: list[tuple[str, Any, str]], lock: dict[str, str]) -> str:
    meta = r["meta"]
    md = [
        f"Run of {meta.get('date', '?')} ({meta.get('mode', '?')} mode), commit {meta.get('commit', '?')}: "
        f"{meta.get('cpu', '?')}, {meta.get('cores', '?')} cores; load average {meta.get('load_before')} before, {meta.get('load_after')} after.",
        "",
        "Ratios are the peer's time over flakery's (sustained: flakery's IDs/s over the peer's), so above 1× "
        "means flakery is faster. Per call, each language is set against "
        "its plain call (Rust: the `wait` generator, the default; Python `flakery.next_id()`; Node `nextId()`); sustained against the "
        "`wait` generator; batch and threads against the `borrow` generator's `next_ids` / `next_id`.",
        "",
    ]
    for lang in LANGUAGES:
        if lang in r:
            md += language_table(lang, r[lang], lock)
        else:
            md += [f"**{TITLES[lang]}**: not run.", ""]
    if "java" in r:
        md += jmh.java_table(r["java"])
    md += ["<details markdown=\"1\"><summary>How each generator was configured</summary>", "",
           "| language | generator | configuration | layout | ceiling, IDs/s | note |", "|---|---|---|---|--:|---|"]
    md += generators.configuration_rows(r) + jmh.configuration_rows(r.get("java"))
    md += ["", "</details>", ""]
    md += ["**The bar**", "", "| bar | | figure |", "|---|---|---|"]
    for b, m, f in bar:
        md.append(f"| {b} | {'met' if m else 'missed' if m is False else 'not measured'} | {f} |")
    md.append("")
    return "\n".join(md)


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    raw, out_dir = argv[1], argv[2]
    page = argv[argv.index("--page") + 1] if "--page" in argv else None
    docs_root = argv[argv.index("--docs-root") + 1] if "--docs-root" in argv else None
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    try:
        r = merge(raw, root)
    except (ValueError, KeyError, TypeError) as e:
        print(f"FAIL: bench/report.py cannot read {raw}: {e}", file=sys.stderr)
        return 1
    bar = bar_checks(r)
    r["bar"] = [{"bar": b, "met": m, "figure": f} for b, m, f in bar]
    r["headline"] = headline(r)
    table = table_md(r, bar, rust_versions(os.path.join(root, "Cargo.lock")))

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

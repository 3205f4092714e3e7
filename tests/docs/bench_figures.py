"""The benchmark figures the docs show are the ones the last run wrote.

bench/run.sh --update-docs writes bench/results/{latest.json,table.md}, the results block of
docs/benchmarks.md (a copy of table.md) and the headline figures of README.md, docs/index.md
and docs/benchmarks.md (bench/report.py `headline`, from latest.json, into the blocks its
DOC_BLOCKS names). This checks that none of them was edited by hand or left behind: each
`<!-- bench:NAME -->` block is what `headline` makes of latest.json, and docs/benchmarks.md's
results block is table.md.

    python3 tests/docs/bench_figures.py [ROOT]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "bench"))
    import report  # bench/report.py: the one place the figures are worded

    results = json.loads((root / "bench/results/latest.json").read_text())
    failures = []

    want = report.headline(results)
    checks = 1
    for name, blocks in report.DOC_BLOCKS.items():
        got = report.readme_blocks((root / name).read_text())
        for block in blocks:
            checks += 1
            if got.get(block) != want[block]:
                failures.append(
                    f"{name}'s bench:{block} block is not what bench/results/latest.json gives "
                    f"(run bash bench/run.sh --update-docs, never edit it by hand):\n"
                    f"  {name}: {got.get(block)!r}\n  latest: {want[block]!r}"
                )

    page = (root / "docs/benchmarks.md").read_text()
    start, end = "<!-- bench:results -->", "<!-- /bench:results -->"
    block = page.split(start, 1)[1].split(end, 1)[0] if start in page and end in page else None
    table = (root / "bench/results/table.md").read_text()
    if block is None or block.strip() != table.strip():
        failures.append("docs/benchmarks.md's bench:results block is not bench/results/table.md")

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(f"bench figures: {checks - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

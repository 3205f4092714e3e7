"""The figures of a benchmark written into a page of the docs: the block between
`<!-- bench:NAME -->` and `<!-- /bench:NAME -->`."""

from __future__ import annotations

import sys


def write_block(path: str, name: str, text: str, what: str) -> None:
    """Replaces block `name` of the page at `path` with `text` (blank lines around it, so that
    a table is not taken into the comment's HTML block); says so, or that there is none."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    page = open(path).read()
    if start not in page or end not in page:
        print(f"(no {start} block in {path}: not updated)", file=sys.stderr)
        return
    head, rest = page.split(start, 1)
    with open(path, "w") as f:
        f.write(head + start + "\n\n" + text.strip("\n") + "\n\n" + end + rest.split(end, 1)[1])
    print(f"(updated {what} in {path})")

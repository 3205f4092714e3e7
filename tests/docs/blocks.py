"""The code blocks of the documentation: what each one is, and whether it is run.

Every fenced block in README.md and docs/*.md has a language. The rules (docs/development.md
says the same for writers):

- A block in a RUN language is executed by tests/docs/check_docs.py:
  `console` (each `$ ` line a shell command, the lines after it its output), `python` (with
  `>>>` prompts: a doctest; without: a script), `js` (an ES module when it has `import`, a
  CommonJS script when it has `require(`; never both), `c`, `cpp`, `java` (a whole program,
  one source file run against flakery's jar). A `rust` block is run by
  rustdoc and asserts instead of printing.
- A block in a SHOWN language (shell snippets, configuration, Go, TypeScript types, ...) is not
  run, so it must not claim output: no `$ ` prompt, no `>>>`, no Output block after it.
- An Output block is a fence whose info string is exactly `text title="Output"`, right after a
  run block (blank lines between are fine): the program's expected standard output.
- `<!-- doctest: skip -->` on the line before a run block leaves it unrun; it then must not
  claim output either.
- A `sql` block that uses the PostgreSQL extension (`CREATE EXTENSION flakery` or a
  `flakery.<function>(` call) needs a server with the extension, which tests/postgres/run.sh
  has and this runner has not: it carries `<!-- doctest: tests/postgres -->` on the line before
  it, and tests/postgres runs every block so marked (`python3 tests/docs/blocks.py
  --postgres-blocks DIR FILE.md...` writes them out). An unmarked one, or the mark on any other
  block, is an error here.

Expected output is compared line by line, exactly, except for these placeholders (IDs and
times differ on every run): `<id>` a non-negative decimal integer of up to 19 digits, `<int>`
any decimal integer, `<time>` an RFC 3339 time, `<...>` any text within one line.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

RUN = {"console", "python", "js", "c", "cpp", "rust", "java"}
SHOWN = {
    "sh", "bash", "shell", "toml", "text", "json", "go", "ts", "typescript", "ini", "yaml",
    "sql", "proto", "protobuf", "http", "cmake", "dockerfile", "systemd", "xml", "diff", "none",
    "ruby", "php", "csharp", "kotlin", "properties", "nginx", "promql",
}
OUTPUT_INFO = 'text title="Output"'
SKIP_MARK = "<!-- doctest: skip -->"
POSTGRES_MARK = "<!-- doctest: tests/postgres -->"
USES_EXTENSION = re.compile(r"\bEXTENSION\s+flakery\b|\bflakery\.\w+\s*\(", re.I)

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)(?P<info>.*)$")

PLACEHOLDERS = {
    "<id>": r"\d{1,19}",
    "<int>": r"-?\d+",
    "<time>": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
    "<...>": r"[^\n]*?",
}
_PLACEHOLDER = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    info: str
    text: str
    skip: bool = False
    postgres: bool = False  # run by tests/postgres/run.sh (POSTGRES_MARK)
    output: Block | None = None  # the Output block that follows, if any
    errors: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def parse(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, Output blocks attached to the block before."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, indent = m["fence"], m["info"].strip(), len(m["indent"])
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence[0] * len(fence)) and lines[i].strip().strip(fence[0]) == ""
        ):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1  # the closing fence
        lang = info.split()[0] if info else ""
        prev = _previous_nonblank(lines, start)
        blocks.append(
            Block(path, start + 1, lang, info, "\n".join(body) + "\n", skip=prev == SKIP_MARK,
                  postgres=prev == POSTGRES_MARK)
        )
    return _attach_outputs(blocks, lines)


def _previous_nonblank(lines: list[str], index: int) -> str:
    for j in range(index - 1, -1, -1):
        if lines[j].strip():
            return lines[j].strip()
    return ""


def _attach_outputs(blocks: list[Block], lines: list[str]) -> list[Block]:
    kept: list[Block] = []
    for block in blocks:
        if block.info == OUTPUT_INFO:
            before = kept[-1] if kept else None
            between = lines[before.line : block.line - 1] if before else []
            # `between` starts at the opening fence of `before`; only its body, closing fence
            # and blank lines may separate the two blocks.
            adjacent = before is not None and _only_block_and_blanks(before, between)
            if not adjacent or before is None or before.output is not None:
                block.errors.append("an Output block must follow the block it shows the output of")
                kept.append(block)
            else:
                before.output = block
            continue
        kept.append(block)
    for block in kept:
        check(block)
    return kept


def _only_block_and_blanks(before: Block, between: list[str]) -> bool:
    body_lines = before.text.count("\n") + 1  # body plus the closing fence
    return all(not line.strip() for line in between[body_lines:])


def check(block: Block) -> None:
    """The rules that need no running: a language, and no claimed output where none is run."""
    if block.errors:
        return
    if not block.lang:
        block.errors.append("a code block needs a language (```console, ```python, ```sh, ...)")
    elif block.lang not in RUN and block.lang not in SHOWN:
        block.errors.append(
            f"unknown language '{block.lang}': use a run language ({', '.join(sorted(RUN))}) "
            f"or add it to SHOWN in tests/docs/blocks.py if it is never run"
        )
    runs = block.lang in RUN and not block.skip
    claims = _claims_output(block)
    if not runs and claims:
        block.errors.append(f"this block is not run, so it must not show output ({claims})")
    if block.lang == "rust" and block.output is not None:
        block.errors.append("a rust block asserts instead of showing output")
    if block.lang == "python" and ">>> " in block.text and block.output is not None:
        block.errors.append("a doctest shows its output after its >>> lines, not in an Output block")
    if block.lang == "console" and block.output is not None:
        block.errors.append("a console block shows its output after its $ lines")
    if block.lang == "console" and not block.text.startswith("$ "):
        block.errors.append("a console block starts with a `$ ` command")
    if block.lang == "js" and _is_esm(block.text) and "require(" in block.text:
        block.errors.append("a js block is either an ES module (import) or CommonJS (require), not both")
    uses_extension = block.lang == "sql" and USES_EXTENSION.search(block.text) is not None
    if uses_extension and not block.postgres:
        block.errors.append(f"a sql block that uses the extension is run by tests/postgres/run.sh: put {POSTGRES_MARK} on the line before it")
    if block.postgres and not uses_extension:
        block.errors.append(f"{POSTGRES_MARK} marks a sql block that uses the extension (CREATE EXTENSION flakery, flakery.<function>(...))")


def _claims_output(block: Block) -> str:
    if block.output is not None:
        return "an Output block"
    if any(line.startswith("$ ") for line in block.text.splitlines()):
        return "a `$ ` prompt: use ```console"
    if any(line.startswith(">>> ") for line in block.text.splitlines()):
        return "a `>>>` prompt"
    return ""


def _is_esm(text: str) -> bool:
    return re.search(r"^\s*(import|export)\s", text, re.M) is not None


def is_esm(text: str) -> bool:
    return _is_esm(text)


def output_matches(want: str, got: str) -> bool:
    """`got` equals `want` line for line, placeholders standing for what varies."""
    want_lines = _normalise(want)
    got_lines = _normalise(got)
    if len(want_lines) != len(got_lines):
        return False
    return all(_line_pattern(w).fullmatch(g) is not None for w, g in zip(want_lines, got_lines))


def _normalise(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _line_pattern(line: str) -> re.Pattern[str]:
    parts: list[str] = []
    last = 0
    for m in _PLACEHOLDER.finditer(line):
        parts.append(re.escape(line[last : m.start()]))
        parts.append(PLACEHOLDERS[m.group(0)])
        last = m.end()
    parts.append(re.escape(line[last:]))
    return re.compile("".join(parts))


def write_postgres_blocks(out_dir: Path, files: list[str]) -> int:
    """Writes each block marked POSTGRES_MARK of `files` to OUT_DIR/N.sql, with its place in
    OUT_DIR/N.where, for tests/postgres/run.sh; refuses (exit 1) when a file breaks the rules."""
    out_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    for name in files:
        for block in parse(Path(name)):
            if block.lang == "sql" and block.errors:
                for error in block.errors:
                    print(f"{block.where}: {error}", file=sys.stderr)
                return 1
            if block.postgres:
                n += 1
                (out_dir / f"{n}.sql").write_text(block.text, encoding="utf-8")
                (out_dir / f"{n}.where").write_text(block.where + "\n", encoding="utf-8")
    print(f"{n} sql blocks marked {POSTGRES_MARK}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--postgres-blocks":
        sys.exit(write_postgres_blocks(Path(sys.argv[2]), sys.argv[3:]))
    print("usage: python3 tests/docs/blocks.py --postgres-blocks DIR FILE.md...", file=sys.stderr)
    sys.exit(2)

"""Runs every code block of the documentation that claims to run, and compares its output.

    python3 tests/docs/check_docs.py --cli BIN --python PY --node-root DIR --lib-dir DIR \
        --rlib FILE --deps DIR [--java-jar JAR] FILE.md...

The rules for blocks are in blocks.py (and docs/development.md). Closes with
"docs: N passed, M failed" and exits non-zero when anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blocks as B  # noqa: E402

TIMEOUT = 60
# How tests/postgres/run.sh takes the blocks marked <!-- doctest: tests/postgres -->.
POSTGRES_RUNNER = "tests/docs/blocks.py --postgres-blocks"
STATIC_LIBS = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]


class Runner:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.root = Path(args.root).resolve()
        bin_dir = work / "bin"
        bin_dir.mkdir()
        os.symlink(Path(args.cli).resolve(), bin_dir / "flakery")
        # A project that depends on flakery: node_modules/flakery is the repository root.
        (work / "node_modules").mkdir()
        os.symlink(Path(args.node_root).resolve(), work / "node_modules" / "flakery")
        # Every block starts from an environment with no FLAKERY_* variable: what a block
        # needs, it says itself.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("FLAKERY_")}
        self.env["PATH"] = f"{bin_dir}:{self.env.get('PATH', '')}"
        self.passed = 0
        self.failed = 0

    def fail(self, block: B.Block, why: str) -> None:
        self.failed += 1
        print(f"FAIL {block.where} ({block.lang}): {why}")

    def ok(self, block: B.Block, what: str) -> None:
        self.passed += 1
        print(f"ok   {block.where} ({what})")

    def run(self, argv: list[str], **kw) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, cwd=self.work, env=self.env, text=True, capture_output=True,
            timeout=TIMEOUT, **kw,
        )

    def expect(self, block: B.Block, what: str, proc: subprocess.CompletedProcess[str]) -> None:
        """A program's run: exit 0, nothing on stderr, and stdout as its Output block shows."""
        if proc.returncode != 0:
            self.fail(block, f"{what} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
            return
        if proc.stderr.strip():
            self.fail(block, f"{what} wrote to stderr:\n{proc.stderr}")
            return
        want = block.output.text if block.output else ""
        if not B.output_matches(want, proc.stdout):
            self.fail(block, f"{what}: output differs\n--- expected\n{want}--- got\n{proc.stdout}")
            return
        self.ok(block, what)

    # ---- the languages

    def console(self, block: B.Block) -> None:
        for command, want in console_commands(block.text):
            # stderr joins stdout, as a terminal shows both.
            proc = subprocess.run(["bash", "-c", command], cwd=self.work, env=self.env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
            # A command shown failing shows the CLI's error line; every other must succeed.
            shows_error = any(line.startswith("flakery: ") for line in want.splitlines())
            if (proc.returncode != 0) != shows_error:
                self.fail(block, f"$ {command}: exit {proc.returncode}"
                          f"{' (the block shows an error)' if shows_error else ''}\n{proc.stdout}")
                return
            if not B.output_matches(want, proc.stdout):
                self.fail(block, f"$ {command}: output differs\n--- expected\n{want}--- got\n{proc.stdout}")
                return
        self.ok(block, "console")

    def python_script(self, block: B.Block) -> None:
        script = self.work / "block.py"
        script.write_text(block.text)
        self.expect(block, "python script", self.run([self.args.python, str(script)]))

    def python_doctests(self, page: list[B.Block]) -> None:
        """The `>>>` blocks of one page run in order, in one namespace, like one session."""
        payload = self.work / "doctests.json"
        payload.write_text(json.dumps([{"where": b.where, "text": b.text} for b in page]))
        proc = self.run([self.args.python, str(Path(__file__).resolve()), "--python-worker", str(payload)])
        results = {}
        for line in proc.stdout.splitlines():
            if line.startswith("RESULT "):
                where, _, report = line[len("RESULT "):].partition(" ")
                results[where] = json.loads(report)
        for block in page:
            report = results.get(block.where)
            if report is None:
                self.fail(block, f"the doctest worker did not report it:\n{proc.stdout}{proc.stderr}")
            elif report:
                self.fail(block, "doctest:\n" + report)
            else:
                self.ok(block, "python doctest")

    def js(self, block: B.Block) -> None:
        kind = "mjs" if B.is_esm(block.text) else "cjs"
        script = self.work / f"block.{kind}"
        script.write_text(block.text)
        self.expect(block, f"node ({'ES module' if kind == 'mjs' else 'CommonJS'})",
                    self.run(["node", str(script)]))

    def c(self, block: B.Block) -> None:
        cpp = block.lang == "cpp"
        source = self.work / ("block.cpp" if cpp else "block.c")
        source.write_text(block.text)
        exe = self.work / "block"
        compiler = ["g++", "-std=c++17"] if cpp else ["cc", "-std=c11"]
        build = self.run(
            compiler + ["-Wall", "-Wextra", "-Werror", str(source), f"-I{self.root / 'include'}",
                        str(Path(self.args.lib_dir) / "libflakery.a"), *STATIC_LIBS, "-o", str(exe)]
        )
        if build.returncode != 0:
            self.fail(block, f"does not compile:\n{build.stdout}{build.stderr}")
            return
        self.expect(block, "C++ program" if cpp else "C program", self.run([str(exe)]))

    def java(self, block: B.Block) -> None:
        """A whole program, run as a single source file against the jar (Java 11's launcher)."""
        if not self.args.java_jar:
            self.fail(block, "a java block, and no --java-jar to run it against")
            return
        source = self.work / "Block.java"
        source.write_text(block.text)
        self.expect(block, "java (single source file)",
                    self.run(["java", "-cp", self.args.java_jar, str(source)]))

    def rust_page(self, path: Path, page: list[B.Block]) -> None:
        """rustdoc tests a Markdown file's rust blocks itself, each as its own program."""
        proc = self.run([
            "rustdoc", "--test", str(path.resolve()), "--edition", "2021",
            "--extern", f"flakery={self.args.rlib}", "-L", f"dependency={self.args.deps}",
        ])
        if proc.returncode != 0:
            for block in page:
                self.fail(block, f"rustdoc --test {path} failed:\n{proc.stdout}{proc.stderr}")
            return
        for block in page:
            self.ok(block, "rustdoc")


def guarded(runner: Runner, blocks: list[B.Block], run, *args) -> None:
    """Runs one check; a program that hangs fails its blocks instead of the whole run."""
    try:
        run(*args)
    except subprocess.TimeoutExpired as e:
        for block in blocks:
            runner.fail(block, f"{e.cmd[0]} did not finish within {TIMEOUT} s")


def console_commands(text: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs; a command ending in `\\` goes on on the next line."""
    pairs: list[tuple[str, list[str]]] = []
    continuing = False
    for line in text.splitlines():
        if continuing:
            pairs[-1] = (pairs[-1][0] + "\n" + line, pairs[-1][1])
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            pairs.append((line[2:], []))
            continuing = line.endswith("\\")
        else:
            pairs[-1][1].append(line)
    return [(command, "".join(out + "\n" for out in lines)) for command, lines in pairs]


def python_worker(payload: str) -> None:
    """Runs in the package's Python: doctests with the placeholders of blocks.py."""
    import doctest

    class Checker(doctest.OutputChecker):
        def check_output(self, want: str, got: str, optionflags: int) -> bool:
            return B.output_matches(want, got)

    globs: dict[str, object] = {"__name__": "__main__"}
    parser = doctest.DocTestParser()
    for item in json.loads(Path(payload).read_text()):
        test = parser.get_doctest(item["text"], globs, item["where"], item["where"], 0)
        out: list[str] = []
        runner = doctest.DocTestRunner(checker=Checker(), verbose=False)
        runner.run(test, out=out.append, clear_globs=False)
        globs = test.globs  # a DocTest runs in a copy: the next block goes on from this one
        print("RESULT", item["where"], json.dumps("".join(out)))


def main() -> int:
    global TIMEOUT
    if len(sys.argv) == 3 and sys.argv[1] == "--python-worker":
        python_worker(sys.argv[2])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=".")
    p.add_argument("--cli", required=True, help="the flakery binary")
    p.add_argument("--python", required=True, help="a python with flakery installed")
    p.add_argument("--node-root", required=True, help="the Node package (with its built addon)")
    p.add_argument("--lib-dir", required=True, help="where libflakery.a is")
    p.add_argument("--rlib", required=True, help="the core's .rlib, for rustdoc")
    p.add_argument("--deps", required=True, help="the directory of the core's dependencies")
    p.add_argument("--java-jar", default="", help="flakery's jar, for the java blocks")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds a program may run")
    p.add_argument("files", nargs="+")
    args = p.parse_args()
    TIMEOUT = args.timeout
    # Blocks run in a scratch directory: every path given is made absolute first (abspath, not
    # resolve: a virtual environment's python is a symlink that must stay one).
    for name in ("root", "cli", "python", "node_root", "lib_dir", "rlib", "deps"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if args.java_jar:
        args.java_jar = os.path.abspath(args.java_jar)

    work = Path(tempfile.mkdtemp(prefix="docs-doctest-"))
    try:
        runner = Runner(args, work)
        for name in args.files:
            path = Path(name)
            page = B.parse(path)
            for block in page:
                for error in block.errors:
                    runner.fail(block, error)
            good = [b for b in page if not b.errors and not b.skip]
            for block in good:
                if block.postgres:
                    # Accounted for here, run there: tests/postgres reads the marked blocks
                    # through blocks.py (write_postgres_blocks).
                    if POSTGRES_RUNNER in runner.root.joinpath("tests/postgres/run.sh").read_text():
                        runner.ok(block, "run by tests/postgres/run.sh")
                    else:
                        runner.fail(block, f"tests/postgres/run.sh does not run the marked blocks ({POSTGRES_RUNNER})")
            for block in good:
                if block.lang == "console":
                    guarded(runner, [block], runner.console, block)
                elif block.lang == "python" and ">>> " not in block.text:
                    guarded(runner, [block], runner.python_script, block)
                elif block.lang == "js":
                    guarded(runner, [block], runner.js, block)
                elif block.lang in ("c", "cpp"):
                    guarded(runner, [block], runner.c, block)
                elif block.lang == "java":
                    guarded(runner, [block], runner.java, block)
            doctests = [b for b in good if b.lang == "python" and ">>> " in b.text]
            if doctests:
                guarded(runner, doctests, runner.python_doctests, doctests)
            rust = [b for b in good if b.lang == "rust"]
            if rust:
                guarded(runner, rust, runner.rust_page, path, rust)
        print(f"docs: {runner.passed} passed, {runner.failed} failed")
        return 1 if runner.failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

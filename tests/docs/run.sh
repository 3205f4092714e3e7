#!/usr/bin/env bash
# The documentation: the mkdocs site built with --strict (a broken link, a page outside the
# nav, a bad anchor fail), then every code block of README.md and docs/*.md that claims output
# run and compared (tests/docs/check_docs.py; the rules are in docs/development.md).
#
# Runs after tests/python, tests/node and tests/c in tests/run.sh and reuses what they built:
# the package in target/python-venv, the addon at the root (npm ci), target/release/libflakery.a,
# and tier 1's debug CLI.
# Run alone, it builds what is missing the same way.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env # every block says what it configures
ensure_cargo
need python3
need node nodejs npm
need cc gcc libc6-dev
need g++ g++
need java openjdk-17-jdk-headless
need mvn maven
need strip binutils
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi
root="$PWD"
target="$(target_dir)"

echo "--- mkdocs build --strict"
docs_venv="$target/docs-venv"
if ! cmp -s docs/requirements.txt "$docs_venv/requirements.txt" 2>/dev/null; then
  rm -rf "$docs_venv"
  python3 -m venv "$docs_venv"
  quiet "$docs_venv/bin/pip" install --disable-pip-version-check -r docs/requirements.txt
  cp docs/requirements.txt "$docs_venv/requirements.txt"
fi
# Never --quiet: it drops the warnings before --strict counts them, and the build passes.
export NO_MKDOCS_2_WARNING=1
site="$(mktemp -d)"
quiet "$docs_venv/bin/mkdocs" build --strict --site-dir "$site/site"
check "mkdocs build --strict makes the site's pages" \
  test -f "$site/site/index.html" -a -f "$site/site/spec/index.html"
# The same build must fail on a broken link and on a page left out of the nav.
for breakage in "[broken](no-such-page.md)" "[broken](spec.md#no-such-anchor)" "page outside the nav"; do
  rm -rf "$site/copy" && mkdir "$site/copy" && cp -r mkdocs.yml docs "$site/copy/"
  if [ "$breakage" = "page outside the nav" ]; then
    echo "# Outside" >"$site/copy/docs/outside.md"
  else
    echo "$breakage" >>"$site/copy/docs/index.md"
  fi
  if (cd "$site/copy" && "$docs_venv/bin/mkdocs" build --strict --site-dir "$site/copy/site" >/dev/null 2>&1); then
    fail "mkdocs build --strict accepted a $breakage"
  else
    pass "mkdocs build --strict refuses a $breakage"
  fi
done
rm -rf "$site"

echo "--- what the blocks run against"
# One package a command: `-p flakery-c` alone is the very build tests/c, tests/go and
# tests/dist made (reused, not linked again); both together would unify their
# dependencies' features differently and build the core and the library once more.
cargo build --release --locked -q -p flakery-c
# The CLI as tier 1 builds it for its own tests (built already in tests/run.sh): `cargo build
# --release -p flakery-cli` compiled the server's graph once more for the release profile (135
# units: tokio, hyper, tonic, ...) and linked it, for output no block can tell
# apart. Taken by its hash-named file in target/debug/deps, which no other build replaces
# (a `-p flakery-cli` build, as an area run alone may make, replaces target/debug/flakery).
quiet cargo test --workspace --locked --test cli --no-run
cli="$(find "$target/debug/deps" -maxdepth 1 -type f -samefile "$target/debug/flakery" | head -n 1)"
[ -x "$cli" ] || { echo "FAIL: target/debug/flakery is no hard link into target/debug/deps" >&2; exit 1; }
rlib="$(cargo build --release --locked -q -p flakery --message-format=json \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "flakery" and "lib" in m["target"]["kind"]:
        print(next(f for f in m["filenames"] if f.endswith(".rlib")))')"
[ -n "$rlib" ] || { echo "FAIL: no rlib of the core" >&2; exit 1; }
py="${FLAKERY_PYTHON_VENV:-$target/python-venv}/bin/python"
if ! "$py" -c 'import flakery' >/dev/null 2>&1; then
  echo "(no package in ${py%/bin/python}: pip install . into it)"
  rm -rf "${py%/bin/python}"
  python3 -m venv "${py%/bin/python}"
  quiet "$py" -m pip install --disable-pip-version-check "$root"
fi
if ! node -e 'require("./index.js").nextIdString' >/dev/null 2>&1; then
  echo "(no addon at the root: npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi

# The java blocks run against the jar that tests/java built in this run (its JNI library is
# the release build of tests/dist, stripped); run alone, this builds it the same way.
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
java_jar="$root/java/target/flakery-$version.jar"
if ! built_this_run "$java_jar"; then
  echo "(no jar of this run: cargo build --release -p flakery-java, mvn package)"
  cargo build --release --locked -q -p flakery-java
  native="$root/java/target/native-resources/dev/flakery/native/linux-x86_64"
  mkdir -p "$native"
  strip --strip-debug -o "$native/libflakery_java.so" "$target/release/libflakery_java.so"
  (cd java && quiet mvn -q -B -Dstyle.color=never -DskipTests package)
fi

check_blocks() {
  python3 tests/docs/check_docs.py --root "$root" --cli "$cli" --python "$py" \
    --node-root "$root" --lib-dir "$target/release" --rlib "$rlib" --deps "$target/release/deps" --java-jar "$java_jar" "$@"
}

echo "--- the runner refuses each broken block of tests/docs/fixtures/bad.md"
fixture=tests/docs/fixtures/bad.md
expected="docs: 0 passed, $(python3 -c 'import sys; sys.path.insert(0, "tests/docs"); import blocks
print(len(blocks.parse(__import__("pathlib").Path(sys.argv[1]))))' "$fixture") failed"
got="$(check_blocks --timeout 5 "$fixture" | tail -n 1 || true)"
if [ "$got" = "$expected" ]; then
  pass "the runner refuses every block of $fixture"
else
  check_blocks --timeout 5 "$fixture" || true
  fail "on $fixture the runner said '$got', not '$expected'"
fi

echo "--- the benchmark figures of README.md and docs/benchmarks.md are the last run's"
python3 tests/docs/bench_figures.py "$root"

echo "--- the code blocks of README.md and docs/"
tally "the code blocks of README.md and docs/" check_blocks README.md docs/*.md
finish docs

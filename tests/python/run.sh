#!/usr/bin/env bash
# The Python package, tested as a user gets it: installed into a fresh virtual environment,
# then pytest, mypy --strict on a usage example, and stubtest, all against the installed
# package (never the source tree); then the sdist, built and installed on its own.
# In tests/run.sh the package is the release wheel tests/dist built earlier in the same run
# (dist/build.sh: built once, installed here, by tests/docs and by the users); run alone,
# this area builds it with `pip install .` of the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env # the tests choose their own node IDs; the default generator leases
# This machine and CI are containers, where the implicit host-local lease is refused: the
# default generator leases from a directory of the tests' own.
export FLAKERY_LEASE_DIR="$(target_dir)/python-test/leases"
mkdir -p "$FLAKERY_LEASE_DIR"
ensure_cargo
need python3
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi

root="$PWD"
target="$(target_dir)"
venv="${FLAKERY_PYTHON_VENV:-$root/target/python-venv}"
rm -rf "$venv"
python3 -m venv "$venv"
py="$venv/bin/python"

echo "python: $("$py" --version)"
# tests/python/test_zookeeper.py runs against a real ZooKeeper (Debian's package).
bash "$root/tests/zookeeper/install.sh" || skip_or_fail "cannot install ZooKeeper"
# tests/python/test_database.py runs against a real PostgreSQL (Debian's package).
bash "$root/tests/db/install.sh" || skip_or_fail "cannot install PostgreSQL and MariaDB"
quiet "$py" -m pip install --disable-pip-version-check -q pytest mypy
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml")"
wheel="$(ls "$root"/dist/python/flakery-"$version"-*manylinux*.whl 2>/dev/null | head -n 1 || true)"
if [ -n "$wheel" ] && built_this_run "$wheel"; then
  echo "installing the wheel tests/dist built in this run: ${wheel#"$root"/}"
  quiet "$py" -m pip install --disable-pip-version-check --no-index "$wheel"
else
  echo "building and installing the package (pip install .) ..."
  quiet "$py" -m pip install --disable-pip-version-check -v "$root"
fi

# The tests must exercise the installed package: run from elsewhere and check where it is.
cd "$(mktemp -d)"
location="$("$py" -c 'import flakery; print(flakery.__file__)')"
case "$location" in
  "$venv"/*/site-packages/flakery/__init__.py) echo "flakery: $location" ;;
  *) echo "FAIL: import flakery resolves to $location, not the venv's site-packages" >&2; exit 1 ;;
esac

check "pytest tests/python" pytest_run "$py" "$root/tests/python"

echo "mypy --strict on tests/python/typecheck_example.py"
check "mypy --strict tests/python/typecheck_example.py" \
  "$py" -m mypy --strict --no-incremental "$root/tests/python/typecheck_example.py"
echo "stubtest"
check "stubtest" "$py" -m mypy.stubtest flakery --allowlist "$root/tests/python/stubtest-allowlist.txt"
# The sdist must build on its own too: it holds only the crates the package needs. Its
# build shares the cargo target directory: the registry crates compiled by the earlier
# release builds serve it, the crates of the sdist (another path) compile from its sources.
echo "sdist: build it (or take tests/dist's), pip install it into a second environment"
dist="$(mktemp -d)"
sdist="$root/dist/python/flakery-$version.tar.gz"
if built_this_run "$sdist"; then
  cp "$sdist" "$dist/"
else
  quiet "$py" -m pip install --disable-pip-version-check -q "maturin>=1.9.4,<2"
  quiet "$venv/bin/maturin" sdist --manifest-path "$root/bindings-python/Cargo.toml" -o "$dist"
fi
python3 -m venv "$dist/venv"
quiet env CARGO_TARGET_DIR="$target" "$dist/venv/bin/python" -m pip install \
  --disable-pip-version-check "$dist"/flakery-*.tar.gz
check "the sdist builds and installs on its own" "$dist/venv/bin/python" -c \
  'import flakery; assert flakery.decode(175928847299117063, "discord").sequence == 7; flakery.next_id()'
rm -rf "$dist"
finish python

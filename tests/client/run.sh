#!/usr/bin/env bash
# flakery-client against real `flakery serve` instances on loopback ports (started by
# tests/server's harness): many client processes and threads while servers are killed, paused
# with SIGSTOP and restarted; fork; bad tokens; a fake server that answers garbage; every
# server down; servers whose node IDs are leased from a real ZooKeeper (tests/zookeeper's
# harness) losing their leases. Every ID any client was handed is counted for duplicates. The
# Client of each binding too: C, Go and Node (test_bindings.py), Python (test_python_client.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
unset FLAKERY_SERVER_TOKEN FLAKERY_SERVERS FLAKERY_LISTEN
ensure_cargo
need python3
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi
bash tests/zookeeper/install.sh || skip_or_fail "Debian's zookeeper package could not be installed"

echo "--- unit tests of flakery-client"
check "cargo test -p flakery-client" quiet cargo test -q --locked -p flakery-client

# The CLI as tests/server builds it (the same command: cargo finds it fresh and leaves it).
echo "building flakery (cargo test --workspace --test cli --no-run) and the client's hammer ..."
quiet cargo test -q --workspace --locked --test cli --no-run
quiet cargo build -q --locked -p flakery-client --example hammer
# The client's and the core's rlibs, for the quick start of docs/client.md: those in deps/,
# named by their hash (a build of another lane may replace the copy at the top of target/).
rlibs="$(cargo build --locked -q -p flakery-client --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] in ("flakery", "flakery_client"):
        meta = next(f for f in m["filenames"] if f.endswith(".rmeta"))
        print(m["target"]["name"], meta[: -len(".rmeta")] + ".rlib")')"
export FLAKERY_CORE_RLIB="$(awk '$1 == "flakery" { print $2 }' <<<"$rlibs")"
export FLAKERY_CLIENT_RLIB="$(awk '$1 == "flakery_client" { print $2 }' <<<"$rlibs")"
export FLAKERY_DEPS="$(target_dir)/debug/deps"
export FLAKERY_BIN="$(target_dir)/debug/flakery"
export FLAKERY_HAMMER="$(target_dir)/debug/examples/hammer"

# The Client of the C, Go and Node bindings (tests/client/test_bindings.py).
source tests/client/bindings.sh

venv="$(target_dir)/client-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q pytest kazoo

# The Python package, for flakery.Client (tests/client/test_python_client.py): the wheel
# tests/dist built in this run, as tests/python installs it; else (this area run alone) a
# debug build of bindings-python, as the other bindings here are debug builds.
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
wheel="$(ls dist/python/flakery-"$version"-*manylinux*.whl 2>/dev/null | head -n 1 || true)"
if [ -n "$wheel" ] && built_this_run "$wheel"; then
  echo "--- the Python package: the wheel tests/dist built in this run, ${wheel}"
  quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-index \
    --force-reinstall "$wheel"
else
  echo "--- the Python package: maturin develop (a debug build of bindings-python)"
  quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q "maturin>=1.9.4,<2"
  quiet env VIRTUAL_ENV="$venv" "$venv/bin/maturin" develop --locked \
    --manifest-path bindings-python/Cargo.toml
fi

check "pytest tests/client" pytest_run "$venv/bin/python" tests/client
finish client

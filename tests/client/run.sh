#!/usr/bin/env bash
# flakery-client against real `flakery serve` instances on loopback ports (started by
# tests/server's harness): many client processes and threads while servers are killed, paused
# with SIGSTOP and restarted; fork; bad tokens; a fake server that answers garbage; every
# server down; servers whose node IDs are leased from a real ZooKeeper (tests/zookeeper's
# harness) losing their leases, or ZooKeeper itself stalled. Every ID any client was handed is
# counted for duplicates. The Client of each binding too: C, Go and Node (test_bindings.py),
# Python (test_python_client.py); a fallback on a server's node ID and close() on each
# (test_fallback_surfaces.py). Over TLS (test_tls.py): every surface takes IDs from two
# `flakery serve --tls-cert` servers, one killed midway; each TLS failure has its code; a
# token over http:// to a host that is not loopback is refused on every surface.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
unset FLAKERY_SERVER_TOKEN FLAKERY_SERVERS FLAKERY_LISTEN
ensure_cargo
need python3
# test_tls.py's certificates: tests/tls_certs.py runs openssl.
need openssl openssl
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi
bash tests/zookeeper/install.sh || skip_or_fail "Debian's zookeeper package could not be installed"

# The client's own tests (unit and tests/*.rs) run in tests/rust's `cargo test --workspace`.
# What this area uses is what that command builds (the same command: cargo finds it fresh and
# leaves it): the CLI, the client's hammer example (cargo test builds examples), and the
# client's and the core's rlibs for the quick start of docs/client.md, taken from deps/ by
# their hash (a build of another lane may replace the copies at the top of target/). A `-p
# flakery-client` build would unify features anew and compile much of the graph again.
echo "building flakery, the client's hammer and rlibs (cargo test --workspace --no-run) ..."
artifacts="$(cargo test --workspace --locked --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or m["profile"]["test"]:
        continue
    name, kind = m["target"]["name"], m["target"]["kind"]
    if name in ("flakery", "flakery_client") and "lib" in kind:
        meta = next(f for f in m["filenames"] if f.endswith(".rmeta"))
        print(name, meta[: -len(".rmeta")] + ".rlib")
    elif name == "hammer" and "example" in kind:
        print(name, m["executable"])')"
artifact() { awk -v n="$1" '$1 == n { print $2; exit }' <<<"$artifacts"; }
export FLAKERY_CORE_RLIB="$(artifact flakery)"
export FLAKERY_CLIENT_RLIB="$(artifact flakery_client)"
export FLAKERY_HAMMER="$(artifact hammer)"
for built in "$FLAKERY_CORE_RLIB" "$FLAKERY_CLIENT_RLIB" "$FLAKERY_HAMMER"; do
  [ -f "$built" ] || { echo "FAIL: cargo test --workspace --no-run: missing '$built' ($artifacts)" >&2; exit 1; }
done
export FLAKERY_DEPS="$(target_dir)/debug/deps"
export FLAKERY_BIN="$(target_dir)/debug/flakery"

# The Client of the C, Go and Node bindings (tests/client/test_bindings.py).
source tests/client/bindings.sh
# The C program of tests/client/test_fallback_surfaces.py, built as client.c is.
export FLAKERY_CLIENT_FALLBACK_C_TEST="$bindings_work/fallback-c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  tests/client/fallback.c -o "$FLAKERY_CLIENT_FALLBACK_C_TEST" \
  $(PKG_CONFIG_PATH="$FLAKERY_CLIENT_GO_PKG_CONFIG" pkg-config --cflags --libs --static flakery-static)

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

#!/usr/bin/env bash
# `flakery serve` tested as a black box: the real binary started on loopback ports by pytest
# (tests/server/*.py), with real HTTP/1.1, HTTP/2 and gRPC clients (plain, and over TLS with
# the certificates tests/tls_certs.py makes with openssl; haproxy passing or ending TLS),
# Prometheus's own text parser, a real ZooKeeper (paused to lose the lease), SIGTERM under load,
# slowloris clients and connection floods. A unit file for systemd is checked with
# `systemd-analyze verify`.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env
unset FLAKERY_SERVER_TOKEN FLAKERY_LISTEN
ensure_cargo
need python3
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"
need systemd-analyze systemd
need haproxy haproxy
need openssl openssl
need prometheus prometheus
need promtool prometheus

# The CLI as tests/rust builds it for its own CLI tests (target/debug/flakery: built already in
# tests/run.sh; `cargo build -p flakery-cli` unifies features anew and builds most of the
# dependency graph a second time).
echo "building flakery (cargo test --workspace --test cli --no-run) ..."
quiet cargo test -q --workspace --locked --test cli --no-run
export FLAKERY_BIN="$(target_dir)/debug/flakery"

venv="$(target_dir)/server-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
quiet "$venv/bin/python" -m pip install --disable-pip-version-check -q \
  pytest prometheus_client grpcio grpcio-tools grpcio-health-checking kazoo h2

echo "--- systemd unit of docs/server.md"
check "the systemd unit of docs/server.md" bash tests/server/check_unit.sh

check "pytest tests/server" pytest_run "$venv/bin/python" tests/server
finish server

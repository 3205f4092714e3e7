#!/usr/bin/env bash
# Database leases against real servers: installs Debian's postgresql and mariadb-server when
# missing, then runs core/tests/database*.rs, whose tests start throw-away servers with
# tests/db/dbserver.py on 127.0.0.1 (temporary data, stopped by PID). The test
# binary needs the core's `database-tests` feature, so the workspace's plain `cargo test`
# (tests/rust) does not run it. In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
need python3
need openssl openssl
unset_flakery_env
bash tests/db/install.sh || skip_or_fail "Debian's postgresql / mariadb-server could not be installed"
cargo clippy -p flakery --features database-tests --tests --locked -- -D warnings
cargo test -p flakery --features database-tests --test database --test database_tls --locked

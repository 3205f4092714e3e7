#!/usr/bin/env bash
# Database leases against real servers: installs Debian's postgresql and mariadb-server when
# missing, then runs coordinators/sql/tests/database*.rs, whose tests start throw-away servers with
# tests/db/dbserver.py on 127.0.0.1 (temporary data, stopped by PID), and
# tests/db/clock_back.py (the CLI under faketime). The test
# binaries need flakery-sql's `system-tests` feature, so the workspace's plain `cargo test`
# (tests/rust) does not run it. In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
need python3
need openssl openssl
need faketime faketime
unset_flakery_env
bash tests/db/install.sh || skip_or_fail "Debian's postgresql / mariadb-server could not be installed"
cargo clippy -p flakery-sql --features system-tests --tests --locked -- -D warnings
cargo test -p flakery-sql --features system-tests --locked
# The clock really set back (faketime, on the CLI only) between two runs on one row.
cargo build -p flakery-cli --locked
python3 tests/db/clock_back.py "$(target_dir)/debug/flakery"

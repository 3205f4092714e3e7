#!/usr/bin/env bash
# Database leases against real servers: installs Debian's postgresql and mariadb-server when
# missing, then runs the Rust database tests (the `system-tests` feature of flakery-sql; the
# workspace's plain `cargo test` does not run them), whose tests start throw-away servers
# with tests/db/dbserver.py on 127.0.0.1 (temporary data, stopped by PID), and
# tests/db/clock_back.py (the CLI under faketime). Linted with the rest in tests/rust.
# In CI (CI=true) nothing may skip.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
need python3
need openssl openssl
need faketime faketime
unset_flakery_env
bash tests/db/install.sh || skip_or_fail "Debian's postgresql / mariadb-server could not be installed"
# The CLI as tests/rust builds it for its own CLI tests (target/debug/flakery: built already
# in tests/run.sh; `cargo build -p flakery-cli` unifies features anew and builds most of the
# dependency graph a second time): database/census.rs runs `flakery doctor --json`, and
# clock_back.py below runs it too.
cargo test --workspace --locked --test cli --no-run
# Its test binaries side by side: each spends its time waiting on the servers it starts
# (database 83 s, database_contention 99 s, database_datacenter 89 s, database_tls 44 s one
# after another in a quiet run).
# With `--workspace`, as tests/rust's `cargo test --workspace`, and the four test targets by
# name: the dependencies' features unify alike, so only flakery-sql (with its feature) and its
# tests are built; `-p flakery-sql` unified them anew and compiled much of the graph again. Its
# unit and doc tests need no server and run in tests/rust.
cargo_tests_side_by_side --workspace --features flakery-sql/system-tests --locked \
  --test database --test database_contention --test database_datacenter --test database_tls
# The clock really set back (faketime, on the CLI only) between two runs on one row.
check "clock_back.py (the CLI under faketime)" python3 tests/db/clock_back.py "$(target_dir)/debug/flakery"
finish db

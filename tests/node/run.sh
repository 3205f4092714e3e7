#!/usr/bin/env bash
# Node: install the package as a fresh clone would (npm ci installs the build tools and its
# install script builds the addon with cargo), then the node:test suite, then the TypeScript
# check of a usage example against index.d.ts.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
unset_flakery_env # the tests choose their own node IDs; the default generator leases
# This machine and CI are containers, where the implicit host-local lease is refused: the
# default generator leases from a directory of the tests' own.
export FLAKERY_LEASE_DIR="$(target_dir)/node-test/leases"
mkdir -p "$FLAKERY_LEASE_DIR"

need node nodejs npm
need npm nodejs npm
node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' \
  || skip_or_fail "node $(node --version) is older than 18"
ensure_cargo

echo "--- npm ci (installs @napi-rs/cli and typescript; the install script builds the addon)"
# package.json pins three of @napi-rs/cli's dependencies (overrides) to the newest versions
# whose every optional platform package the registry serves, so that the lockfile is complete
# and npm ci installs exactly it.
npm ci --no-audit --no-fund --loglevel=error
node -e 'require("flakery").nextId()' # the addon loads

# tests/node/zookeeper.test.mjs runs against a real ZooKeeper (Debian's package).
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"
# tests/node/database.test.mjs runs against a real MariaDB (Debian's package).
bash tests/db/install.sh || skip_or_fail "cannot install PostgreSQL and MariaDB"
echo "--- node --test"
check "node --test tests/node" node --test tests/node/*.test.mjs tests/node/*.test.cjs

echo "--- tsc --noEmit (tests/node/typecheck.ts against index.d.ts)"
check "tsc: tests/node/typecheck.ts against index.d.ts" npx --no-install tsc -p tests/node

echo "--- index.js and index.d.ts are as napi build generates them"
generated="$(mktemp -d)"
# With the cargo of tests/node/host-cargo.sh: the addon's release build of target/release/
# (only flakery-node is built again), not a second one of its whole graph for `--target HOST`.
CARGO="$PWD/tests/node/host-cargo.sh" npx --no-install napi build --platform --release --manifest-path bindings-node/Cargo.toml \
  --package-json-path package.json --output-dir "$generated" --js index.js --dts index.d.ts \
  >/dev/null 2>&1 || { echo "napi build failed" >&2; exit 1; }
if diff -u index.d.ts "$generated/index.d.ts" && diff -u index.js "$generated/index.js"; then
  pass "index.js and index.d.ts are what napi build generates"
else
  fail "index.js or index.d.ts differ from what napi build generates: run npm run build and commit"
fi
rm -rf "$generated"
finish node

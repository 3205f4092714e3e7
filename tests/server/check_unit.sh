#!/usr/bin/env bash
# Checks the systemd unit printed in docs/server.md, as written, with `systemd-analyze verify`
# in a throw-away root: the binary installed where docs/server.md says (/usr/local/bin/flakery,
# by the `install` command shown there), the unit in /etc/systemd/system, the system's own
# units beside it. The same check without the binary must fail: it looks at that path.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
bin="${FLAKERY_BIN:-$(target_dir)/debug/flakery}"
root="$(mktemp -d -t server-unit-XXXXXX)"
trap 'rm -rf "$root"' EXIT
unit="$root/etc/systemd/system/flakery.service"
mkdir -p "$(dirname "$unit")" "$root/usr/lib/systemd"
awk '/^```ini$/{on=1; next} /^```$/{on=0} on' docs/server.md >"$unit"
grep -q '^ExecStart=/usr/local/bin/flakery serve' "$unit" ||
  { echo "FAIL: no ExecStart=/usr/local/bin/flakery serve in docs/server.md's unit" >&2; exit 1; }
grep -q '^cargo build --locked --profile cli -p flakery-cli$' docs/server.md &&
  grep -q '^sudo install -m 0755 target/cli/flakery /usr/local/bin/flakery$' docs/server.md ||
  { echo "FAIL: docs/server.md does not say where the binary goes" >&2; exit 1; }
cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/system"

verify() {
  SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no --root="$root" \
    /etc/systemd/system/flakery.service 2>&1
}
if out="$(verify)"; then
  echo "FAIL: verify accepted the unit with no binary at /usr/local/bin/flakery: $out" >&2
  exit 1
fi
install -D -m 0755 "$bin" "$root/usr/local/bin/flakery"
# ExecReload's /bin/kill (procps, on every systemd host) from this host.
install -D -m 0755 /bin/kill "$root/bin/kill"
out="$(verify)" || {
  echo "$out" >&2
  echo "FAIL: systemd-analyze verify rejected the unit in docs/server.md" >&2
  exit 1
}
# verify exits 0 for some warnings: treat any line about our unit as a failure.
if grep -q 'flakery.service' <<<"$out"; then
  echo "$out" >&2
  echo "FAIL: systemd-analyze verify warned about the unit in docs/server.md" >&2
  exit 1
fi
echo "systemd unit: verified as written, with the binary at /usr/local/bin/flakery"

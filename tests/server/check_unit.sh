#!/usr/bin/env bash
# Checks the systemd unit printed in docs/server.md with `systemd-analyze verify`, its
# ExecStart pointed at the binary just built (verify wants an executable there).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
bin="${FLAKERY_BIN:-$(target_dir)/debug/flakery}"
dir="$(mktemp -d -t server-unit-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
awk '/^```ini$/{on=1; next} /^```$/{on=0} on' docs/server.md >"$dir/flakery.service"
grep -q '^ExecStart=/usr/local/bin/flakery serve' "$dir/flakery.service" ||
  { echo "FAIL: no ExecStart of flakery serve in docs/server.md's unit" >&2; exit 1; }
sed -i "s|^ExecStart=/usr/local/bin/flakery|ExecStart=$bin|" "$dir/flakery.service"
out="$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$dir/flakery.service" 2>&1)" || {
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
echo "systemd unit: verified"

#!/usr/bin/env bash
# Another local user against the host lease, and hosts without the default lease directory:
# core/tests/security.rs (the core's `system-tests` feature: the workspace's plain
# `cargo test` does not build it), whose tests need root, a throwaway unprivileged user (made
# here with useradd, removed on every exit) and private mount namespaces (unshare -m, so the
# machine's own /run is never touched); and the CLI with a host name set in a UTS namespace.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo
[ "$(id -u)" -eq 0 ] || skip_or_fail "the security tests need root (to make a throwaway user)"
need useradd passwd
need unshare util-linux

user="fcl$$"
work="$(mktemp -d /tmp/fcl-security-run.XXXXXX)"
cleanup() {
  userdel "$user" >/dev/null 2>&1 || true
  rm -rf "$work" "$work-theirs"
}
trap cleanup EXIT
useradd --system --no-create-home --shell /usr/sbin/nologin "$user"

# With `--workspace`, as tests/rust's `cargo test --workspace`: the features of the core's
# dependencies unify alike, so only the core (with its feature) and the test are built; `-p
# flakery` unified them anew and compiled its dev-dependencies again (39 s of CPU against 4).
echo "--- building core/tests/security.rs"
exe="$(cargo test --workspace --locked --features flakery/system-tests --test security --no-run 2>&1 \
  | sed -n 's/.*Executable tests\/security.rs (\(.*\))$/\1/p')"
[ -n "$exe" ] || { echo "FAIL: no test binary built" >&2; exit 1; }
# From a directory the throwaway user can read, whatever the checkout's permissions.
chmod 755 "$work"
install -m 755 "$exe" "$work/security"

unset_flakery_env
export FLAKERY_SECURITY_UID="$(id -u "$user")" FLAKERY_SECURITY_GID="$(id -g "$user")"
export FLAKERY_SECURITY_WORK="$work"
echo "--- security tests as root, against user $user"
check "core/tests/security.rs as root" "$work/security" --ignored --test-threads=1
# The CLI with a host name that is not UTF-8, set in a UTS namespace of its own (the same
# command line as tests/rust's `cargo test --workspace`, so nothing is built again).
check "cli.rs: a host name that is not UTF-8 (a UTS namespace)" \
  cargo test --workspace --locked --test cli -- --ignored --exact a_host_name_that_is_not_utf8_is_no_panic
# flakery doctor (docs/doctor.md): a lease directory that a mount namespace of its own does and
# does not share (unshare -m), and the kernel's STA_UNSYNC set and cleared through adjtimex,
# the status put back by the test's guard, also on failure. Under a second together.
check "cli.rs: the doctor's lease directory in two mount namespaces" \
  cargo test --workspace --locked --test cli -- --ignored --exact \
  doctor::a_lease_dir_another_mount_namespace_does_not_share_is_a_warning
check "cli.rs: the doctor reads the kernel's STA_UNSYNC (set, then put back)" \
  cargo test --workspace --locked --test cli -- --ignored --exact \
  doctor::the_kernels_unsynchronised_clock_is_a_warning
finish security

# Shared by the tests/*/run.sh scripts and bench/run.sh: source it.

# skip_or_fail WHY: outside CI a tool that cannot be had skips the area with a loud notice;
# in CI (CI=true) that is a failure.
skip_or_fail() {
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: $1 (CI=true: no test may be skipped)" >&2
    exit 1
  fi
  echo "!!!!!!!! SKIPPED: $1 !!!!!!!!" >&2
  exit 0
}

ensure_cargo() {
  if ! command -v cargo >/dev/null 2>&1 && [ -x "${HOME:-/root}/.cargo/bin/cargo" ]; then
    export PATH="${HOME:-/root}/.cargo/bin:$PATH"
  fi
  command -v cargo >/dev/null 2>&1 || skip_or_fail "cargo is not installed"
}

# apt_install PKG...: installs Debian packages that are missing (root on these machines).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}

# need TOOL [PKG...]: TOOL on PATH, installing the Debian packages PKG when it is missing;
# skip_or_fail when it still cannot be had.
need() {
  local tool="$1"
  shift
  command -v "$tool" >/dev/null 2>&1 && return 0
  [ $# -gt 0 ] && { apt_install "$@" || true; }
  command -v "$tool" >/dev/null 2>&1 || skip_or_fail "$tool is not installed"
}

# quiet CMD...: runs a command, showing its output only when it fails (and then returns 1,
# which ends a script under set -e).
quiet() {
  local log
  log="$(mktemp)"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "FAIL: $*" >&2
    return 1
  fi
  rm -f "$log"
}

# target_dir: cargo's target directory, as an absolute path.
target_dir() {
  local target="${CARGO_TARGET_DIR:-target}"
  case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
  echo "$target"
}

# What a program linking libflakery.a needs beside it: the system libraries of Rust's
# standard library (`cargo rustc -p flakery-c --release --crate-type staticlib -- --print
# native-static-libs`, Linux with glibc).
FLAKERY_STATIC_LIBS=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

# The tests choose their own node IDs and layouts: none may come from the caller's shell.
unset_flakery_env() {
  unset FLAKERY_LAYOUT FLAKERY_WORKER_ID FLAKERY_DATACENTER_ID FLAKERY_ZOOKEEPER \
    FLAKERY_NAMESPACE FLAKERY_LEASE_DIR FLAKERY_SESSION_TIMEOUT_MS \
    FLAKERY_DATABASE_URL FLAKERY_DATABASE_MODE
}

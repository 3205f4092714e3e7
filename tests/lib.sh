# Shared by the tests/*/run.sh scripts: source it.
# need TOOL HOW: makes sure TOOL is on PATH; outside CI a tool that cannot be had skips the
# area with a loud notice, in CI (CI=true) that is a failure.
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
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

#!/usr/bin/env bash
# Installs Debian's PostgreSQL and MariaDB servers and clients when missing.
# Idempotent and quiet on success; on failure prints apt's output and exits non-zero.
# The packages' own services are not started (the tests start servers of their own).
set -euo pipefail

installed() {
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 \
    && { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } \
    && command -v mariadb-install-db >/dev/null 2>&1 && command -v mariadb >/dev/null 2>&1
}

if ! installed; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install.sh: need root or sudo to apt-get install" >&2; exit 1; }
    SUDO="sudo"
  fi
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get update -qq >"$log" 2>&1 \
    || ! $SUDO apt-get install -y -qq --no-install-recommends postgresql postgresql-client \
      mariadb-server mariadb-client >>"$log" 2>&1; then
    cat "$log" >&2
    echo "install.sh: apt-get install failed" >&2
    exit 1
  fi
  installed || { cat "$log" >&2; echo "install.sh: installed, but a server binary is missing" >&2; exit 1; }
fi

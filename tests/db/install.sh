#!/usr/bin/env bash
# Installs Debian's PostgreSQL and MariaDB servers and clients when missing (apt_install of
# tests/lib.sh). Idempotent and quiet on success; exits non-zero when they cannot be had.
# The packages' own services are not started (the tests start servers of their own).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh

installed() {
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 \
    && { command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; } \
    && command -v mariadb-install-db >/dev/null 2>&1 && command -v mariadb >/dev/null 2>&1
}

installed && exit 0
apt_install postgresql postgresql-client mariadb-server mariadb-client \
  || { echo "install.sh: apt-get install failed" >&2; exit 1; }
installed || { echo "install.sh: installed, but a server binary is missing" >&2; exit 1; }

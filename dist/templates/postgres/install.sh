#!/bin/sh
# Installs the flakery extension into a PostgreSQL @PG_MAJOR@ with pg_config, as `make install`
# of a PGXS extension does: lib/flakery.so into `pg_config --pkglibdir`, and the control and SQL
# files into `pg_config --sharedir`/extension. No compiler, no Rust.
#
#   sh install.sh                           # the pg_config on PATH
#   PG_CONFIG=/usr/lib/postgresql/@PG_MAJOR@/bin/pg_config sh install.sh
#   DESTDIR=/tmp/pkgroot sh install.sh      # staged, for a package
#   sh install.sh --uninstall               # removes the three files
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
pg_config="${PG_CONFIG:-pg_config}"
command -v "$pg_config" >/dev/null 2>&1 || {
  echo "install.sh: no pg_config (install PostgreSQL @PG_MAJOR@, or set PG_CONFIG=/path/to/pg_config)" >&2
  exit 1
}
# The library is built against PostgreSQL @PG_MAJOR@'s headers: another major version would
# refuse to load it ("incompatible library"), so refuse here, before copying.
major="$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')"
[ "$major" = "@PG_MAJOR@" ] || {
  echo "install.sh: $pg_config is PostgreSQL ${major:-?}; this build of flakery is for PostgreSQL @PG_MAJOR@" >&2
  exit 1
}
destdir="${DESTDIR:-}"
pkglibdir="$destdir$("$pg_config" --pkglibdir)"
extdir="$destdir$("$pg_config" --sharedir)/extension"
if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$pkglibdir/flakery.so" "$extdir/flakery.control" "$extdir/flakery--@VERSION@.sql"
  echo "removed flakery @VERSION@ from $pkglibdir and $extdir"
  exit 0
fi
mkdir -p "$pkglibdir" "$extdir"
install -m 755 "$here/lib/flakery.so" "$pkglibdir/flakery.so"
install -m 644 "$here/extension/flakery.control" "$extdir/flakery.control"
install -m 644 "$here/extension/flakery--@VERSION@.sql" "$extdir/flakery--@VERSION@.sql"
echo "installed flakery @VERSION@: $pkglibdir/flakery.so, $extdir/flakery.control, $extdir/flakery--@VERSION@.sql"
echo "next: shared_preload_libraries = 'flakery' and a node ID in postgresql.conf, a restart, then CREATE EXTENSION flakery;"

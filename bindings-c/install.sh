#!/usr/bin/env bash
# Installs the C library under a prefix: include/flakery.h, lib/libflakery.a,
# lib/libflakery.so.VERSION with two links to it, its SONAME (libflakery.so.0.1, see
# bindings-c/build.rs) and libflakery.so, and the pkg-config files lib/pkgconfig/flakery.pc
# (shared) and flakery-static.pc (static).
# usage: bash bindings-c/install.sh [PREFIX]      (PREFIX defaults to /usr/local)
# It builds the release library first (`cargo build --release -p flakery-c`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-/usr/local}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
# Where cargo puts the release build: under the target triple when CARGO_BUILD_TARGET is set.
release="$target/${CARGO_BUILD_TARGET:+$CARGO_BUILD_TARGET/}release"

cargo build --release --locked --manifest-path "$root/Cargo.toml" -p flakery-c
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
# What `cargo rustc --release -p flakery-c --crate-type staticlib -- --print native-static-libs`
# prints on Linux with glibc.
native_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 "$root/include/flakery.h" "$prefix/include/flakery.h"
install -m 644 "$release/libflakery.a" "$prefix/lib/libflakery.a"
soname="$(objdump -p "$release/libflakery.so" | sed -n 's/^ *SONAME *//p')"
[ -n "$soname" ] || { echo "$release/libflakery.so has no SONAME (bindings-c/build.rs)" >&2; exit 1; }
install -m 755 "$release/libflakery.so" "$prefix/lib/libflakery.so.$version"
ln -sfn "libflakery.so.$version" "$prefix/lib/$soname"
ln -sfn "$soname" "$prefix/lib/libflakery.so"
for pc in flakery flakery-static; do
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@NATIVE_LIBS@|$native_libs|g" \
    "$root/bindings-c/$pc.pc.in" >"$prefix/lib/pkgconfig/$pc.pc"
done
echo "installed flakery $version under $prefix (pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"

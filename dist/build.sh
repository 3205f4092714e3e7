#!/usr/bin/env bash
# Builds every release artifact of flakery into dist/, all with the one workspace version
# (Cargo.toml, [workspace.package] version):
#
#   dist/python/  flakery-V-cp39-abi3-manylinux2014_x86_64...whl  (abi3: CPython 3.9 and later;
#                 linked against glibc 2.17 through zig) and the sdist flakery-V.tar.gz;
#                 a musllinux wheel too when the Rust target x86_64-unknown-linux-musl is installed
#   dist/npm/     flakery-V.tgz (loader, types, no build at install) and
#                 flakery-linux-x64-gnu-V.tgz (the addon), the main package naming the platform
#                 package in optionalDependencies, as `napi prepublish` lays them out
#   dist/c/       flakery-V-x86_64-linux-gnu.tar.gz: header, libflakery.a, libflakery.so with
#                 its SONAME, pkg-config and CMake files, the Go package, licenses, README
#   dist/java/    flakery-V.jar (the JNI library for linux-x86_64 inside), flakery-V-sources.jar,
#                 flakery-V-javadoc.jar and flakery-V.pom: Maven's dev.flakery:flakery:V, each
#                 jar with the licenses in META-INF/
#   dist/postgres/ flakery-V-pg15-x86_64-linux-gnu.tar.gz: the extension for PostgreSQL 15
#                 (lib/flakery.so, extension/flakery.control and flakery--V.sql), install.sh
#                 (copies them where pg_config says, as `make install` does), licenses, README
#
# usage: bash dist/build.sh [python] [node] [c] [java] [postgres] (no argument: all five)
#        FLAKERY_DIST_GLIBC=2.17 bash dist/build.sh     (the C library and Node addon for
#                                                      glibc 2.17 too, see below)
#
# Needs cargo, Python 3 with venv, Node with npm, binutils, (for java) a JDK 17 or later
# with Maven, and (for postgres) postgresql-server-dev-15, libclang-dev and clang. The Python build tools
# (maturin, ziglang, auditwheel) are installed from PyPI into a virtual environment under the
# cargo target directory, or taken from FLAKERY_DIST_TOOLS (a venv that has them).
# Everything is built in one cargo target directory (CARGO_TARGET_DIR, else target/), so a
# second run, or a run after the tests, reuses the release builds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
[ -n "$version" ] || { echo "dist: no version in Cargo.toml [workspace.package]" >&2; exit 1; }
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
out="$root/dist"
platform="x86_64-linux-gnu"
npm_platform="linux-x64-gnu"
[ "$(uname -sm)" = "Linux x86_64" ] || {
  echo "dist: this script builds the x86-64 Linux artifacts and runs only there" >&2
  exit 1
}

# FLAKERY_DIST_GLIBC=2.17: link the C library and the Node addon through zig against glibc
# 2.17, as the wheel is (a separate release build in target/dist-glibc/, 4 to 9 minutes on
# 2 cores; a directory of its own, so that it and the wheel's build do not undo each other). Unset, they are linked by the system linker and need the glibc
# of this machine or newer, but reuse the release builds of the tests.
glibc="${FLAKERY_DIST_GLIBC:-}"
triple_release="$target/release"
if [ -n "$glibc" ]; then
  [[ "$glibc" =~ ^2\.[0-9]+$ ]] || { echo "dist: FLAKERY_DIST_GLIBC=$glibc is no glibc version" >&2; exit 1; }
  triple_release="$target/dist-glibc/x86_64-unknown-linux-gnu/release"
fi

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(python node c java postgres)

# python_tools: a venv with maturin, ziglang (zig, the linker that targets old glibc) and
# auditwheel.
python_tools() {
  tools="${FLAKERY_DIST_TOOLS:-$target/dist-tools}"
  if ! "$tools/bin/python" -c 'import ziglang, auditwheel' >/dev/null 2>&1 \
    || [ ! -x "$tools/bin/maturin" ]; then
    echo "--- installing maturin, ziglang and auditwheel into $tools"
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --disable-pip-version-check -q \
      "maturin>=1.9.4,<2" "ziglang>=0.11" "auditwheel>=6"
  fi
}

# zig_linker GLIBC: prints the path of a linker command for x86_64-unknown-linux-gnu that
# links against glibc GLIBC through zig (what cargo-zigbuild and maturin --zig use: zig cc for
# the old glibc), writing it first. Needs python_tools first.
zig_linker() {
  local wrapper="$target/dist-zig/cc-glibc$1.sh"
  mkdir -p "$(dirname "$wrapper")"
  printf '#!/bin/sh\nCARGO_ZIGBUILD_ZIG_COMMAND="%s" CARGO_ZIGBUILD_ZIG_COMMAND_ARGS="-m ziglang" exec "%s" zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.%s "$@"\n' \
    "$tools/bin/python" "$tools/bin/maturin" "$1" >"$wrapper"
  chmod +x "$wrapper"
  echo "$wrapper"
}

# with_zig_linker COMMAND...: runs a cargo build (or bindings-c/install.sh) for
# x86_64-unknown-linux-gnu linked through zig against glibc $glibc; without FLAKERY_DIST_GLIBC,
# runs it as it is.
with_zig_linker() {
  if [ -z "$glibc" ]; then
    "$@"
    return
  fi
  local wrapper
  python_tools
  wrapper="$(zig_linker "$glibc")"
  CARGO_TARGET_DIR="$target/dist-glibc" CARGO_BUILD_TARGET=x86_64-unknown-linux-gnu \
    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$wrapper" "$@"
}

build_python() {
  echo "=== python: abi3 wheel (manylinux2014, through zig) and sdist"
  python_tools
  rm -rf "$out/python"
  mkdir -p "$out/python"
  # Linked against glibc 2.17 through zig, the linker given to the extension's own crate only
  # (maturin's rustc flags): `maturin --zig` would build for an explicit --target, a release
  # graph of its own (target/x86_64-unknown-linux-gnu/) that compiles every dependency a
  # second time beside the one the addon, the C and JNI libraries and the tests share
  # (target/release/); the compiled dependencies are the same either way, only the link differs.
  PATH="$tools/bin:$PATH" maturin build --release --locked --strip \
    --compatibility manylinux2014 --interpreter python3 -o "$out/python" \
    -- -C linker="$(zig_linker 2.17)"
  if rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-musl; then
    PATH="$tools/bin:$PATH" maturin build --release --locked --strip --zig \
      --target x86_64-unknown-linux-musl --compatibility musllinux_1_2 -o "$out/python"
  else
    echo "dist: no musllinux wheel: the Rust target x86_64-unknown-linux-musl is not installed" \
      "(rustup target add x86_64-unknown-linux-musl)"
  fi
  PATH="$tools/bin:$PATH" maturin sdist -o "$out/python"
}

build_node() {
  echo "=== node: flakery and flakery-$npm_platform (npm pack)"
  with_zig_linker cargo build --release --locked -p flakery-node
  local stage="$out/npm/stage"
  rm -rf "$out/npm"
  mkdir -p "$stage/flakery" "$stage/$npm_platform"

  # The platform package: npm/<platform>/ (made by `napi create-npm-dirs`) and the addon.
  cp "npm/$npm_platform/package.json" "npm/$npm_platform/README.md" "$stage/$npm_platform/"
  install -m 755 "$triple_release/libflakery_node.so" \
    "$stage/$npm_platform/flakery.$npm_platform.node"
  strip --strip-debug "$stage/$npm_platform/flakery.$npm_platform.node"

  # The main package: what its `files` list names, with package.json and the README.
  local files
  files="$(node -p 'require("./package.json").files.join("\n")')"
  cp package.json README.md "$stage/flakery/"
  while IFS= read -r file; do
    mkdir -p "$stage/flakery/$(dirname "$file")"
    cp "$file" "$stage/flakery/$file"
  done <<<"$files"
  cp LICENSE-MIT LICENSE-APACHE "$stage/$npm_platform/"

  # What `napi prepublish` does before publishing: one version everywhere, and the platform
  # package as an optional dependency of the main one. (Not in the committed package.json:
  # npm ci in a clone would look for it in the registry.)
  VERSION="$version" PLATFORM_PACKAGE="flakery-$npm_platform" STAGE="$stage" \
    NPM_PLATFORM="$npm_platform" node -e '
      const fs = require("fs")
      const { VERSION, PLATFORM_PACKAGE, STAGE, NPM_PLATFORM } = process.env
      const edit = (file, change) => {
        const json = JSON.parse(fs.readFileSync(file, "utf8"))
        change(json)
        fs.writeFileSync(file, JSON.stringify(json, null, 2) + "\n")
      }
      edit(`${STAGE}/${NPM_PLATFORM}/package.json`, (p) => { p.version = VERSION })
      edit(`${STAGE}/flakery/package.json`, (p) => {
        p.version = VERSION
        p.optionalDependencies = { [PLATFORM_PACKAGE]: VERSION }
      })'
  for package in "$npm_platform" flakery; do
    (cd "$stage/$package" && npm pack --silent --pack-destination "$out/npm" >/dev/null)
  done
  rm -rf "$stage"
}

build_c() {
  local name="flakery-$version-$platform"
  echo "=== c: $name.tar.gz"
  rm -rf "$out/c"
  mkdir -p "$out/c"
  local stage="$out/c/$name"
  with_zig_linker bash bindings-c/install.sh "$stage" # builds the release library first
  strip --strip-debug "$stage/lib/libflakery.a" "$stage/lib/libflakery.so.$version"

  local soname needs_glibc native_libs
  soname="$(objdump -p "$stage/lib/libflakery.so.$version" | sed -n 's/^ *SONAME *//p')"
  needs_glibc="$(objdump -T "$stage/lib/libflakery.so.$version" | grep -o 'GLIBC_[0-9.]*' \
    | sed 's/GLIBC_//' | sort -V | tail -n 1)"
  native_libs="$(sed -n 's/^Libs: .*libflakery\.a //p' "$stage/lib/pkgconfig/flakery-static.pc")"
  # Relocatable pkg-config files: the prefix is where the .pc file is, two folders up.
  sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$stage"/lib/pkgconfig/*.pc

  local cmake="$stage/lib/cmake/flakery"
  mkdir -p "$cmake"
  for file in flakery-config.cmake flakery-config-version.cmake; do
    sed -e "s|@VERSION@|$version|g" -e "s|@SONAME@|$soname|g" \
      -e "s|@NATIVE_LIBS@|$(echo "$native_libs" | sed 's/ /;/g')|g" \
      "dist/templates/c/$file.in" >"$cmake/$file"
  done
  sed -e "s|@VERSION@|$version|g" -e "s|@SONAME@|$soname|g" -e "s|@NAME@|$name|g" \
    -e "s|@PLATFORM@|$platform|g" -e "s|@GLIBC@|$needs_glibc|g" \
    dist/templates/c/README.md >"$stage/README.md"
  cp LICENSE-MIT LICENSE-APACHE "$stage/"
  mkdir -p "$stage/go"
  cp go/go.mod LICENSE-MIT LICENSE-APACHE "$stage/go/"
  find go -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$stage/go/" \;

  tar -C "$out/c" --owner=0 --group=0 --numeric-owner -czf "$out/c/$name.tar.gz" "$name"
  rm -rf "$stage"
}

build_java() {
  echo "=== java: flakery-$version.jar, its sources and javadoc jars, and its pom"
  local pom_version
  pom_version="$(sed -n '0,/<version>/s|^  <version>\(.*\)</version>$|\1|p' java/pom.xml)"
  [ "$pom_version" = "$version" ] || {
    echo "dist: java/pom.xml has version '$pom_version', the workspace $version" >&2
    exit 1
  }
  with_zig_linker cargo build --release --locked -p flakery-java
  local native=java/target/native-resources/dev/flakery/native/linux-x86_64
  rm -rf java/target
  mkdir -p "$native"
  strip --strip-debug -o "$native/libflakery_java.so" "$triple_release/libflakery_java.so"
  (cd java && mvn -q -B -Dstyle.color=never -Prelease -DskipTests package)
  rm -rf "$out/java"
  mkdir -p "$out/java"
  cp "java/target/flakery-$version.jar" "java/target/flakery-$version-sources.jar" \
    "java/target/flakery-$version-javadoc.jar" "$out/java/"
  cp java/pom.xml "$out/java/flakery-$version.pom"
  # The javadoc plugin packs only the pages: the licenses go in as in the other two jars.
  local licenses="$out/java/licenses"
  mkdir -p "$licenses/META-INF"
  cp LICENSE-MIT LICENSE-APACHE "$licenses/META-INF/"
  jar --update --file "$out/java/flakery-$version-javadoc.jar" -C "$licenses" META-INF
  rm -rf "$licenses"
}

# The extension, for the PostgreSQL whose pg_config PGRX_PG_CONFIG_PATH names. Built by the
# very command tests/postgres/cluster.sh runs (release profile, postgres/target, the same
# environment), so that whichever of the two runs first builds it and the other finds it fresh.
# Not through zig: the library is loaded by the server it was built against, whose glibc it
# shares.
build_postgres() {
  local pg_major=15
  local pg_config="${PGRX_PG_CONFIG_PATH:-/usr/lib/postgresql/$pg_major/bin/pg_config}"
  [ -x "$pg_config" ] || {
    echo "dist: no $pg_config (apt-get install postgresql-$pg_major postgresql-server-dev-$pg_major libclang-dev clang)" >&2
    exit 1
  }
  local pg_version
  pg_version="$(sed -n 's/^version = "\(.*\)"/\1/p' postgres/Cargo.toml | head -n 1)"
  [ "$pg_version" = "$version" ] || {
    echo "dist: postgres/Cargo.toml has version '$pg_version', the workspace $version" >&2
    exit 1
  }
  local name="flakery-$version-pg$pg_major-$platform"
  echo "=== postgres: $name.tar.gz"
  local pg_target="$root/postgres/target"
  PGRX_PG_CONFIG_PATH="$pg_config" CARGO_TARGET_DIR="$pg_target" \
    cargo build --profile release --locked --manifest-path postgres/Cargo.toml --workspace
  rm -rf "$out/postgres"
  local stage="$out/postgres/$name"
  mkdir -p "$stage/lib" "$stage/extension"
  strip --strip-debug -o "$stage/lib/flakery.so" "$pg_target/release/libflakery_pg.so"
  chmod 755 "$stage/lib/flakery.so"
  sed "s/@CARGO_VERSION@/$version/" postgres/flakery.control >"$stage/extension/flakery.control"
  "$pg_target/release/flakery-pg-sqlgen" "$pg_target/release/libflakery_pg.so" postgres/flakery.control \
    "$version" >"$stage/extension/flakery--$version.sql"
  local needs_glibc
  needs_glibc="$(objdump -T "$stage/lib/flakery.so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)"
  local file
  for file in install.sh README.md; do
    sed -e "s|@VERSION@|$version|g" -e "s|@PG_MAJOR@|$pg_major|g" -e "s|@NAME@|$name|g" \
      -e "s|@PLATFORM@|$platform|g" -e "s|@GLIBC@|$needs_glibc|g" \
      "dist/templates/postgres/$file" >"$stage/$file"
  done
  chmod 755 "$stage/install.sh"
  cp LICENSE-MIT LICENSE-APACHE "$stage/"
  tar -C "$out/postgres" --owner=0 --group=0 --numeric-owner -czf "$out/postgres/$name.tar.gz" "$name"
  rm -rf "$stage"
}

for part in "${parts[@]}"; do
  case "$part" in
    python) build_python ;;
    node) build_node ;;
    c) build_c ;;
    java) build_java ;;
    postgres) build_postgres ;;
    *)
      echo "dist: unknown part '$part' (python, node, c, java or postgres)" >&2
      exit 1
      ;;
  esac
done

echo "=== dist/ (version $version)"
find "$out" -maxdepth 2 -type f \( -name '*.whl' -o -name '*.tar.gz' -o -name '*.tgz' -o -name '*.jar' \) \
  -printf '%10s  %P\n' | sort -k2

#!/usr/bin/env bash
# The release artifacts, installed as a user without Rust would: builds them (dist/build.sh),
# then installs each into a fresh environment whose PATH has no cargo or rustc (stubs that
# fail loudly stand in their place, HOME is empty) and, through `unshare -n`, no network at
# all, and runs that language's quick start (tests/dist/quickstart.*):
#   - Python: pip install --no-index of the wheel into a new venv;
#   - Node: npm install --offline of both tarballs (from a cache prepared with npm cache add)
#     into a new project; and the main tarball alone fails with the build-from-source message;
#   - C/C++: the tarball through pkg-config (shared and static) and CMake find_package;
#   - Go: a new module that requires flakery.dev/go with a replace to the tarball's go/ folder;
#   - Java: the jar (with its pom, sources and javadoc jars) installed into a fresh local Maven
#     repository and used from a new Maven project with mvn -o;
#   - PostgreSQL: the extension's tarball installed by its install.sh (pg_config, no Rust) into
#     a private copy of the machine's PostgreSQL 15 (the system's directories are left alone),
#     and used from a fresh cluster on 127.0.0.1 (CREATE EXTENSION, next_id, decode).
# It checks the wheel's tags and `auditwheel show`, the npm tarballs' file lists, and that the
# shared library exports only flakery_* symbols under its SONAME; it prints sizes and install
# times. Closes with "dist: N passed, M failed" (tests/lib.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
need cc gcc libc6-dev
need g++ g++
need pkg-config pkg-config
need cmake cmake
need objdump binutils
need node nodejs npm
need npm nodejs npm
need go golang-go
need unshare util-linux
need java openjdk-17-jdk-headless
need jar openjdk-17-jdk-headless
need mvn maven
need python3
# The extension's build (dist/build.sh postgres) and the server its tarball is installed into.
apt_install postgresql-15 postgresql-server-dev-15 libclang-dev clang ||
  skip_or_fail "cannot install PostgreSQL 15, its server headers or clang"
[ -x /usr/lib/postgresql/15/bin/postgres ] || skip_or_fail "PostgreSQL 15 is not installed"
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt_install python3-venv || skip_or_fail "python3-venv is not installed"
fi
unshare -n true 2>/dev/null || skip_or_fail "unshare -n (a network namespace) is not permitted here"

root="$PWD"
target="$(target_dir)"
work="$target/dist-test"
rm -rf "$work"
mkdir -p "$work"
unset_flakery_env

echo "--- bash dist/build.sh"
start=$SECONDS
bash dist/build.sh
echo "built in $((SECONDS - start)) s"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"

# The clean environment: no cargo or rustc on PATH (stubs that fail), an empty HOME, no
# network. Tools are taken from the system folders only.
stubs="$work/no-rust-bin"
mkdir -p "$stubs" "$work/home"
for tool in cargo rustc rustup; do
  printf '#!/bin/sh\necho "%s is not available in this test" >&2\nexit 127\n' "$tool" >"$stubs/$tool"
  chmod +x "$stubs/$tool"
done
clean_path="$stubs:/usr/local/bin:/usr/bin:/bin"
[ -x /usr/local/go/bin/go ] && clean_path="$clean_path:/usr/local/go/bin"
gocache="$(go env GOCACHE)" # the build cache of Go's standard library only saves time
export FLAKERY_DIST_LEASES="$work/leases"
mkdir -p "$FLAKERY_DIST_LEASES"
clean() { # clean COMMAND...: runs it in the clean environment.
  unshare -n env -i PATH="$clean_path" HOME="$work/home" LANG=C.UTF-8 TMPDIR="$work" \
    CARGO_HOME="$work/home/no-cargo" RUSTUP_HOME="$work/home/no-rustup" \
    FLAKERY_LEASE_DIR="$FLAKERY_DIST_LEASES" "$@"
}
in_dir() { # in_dir DIR COMMAND...: runs it in DIR.
  (cd "$1" && shift && "$@")
}
timed() { # timed NAME COMMAND...: runs it and records how long it took.
  local name="$1" t0 t1
  shift
  t0=$(date +%s%N)
  "$@" || return 1
  t1=$(date +%s%N)
  times+=("$name: $(((t1 - t0) / 1000000)) ms")
}
times=()
if clean cargo --version >/dev/null 2>&1 || clean rustc --version >/dev/null 2>&1; then
  fail "cargo or rustc works in the clean environment"
else
  pass "the clean environment has no working cargo or rustc"
fi
if clean node -e 'fetch("https://registry.npmjs.org/").then(() => process.exit(1), () => process.exit(0))'; then
  pass "the clean environment reaches no registry"
else
  fail "the clean environment reached the npm registry"
fi

echo "--- artifacts"
wheel="$(ls "$root"/dist/python/flakery-"$version"-*manylinux*.whl)"
sdist="$root/dist/python/flakery-$version.tar.gz"
npm_main="$root/dist/npm/flakery-$version.tgz"
npm_platform="$root/dist/npm/flakery-linux-x64-gnu-$version.tgz"
ctar="$root/dist/c/flakery-$version-x86_64-linux-gnu.tar.gz"
pgtar="$root/dist/postgres/flakery-$version-pg15-x86_64-linux-gnu.tar.gz"
jars=("$root/dist/java/flakery-$version.jar" "$root/dist/java/flakery-$version-sources.jar"
  "$root/dist/java/flakery-$version-javadoc.jar" "$root/dist/java/flakery-$version.pom")
for artifact in "$wheel" "$sdist" "$npm_main" "$npm_platform" "$ctar" "${jars[@]}" "$pgtar"; do
  if [ -f "$artifact" ]; then
    printf '%10s bytes  %s\n' "$(stat -c %s "$artifact")" "${artifact#"$root"/}"
  else
    fail "missing artifact $artifact"
  fi
done

echo "--- Python: tags, auditwheel, pip install --no-index into a new venv"
tools="${FLAKERY_DIST_TOOLS:-$target/dist-tools}"
case "$(basename "$wheel")" in
  flakery-"$version"-cp39-abi3-manylinux2014_x86_64.*.whl | \
    flakery-"$version"-cp39-abi3-manylinux_2_1[27]_x86_64.*.whl | \
    flakery-"$version"-cp39-abi3-manylinux_2_5_x86_64.*.whl)
    pass "wheel name: $(basename "$wheel")" ;;
  *) fail "wheel name $(basename "$wheel") is not cp39-abi3 manylinux2014 or lower" ;;
esac
wheel_tags="$("$tools/bin/python" - "$wheel" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = z.namelist()
    wheel = next(n for n in names if n.endswith(".dist-info/WHEEL"))
    print(" ".join(l.split(": ", 1)[1] for l in z.read(wheel).decode().splitlines() if l.startswith("Tag: ")))
    print(" ".join(sorted(n.rsplit("/", 1)[1] for n in names if "/licenses/" in n)))
EOF
)"
echo "$wheel_tags"
check "WHEEL tags are cp39-abi3 manylinux ≤ 2.17" \
  bash -c '[[ "$(head -n 1 <<<"$1")" =~ ^cp39-abi3-manylinux(2014|_2_17)_x86_64(\ cp39-abi3-manylinux(2014|_2_17)_x86_64)*$ ]]' _ "$wheel_tags"
check "the wheel holds LICENSE-APACHE and LICENSE-MIT" \
  test "$(tail -n 1 <<<"$wheel_tags")" = "LICENSE-APACHE LICENSE-MIT"
audit="$("$tools/bin/auditwheel" show "$wheel" 2>&1)" || true
echo "$audit" | tr '\n' ' ' | sed 's/  */ /g'
echo
policy="$(echo "$audit" | tr '\n' ' ' | grep -o 'consistent with the following platform tag: *"manylinux_2_[0-9]*_x86_64"' | grep -o '2_[0-9]*' || true)"
check "auditwheel: consistent with manylinux_${policy:-?} (at most 2_17)" \
  test -n "$policy" -a "${policy#2_}" -le 17
check "the sdist holds the licenses and Cargo.lock" bash -c \
  'tar tzf "$1" | grep -qx "flakery-$2/LICENSE-MIT" && tar tzf "$1" | grep -qx "flakery-$2/LICENSE-APACHE" && tar tzf "$1" | grep -qx "flakery-$2/Cargo.lock"' \
  _ "$sdist" "$version"

venv="$work/venv"
python3 -m venv "$venv"
timed "pip install (wheel, --no-index)" clean "$venv/bin/python" -m pip install --no-index \
  --no-cache-dir --disable-pip-version-check -q "$wheel" || fail "pip install --no-index of the wheel"
check "Python quick start" in_dir "$work" clean "$venv/bin/python" "$root/tests/dist/quickstart.py"

echo "--- Node: file lists, npm install --offline of the tarballs into a new project"
expect_files() { # expect_files TARBALL FILE...: the tarball holds exactly these files.
  local tarball="$1" got want
  shift
  got="$(tar tzf "$tarball" | sed 's|^package/||' | sort)"
  want="$(printf '%s\n' "$@" | sort)"
  if [ "$got" = "$want" ]; then
    pass "$(basename "$tarball") holds exactly: $(echo $want)"
  else
    fail "$(basename "$tarball") holds: $(echo $got); expected: $(echo $want)"
  fi
}
expect_files "$npm_main" package.json README.md LICENSE-MIT LICENSE-APACHE index.js index.d.ts \
  index.mjs bindings-node/install.js
expect_files "$npm_platform" package.json README.md LICENSE-MIT LICENSE-APACHE \
  flakery.linux-x64-gnu.node
check "flakery names flakery-linux-x64-gnu@$version in optionalDependencies" bash -c \
  'tar xzf "$1" -O package/package.json | node -e "const p = JSON.parse(require(\"fs\").readFileSync(0)); process.exit(p.optionalDependencies[\"flakery-linux-x64-gnu\"] === process.argv[1] && p.version === process.argv[1] ? 0 : 1)" "$2"' \
  _ "$npm_main" "$version"

cache="$work/npm-cache"
npm cache add --cache "$cache" "$npm_platform" "$npm_main" >/dev/null 2>&1
npm_offline=(npm install --offline --cache "$cache" --no-audit --no-fund --loglevel=error)
project="$work/node-project"
mkdir -p "$project"
echo '{ "name": "quickstart", "version": "1.0.0", "private": true }' >"$project/package.json"
timed "npm install (both tarballs, --offline)" in_dir "$project" clean "${npm_offline[@]}" \
  "$npm_platform" "$npm_main" || fail "npm install --offline of both tarballs"
cp tests/dist/quickstart.mjs "$project/"
check "Node quick start" in_dir "$project" clean node quickstart.mjs
check "the installed flakery package has no addon or Rust sources of its own" bash -c \
  '! find "$1/node_modules/flakery" \( -name "*.node" -o -name "*.rs" -o -name Cargo.toml \) | grep -q .' \
  _ "$project"

# Without its platform package (optional dependencies left out), the install fails and says
# how to build from source.
lone="$work/node-without-prebuilt"
mkdir -p "$lone"
echo '{ "name": "lone", "version": "1.0.0", "private": true }' >"$lone/package.json"
lone_rc=0
lone_out="$(in_dir "$lone" clean "${npm_offline[@]}" --omit=optional "$npm_main" 2>&1)" || lone_rc=$?
if [ "$lone_rc" -ne 0 ] && [[ "$lone_out" == *"no prebuilt native addon for linux-x64-gnu"* ]] \
  && [[ "$lone_out" == *"Build from source"* ]]; then
  pass "without flakery-linux-x64-gnu, npm install fails with the build-from-source message"
else
  printf '%s\n' "$lone_out"
  fail "without flakery-linux-x64-gnu, npm install exited $lone_rc without the message"
fi

echo "--- C/C++: the tarball through pkg-config and CMake"
cdir="$work/c"
mkdir -p "$cdir"
tar -C "$cdir" -xzf "$ctar"
prefix="$cdir/flakery-$version-x86_64-linux-gnu"
so="$prefix/lib/libflakery.so.$version"
exported="$(nm -D --defined-only "$so" | awk '{print $3}')"
others="$(grep -v '^flakery_' <<<"$exported" || true)"
check "libflakery.so exports $(wc -l <<<"$exported") symbols, all flakery_*${others:+ (not: $others)}" \
  test -z "$others" -a "$(wc -l <<<"$exported")" -ge 20
soname="$(objdump -p "$so" | sed -n 's/^ *SONAME *//p')"
check "SONAME $soname, with links libflakery.so -> $soname -> libflakery.so.$version" bash -c \
  '[ "$1" = "libflakery.so.$(cut -d. -f1-2 <<<"$2")" ] && [ "$(readlink "$3/libflakery.so")" = "$1" ] && [ "$(readlink "$3/$1")" = "libflakery.so.$2" ]' \
  _ "$soname" "$version" "$prefix/lib"
echo "glibc needed: $(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -n 1)"
check "tarball licenses (also in go/) and README" test -f "$prefix/LICENSE-MIT" \
  -a -f "$prefix/LICENSE-APACHE" -a -f "$prefix/go/LICENSE-MIT" -a -f "$prefix/go/LICENSE-APACHE" \
  -a -f "$prefix/README.md"

cbuild() { # cbuild NAME COMPILER SOURCE: builds with pkg-config, shared and static, and runs.
  local name="$1" compiler="$2" source="$3"
  local pc="PKG_CONFIG_PATH=$prefix/lib/pkgconfig"
  if clean env "$pc" sh -c "$compiler $source \$(pkg-config --cflags --libs flakery) \
      -Wl,-rpath,\$(pkg-config --variable=libdir flakery) -o $cdir/${name}_shared" \
    && clean env "$pc" sh -c "$compiler \$(pkg-config --cflags flakery-static) $source \
      \$(pkg-config --libs flakery-static) -o $cdir/${name}_static"; then
    check "$name (pkg-config flakery, shared) runs" clean "$cdir/${name}_shared"
    check "$name (pkg-config flakery-static) runs" clean "$cdir/${name}_static"
    check "$name shared needs $soname, static does not" bash -c \
      'readelf -d "$1_shared" | grep -q "NEEDED.*\[$2\]" && ! readelf -d "$1_static" | grep -q libflakery' \
      _ "$cdir/$name" "$soname"
  else
    fail "$name: build through pkg-config"
  fi
}
cbuild quickstart_c "cc -std=c11 -Wall -Wextra -Werror -pedantic" "$root/tests/dist/quickstart.c"
cbuild quickstart_cpp "g++ -std=c++17 -Wall -Wextra -Werror -pedantic" \
  "$root/tests/dist/quickstart.cpp"

if clean cmake -S "$root/tests/dist/cmake" -B "$cdir/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DFLAKERY_VERSION="$version" >"$cdir/cmake.log" 2>&1 \
  && clean cmake --build "$cdir/cmake-build" >>"$cdir/cmake.log" 2>&1; then
  for program in quickstart_c_shared quickstart_c_static quickstart_cpp_shared quickstart_cpp_static; do
    check "CMake find_package(flakery $version): $program runs" clean "$cdir/cmake-build/$program"
  done
else
  cat "$cdir/cmake.log"
  fail "CMake find_package(flakery $version) build"
fi
if clean cmake -S "$root/tests/dist/cmake" -B "$cdir/cmake-wrong" -DCMAKE_PREFIX_PATH="$prefix" \
  -DFLAKERY_VERSION=9.0 >/dev/null 2>&1; then
  fail "find_package(flakery 9.0) accepted release $version"
else
  pass "find_package(flakery 9.0) refuses release $version"
fi

echo "--- Go: a new module with a replace to the tarball's go/ folder"
goapp="$work/go-app"
mkdir -p "$goapp"
cp tests/dist/go/main.go "$goapp/"
printf 'module quickstart\n\ngo 1.19\n\nrequire flakery.dev/go v0.0.0\n\nreplace flakery.dev/go => %s/go\n' \
  "$prefix" >"$goapp/go.mod"
go_env=(env GOCACHE="$gocache" GOPATH="$work/gopath" GOFLAGS=-mod=mod GOPROXY=off
  GOTOOLCHAIN=local CGO_ENABLED=1 PKG_CONFIG_PATH="$prefix/lib/pkgconfig")
if timed "go build (from the tarball)" in_dir "$goapp" clean "${go_env[@]}" go build -o quickstart .; then
  check "Go quick start" clean "$goapp/quickstart"
  check "the Go program links libflakery statically" bash -c \
    '! readelf -d "$1" | grep -q libflakery' _ "$goapp/quickstart"
else
  fail "Go quick start: go build"
fi
check "go vet of the quick start" in_dir "$goapp" clean "${go_env[@]}" go vet .

echo "--- Java: the jar into a fresh local Maven repository, used offline (mvn -o)"
jar_holds() { # jar_holds JAR PATTERN: some entry of JAR matches the extended regex PATTERN.
  jar tf "$1" | grep -Eq "$2"
}
for jar_file in "${jars[@]:0:3}"; do
  check "$(basename "$jar_file") holds META-INF/LICENSE-MIT and META-INF/LICENSE-APACHE" \
    bash -c 'jar tf "$1" | grep -qx META-INF/LICENSE-MIT && jar tf "$1" | grep -qx META-INF/LICENSE-APACHE' \
    _ "$jar_file"
done
check "the jar carries the JNI library for linux-x86_64" \
  jar_holds "${jars[0]}" '^dev/flakery/native/linux-x86_64/libflakery_java\.so$'
check "the sources jar holds the sources and no native library" bash -c \
  'jar tf "$1" | grep -qx dev/flakery/Generator.java && ! jar tf "$1" | grep -q "\.so$"' _ "${jars[1]}"
check "the javadoc jar holds the pages of dev.flakery.Generator" \
  jar_holds "${jars[2]}" '^dev/flakery/Generator\.html$'

m2="$work/m2" # the fresh local repository
javaapp="$work/java-app"
mkdir -p "$m2" "$javaapp"
cp -r tests/dist/java/src "$javaapp/"
sed "s|@VERSION@|$version|" tests/dist/java/pom.xml >"$javaapp/pom.xml"
# Maven's own plugins come from Maven Central, as on any machine that builds Java; flakery
# comes from dist/ alone.
install_plugin=org.apache.maven.plugins:maven-install-plugin:3.1.4
plugins=("$install_plugin" org.apache.maven.plugins:maven-resources-plugin:3.3.1
  org.apache.maven.plugins:maven-compiler-plugin:3.14.1 org.apache.maven.plugins:maven-dependency-plugin:3.8.1)
for plugin in "${plugins[@]}"; do
  mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$m2" "$plugin:help" >/dev/null \
    || fail "Maven could not fetch $plugin into the fresh repository"
done
mvn_offline=(mvn -o -q -B -Dstyle.color=never -Dmaven.repo.local="$m2")
timed "mvn -o install:install-file (the jar, its pom, sources and javadoc)" in_dir "$javaapp" \
  clean "${mvn_offline[@]}" "$install_plugin:install-file" -Dfile="${jars[0]}" -DpomFile="${jars[3]}" \
  -Dsources="${jars[1]}" -Djavadoc="${jars[2]}" || fail "mvn -o install:install-file of the jar"
if timed "mvn -o compile (a new project depending on dev.flakery:flakery:$version)" in_dir "$javaapp" \
  clean "${mvn_offline[@]}" compile dependency:build-classpath -Dmdep.outputFile=classpath.txt; then
  java_out="$(in_dir "$javaapp" clean java -cp "target/classes:$(cat "$javaapp/classpath.txt")" \
    quickstart.QuickStart)" || java_out=""
  echo "$java_out"
  check "Java quick start, with the jar from the fresh repository" \
    bash -c '[[ "$1" == "java quickstart $2: "*" from $3/dev/flakery/flakery/$2/flakery-$2.jar" ]]' \
    _ "$java_out" "$version" "$m2"
else
  fail "Java quick start: mvn -o compile"
fi

echo "--- PostgreSQL: the tarball's install.sh into a private copy of PostgreSQL 15, a fresh cluster"
# The copy: PostgreSQL finds its lib and share directories relative to its binaries, so a copy
# of /usr/lib/postgresql/15 and /usr/share/postgresql/15 under one root is a PostgreSQL of its
# own that install.sh can write into without touching the system's (tests/postgres installs
# into those, maybe at the same time). Owned by the postgres user when run as root: PostgreSQL
# refuses to run as root.
pgwork="$(mktemp -d)"
chmod 755 "$pgwork"
pgroot="$pgwork/root"
pgpid=""
stop_pg() {
  [ -n "$pgpid" ] || return 0
  kill -INT "$pgpid" 2>/dev/null || true
  while [ -e "/proc/$pgpid" ] && [ "$(sed 's/.*) \([A-Z]\).*/\1/' "/proc/$pgpid/stat" 2>/dev/null)" != Z ]; do sleep 0.1; done
  pgpid=""
}
trap 'stop_pg; rm -rf "$pgwork"' EXIT
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi
}
mkdir -p "$pgroot/usr/lib/postgresql" "$pgroot/usr/share/postgresql"
cp -a /usr/lib/postgresql/15 "$pgroot/usr/lib/postgresql/"
cp -a /usr/share/postgresql/15 "$pgroot/usr/share/postgresql/"
pgbin="$pgroot/usr/lib/postgresql/15/bin"
# tests/postgres may have installed its build into the system's directories while they were
# copied: the copy starts without flakery, so that what the server loads is the tarball's.
rm -f "$pgroot/usr/lib/postgresql/15/lib/flakery.so" "$pgroot/usr/share/postgresql/15/extension/flakery.control" \
  "$pgroot/usr/share/postgresql/15/extension/flakery--"*.sql
tar -C "$pgwork" -xzf "$pgtar"
pgdist="$pgwork/flakery-$version-pg15-x86_64-linux-gnu"
check "the tarball holds the library, the control and SQL files, install.sh, licenses, README" \
  test -f "$pgdist/lib/flakery.so" -a -f "$pgdist/extension/flakery.control" \
  -a -f "$pgdist/extension/flakery--$version.sql" -a -x "$pgdist/install.sh" \
  -a -f "$pgdist/LICENSE-MIT" -a -f "$pgdist/LICENSE-APACHE" -a -f "$pgdist/README.md"
check "its control file names version $version" \
  grep -qxF "default_version = '$version'" "$pgdist/extension/flakery.control"
if timed "install.sh (pg_config of the copy)" clean env PG_CONFIG="$pgbin/pg_config" sh "$pgdist/install.sh"; then
  for f in "lib/postgresql/15/lib/flakery.so" "share/postgresql/15/extension/flakery.control" \
    "share/postgresql/15/extension/flakery--$version.sql"; do
    check "install.sh put $f where the copy's pg_config says" test -f "$pgroot/usr/$f"
  done
else
  fail "install.sh with the copy's pg_config"
fi
# A pg_config of PostgreSQL 16 whose directories are in $pgwork/pg16: nothing may land there.
printf '#!/bin/sh\ncase "$1" in --version) echo "PostgreSQL 16.4" ;; *) echo "%s/pg16" ;; esac\n' \
  "$pgwork" >"$pgwork/pg_config16"
chmod +x "$pgwork/pg_config16"
if PG_CONFIG="$pgwork/pg_config16" sh "$pgdist/install.sh" >/dev/null 2>&1 || [ -e "$pgwork/pg16" ]; then
  fail "install.sh installed for a pg_config of PostgreSQL 16"
else
  pass "install.sh refuses a pg_config of another major version, and copies nothing"
fi
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$pgwork"
pgdata="$pgwork/data"
pgport="$(python3 "$root/tests/ports.py")"
as_pg "$pgbin/initdb" -D "$pgdata" -U postgres -A trust --no-sync >"$pgwork/initdb.log" 2>&1 ||
  { cat "$pgwork/initdb.log"; fail "initdb of the copy"; }
cat >>"$pgdata/postgresql.conf" <<PGCONF
listen_addresses = '127.0.0.1'
port = $pgport
unix_socket_directories = '$pgwork'
shared_preload_libraries = 'flakery'
flakery.datacenter_id = 1
flakery.worker_id = 7
PGCONF
# The server runs in the clean environment too: no Rust, and nothing of the build on its paths.
as_pg env -i PATH="$clean_path" LANG=C.UTF-8 "$pgbin/postgres" -D "$pgdata" >"$pgwork/server.log" 2>&1 &
for _ in $(seq 600); do "$pgbin/pg_isready" -q -h 127.0.0.1 -p "$pgport" && break; sleep 0.1; done
pgpid="$(head -n 1 "$pgdata/postmaster.pid" 2>/dev/null || true)"
pg_out="$("$pgbin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pgport" -U postgres -d postgres -c "
  CREATE EXTENSION flakery;
  SELECT extversion FROM pg_extension WHERE extname = 'flakery';
  SELECT (d).datacenter_id || '/' || (d).worker_id || ' ' || ((d).time > now() - interval '1 minute')
    FROM (SELECT flakery.decode(flakery.next_id()) AS d) s;" 2>&1)" || true
echo "$pg_out"
check "CREATE EXTENSION flakery from the tarball, version $version, in a fresh cluster on 127.0.0.1" \
  test "$(sed -n 1p <<<"$pg_out")" = "$version"
check "next_id and decode: datacenter 1, worker 7, made just now" test "$(sed -n 2p <<<"$pg_out")" = "1/7 true"
check "the server loaded the library from the copy, not the system's" \
  grep -q "$pgroot/usr/lib/postgresql/15/lib/flakery.so" "/proc/$pgpid/maps"
stop_pg
if timed "install.sh --uninstall" clean env PG_CONFIG="$pgbin/pg_config" sh "$pgdist/install.sh" --uninstall >/dev/null; then
  check "install.sh --uninstall removes the three files" bash -c \
    '! ls "$1"/usr/lib/postgresql/15/lib/flakery.so "$1"/usr/share/postgresql/15/extension/flakery* 2>/dev/null | grep -q .' _ "$pgroot"
else
  fail "install.sh --uninstall"
fi

echo "--- install times"
printf '%s\n' "${times[@]}"
finish dist

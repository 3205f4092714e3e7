#!/usr/bin/env bash
# The Go package (go/, package flakery, cgo over the C API found with pkg-config): installs
# the release C library into a scratch prefix (bindings-c/install.sh), then in go/ runs
# go vet, go test -race against the static library (the default), go test against
# libflakery.so (-tags flakery_shared) and go test -asan (AddressSanitizer, and LeakSanitizer at
# the end of the process: C memory that neither Go nor C can reach any more fails it); the
# last two run go/memory_test.go (every function 100,000 times, the C heap bounded), which the
# race detector's allocations would blur; then builds and runs a separate module that imports
# flakery.dev/go through a go.work, as docs/go.md shows (tests/dist builds the same program
# with a replace directive, against the release tarball).
# In CI (CI=true) it always runs: a missing Go is installed from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
need go golang-go
need cc gcc libc6-dev
need pkg-config pkg-config
# go test -asan links gcc's AddressSanitizer runtime (LeakSanitizer included).
[ -e "$(gcc -print-file-name=libasan.so)" ] || apt_install libasan8 || true
# go/finalizer_test.go runs against a real ZooKeeper (tests/zookeeper/zkserver.py).
need python3
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"

root="$PWD"
target="$(target_dir)"
work="$target/go-test"
mkdir -p "$work"

unset_flakery_env
export FLAKERY_LEASE_DIR="$work/leases"
mkdir -p "$FLAKERY_LEASE_DIR"

prefix="$work/prefix"
rm -rf "$prefix"
bash bindings-c/install.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

# Offline-safe: the module has no dependencies, so nothing is fetched, and no other toolchain.
export CGO_ENABLED=1 GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
  export GOCACHE="$work/cache"
fi
if [ -z "${GOPATH:-}" ] && [ -z "${HOME:-}" ]; then
  export GOPATH="$work/gopath"
fi

go version
cd "$root/go"
unformatted="$(gofmt -l .)"
check "gofmt -l lists nothing${unformatted:+ (lists: $unformatted)}" test -z "$unformatted"
echo "--- go vet"
check "go vet" go vet ./...
check "go vet -tags flakery_shared" go vet -tags flakery_shared ./...
echo "--- go test -race (static libflakery.a)"
check "go test -race (static libflakery.a)" go test -race -count=1 -v ./...
echo "--- go test (shared libflakery.so)"
check "go test (shared libflakery.so)" \
  env LD_LIBRARY_PATH="$prefix/lib" go test -tags flakery_shared -count=1 ./...

echo "--- go test -asan (static libflakery.a; LeakSanitizer at exit)"
# clobberfree: the collector overwrites what it frees, so that C memory only a dead Go object
# pointed to (a C string whose free was skipped) is unreachable when the tests end (TestMain
# collects then) and LeakSanitizer reports it.
check "go test -asan (static libflakery.a, LeakSanitizer)" \
  env GODEBUG=clobberfree=1 ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 go test -asan -count=1 ./...

echo "--- a separate module importing flakery.dev/go through go.work (docs/go.md)"
app="$work/app"
rm -rf "$app"
mkdir -p "$app/quickstart"
cp "$root/tests/dist/go/main.go" "$app/quickstart/"
cd "$app/quickstart"
go mod init example.com/quickstart
cd "$app"
go work init ./quickstart "$root/go"
cd "$app/quickstart"
# The module's go.mod has no require of flakery.dev/go: the workspace provides it.
check "a module importing flakery.dev/go through go.work builds and runs" \
  bash -c 'GOFLAGS= go build -o "$1" . && FLAKERY_WORKER_ID=3 "$1"' _ "$app/quickstart.bin"
finish go

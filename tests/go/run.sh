#!/usr/bin/env bash
# Go through cgo: builds the release libflakery.a and runs `go test -v ./...` in tests/go, a Go
# module with no dependencies that includes include/flakery.h and links the static library.
# In CI (CI=true) it always runs: a missing Go is installed from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  apt_install golang-go || true
fi
command -v go >/dev/null 2>&1 || skip_or_fail "go is not installed"
command -v cc >/dev/null 2>&1 || apt_install gcc libc6-dev || true
command -v cc >/dev/null 2>&1 || skip_or_fail "no C compiler (cc) for cgo"

root="$PWD"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac

unset FLAKERY_LAYOUT FLAKERY_WORKER_ID FLAKERY_DATACENTER_ID FLAKERY_ZOOKEEPER FLAKERY_NAMESPACE
export FLAKERY_LEASE_DIR="$target/go-test/leases"
mkdir -p "$FLAKERY_LEASE_DIR"

cargo build --release --locked -p flakery-c

# Offline-safe: the module has no dependencies, so nothing is fetched, and no other toolchain.
export CGO_ENABLED=1 GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
  export GOCACHE="$target/go-test/cache"
fi
if [ -z "${GOPATH:-}" ] && [ -z "${HOME:-}" ]; then
  export GOPATH="$target/go-test/gopath"
fi
# The cgo directives link target/release/libflakery.a; a CARGO_TARGET_DIR elsewhere is added.
export CGO_LDFLAGS="-L$target/release ${CGO_LDFLAGS:-}"

go version
cd tests/go
go vet ./...
go test -count=1 -v ./...

#!/usr/bin/env bash
# Go through cgo: builds the release libflakery.a and runs `go test -v ./...` in tests/go, a Go
# module with no dependencies that includes include/flakery.h and links the static library.
# In CI (CI=true) it always runs: a missing Go is installed from Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
need go golang-go
need cc gcc libc6-dev

root="$PWD"
target="$(target_dir)"

unset_flakery_env
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

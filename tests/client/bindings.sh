# Sourced by tests/client/run.sh: builds what tests/client/test_bindings.py runs against real
# servers, the Client of each binding: the C test program (C11, ASan + UBSan, against the
# static libflakery), the Go package's prefix (bindings-c/install.sh), the Node addon (npm ci,
# as tests/node builds it).
need cc gcc libc6-dev
need pkg-config pkg-config
[ -x /usr/local/go/bin/go ] && export PATH="$PATH:/usr/local/go/bin"
need go golang-go
need node nodejs
need npm npm

bindings_work="$(target_dir)/client-bindings"
mkdir -p "$bindings_work"

echo "--- the C library and the Go package's prefix (bindings-c/install.sh)"
bash bindings-c/install.sh "$bindings_work/prefix" >/dev/null
export FLAKERY_CLIENT_GO_PKG_CONFIG="$bindings_work/prefix/lib/pkgconfig"
export CGO_ENABLED=1 GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ]; then
  export GOCACHE="$bindings_work/cache"
fi

echo "--- tests/client/client.c (C11, ASan + UBSan, static)"
export FLAKERY_CLIENT_C_TEST="$bindings_work/client-c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  tests/client/client.c -o "$FLAKERY_CLIENT_C_TEST" \
  $(PKG_CONFIG_PATH="$FLAKERY_CLIENT_GO_PKG_CONFIG" pkg-config --cflags --libs --static flakery-static)

echo "--- tests/client/tls.c (as client.c)"
export FLAKERY_CLIENT_TLS_C_TEST="$bindings_work/tls-c"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -std=c11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  tests/client/tls.c -o "$FLAKERY_CLIENT_TLS_C_TEST" \
  $(PKG_CONFIG_PATH="$FLAKERY_CLIENT_GO_PKG_CONFIG" pkg-config --cflags --libs --static flakery-static)

echo "--- the Node addon (npm ci)"
npm ci --no-audit --no-fund --loglevel=error
export FLAKERY_CLIENT_NODE_BUILT=1

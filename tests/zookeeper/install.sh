#!/usr/bin/env bash
# Installs Debian's `zookeeper` package (server jars + a JRE) if it is missing.
# Idempotent and quiet on success; on failure prints apt's output and exits non-zero.
#
#   bash tests/zookeeper/install.sh              # install if needed
#   bash tests/zookeeper/install.sh --classpath  # also print the server classpath
#
# The package puts the server in /usr/share/java/zookeeper.jar; its manifest Class-Path
# names the dependencies (zookeeper-jute, netty-*, slf4j-api, metrics-core, snappy, jetty9,
# jackson, commons-cli/io, all under /usr/share/java). slf4j-simple.jar (from libslf4j-java,
# a dependency) is added so the server logs to stderr. zkserver.py builds the same classpath.
set -euo pipefail

JAR=/usr/share/java/zookeeper.jar
CLASSPATH_OUT="$JAR:/usr/share/java/slf4j-simple.jar"

installed() {
    [ "$(dpkg-query -W -f='${Status}' zookeeper 2>/dev/null || true)" = "install ok installed" ] \
        && [ -r "$JAR" ] && command -v java >/dev/null 2>&1
}

if ! installed; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "install.sh: need root or sudo to apt-get install zookeeper" >&2; exit 1; }
        SUDO="sudo"
    fi
    log="$(mktemp)"
    trap 'rm -f "$log"' EXIT
    export DEBIAN_FRONTEND=noninteractive
    # Only refresh the package lists when we actually have to install; one apt-get at a time
    # (apt_locked of tests/lib.sh: tests/run.sh runs two lanes of areas at once).
    lock=(flock -o /tmp/flakery-apt.lock)
    if ! "${lock[@]}" $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq >"$log" 2>&1 \
        || ! "${lock[@]}" $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends zookeeper >>"$log" 2>&1; then
        cat "$log" >&2
        echo "install.sh: apt-get install zookeeper failed" >&2
        exit 1
    fi
    if ! installed; then
        cat "$log" >&2
        echo "install.sh: zookeeper installed but $JAR or java is missing" >&2
        exit 1
    fi
fi

if [ "${1:-}" = "--classpath" ]; then
    echo "$CLASSPATH_OUT"
fi

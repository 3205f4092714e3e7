#!/usr/bin/env bash
# JMH benchmarks of the Java package (docs/java.md#benchmarks): by hand, never in CI.
#   bash bench/java/run.sh                 # every benchmark
#   bash bench/java/run.sh IdBenchmarks    # JMH's own arguments: a pattern, -f, -wi, -i ...
# Builds the release JNI library and installs the jar (java/build.sh), then the benchmarks
# jar. --enable-native-access is for Java 22 and later; Java 17 ignores it with a warning, so
# JAVA_HOME defaults to the machine's Java 25 when it is there.
set -euo pipefail
cd "$(dirname "$0")/../.."
java/build.sh
cd bench/java
mvn -q -B -Dstyle.color=never package
java25=/usr/lib/jvm/temurin-25-jdk-amd64
java="${JAVA_HOME:-$([ -x "$java25/bin/java" ] && echo "$java25" || dirname "$(dirname "$(readlink -f "$(command -v java)")")")}/bin/java"
exec "$java" --enable-native-access=ALL-UNNAMED -jar target/benchmarks.jar "$@"

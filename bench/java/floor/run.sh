#!/usr/bin/env bash
# The floors under Java's nextId() on this machine, by hand (docs/benchmarks.md#java-jmh), never
# in CI: what one uncontended locked instruction costs (cas.c: rdtsc, the best of many short
# bursts, so that a loaded machine's preemptions do not count), and a bare JNI call with and
# without a compare-and-swap on Java 17, with and without its deprecated critical natives
# (-XX:+CriticalJNINatives, which flakery offers as an opt-in: docs/java.md). Needs cc and a JDK 17 (JAVA17_HOME).
set -euo pipefail
cd "$(dirname "$0")"
java17="${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/cas" cas.c
echo "--- one thread, one word: TSC cycles and ns an operation"
"$out/cas" "$(awk -F: '/^cpu MHz/ { print $2; exit }' /proc/cpuinfo)"
cc -O2 -shared -fPIC -I"$java17/include" -I"$java17/include/linux" -o "$out/libcrit.so" crit.c
"$java17/bin/javac" -d "$out" Crit.java
echo "--- Java 17, JNI"
"$java17/bin/java" -Dcrit.lib="$out/libcrit.so" -cp "$out" Crit
echo "--- Java 17, -XX:+CriticalJNINatives"
"$java17/bin/java" -XX:+UnlockDiagnosticVMOptions -XX:+CriticalJNINatives -Dcrit.lib="$out/libcrit.so" -cp "$out" Crit 2>&1 \
  | grep -v "was deprecated"

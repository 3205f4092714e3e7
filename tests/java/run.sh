#!/usr/bin/env bash
# The Java package (java/, bindings-java/, docs/java.md): builds the JNI library, packs it into
# the jar's resources, and runs the JUnit tests on Java 17 (the machine's default) and then on
# Java 25 (/usr/lib/jvm/temurin-25-jdk-amd64, or JAVA25_HOME): `mvn verify` runs the unit tests
# (surefire) and, after `package`, the tests of the jar itself (failsafe, *IT.java: a JVM with
# only the jar on its classpath); LeaseTest leases node IDs from a throw-away ZooKeeper and
# PostgreSQL (tests/zookeeper/zkserver.py, tests/db/dbserver.py); ClientTest takes IDs from
# real `flakery serve` instances (the debug CLI, built here as tests/client builds it). Then the integrations
# (java/integrations: the Spring Boot starter and the Hibernate generator, each its own
# artifact) against the jar installed into
# the local Maven repository; the Hibernate test persists entities to a throw-away PostgreSQL
# (tests/db/dbserver.py, on 127.0.0.1, its data removed when it stops).
#
# The library is the release build that the jar a user gets carries (docs/java.md): tests/dist
# builds it in the same run with the same command (`cargo build --release -p flakery-java`),
# so cargo finds it fresh here; a debug build of its own cost 35 s of CPU on every run, as its
# `-p flakery-java` unifies features anew and compiles part of the debug graph again.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/lib.sh
ensure_cargo

need java openjdk-17-jdk-headless
need javac openjdk-17-jdk-headless
need mvn maven
need strip binutils
need faketime faketime   # LeafClockTest: a real clock step under libfaketime
bash tests/db/install.sh   # PostgreSQL for the Hibernate test and the lease tests
bash tests/zookeeper/install.sh || skip_or_fail "cannot install ZooKeeper"   # the lease tests

java17="${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
java25="${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ -x "$java17/bin/java" ] || skip_or_fail "Java 17 is not at $java17 (set JAVA17_HOME)"
[ -x "$java25/bin/java" ] || skip_or_fail "Java 25 is not at $java25 (set JAVA25_HOME)"

target="$(target_dir)"
unset_flakery_env
export FLAKERY_LEASE_DIR="$target/java-test/leases"
mkdir -p "$FLAKERY_LEASE_DIR"

echo "--- cargo build --release -p flakery-java"
cargo build --release --locked -p flakery-java
# The CLI for ClientTest's servers (flakery serve), as tests/server and tests/client build it
# (the same command: cargo finds it fresh and leaves it); taken by its hash-named file in
# target/debug/deps, which no other build replaces.
echo "--- the CLI for ClientTest (cargo test --workspace --test cli --no-run)"
quiet cargo test -q --workspace --locked --test cli --no-run
FLAKERY_BIN="$(find "$target/debug/deps" -maxdepth 1 -type f -samefile "$target/debug/flakery" | head -n 1)"
[ -x "$FLAKERY_BIN" ] || { echo "FAIL: target/debug/flakery is no hard link into target/debug/deps" >&2; exit 1; }
export FLAKERY_BIN
native="$PWD/java/target/native-resources/dev/flakery/native/linux-x86_64"
mkdir -p "$native"
strip --strip-debug -o "$native/libflakery_java.so" "$target/release/libflakery_java.so"

cd java
# flakery.jdk22: the javac that compiles the FFM path (src/main/java22) when Maven runs on 17.
mvn_quiet=(mvn -q -B -Dstyle.color=never "-Dflakery.jdk22=$java25")
echo "--- mvn install, then the integrations (Java 17)"
JAVA_HOME="$java17" "${mvn_quiet[@]}" install
JAVA_HOME="$java17" "${mvn_quiet[@]}" -f integrations/pom.xml verify
# The opt-in critical native (docs/java.md): nextId's tests and the close race again with
# -XX:+CriticalJNINatives, where compiled code calls JavaCritical_..._nextIdFast (about 10 s).
echo "--- the nextId tests with -XX:+CriticalJNINatives (Java 17)"
JAVA_HOME="$java17" "${mvn_quiet[@]}" -Dflakery.test.jvm=-XX:+CriticalJNINatives \
  -Dtest='IdPathTest,GeneratorTest' -Dsurefire.failIfNoSpecifiedTests=false surefire:test
echo "--- mvn verify, then the integrations (Java 25)"
# Maven's own guava warns about sun.misc.Unsafe on Java 24 and later: not ours to fix.
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
# Compiled again by Java 25's javac (with -Werror, as on 17): the compiler plugin would find
# Java 17's classes fresh and keep them, and 25's doclint warns where 17's does not.
rm -rf target/classes target/test-classes ../spring-boot/target/classes ../spring-boot/target/test-classes \
  ../hibernate/target/classes ../hibernate/target/test-classes
# The tests of tag "processes" (LeaseTest, LeafClockTest: servers and child JVMs, 55 s) ran on
# Java 17: they exercise the same native calls as the rest, which run again here. LeakTest
# (tag "leaks") runs here too: a leak may live in one JVM's JNI only.
JAVA_HOME="$java25" "${mvn_quiet[@]}" -DexcludedGroups=processes verify
JAVA_HOME="$java25" "${mvn_quiet[@]}" -f integrations/pom.xml verify
echo "java: Java 17 and Java 25 passed"

#!/usr/bin/env bash
# Builds flakery's jar for this platform and installs it into the local Maven repository
# (~/.m2) as dev.flakery:flakery:0.1.0: the release JNI library (bindings-java), packed into
# the jar's resources; then the Spring Boot starter and the Hibernate generator. Needs cargo, a JDK 17 or later and Maven. docs/java.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p flakery-java
target="${CARGO_TARGET_DIR:-target}"
native=java/target/native-resources/dev/flakery/native/linux-x86_64
mkdir -p "$native"
cp "$target/release/libflakery_java.so" "$native/libflakery_java.so"
cd java
mvn -q -B -DskipTests install
echo "installed dev.flakery:flakery:0.1.0 ($(ls target/flakery-*.jar))"
# The integrations, each its own artifact: flakery-spring-boot-starter, flakery-hibernate.
mvn -q -B -DskipTests -f integrations/pom.xml install
echo "installed dev.flakery:flakery-spring-boot-starter:0.1.0 and dev.flakery:flakery-hibernate:0.1.0"

/**
 * flakery for the JVM: Snowflake-style 64-bit IDs that never repeat and never decrease, made by
 * flakery's Rust core through JNI (docs/java.md). Start with {@link dev.flakery.Flakery#nextId()}
 * or {@link dev.flakery.Generator#builder()}.
 */
package dev.flakery;

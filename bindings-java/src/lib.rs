//! The JNI library of flakery's Java package (java/, docs/java.md): `libflakery_java.so`,
//! packed inside the jar and loaded by `dev.flakery.NativeLibrary`.
//!
//! Thin, as every binding is: each native method of `dev.flakery.Native` converts its
//! arguments, calls the core and converts the answer; `errors::guard` catches panics and
//! turns every error into a `FlakeryException` with the core's stable code. Generators,
//! clients and layouts cross to Java as handles (handles.rs: an `Arc` turned into a `long`),
//! released by the Java object's `Cleaner` once it is unreachable, so no call can race the
//! release. On Java 22 and later `nextId` is a downcall of the FFM API instead (ffm.rs).

mod client;
mod doctor;
mod errors;
mod ffm;
mod handles;
mod native;
mod options;

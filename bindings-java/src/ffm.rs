//! The C-ABI functions that Java 22 and later call through the Foreign Function and Memory
//! API (`dev.flakery.FfmIdPath`, a downcall with `Linker.Option.critical`), from the same
//! library the JNI methods live in: the jar loads it once (`System.load`) and the FFM path
//! finds these symbols with `SymbolLookup.loaderLookup()`.
//!
//! A critical downcall must neither block nor call back into Java, and cannot throw: so the
//! function here is the core's hot path alone (`try_next_id_fast`, which never waits, blocks
//! or calls the lease) and answers -1 (never an ID: every ID is non-negative) for everything
//! else. Java then makes the JNI call `nextId`, which takes the core's whole `next_id` and
//! throws its errors as `FlakeryException`s, so waits and errors have one path, not two.

use std::panic::{catch_unwind, AssertUnwindSafe};

use flakery::Generator;
use jni::sys::jlong;

use crate::handles;

/// Not an ID: "take the JNI call".
const NO_ID: jlong = -1;

/// An ID from the core's hot path for the generator behind `handle`, or -1: the tick is used
/// up, the lease has a new grant to take, the generator is closed or forked, or a panic
/// (caught here: nothing unwinds into Java, and the JNI call then reports it).
#[no_mangle]
pub extern "C" fn flakery_java_next_id_fast(handle: jlong) -> jlong {
    // Also the first step of JNI's `nextId` (native.rs), which calls this function (one
    // body, so that the panic guard's closure is inlined here, and this into both).
    // SAFETY: a generator's handle, kept valid by its Java owner across the call (handles.rs).
    let generator = unsafe { handles::get::<Generator>(handle) };
    catch_unwind(AssertUnwindSafe(|| generator.try_next_id_fast()))
        .ok()
        .flatten()
        .unwrap_or(NO_ID)
}

/// A benchmark's baseline, not an API: the bare cost of a downcall of
/// `flakery_java_next_id_fast`'s shape (a `long` in, a `long` out) to a function that returns
/// a constant, as `Java_dev_flakery_Native_benchmarkBaselineConstant` is JNI's.
#[no_mangle]
pub extern "C" fn flakery_java_benchmark_baseline_constant(_handle: jlong) -> jlong {
    42
}

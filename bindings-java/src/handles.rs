//! Native values owned by Java objects (generators, clients, layouts), one set of functions
//! for every type. A value crosses to Java as a handle: an `Arc` turned into a `long`
//! (`Arc::into_raw`), released by the owning object's `Cleaner` once the object is
//! unreachable; every Java caller keeps its object reachable across the call, so no call can
//! race the release. An `Arc` rather than a `Box` so that a value can have two owners: a
//! client's fallback is the generator a Java `Generator` holds too (`share`).
//!
//! Every function runs inside `errors::guard`: no panic crosses into Java.

use std::sync::Arc;

use flakery::{Error, Layout};
use jni::sys::{jint, jlong, jlongArray, jstring};
use jni::JNIEnv;

use crate::errors::{guard, Result};

/// How many IDs `fill_ids` makes per call of `fill` before copying them into the Java array:
/// the array is allocated by the JVM (which refuses a size it cannot hold with its own
/// `OutOfMemoryError`), never a second copy of it in native memory. The array is written by
/// a copy of each chunk, never pinned (`GetPrimitiveArrayCritical`): a fill may wait for a
/// tick, a lease's grant or a server, and a pinned array would hold up the garbage collector.
const CHUNK: usize = 4096;

/// A new handle owning `value`.
pub fn new<T>(value: T) -> jlong {
    Arc::into_raw(Arc::new(value)) as jlong
}

/// # Safety
/// `handle` came from `new::<T>` and is not released: Java releases it only when its owner is
/// unreachable, and keeps the owner reachable across every native call.
pub unsafe fn get<'a, T>(handle: jlong) -> &'a T {
    // SAFETY: as the caller promises.
    unsafe { &*(handle as *const T) }
}

/// Another owner of the value behind `handle` (which stays valid).
///
/// # Safety
/// As `get`.
pub unsafe fn share<T>(handle: jlong) -> Arc<T> {
    let value = handle as *const T;
    // SAFETY: `value` came from `Arc::into_raw` and its count is at least one (the caller's
    // promise); the count raised first is the one `from_raw` takes over.
    unsafe {
        Arc::increment_strong_count(value);
        Arc::from_raw(value)
    }
}

/// `body` with the value behind `handle`; its error or panic is thrown as `guard` throws it.
///
/// # Safety
/// As `get`.
#[inline]
pub unsafe fn with<'local, T, R>(
    env: &mut JNIEnv<'local>,
    handle: jlong,
    fallback: R,
    body: impl FnOnce(&mut JNIEnv<'local>, &T) -> Result<R>,
) -> R {
    // SAFETY: as the caller promises.
    let value = unsafe { get::<T>(handle) };
    guard(env, fallback, |env| body(env, value))
}

/// Releases Java's owner of the value behind `handle` (0: nothing); the value is dropped when
/// no other owner holds it. `T`'s `Drop` never waits (a client's thread ends by itself).
///
/// # Safety
/// `handle` came from `new::<T>` and this is its Java owner's one release (its `Cleaner`).
pub unsafe fn release<T>(env: &mut JNIEnv<'_>, handle: jlong) {
    guard(env, (), |_| {
        if handle != 0 {
            // SAFETY: as the caller promises.
            drop(unsafe { Arc::from_raw(handle as *const T) });
        }
        Ok(())
    })
}

/// A new layout handle with the layout of the value behind `handle`.
///
/// # Safety
/// As `get`.
pub unsafe fn layout_of<T>(
    env: &mut JNIEnv<'_>,
    handle: jlong,
    layout: fn(&T) -> &Layout,
) -> jlong {
    // SAFETY: as the caller promises.
    unsafe {
        with(env, handle, 0, |_, value: &T| {
            Ok(new(layout(value).clone()))
        })
    }
}

/// A new `long[n]` filled a chunk at a time by the filler `start` makes for the whole call
/// (a client's `Batch`: one deadline for every chunk); a negative `n` is `invalid_argument`.
pub fn fill_ids<F>(
    env: &mut JNIEnv<'_>,
    n: jint,
    start: impl FnOnce(usize) -> F,
) -> Result<jlongArray>
where
    F: FnMut(&mut [i64]) -> std::result::Result<(), Error>,
{
    let Ok(count) = usize::try_from(n) else {
        return Err(
            Error::invalid_argument(format!("n must be a non-negative integer, not {n}")).into(),
        );
    };
    let mut fill = start(count);
    let array = env.new_long_array(n)?;
    let mut chunk = vec![0i64; CHUNK.min(count)];
    let mut done = 0usize;
    while done < count {
        let take = CHUNK.min(count - done);
        fill(&mut chunk[..take])?;
        env.set_long_array_region(&array, done as jint, &chunk[..take])?;
        done += take;
    }
    Ok(array.into_raw())
}

/// A new Java `String` of `text`.
pub fn java_string(env: &mut JNIEnv<'_>, text: impl AsRef<str>) -> Result<jstring> {
    Ok(env.new_string(text.as_ref())?.into_raw())
}

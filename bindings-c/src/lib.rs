//! The C ABI of flakery: `include/flakery.h` (generated from this crate by cbindgen) with
//! `libflakery.a` / `libflakery.so`.
//!
//! Every entry point is a thin wrapper: it checks its pointers, builds the core's types, calls
//! the core, and turns an error into a `flakery_status` plus a thread-local message. Panics are
//! caught at the boundary (`guard`) and become `FLAKERY_STATUS_PANIC`.

#![allow(non_camel_case_types)]
// Every `unsafe extern "C" fn` here states what it needs from its caller in the header's
// comments, which is where a C programmer reads them.
#![allow(clippy::missing_safety_doc)]

mod client;
mod doctor;
mod error;
mod options;
mod parts;
mod text;

use std::ffi::c_char;

pub use client::{
    flakery_client, flakery_client_close, flakery_client_decode, flakery_client_free,
    flakery_client_layout, flakery_client_new, flakery_client_next_id, flakery_client_next_ids,
    flakery_client_options, flakery_client_options_init_sized,
};

pub use doctor::{flakery_doctor_json, flakery_string_free};
use flakery_core::{Error, ErrorCode, Generator};

pub use error::{
    flakery_last_error, flakery_last_error_message, flakery_status, flakery_status_message,
};
use error::{guard, out_slice, write_out};
pub use options::{
    flakery_options, flakery_options_init_sized, flakery_sequence_policy,
    FLAKERY_SESSION_TIMEOUT_MS_NOT_GIVEN,
};
pub use parts::{
    flakery_capacity, flakery_compose, flakery_decode, flakery_decode_field,
    flakery_generator_decode, flakery_layout_capacity, flakery_layout_normalize, flakery_parts,
};
pub use text::{
    flakery_from_base32, flakery_from_base62, flakery_to_base32, flakery_to_base62,
    FLAKERY_BASE32_LEN, FLAKERY_BASE62_LEN,
};

/// A generator: one layout, one node identity (datacenter and worker) and its policies.
///
/// Made by `flakery_generator_new`, released by `flakery_generator_free`. Thread-safe: any
/// number of threads may call `flakery_next_id` and the getters on one generator at the same
/// time, with no lock of their own; only `flakery_generator_free` must not run while another
/// call on the same generator is in progress.
pub struct flakery_generator {
    inner: Generator,
}

/// The version of the library, such as "0.1.0". A static string: never free it.
#[no_mangle]
pub extern "C" fn flakery_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Makes a generator from `opts` (NULL: every option at its default, that is, from the
/// `FLAKERY_*` environment variables or the defaults of docs/spec.md#generator-options) and stores it in `*out`.
///
/// `opts` must have been filled by `flakery_options_init` before its fields were set. On
/// failure `*out` is left unchanged; errors: `FLAKERY_STATUS_INVALID_LAYOUT`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (a NULL `out`, a value that does not fit its field, an
/// unknown constant field, ...), and the node-identity errors of docs/spec.md#node-identity
/// (`FLAKERY_STATUS_COORDINATOR_UNAVAILABLE`, `FLAKERY_STATUS_WORKER_IDS_EXHAUSTED`).
/// Free the generator with `flakery_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_new(
    opts: *const flakery_options,
    out: *mut *mut flakery_generator,
) -> flakery_status {
    guard(|| {
        if out.is_null() {
            return Err(error::null("out"));
        }
        let options = options::read(opts)?;
        install_coordinators();
        let inner = Generator::new(options)?;
        let raw = Box::into_raw(Box::new(flakery_generator { inner }));
        // SAFETY: `out` is non-NULL and, as the header asks, points to writable storage.
        unsafe { out.write(raw) };
        Ok(())
    })
}

/// Releases a generator and its node ID lease. NULL is allowed and does nothing. The pointer
/// must not be used again, and no other thread may be using the generator.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_free(generator: *mut flakery_generator) {
    if generator.is_null() {
        return;
    }
    // A panic while releasing cannot be reported through a void function: it is recorded as
    // the last error of this thread and otherwise ignored.
    let _ = guard(|| {
        // SAFETY: the header requires a pointer from `flakery_generator_new`, not yet freed.
        drop(unsafe { Box::from_raw(generator) });
        Ok(())
    });
}

/// Releases the generator's node ID lease now, while keeping the handle valid: every later
/// `flakery_next_id` on it fails with `FLAKERY_STATUS_LEASE_LOST`. Closing twice is fine.
/// The handle must still be freed with `flakery_generator_free`.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_close(
    generator: *const flakery_generator,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let generator = unsafe { generator_ref(generator)? };
        generator.close();
        Ok(())
    })
}

/// One new ID from `generator` into `*out`: larger than every ID this generator returned
/// before, on any thread. Blocks (for at most one tick, or the backwards tolerance) when the
/// sequence of the current tick is used up or the clock stepped back a little.
///
/// Errors: `FLAKERY_STATUS_INVALID_ARGUMENT` (NULL pointers), `FLAKERY_STATUS_TIME_EXHAUSTED`,
/// `FLAKERY_STATUS_CLOCK_MOVED_BACKWARDS`, `FLAKERY_STATUS_LEASE_LOST`, `FLAKERY_STATUS_FORKED`.
#[no_mangle]
pub unsafe extern "C" fn flakery_next_id(
    generator: *const flakery_generator,
    out: *mut i64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let generator = unsafe { generator_ref(generator)? };
        if out.is_null() {
            return Err(error::null("out"));
        }
        let id = generator.next_id()?;
        // SAFETY: `out` is non-NULL and, as the header asks, points to a writable int64_t.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// `n` new IDs, in increasing order, into `out[0]` to `out[n-1]`. Whole runs of a tick's
/// sequence numbers are reserved at once, so this is much cheaper per ID than `n` calls of
/// `flakery_next_id`. `out` must not be NULL (even when `n` is 0); `n` may be 0. On failure
/// `out` is left unchanged.
#[no_mangle]
pub unsafe extern "C" fn flakery_next_ids(
    generator: *const flakery_generator,
    out: *mut i64,
    n: usize,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let generator = unsafe { generator_ref(generator)? };
        // SAFETY: the header requires `out` to hold `n` writable int64_t.
        let out = unsafe { out_slice(out, n)? };
        fill(generator, out)
    })
}

/// The library ships every coordinator (ZooKeeper and database leases work); a C library
/// has no load-time hook that every linker keeps, so each call that can make a generator
/// installs them first (a no-op after the first: one atomic load).
fn install_coordinators() {
    flakery_coordinators::install();
}

/// One new ID from the process-wide generator into `*out`. The process-wide generator is made
/// on first use from the environment (`FLAKERY_LAYOUT`, `FLAKERY_WORKER_ID`, ...); a failure
/// to make it is returned and the next call tries again. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn flakery_next_id_default(out: *mut i64) -> flakery_status {
    guard(|| {
        if out.is_null() {
            return Err(error::null("out"));
        }
        install_coordinators();
        let id = flakery_core::next_id()?;
        // SAFETY: `out` is non-NULL and, as the header asks, points to a writable int64_t.
        unsafe { out.write(id) };
        Ok(())
    })
}

/// `n` new IDs from the process-wide generator, as `flakery_next_ids` does.
#[no_mangle]
pub unsafe extern "C" fn flakery_next_ids_default(out: *mut i64, n: usize) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires `out` to hold `n` writable int64_t.
        let out = unsafe { out_slice(out, n)? };
        install_coordinators();
        fill(flakery_core::default_generator()?, out)
    })
}

/// The generator's worker ID into `*out` (0 when its layout has no worker field).
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_worker_id(
    generator: *const flakery_generator,
    out: *mut u64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator, and NULL or a writable out.
        unsafe { write_out(out, generator_ref(generator)?.worker_id()) }
    })
}

/// The generator's datacenter ID into `*out` (0 when its layout has no datacenter field).
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_datacenter_id(
    generator: *const flakery_generator,
    out: *mut u64,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator, and NULL or a writable out.
        unsafe { write_out(out, generator_ref(generator)?.datacenter_id()) }
    })
}

/// Where the generator's node ID came from, as a static string into `*out`: "explicit",
/// "environment", "hostname", "zookeeper", "database" or "host_lease". Never free it.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_source(
    generator: *const flakery_generator,
    out: *mut *const c_char,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let source = unsafe { generator_ref(generator)? }.source();
        // SAFETY: the header requires NULL or a writable `const char *`.
        unsafe { write_out(out, error::source_name(source).as_ptr()) }
    })
}

/// The generator's layout as its canonical spec string (a preset name where it is one, such as
/// "twitter"), written into `buf` as `flakery_layout_normalize` writes it.
#[no_mangle]
pub unsafe extern "C" fn flakery_generator_layout(
    generator: *const flakery_generator,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    guard(|| {
        // SAFETY: the header requires NULL or a live generator.
        let layout = unsafe { generator_ref(generator)? }.layout().to_string();
        // SAFETY: the header requires `buf` to hold `len` writable bytes and `written` to be
        // writable.
        unsafe { error::write_string(&layout, buf, len, written) }
    })
}

/// Borrows the generator behind a C pointer.
///
/// # Safety
/// `generator` is NULL or came from `flakery_generator_new` and was not freed.
#[inline]
unsafe fn generator_ref<'a>(generator: *const flakery_generator) -> Result<&'a Generator, Error> {
    // SAFETY: as the caller promises.
    match unsafe { generator.as_ref() } {
        Some(generator) => Ok(&generator.inner),
        None => Err(error::null("generator")),
    }
}

/// Fills `out` so that it is written only when every ID was made: the core fills a buffer of
/// its own, which is copied when all went well.
fn fill(generator: &Generator, out: &mut [i64]) -> Result<(), Error> {
    let mut ids = Vec::new();
    ids.try_reserve_exact(out.len()).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("cannot allocate room for {} IDs", out.len()),
        )
    })?;
    ids.resize(out.len(), 0);
    generator.fill(&mut ids)?;
    out.copy_from_slice(&ids);
    Ok(())
}

#[cfg(test)]
mod header_test;

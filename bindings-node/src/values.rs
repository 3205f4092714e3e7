//! The hot calls' results, built through raw Node-API (`fast`): an ID's string from a stack
//! buffer, and a `BigInt64Array` that the core fills in place. Every other result is a
//! napi-rs type (`results`).

use std::ptr;

use napi::sys;

use flakery::{text, IdFormat};

use crate::errors::{check, core_error, JsResult, OrThrow};

/// `id` in `format`, made into a string from a stack buffer: no heap allocation.
pub(crate) fn new_id_text(
    env: sys::napi_env,
    id: i64,
    format: IdFormat,
) -> JsResult<sys::napi_value> {
    match format {
        IdFormat::Decimal => new_id_string(env, id),
        IdFormat::Base32 => new_ascii(env, &text::encode_base32(id).or_throw(env)?),
        IdFormat::Base62 => new_ascii(env, &text::encode_base62(id).or_throw(env)?),
    }
}

/// Writes `id` in decimal into a stack buffer and makes a string of it: no heap allocation.
pub(crate) fn new_id_string(env: sys::napi_env, id: i64) -> JsResult<sys::napi_value> {
    // Digits written backwards into a stack buffer: no allocation. IDs are never negative.
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut rest = id as u64;
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    new_ascii(env, &buf[at..])
}

fn new_ascii(env: sys::napi_env, bytes: &[u8]) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: the pointer and length describe initialised ASCII bytes.
    check(unsafe {
        sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out)
    })?;
    Ok(out)
}

/// A `BigInt64Array` of `n` new IDs, written by the core straight into the array's memory.
pub(crate) fn new_id_array(
    env: sys::napi_env,
    n: usize,
    fill: impl FnOnce(&mut [i64]) -> flakery::Result<()>,
) -> JsResult<sys::napi_value> {
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    let mut buffer = ptr::null_mut();
    // SAFETY: env is live; the call writes data and buffer.
    check(unsafe { sys::napi_create_arraybuffer(env, n * 8, &mut data, &mut buffer) })?;
    if n > 0 {
        if data.is_null() || !data.cast::<i64>().is_aligned() {
            return Err(napi::Error::new(
                "internal_error",
                "an ArrayBuffer's memory is not aligned for 64-bit integers".to_string(),
            ));
        }
        // SAFETY: the buffer is `n * 8` bytes, aligned for i64 (checked), owned by the new
        // ArrayBuffer, which nothing else can see yet; it stays alive while `buffer` is a
        // live handle of this call's scope.
        let ids = unsafe { std::slice::from_raw_parts_mut(data.cast::<i64>(), n) };
        fill(ids).map_err(|e| core_error(env, e))?;
    }
    let mut array = ptr::null_mut();
    // SAFETY: buffer is a live ArrayBuffer of exactly n i64 elements.
    check(unsafe {
        sys::napi_create_typedarray(
            env,
            sys::TypedarrayType::bigint64_array,
            n,
            buffer,
            0,
            &mut array,
        )
    })?;
    Ok(array)
}

//! Building JavaScript values through Node-API: numbers, bigints, dates, ID strings and arrays,
//! plain objects.

use std::ptr;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use flakery::{text, IdFormat};

use crate::errors::{check, core_error, range_error, JsResult, OrThrow};

/// A value already made through Node-API, handed back as it is.
pub struct Raw(pub(crate) sys::napi_value);

impl ToNapiValue for Raw {
    unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        Ok(val.0)
    }
}

pub(crate) fn new_bigint(env: sys::napi_env, value: i64) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: env is live; out is written by the call.
    check(unsafe { sys::napi_create_bigint_int64(env, value, &mut out) })?;
    Ok(out)
}

/// A `bigint` of an unsigned 64-bit ID (`BigUint64`): IDs of unsigned layouts reach 2^64-1.
pub(crate) fn new_biguint(env: sys::napi_env, value: u64) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: env is live; out is written by the call.
    check(unsafe { sys::napi_create_bigint_uint64(env, value, &mut out) })?;
    Ok(out)
}

pub(crate) fn new_number(env: sys::napi_env, value: f64) -> JsResult<sys::napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: as above.
    check(unsafe { sys::napi_create_double(env, value, &mut out) })?;
    Ok(out)
}

/// A field value: a `number` when the field is at most 53 bits wide (every value is exact),
/// a `bigint` when it is wider. The type depends on the layout, never on the value.
pub(crate) fn new_field_value(
    env: sys::napi_env,
    value: u64,
    bits: u32,
) -> JsResult<sys::napi_value> {
    if bits <= 53 {
        new_number(env, value as f64)
    } else {
        let mut out = ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_create_bigint_uint64(env, value, &mut out) })?;
        Ok(out)
    }
}

/// The largest magnitude of a JavaScript `Date`, in milliseconds.
pub(crate) const MAX_DATE_MS: i64 = 8_640_000_000_000_000;

pub(crate) fn new_date(env: sys::napi_env, ms: i64) -> JsResult<sys::napi_value> {
    if !(-MAX_DATE_MS..=MAX_DATE_MS).contains(&ms) {
        return Err(range_error(
            env,
            format!("timestamp {ms} ms is beyond what a JavaScript Date can hold"),
        ));
    }
    let mut out = ptr::null_mut();
    // SAFETY: as above.
    check(unsafe { sys::napi_create_date(env, ms as f64, &mut out) })?;
    Ok(out)
}

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

/// A plain object under construction.
pub(crate) struct ObjectBuilder {
    env: sys::napi_env,
    object: sys::napi_value,
}

impl ObjectBuilder {
    pub(crate) fn new(env: sys::napi_env) -> napi::Result<Self, &'static str> {
        let mut object = ptr::null_mut();
        // SAFETY: env is live.
        check(unsafe { sys::napi_create_object(env, &mut object) })?;
        Ok(ObjectBuilder { env, object })
    }

    /// Sets `key` (a NUL-terminated literal) to a value made through Node-API.
    pub(crate) fn set(&mut self, key: &std::ffi::CStr, value: sys::napi_value) -> JsResult<()> {
        // SAFETY: object and value are live handles; key is NUL-terminated.
        check(unsafe { sys::napi_set_named_property(self.env, self.object, key.as_ptr(), value) })
    }

    /// Sets a key that is not a literal (a field name from a layout).
    pub(crate) fn set_dynamic(&mut self, key: &str, value: sys::napi_value) -> JsResult<()> {
        let mut name = ptr::null_mut();
        // SAFETY: the pointer and length describe valid UTF-8.
        check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                key.as_ptr().cast(),
                key.len() as isize,
                &mut name,
            )
        })?;
        // SAFETY: all three handles are live.
        check(unsafe { sys::napi_set_property(self.env, self.object, name, value) })
    }

    pub(crate) fn set_number(&mut self, key: &std::ffi::CStr, value: f64) -> JsResult<()> {
        let value = new_number(self.env, value)?;
        self.set(key, value)
    }

    pub(crate) fn set_string(&mut self, key: &std::ffi::CStr, value: &str) -> JsResult<()> {
        let mut out = ptr::null_mut();
        // SAFETY: the pointer and length describe valid UTF-8.
        check(unsafe {
            sys::napi_create_string_utf8(
                self.env,
                value.as_ptr().cast(),
                value.len() as isize,
                &mut out,
            )
        })?;
        self.set(key, out)
    }

    pub(crate) fn set_bool(&mut self, key: &std::ffi::CStr, value: bool) -> JsResult<()> {
        let mut out = ptr::null_mut();
        // SAFETY: env is live; out is written by the call.
        check(unsafe { sys::napi_get_boolean(self.env, value, &mut out) })?;
        self.set(key, out)
    }

    pub(crate) fn set_null(&mut self, key: &std::ffi::CStr) -> JsResult<()> {
        let mut out = ptr::null_mut();
        // SAFETY: env is live.
        check(unsafe { sys::napi_get_null(self.env, &mut out) })?;
        self.set(key, out)
    }

    pub(crate) fn finish(self) -> sys::napi_value {
        self.object
    }
}

pub(crate) fn new_array(
    env: sys::napi_env,
    items: &[sys::napi_value],
) -> JsResult<sys::napi_value> {
    let mut array = ptr::null_mut();
    // SAFETY: env is live.
    check(unsafe { sys::napi_create_array_with_length(env, items.len(), &mut array) })?;
    for (i, item) in items.iter().enumerate() {
        // SAFETY: array and item are live handles.
        check(unsafe { sys::napi_set_element(env, array, i as u32, *item) })?;
    }
    Ok(array)
}

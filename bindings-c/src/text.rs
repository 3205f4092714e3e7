//! The fixed-width text forms of an ID (base32 and base62, whose byte order is the IDs' order)
//! as the core writes and reads them.

use std::borrow::Cow;
use std::ffi::{c_char, CStr};

use flakery_core::{text, Error};

use crate::error::{flakery_status, guard, null, write_out, write_string};

// Literals, so that cbindgen can write them into the header; the core's lengths, checked.

/// The length of an ID's base32 form; a buffer for it needs one more byte, for the NUL.
pub const FLAKERY_BASE32_LEN: usize = 13;

/// The length of an ID's base62 form; a buffer for it needs one more byte, for the NUL.
pub const FLAKERY_BASE62_LEN: usize = 11;

const _: () = assert!(FLAKERY_BASE32_LEN == text::BASE32_LEN);
const _: () = assert!(FLAKERY_BASE62_LEN == text::BASE62_LEN);

/// A NUL-terminated text argument. Bytes that are not UTF-8 become U+FFFD, so that the core's
/// message names the position of the first bad one.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string.
unsafe fn text_arg<'a>(ptr: *const c_char) -> Result<Cow<'a, str>, Error> {
    if ptr.is_null() {
        return Err(null("text"));
    }
    // SAFETY: non-NULL and NUL-terminated as the caller promises.
    Ok(String::from_utf8_lossy(
        unsafe { CStr::from_ptr(ptr) }.to_bytes(),
    ))
}

/// # Safety
/// As `flakery_to_base32`.
unsafe fn to_text(
    encoded: Result<impl AsRef<[u8]>, Error>,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    guard(|| {
        let bytes = encoded?;
        // The alphabets are ASCII.
        let text = std::str::from_utf8(bytes.as_ref()).unwrap_or_default();
        // SAFETY: the caller promises `len` writable bytes at `buf` and a writable `written`.
        unsafe { write_string(text, buf, len, written) }
    })
}

/// # Safety
/// As `flakery_from_base32`.
unsafe fn from_text(
    text: *const c_char,
    out: *mut i64,
    parse: fn(&str) -> Result<i64, Error>,
) -> flakery_status {
    guard(|| {
        // SAFETY: the caller promises a NUL-terminated text.
        let id = parse(&unsafe { text_arg(text)? })?;
        // SAFETY: the caller promises NULL or a writable int64_t.
        unsafe { write_out(out, id) }
    })
}

/// The base32 form of `id` (13 characters of Crockford's alphabet, upper case, zero-padded;
/// sorting these strings sorts the IDs) into `buf`, NUL-terminated, and 13 into `*written`.
/// `buf` must hold at least `FLAKERY_BASE32_LEN + 1` bytes; with `buf` NULL and `len` 0 only
/// the length is written. Errors: `FLAKERY_STATUS_INVALID_ARGUMENT` (a negative `id`, a buffer
/// too small, NULL `written`); nothing is written then.
#[no_mangle]
pub unsafe extern "C" fn flakery_to_base32(
    id: i64,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    // SAFETY: the header requires `len` writable bytes at `buf` and a writable `written`.
    unsafe { to_text(text::encode_base32(id), buf, len, written) }
}

/// The base62 form of `id` (11 characters of `0-9A-Za-z`, zero-padded; sorting these strings
/// by byte, as `strcmp` does, sorts the IDs), as `flakery_to_base32` writes it; `buf` must hold
/// at least `FLAKERY_BASE62_LEN + 1` bytes.
#[no_mangle]
pub unsafe extern "C" fn flakery_to_base62(
    id: i64,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    // SAFETY: as flakery_to_base32.
    unsafe { to_text(text::encode_base62(id), buf, len, written) }
}

/// The ID whose base32 form is the NUL-terminated `text`, into `*out`. Case-insensitive; `O`
/// reads as 0, `I` and `L` as 1. A text of the wrong length, with a character outside the
/// alphabet, or above 2^63-1 is `FLAKERY_STATUS_INVALID_ARGUMENT`, and the last error names
/// the character (and its position) or the reason.
#[no_mangle]
pub unsafe extern "C" fn flakery_from_base32(text: *const c_char, out: *mut i64) -> flakery_status {
    // SAFETY: the header requires a NUL-terminated text and a writable `out`.
    unsafe { from_text(text, out, text::from_base32) }
}

/// The ID whose base62 form is the NUL-terminated `text` (case-sensitive), into `*out`; errors
/// as `flakery_from_base32`.
#[no_mangle]
pub unsafe extern "C" fn flakery_from_base62(text: *const c_char, out: *mut i64) -> flakery_status {
    // SAFETY: as flakery_from_base32.
    unsafe { from_text(text, out, text::from_base62) }
}

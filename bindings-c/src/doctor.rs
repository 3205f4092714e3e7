//! `flakery_doctor_json`: the core's budgets report (docs/doctor.md) as a JSON string the
//! caller owns. Converts only: the report is the core's (flakery::doctor).

use std::ffi::{c_char, CString};

use flakery_core::{Error, ErrorCode};

use crate::error::{flakery_status, guard, null};
use crate::options::{self, flakery_options};

/// The budgets report for `opts` (NULL: every option at its default, that is, from the
/// `FLAKERY_*` environment variables) as one JSON object, stored in `*out` as a NUL-terminated
/// string that the caller frees with `flakery_string_free`. Its `exit_code` member is what
/// `flakery doctor` would exit with: 0 all well, 1 warnings, 2 refused. No node ID lease is
/// taken. On failure `*out` is left unchanged: `FLAKERY_STATUS_INVALID_LAYOUT`,
/// `FLAKERY_STATUS_INVALID_ARGUMENT` (a NULL `out`, an option out of range).
#[no_mangle]
pub unsafe extern "C" fn flakery_doctor_json(
    opts: *const flakery_options,
    out: *mut *mut c_char,
) -> flakery_status {
    guard(|| {
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: the header requires `opts` NULL or filled by `flakery_options_init`.
        let options = unsafe { options::read(opts)? };
        let json = flakery_core::doctor::report_json(options)?;
        let text = CString::new(json)
            .map_err(|_| Error::new(ErrorCode::InvalidArgument, "the report holds a NUL byte"))?;
        // SAFETY: `out` is non-NULL and, as the header asks, points to writable storage.
        unsafe { out.write(text.into_raw()) };
        Ok(())
    })
}

/// Frees a string the library gave the caller to own (`flakery_doctor_json`'s). NULL is
/// allowed and does nothing; the pointer must not be used again.
#[no_mangle]
pub unsafe extern "C" fn flakery_string_free(text: *mut c_char) {
    if !text.is_null() {
        // SAFETY: the header requires a string this library made with CString::into_raw.
        drop(unsafe { CString::from_raw(text) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_json_the_caller_frees() {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: NULL options; `out` is writable.
        let status = unsafe { flakery_doctor_json(std::ptr::null(), &mut out) };
        assert_eq!(status as i32, 0);
        // SAFETY: the library wrote a NUL-terminated string.
        let text = unsafe { std::ffi::CStr::from_ptr(out) }
            .to_str()
            .unwrap()
            .to_string();
        unsafe { flakery_string_free(out) };
        assert!(
            text.starts_with("{\"status\":") && text.ends_with('}'),
            "{text}"
        );
        assert!(
            text.contains("\"layout\":{\"layout\":\"twitter\""),
            "{text}"
        );
        // SAFETY: a NULL `out` is refused, never written.
        let status = unsafe { flakery_doctor_json(std::ptr::null(), std::ptr::null_mut()) };
        assert_ne!(status as i32, 0);
        unsafe { flakery_string_free(std::ptr::null_mut()) };
    }
}

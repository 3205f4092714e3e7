//! Status codes, the thread-local last error, the panic guard, and the checks of pointers and
//! lengths that every entry point shares.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use flakery_core::{Error, ErrorCode, NodeSource};

/// What a fallible function did. `FLAKERY_STATUS_OK` is 0; each other value is one of the
/// error codes of docs/spec.md#errors, with the same number as the Rust core's `ErrorCode`, and
/// `flakery_status_message` gives its code string ("invalid_layout", ...). The detailed
/// message of the last failure on the calling thread is `flakery_last_error()`.
///
/// A NULL pointer or an impossible length is `FLAKERY_STATUS_INVALID_ARGUMENT`.
/// `FLAKERY_STATUS_PANIC` means a bug in flakery was caught before it could cross into C;
/// the library is still usable.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum flakery_status {
    Ok = 0,
    /// "invalid_layout": a layout string that cannot be parsed; the message names the bad part.
    InvalidLayout = 1,
    /// "invalid_argument": a NULL pointer, a bad length, or a value that does not fit.
    InvalidArgument = 2,
    /// "time_exhausted": the layout's time field has run out (or would set bit 63).
    TimeExhausted = 3,
    /// "clock_moved_backwards": the clock stepped back by more than the tolerance.
    ClockMovedBackwards = 4,
    /// "lease_lost": the generator cannot prove that its node ID is still its own.
    LeaseLost = 5,
    /// "coordinator_unavailable": ZooKeeper could not be reached.
    CoordinatorUnavailable = 6,
    /// "worker_ids_exhausted": every node ID is taken.
    WorkerIdsExhausted = 7,
    /// "forked": a generator with a fixed node ID was used in a child process after fork().
    Forked = 8,
    /// "servers_unavailable": a `flakery_client`'s servers gave no IDs within its deadline
    /// (each refused, failed, timed out or answered 503); the message names each server.
    ServersUnavailable = 20,
    /// "unauthorized": every server of a `flakery_client` refused its token.
    Unauthorized = 21,
    /// "bad_answer": every server of a `flakery_client` answered something that is not a
    /// batch of IDs (not a flakery server, or another layout).
    BadAnswer = 22,
    /// "tls_failed": the TLS handshake with every `https://` server of a `flakery_client`
    /// failed (unknown CA, expired, wrong host name, client certificate refused).
    TlsFailed = 23,
    /// "panic": an internal error of flakery, caught at the boundary.
    Panic = 100,
}

impl From<ErrorCode> for flakery_status {
    fn from(code: ErrorCode) -> Self {
        match code {
            ErrorCode::InvalidLayout => flakery_status::InvalidLayout,
            ErrorCode::InvalidArgument => flakery_status::InvalidArgument,
            ErrorCode::TimeExhausted => flakery_status::TimeExhausted,
            ErrorCode::ClockMovedBackwards => flakery_status::ClockMovedBackwards,
            ErrorCode::LeaseLost => flakery_status::LeaseLost,
            ErrorCode::CoordinatorUnavailable => flakery_status::CoordinatorUnavailable,
            ErrorCode::WorkerIdsExhausted => flakery_status::WorkerIdsExhausted,
            ErrorCode::Forked => flakery_status::Forked,
            ErrorCode::ServersUnavailable => flakery_status::ServersUnavailable,
            ErrorCode::Unauthorized => flakery_status::Unauthorized,
            ErrorCode::BadAnswer => flakery_status::BadAnswer,
            ErrorCode::TlsFailed => flakery_status::TlsFailed,
        }
    }
}

/// The code string of a status, NUL-terminated for C. The strings are docs/spec.md#errors' (and
/// `ErrorCode::as_str`'s); a unit test keeps them equal.
pub(crate) fn status_name(status: i32) -> &'static CStr {
    match status {
        0 => c"ok",
        1 => c"invalid_layout",
        2 => c"invalid_argument",
        3 => c"time_exhausted",
        4 => c"clock_moved_backwards",
        5 => c"lease_lost",
        6 => c"coordinator_unavailable",
        7 => c"worker_ids_exhausted",
        8 => c"forked",
        20 => c"servers_unavailable",
        21 => c"unauthorized",
        22 => c"bad_answer",
        23 => c"tls_failed",
        100 => c"panic",
        _ => c"unknown",
    }
}

/// `NodeSource::as_str`, NUL-terminated for C; a unit test keeps them equal.
pub(crate) fn source_name(source: NodeSource) -> &'static CStr {
    match source {
        NodeSource::Explicit => c"explicit",
        NodeSource::Environment => c"environment",
        NodeSource::Hostname => c"hostname",
        NodeSource::ZooKeeper => c"zookeeper",
        NodeSource::HostLease => c"host_lease",
        NodeSource::Database => c"database",
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs the body of an entry point: an error becomes its status and the thread's last error,
/// a panic becomes `FLAKERY_STATUS_PANIC`. Nothing is recorded on success.
#[inline(always)]
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Error>) -> flakery_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => flakery_status::Ok,
        Ok(Err(error)) => record(error),
        Err(payload) => record_panic(payload),
    }
}

#[cold]
#[inline(never)]
fn record(error: Error) -> flakery_status {
    set_last_error(error.message());
    error.code().into()
}

#[cold]
#[inline(never)]
fn record_panic(payload: Box<dyn Any + Send>) -> flakery_status {
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    set_last_error(&format!(
        "internal error in flakery (a panic, caught at the C boundary): {what}"
    ));
    drop_payload(payload);
    flakery_status::Panic
}

/// Drops a panic payload, whose own destructor could panic too; that second payload is
/// forgotten rather than let unwind into C.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(|| drop(payload))) {
        std::mem::forget(again);
    }
}

fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // `try_with`: a call made while the thread is being torn down has nowhere to keep it.
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = text);
}

/// The error a NULL pointer argument gives.
#[cold]
pub(crate) fn null(name: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!("{name} is NULL; it must point to valid memory"),
    )
}

/// Writes `value` through an out-pointer that may be NULL (an error).
///
/// # Safety
/// `out` is NULL or valid for writes of one `T`.
#[inline]
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) -> Result<(), Error> {
    if out.is_null() {
        return Err(null("out"));
    }
    // SAFETY: non-NULL, and valid for writes as the caller promises.
    unsafe { out.write(value) };
    Ok(())
}

/// The caller's array of `n` writable `T` as a slice; NULL or a length no array can have is an
/// error.
///
/// # Safety
/// `ptr` is NULL or valid for writes of `n` `T`, and nothing else accesses them meanwhile.
pub(crate) unsafe fn out_slice<'a, T>(ptr: *mut T, n: usize) -> Result<&'a mut [T], Error> {
    if ptr.is_null() {
        return Err(null("out"));
    }
    check_len(ptr.cast_const(), n, "out")?;
    // SAFETY: non-NULL, aligned (a C array of T), `n` elements as the caller promises, and
    // `n * size_of::<T>()` fits in isize (checked).
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, n) })
}

/// The caller's array of `n` `T` as a slice; `n == 0` needs no pointer.
///
/// # Safety
/// `ptr` is NULL or valid for reads of `n` `T`.
pub(crate) unsafe fn in_slice<'a, T>(
    ptr: *const T,
    n: usize,
    name: &str,
) -> Result<&'a [T], Error> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(null(name));
    }
    check_len(ptr, n, name)?;
    // SAFETY: as in `out_slice`.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

fn check_len<T>(ptr: *const T, n: usize, name: &str) -> Result<(), Error> {
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    let fits =
        bytes.is_some_and(|b| b <= isize::MAX as usize && (ptr as usize).checked_add(b).is_some());
    if !fits {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{name}: a length of {n} elements is larger than any array can be"),
        ));
    }
    Ok(())
}

/// A C string argument as UTF-8; NULL and invalid UTF-8 are errors.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string.
pub(crate) unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Error> {
    if ptr.is_null() {
        return Err(null(name));
    }
    // SAFETY: non-NULL and NUL-terminated as the caller promises.
    let bytes = unsafe { CStr::from_ptr(ptr) };
    bytes.to_str().map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{name} is not valid UTF-8"),
        )
    })
}

/// Writes `text` and a NUL into `buf` of `len` bytes and its length (without the NUL) into
/// `*written`. `buf == NULL` with `len == 0` only asks the length. A buffer too small is an
/// error, and then nothing is written.
///
/// # Safety
/// `buf` is NULL or valid for writes of `len` bytes; `written` is NULL or writable.
pub(crate) unsafe fn write_string(
    text: &str,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> Result<(), Error> {
    if written.is_null() {
        return Err(null("written"));
    }
    if buf.is_null() && len == 0 {
        // SAFETY: non-NULL, writable as the caller promises.
        unsafe { written.write(text.len()) };
        return Ok(());
    }
    // SAFETY: the caller promises `len` writable bytes.
    let buf = unsafe { out_slice(buf.cast::<u8>(), len)? };
    if len <= text.len() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "a buffer of {len} bytes is too small for {} bytes and the terminating NUL",
                text.len()
            ),
        ));
    }
    buf[..text.len()].copy_from_slice(text.as_bytes());
    buf[text.len()] = 0;
    // SAFETY: non-NULL, writable as the caller promises.
    unsafe { written.write(text.len()) };
    Ok(())
}

/// The code string of a status, such as "invalid_layout" for `FLAKERY_STATUS_INVALID_LAYOUT`
/// and "ok" for `FLAKERY_STATUS_OK`; "unknown" for a value that is no status. A static string:
/// never free it. Takes any integer, so that a value from elsewhere is safe to pass.
#[no_mangle]
pub extern "C" fn flakery_status_message(status: i32) -> *const c_char {
    status_name(status).as_ptr()
}

/// The detailed message of the last call on this thread that failed, such as "worker_id 99
/// does not fit in 5 bits (0 to 31)"; "" when none has. Successful calls leave it as it is.
/// The pointer stays valid until the next failing flakery call on this thread, or the
/// thread's end: copy the text to keep it. Never free it.
#[no_mangle]
pub extern "C" fn flakery_last_error() -> *const c_char {
    LAST_ERROR
        .try_with(|last| last.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// Copies the detailed message of the last failed call on this thread (see
/// `flakery_last_error`) into `buf` as `snprintf` would: at most `len - 1` bytes and a NUL,
/// cut short if `buf` is too small, nothing if `len` is 0 (then `buf` may be NULL). The full
/// length of the message, without the NUL, goes into `*written` unless `written` is NULL, so
/// a result not less than `len` means the text was cut. A NULL `buf` with `len > 0` is
/// `FLAKERY_STATUS_INVALID_ARGUMENT`. Never changes the last error, not even when it fails.
#[no_mangle]
pub unsafe extern "C" fn flakery_last_error_message(
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> flakery_status {
    let copy = || {
        LAST_ERROR.with(|last| {
            let last = last.borrow();
            let text = last.as_bytes();
            if len > 0 && !buf.is_null() {
                let n = text.len().min(len - 1);
                // SAFETY: the caller promises `len` writable bytes at `buf`, and `n < len`.
                unsafe {
                    std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
                    buf.add(n).write(0);
                }
            }
            if !written.is_null() {
                // SAFETY: non-NULL and writable as the caller promises.
                unsafe { written.write(text.len()) };
            }
        })
    };
    if len > 0 && buf.is_null() {
        // Reported without touching the last error, which the caller is asking for.
        return flakery_status::InvalidArgument;
    }
    match catch_unwind(AssertUnwindSafe(copy)) {
        Ok(()) => flakery_status::Ok,
        Err(payload) => {
            drop_payload(payload);
            flakery_status::Panic
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_have_the_core_numbers_and_strings() {
        for code in ErrorCode::ALL {
            let status = flakery_status::from(code);
            assert_eq!(status as i32, code as i32);
            assert_eq!(status_name(status as i32).to_str().unwrap(), code.as_str());
        }
        assert_eq!(status_name(0).to_str().unwrap(), "ok");
        assert_eq!(status_name(100).to_str().unwrap(), "panic");
        assert_eq!(status_name(-1).to_str().unwrap(), "unknown");
    }

    #[test]
    fn source_names_are_the_core_ones() {
        for source in [
            NodeSource::Explicit,
            NodeSource::Environment,
            NodeSource::Hostname,
            NodeSource::ZooKeeper,
            NodeSource::HostLease,
            NodeSource::Database,
        ] {
            assert_eq!(source_name(source).to_str().unwrap(), source.as_str());
        }
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, flakery_status::Panic);
        let text = unsafe { CStr::from_ptr(flakery_last_error()) };
        assert!(text.to_str().unwrap().contains("boom"));
    }
}

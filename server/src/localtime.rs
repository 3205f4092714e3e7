//! Times in the server's local zone (TZ), formatted as Java formats them, for the Vesta and
//! Leaf drop-in routes, whose answers are `Date.toString()` and `SimpleDateFormat` output.

use std::ffi::CString;
use std::sync::Once;

/// `strftime` of a Unix second in the local zone; `None` when the C library cannot
/// represent it.
fn strftime_local(seconds: i64, pattern: &str) -> Option<String> {
    static TZSET: Once = Once::new();
    extern "C" {
        fn tzset();
    }
    // SAFETY: tzset only reads TZ and sets the C library's zone globals, once.
    TZSET.call_once(|| unsafe { tzset() });
    #[allow(clippy::useless_conversion)] // time_t is not i64 on every target
    let time: libc::time_t = seconds.try_into().ok()?;
    let pattern = CString::new(pattern).ok()?;
    // SAFETY: `tm` is plain data that localtime_r fills; `buf` is writable for its length,
    // which is passed; strftime writes at most that many bytes and returns how many.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&time, &mut tm).is_null() {
            return None;
        }
        let mut buf = [0u8; 128];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), pattern.as_ptr(), &tm);
        if n == 0 {
            return None;
        }
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }
}

/// Java's `Date.toString()`: `Thu May 28 16:05:39 CST 2015`.
pub fn java_date_string(ms: i64) -> Option<String> {
    strftime_local(ms.div_euclid(1000), "%a %b %d %H:%M:%S %Z %Y")
}

/// `SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS")`: `2019-09-06 09:35:00.834`.
pub fn java_timestamp_string(ms: i64) -> Option<String> {
    let seconds = strftime_local(ms.div_euclid(1000), "%Y-%m-%d %H:%M:%S")?;
    Some(format!("{seconds}.{:03}", ms.rem_euclid(1000)))
}

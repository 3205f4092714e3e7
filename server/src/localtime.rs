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

/// Java's `Date.toString()` as Java 25 writes it: `Thu May 28 16:05:39 CST 2015`. The zone
/// is the tz database's abbreviation where it has one in letters (`CST`, `BST`, `EDT`);
/// where the tz database writes only an offset (`-03`, `+0545`), Java 25 writes
/// `GMT-03:00`, `GMT+05:45`. (Java 17 and earlier name those zones from their own table,
/// `BRT`, `NPT`, which no C library knows; docs/server.md#vesta.)
pub fn java_date_string(ms: i64) -> Option<String> {
    let seconds = ms.div_euclid(1000);
    let zone = strftime_local(seconds, "%Z")?;
    let zone = if zone.starts_with(|c: char| c.is_ascii_alphabetic()) {
        zone
    } else {
        java_gmt_offset(&strftime_local(seconds, "%z")?)?
    };
    let day_and_time = strftime_local(seconds, "%a %b %d %H:%M:%S")?;
    let year = strftime_local(seconds, "%Y")?;
    Some(format!("{day_and_time} {zone} {year}"))
}

/// `+0545` (strftime's `%z`) as Java's `GMT+05:45`.
fn java_gmt_offset(offset: &str) -> Option<String> {
    let (sign, digits) = offset.split_at_checked(1)?;
    if !matches!(sign, "+" | "-") || digits.len() != 4 {
        return None;
    }
    Some(format!("GMT{sign}{}:{}", &digits[..2], &digits[2..]))
}

/// `SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS")`: `2019-09-06 09:35:00.834`.
pub fn java_timestamp_string(ms: i64) -> Option<String> {
    let seconds = strftime_local(ms.div_euclid(1000), "%Y-%m-%d %H:%M:%S")?;
    Some(format!("{seconds}.{:03}", ms.rem_euclid(1000)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_written_as_java_writes_them() {
        assert_eq!(java_gmt_offset("-0300").as_deref(), Some("GMT-03:00"));
        assert_eq!(java_gmt_offset("+0545").as_deref(), Some("GMT+05:45"));
        assert_eq!(java_gmt_offset("0545"), None);
    }
}

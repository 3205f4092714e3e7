//! Unix-millisecond instants as text: RFC 3339 in, RFC 3339 UTC out.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::{Error, Result};

/// The latest instant any layout may name: the last millisecond of the year 9999.
pub const MAX_TIMESTAMP_MS: i64 = 253_402_300_799_999;

/// Reads `1288834974657` (Unix ms) or `2014-09-01T00:00:00Z` (RFC 3339, any offset).
pub fn parse_instant_ms(text: &str) -> Result<i64> {
    let text = text.trim();
    let ms = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        crate::decimal::parse_i64("", text)?
    } else {
        DateTime::parse_from_rfc3339(text)
            .map_err(|e| {
                Error::invalid_argument(format!(
                    "'{text}' is neither Unix milliseconds nor an RFC 3339 timestamp ({e})"
                ))
            })?
            .timestamp_millis()
    };
    if !(0..=MAX_TIMESTAMP_MS).contains(&ms) {
        return Err(Error::invalid_argument(format!(
            "'{text}' is outside 1970-01-01 to 9999-12-31"
        )));
    }
    Ok(ms)
}

/// `2016-04-30T11:18:25.796Z`; instants past year 9999 are written as Unix milliseconds.
pub fn format_rfc3339_ms(ms: i64) -> String {
    match DateTime::<Utc>::from_timestamp_millis(ms) {
        Some(t) if ms <= MAX_TIMESTAMP_MS => t.to_rfc3339_opts(SecondsFormat::Millis, true),
        _ => format!("{ms} (Unix ms)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_forms() {
        assert_eq!(parse_instant_ms("1288834974657").unwrap(), 1288834974657);
        assert_eq!(
            parse_instant_ms("2014-09-01T00:00:00Z").unwrap(),
            1_409_529_600_000
        );
        assert_eq!(
            parse_instant_ms("2016-05-20T00:00:00+08:00").unwrap(),
            1_463_673_600_000
        );
        assert!(parse_instant_ms("yesterday").is_err());
        assert!(parse_instant_ms("99999999999999999999").is_err());
    }

    #[test]
    fn writes_utc_with_millis() {
        assert_eq!(format_rfc3339_ms(1462015105796), "2016-04-30T11:18:25.796Z");
    }
}

//! Decimal text, read one way by every surface (the environment, the CLI's flags and
//! arguments, the server's parameters, the bindings' ID strings): canonical decimal only.
//! ASCII digits, no sign, no leading zero (but `0` itself), no white space, in range. `+3`,
//! `03`, ` 5`, `-0`, `0x10`, `1e3` and a fullwidth `１` read differently to different parsers
//! (or not at all), so none of them is guessed at: each is `invalid_argument`, and the message
//! names the option as the caller spells it (`--worker-id`, `FLAKERY_WORKER_ID`, `count`).

use crate::error::{Error, Result};
use crate::truncate::shown;

/// The message for a text that is not canonical decimal: `option='text' is not <noun> in
/// plain decimal (why; ...)`; an empty `option` leaves out `option=`.
fn not_canonical(option: &str, text: &str, noun: &str, why: String) -> Error {
    Error::invalid_argument(format!(
        "{}'{}' is not {noun} in plain decimal ({why}; digits 0-9 only: no sign, no \
         leading zero, no spaces)",
        named(option),
        shown(text)
    ))
}

/// `option=`, or nothing for an option not named.
fn named(option: &str) -> String {
    if option.is_empty() {
        String::new()
    } else {
        format!("{option}=")
    }
}

/// A canonical decimal text read: its sign and its magnitude (`None` above 2^64-1).
struct Read {
    negative: bool,
    magnitude: Option<u64>,
}

fn read(option: &str, text: &str, noun: &str) -> Result<Read> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let why = if text.is_empty() {
        Some("it is empty".to_string())
    } else if let Some((at, c)) = digits.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        let position = text.len() - digits.len() + at;
        Some(match c {
            '+' | '-' if at == 0 => format!("it has a sign, '{c}'"),
            c if c.is_whitespace() => "it has white space".to_string(),
            c => format!(
                "character {} ('{}') is not a digit",
                text[..position].chars().count() + 1,
                c.escape_debug()
            ),
        })
    } else if digits.is_empty() {
        Some("it has no digits".to_string())
    } else if digits.len() > 1 && digits.starts_with('0') {
        Some("it has a leading zero".to_string())
    } else if negative && digits == "0" {
        Some("write 0, not -0".to_string())
    } else {
        None
    };
    match why {
        Some(why) => Err(not_canonical(option, text, noun, why)),
        None => Ok(Read {
            negative,
            magnitude: digits.parse().ok(),
        }),
    }
}

/// Whether `text` is canonical decimal, of any size, with or without a leading `-`: a value
/// that is well written but out of a range gets that range's message from the caller.
pub fn is_canonical_integer(text: &str) -> bool {
    read("", text, "").is_ok()
}

/// A non-negative integer up to 2^64-1.
pub fn parse_u64(option: &str, text: &str) -> Result<u64> {
    parse_u64_at_most(option, text, u64::MAX)
}

/// A non-negative integer up to `max`.
pub fn parse_u64_at_most(option: &str, text: &str, max: u64) -> Result<u64> {
    let read = read(option, text, "a non-negative integer")?;
    match read.magnitude {
        Some(value) if !read.negative && value <= max => Ok(value),
        _ if read.negative => Err(Error::invalid_argument(format!(
            "{}{} is negative; it must be from 0 to {max}",
            named(option),
            shown(text)
        ))),
        _ => Err(Error::invalid_argument(format!(
            "{}{} is above {max}, the largest it may be",
            named(option),
            shown(text)
        ))),
    }
}

/// A signed 64-bit integer (Unix milliseconds).
pub fn parse_i64(option: &str, text: &str) -> Result<i64> {
    let read = read(option, text, "an integer")?;
    let value = read.magnitude.and_then(|m| {
        if read.negative {
            0i64.checked_sub_unsigned(m)
        } else {
            i64::try_from(m).ok()
        }
    });
    value.ok_or_else(|| {
        Error::invalid_argument(format!(
            "{}{} is outside the 64-bit range (-2^63 to 2^63-1)",
            named(option),
            shown(text)
        ))
    })
}

/// An ID written in decimal: 0 to 2^63-1.
pub fn parse_id(text: &str) -> Result<i64> {
    let id = parse_id_u64(text)?;
    i64::try_from(id).map_err(|_| {
        Error::invalid_argument(format!(
            "ID {} is larger than the largest ID, 2^63-1",
            shown(text)
        ))
    })
}

/// `parse_id`'s answer for a well-written ID, read in a few ns (flakery-client reads up to
/// 100,000 a server's answer); `None` for anything else, which `parse_id` then explains.
#[inline]
pub fn parse_id_fast(text: &[u8]) -> Option<i64> {
    // 19 digits at most: 10^19 - 1 fits a u64, and every ID has at most 19.
    if text.is_empty() || text.len() > 19 || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    let mut value: u64 = 0;
    for &byte in text {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value * 10 + u64::from(digit);
    }
    i64::try_from(value).ok()
}

/// `parse_id` up to 2^64-1, for `decode_u64` (IDs of unsigned layouts such as `discord`).
pub fn parse_id_u64(text: &str) -> Result<u64> {
    let read = read("", text, "an ID")?;
    match read.magnitude {
        Some(id) if !read.negative => Ok(id),
        _ if read.negative => Err(Error::invalid_argument(format!(
            "ID {} is negative; IDs are non-negative 64-bit integers",
            shown(text)
        ))),
        _ => Err(Error::invalid_argument(format!(
            "ID {} is larger than the largest ID of any layout, 2^64-1",
            shown(text)
        ))),
    }
}

/// Texts every surface refuses (each surface's tests run this table): a sign, a leading
/// zero, white space (ASCII and an em space), `-0`, hex, an exponent, a fullwidth digit,
/// nothing, 2^64, a lone sign.
pub const REFUSED_EXAMPLES: [&str; 12] = [
    "+3",
    "03",
    " 5",
    "5 ",
    "\u{2003}5",
    "-0",
    "0x10",
    "1e3",
    "\u{FF11}",
    "",
    "18446744073709551616",
    "-",
];

#[cfg(test)]
mod tests {
    #[test]
    fn the_fast_id_reader_agrees_with_parse_id() {
        let taken = ["0", "7", "10", "9223372036854775807", "1234567890123456789"];
        let refused = [
            "9223372036854775808",
            "99999999999999999999",
            "-1",
            "1\n",
            "",
            "00",
        ];
        for text in taken.iter().chain(&refused).chain(&REFUSED_EXAMPLES) {
            assert_eq!(
                parse_id_fast(text.as_bytes()),
                parse_id(text).ok(),
                "{text:?}"
            );
        }
    }

    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn canonical_decimal_is_read() {
        assert_eq!(parse_u64("n", "0"), Ok(0));
        assert_eq!(parse_u64("n", "7"), Ok(7));
        assert_eq!(parse_u64("n", "18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_i64("t", "-1"), Ok(-1));
        assert_eq!(parse_i64("t", "-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(parse_i64("t", "9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_id("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_u64_at_most("count", "100000", 100_000), Ok(100_000));
    }

    #[test]
    fn every_non_canonical_text_is_refused_naming_the_option() {
        for bad in REFUSED_EXAMPLES {
            for result in [
                parse_u64("--worker-id", bad).map(|v| v as i128),
                parse_i64("--worker-id", bad).map(i128::from),
            ] {
                let err = result.unwrap_err();
                assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad:?}");
                assert!(err.message().starts_with("--worker-id"), "{bad:?}: {err}");
            }
            assert!(parse_id(bad).is_err(), "{bad:?}");
        }
        assert!(parse_i64("t", "9223372036854775808").is_err());
        assert!(parse_i64("t", "-9223372036854775809").is_err());
        assert!(parse_id("9223372036854775808").is_err());
        assert!(parse_u64_at_most("count", "100001", 100_000).is_err());
        let m = parse_u64("count", "1e3").unwrap_err();
        assert!(m.message().contains("character 2 ('e')"), "{m}");
        let m = parse_id("-5").unwrap_err();
        assert!(m.message().contains("negative"), "{m}");
    }

    #[test]
    fn a_long_input_is_not_echoed_whole() {
        let long = "9".repeat(10_000);
        assert!(parse_u64("n", &long).unwrap_err().message().len() < 300);
        let long = "x".repeat(10_000);
        assert!(parse_u64("n", &long).unwrap_err().message().len() < 300);
    }
}

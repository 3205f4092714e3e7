//! Fixed-width text forms of an ID whose byte order is the IDs' order, so sorting the strings
//! sorts the IDs (a database's text column, a file name, a URL):
//!
//! - base32: 13 characters of Crockford's alphabet `0123456789ABCDEFGHJKMNPQRSTVWXYZ`, upper
//!   case, zero-padded. Read case-insensitively, with Crockford's aliases `O` → 0, `I`/`L` → 1.
//! - base62: 11 characters of `0-9A-Za-z` (ASCII order), zero-padded.
//!
//! Only IDs from 0 to 2^63-1 have a text form: a generated ID never is negative.

use std::fmt;
use std::str::FromStr;

use crate::decimal::parse_id;
use crate::error::{Error, Result};
use crate::truncate::shown;

pub const BASE32_LEN: usize = 13;
pub const BASE62_LEN: usize = 11;

const BASE32_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE62_ALPHABET: &[u8; 62] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const BASE32_DIGITS_TEXT: &str =
    "Crockford's 0-9 A-Z less I L O U (any case; O, I and L read as 0, 1, 1)";
const BASE62_DIGITS_TEXT: &str = "0-9 A-Z a-z";

/// Marks a byte that is not a digit of the alphabet in the decoding tables.
const NOT_A_DIGIT: u8 = 0xFF;

static BASE32_DIGITS: [u8; 256] = {
    let mut table = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < 32 {
        let c = BASE32_ALPHABET[i];
        table[c as usize] = i as u8;
        table[c.to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    table[b'O' as usize] = 0;
    table[b'o' as usize] = 0;
    table[b'I' as usize] = 1;
    table[b'i' as usize] = 1;
    table[b'L' as usize] = 1;
    table[b'l' as usize] = 1;
    table
};

static BASE62_DIGITS: [u8; 256] = {
    let mut table = [NOT_A_DIGIT; 256];
    let mut i = 0;
    while i < 62 {
        table[BASE62_ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

fn non_negative(id: i64) -> Result<u64> {
    u64::try_from(id).map_err(|_| {
        Error::invalid_argument(format!(
            "ID {id} is negative: only IDs from 0 to 2^63-1 have a text form"
        ))
    })
}

/// The 13 base32 bytes of `id`, without allocating.
#[inline]
pub fn encode_base32(id: i64) -> Result<[u8; BASE32_LEN]> {
    let value = non_negative(id)?;
    let mut out = [0u8; BASE32_LEN];
    for (i, byte) in out.iter_mut().enumerate() {
        let shift = 5 * (BASE32_LEN - 1 - i);
        *byte = BASE32_ALPHABET[((value >> shift) & 31) as usize];
    }
    Ok(out)
}

/// The 11 base62 bytes of `id`, without allocating.
#[inline]
pub fn encode_base62(id: i64) -> Result<[u8; BASE62_LEN]> {
    let mut value = non_negative(id)?;
    let mut out = [b'0'; BASE62_LEN];
    for byte in out.iter_mut().rev() {
        *byte = BASE62_ALPHABET[(value % 62) as usize];
        value /= 62;
    }
    Ok(out)
}

fn ascii(bytes: &[u8]) -> String {
    // The alphabets are ASCII, so an encoded form always is.
    bytes.iter().map(|&b| b as char).collect()
}

pub fn to_base32(id: i64) -> Result<String> {
    encode_base32(id).map(|bytes| ascii(&bytes))
}

pub fn to_base62(id: i64) -> Result<String> {
    encode_base62(id).map(|bytes| ascii(&bytes))
}

fn check_length(text: &str, form: &str, len: usize, alphabet: &str) -> Result<()> {
    if text.len() == len {
        return Ok(()); // the common case; a string of other characters fails on them
    }
    let count = text.chars().count();
    if count == len {
        // As many characters as bytes would be, so some are not ASCII: name the first.
        let at = text.find(|c: char| !c.is_ascii()).unwrap_or(0);
        return Err(bad_character(text, at, form, alphabet));
    }
    Err(Error::invalid_argument(format!(
        "'{}' is not a {form} ID: it has {count} characters, a {form} ID has exactly {len}",
        shown(text)
    )))
}

/// The digits of `text` in `table`, or the byte offset of the first byte that is none.
#[inline(always)]
fn digits<const N: usize>(text: &str, table: &[u8; 256]) -> std::result::Result<[u8; N], usize> {
    let mut out = [0u8; N];
    let mut seen = 0u8;
    for (digit, &byte) in out.iter_mut().zip(text.as_bytes()) {
        *digit = table[byte as usize];
        seen |= *digit;
    }
    // Every digit is below 64; NOT_A_DIGIT has the top bit set. One branch for the string.
    if seen & 0x80 != 0 {
        return Err(out.iter().position(|&d| d == NOT_A_DIGIT).unwrap_or(0));
    }
    Ok(out)
}

fn bad_character(text: &str, at: usize, form: &str, alphabet: &str) -> Error {
    let c = text[at..].chars().next().unwrap_or('?');
    let position = text[..at].chars().count() + 1;
    Error::invalid_argument(format!(
        "'{}' is not a {form} ID: character {position} ('{}') is not one of {alphabet}",
        shown(text),
        c.escape_debug()
    ))
}

fn too_large(text: &str, form: &str) -> Error {
    Error::invalid_argument(format!(
        "'{}' is not a {form} ID: its value is above 2^63-1",
        shown(text)
    ))
}

pub fn from_base32(text: &str) -> Result<i64> {
    check_length(text, "base32", BASE32_LEN, BASE32_DIGITS_TEXT)?;
    let digits = digits::<BASE32_LEN>(text, &BASE32_DIGITS)
        .map_err(|at| bad_character(text, at, "base32", BASE32_DIGITS_TEXT))?;
    // 13 digits hold 65 bits: the first must leave the top two (and the sign bit) clear.
    if digits[0] > 7 {
        return Err(too_large(text, "base32"));
    }
    Ok(digits
        .iter()
        .fold(0u64, |value, &digit| (value << 5) | u64::from(digit)) as i64)
}

pub fn from_base62(text: &str) -> Result<i64> {
    check_length(text, "base62", BASE62_LEN, BASE62_DIGITS_TEXT)?;
    let digits = digits::<BASE62_LEN>(text, &BASE62_DIGITS)
        .map_err(|at| bad_character(text, at, "base62", BASE62_DIGITS_TEXT))?;
    // 62^11 > 2^64: the last step may overflow u64, which is then above 2^63-1 too.
    let value = digits[..BASE62_LEN - 1]
        .iter()
        .fold(0u64, |value, &digit| value * 62 + u64::from(digit));
    value
        .checked_mul(62)
        .and_then(|v| v.checked_add(u64::from(digits[BASE62_LEN - 1])))
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| too_large(text, "base62"))
}

/// How an ID is written as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IdFormat {
    #[default]
    Decimal,
    Base32,
    Base62,
}

impl IdFormat {
    pub const ALL: [IdFormat; 3] = [IdFormat::Decimal, IdFormat::Base32, IdFormat::Base62];

    pub const fn as_str(self) -> &'static str {
        match self {
            IdFormat::Decimal => "decimal",
            IdFormat::Base32 => "base32",
            IdFormat::Base62 => "base62",
        }
    }

    pub fn format(self, id: i64) -> Result<String> {
        match self {
            IdFormat::Decimal => Ok(id.to_string()),
            IdFormat::Base32 => to_base32(id),
            IdFormat::Base62 => to_base62(id),
        }
    }

    pub fn parse(self, text: &str) -> Result<i64> {
        match self {
            IdFormat::Decimal => parse_id(text),
            IdFormat::Base32 => from_base32(text),
            IdFormat::Base62 => from_base62(text),
        }
    }
}

impl fmt::Display for IdFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IdFormat {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        IdFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "format '{}' is not 'decimal', 'base32' or 'base62'",
                    shown(text)
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn known_values() {
        assert_eq!(to_base32(0).unwrap(), "0000000000000");
        assert_eq!(to_base62(0).unwrap(), "00000000000");
        assert_eq!(to_base32(i64::MAX).unwrap(), "7ZZZZZZZZZZZZ");
        assert_eq!(to_base62(i64::MAX).unwrap(), "AzL8n0Y58m7");
        assert_eq!(to_base32(31).unwrap(), "000000000000Z");
        assert_eq!(to_base32(32).unwrap(), "0000000000010");
        assert_eq!(to_base62(61).unwrap(), "0000000000z");
        assert_eq!(to_base62(62).unwrap(), "00000000010");
        assert_eq!(from_base32("7ZZZZZZZZZZZZ").unwrap(), i64::MAX);
        assert_eq!(from_base62("AzL8n0Y58m7").unwrap(), i64::MAX);
    }

    #[test]
    fn base32_reads_any_case_and_crockfords_aliases() {
        let id = 1_541_815_603_606_036_480;
        let upper = to_base32(id).unwrap();
        assert_eq!(from_base32(&upper.to_lowercase()).unwrap(), id);
        assert_eq!(from_base32("000000000000o").unwrap(), 0);
        assert_eq!(from_base32("000000000000I").unwrap(), 1);
        assert_eq!(from_base32("000000000000l").unwrap(), 1);
    }

    fn message(result: Result<i64>) -> String {
        let err = result.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        err.message().to_string()
    }

    #[test]
    fn bad_strings_name_the_character_or_the_reason() {
        let m = message(from_base32("00000000000U0"));
        assert!(m.contains("character 12 ('U')"), "{m}");
        let m = message(from_base62("0000000000-"));
        assert!(m.contains("character 11 ('-')"), "{m}");
        let m = message(from_base62("0000000000é"));
        assert!(m.contains("character 11 ('é')"), "{m}");
        let m = message(from_base32("123"));
        assert!(m.contains("3 characters"), "{m}");
        let m = message(from_base32("8000000000000"));
        assert!(m.contains("above 2^63-1"), "{m}");
        let m = message(from_base62("AzL8n0Y58m8"));
        assert!(m.contains("above 2^63-1"), "{m}");
        let m = message(from_base62("zzzzzzzzzzz"));
        assert!(m.contains("above 2^63-1"), "{m}");
        let err = to_base32(-1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert!(
            "x".repeat(1000)
                .parse::<IdFormat>()
                .unwrap_err()
                .message()
                .len()
                < 200
        );
    }

    #[test]
    fn formats_parse_their_names_and_round_trip() {
        for format in IdFormat::ALL {
            assert_eq!(format.as_str().parse::<IdFormat>().unwrap(), format);
            for id in [0, 1, 4095, 1_541_815_603_606_036_480, i64::MAX] {
                assert_eq!(format.parse(&format.format(id).unwrap()).unwrap(), id);
            }
        }
        assert!("hex".parse::<IdFormat>().is_err());
    }
}

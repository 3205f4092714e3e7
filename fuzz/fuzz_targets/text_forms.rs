//! The text forms of an ID (`flakery::text`): base32 (Crockford) and base62, and `IdFormat`.
//! - every non-negative ID writes to a fixed-width string that reads back to it, and a
//!   negative one is refused;
//! - the strings of two IDs compare (as bytes) as the IDs do;
//! - any text reads as an ID exactly when a model says so (right length, every character in
//!   the alphabet, Crockford's aliases and any case for base32, value at most 2^63-1), and
//!   then to the value the model computes; otherwise `invalid_argument`.
//!
//! Input: the whole input is tried as text in every form; its first 16 bytes are also two IDs.
#![no_main]

use flakery::text::{
    encode_base32, encode_base62, from_base32, from_base62, to_base32, to_base62, IdFormat,
};
use flakery::ErrorCode;
use libfuzzer_sys::fuzz_target;

const BASE32: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn base32_digit(c: u8) -> Option<u8> {
    let c = match c.to_ascii_uppercase() {
        b'O' => b'0',
        b'I' | b'L' => b'1',
        c => c,
    };
    BASE32.iter().position(|&d| d == c).map(|i| i as u8)
}

fn base62_digit(c: u8) -> Option<u8> {
    BASE62.iter().position(|&d| d == c).map(|i| i as u8)
}

/// The value `text` spells in a fixed-width form, or `None` when it is not one.
fn model(text: &str, len: usize, radix: u128, digit: fn(u8) -> Option<u8>) -> Option<i64> {
    if text.len() != len {
        return None;
    }
    let value = text
        .bytes()
        .try_fold(0u128, |acc, c| Some(acc * radix + u128::from(digit(c)?)))?;
    i64::try_from(value).ok()
}

fn check_parse(text: &str, got: flakery::Result<i64>, expected: Option<i64>, form: &str) {
    match (got, expected) {
        (Ok(id), Some(model)) => assert_eq!(id, model, "{form} {text:?}"),
        (Err(e), None) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{form} {text:?}: {e}");
            // The message echoes at most a short piece of the input, whatever its size.
            assert!(
                e.message().len() < 1000,
                "{form}: message of {} bytes",
                e.message().len()
            );
        }
        (got, expected) => panic!("{form} {text:?}: flakery {got:?}, model {expected:?}"),
    }
}

fn check_id(id: i64) {
    let forms = [(to_base32(id), 13), (to_base62(id), 11)];
    for (text, len) in forms {
        match text {
            Ok(text) => {
                assert!(id >= 0, "{id} has a text form {text:?}");
                assert_eq!(text.len(), len, "{id}: {text:?}");
                assert!(text.bytes().all(|c| c.is_ascii_alphanumeric()), "{text:?}");
            }
            Err(e) => {
                assert!(id < 0, "{id}: {e}");
                assert_eq!(e.code(), ErrorCode::InvalidArgument);
            }
        }
    }
    if id < 0 {
        assert!(encode_base32(id).is_err() && encode_base62(id).is_err());
        return;
    }
    let b32 = to_base32(id).expect("non-negative");
    let b62 = to_base62(id).expect("non-negative");
    assert_eq!(encode_base32(id).expect("non-negative"), b32.as_bytes());
    assert_eq!(encode_base62(id).expect("non-negative"), b62.as_bytes());
    assert_eq!(from_base32(&b32), Ok(id), "{b32}");
    assert_eq!(from_base32(&b32.to_ascii_lowercase()), Ok(id), "{b32}");
    assert_eq!(from_base62(&b62), Ok(id), "{b62}");
    for format in IdFormat::ALL {
        let text = format.format(id).expect("non-negative");
        assert_eq!(format.parse(&text), Ok(id), "{format}: {text}");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check_parse(
            text,
            from_base32(text),
            model(text, 13, 32, base32_digit),
            "base32",
        );
        check_parse(
            text,
            from_base62(text),
            model(text, 11, 62, base62_digit),
            "base62",
        );
        for format in IdFormat::ALL {
            let direct = match format {
                IdFormat::Decimal => flakery::parse_id(text),
                IdFormat::Base32 => from_base32(text),
                IdFormat::Base62 => from_base62(text),
            };
            assert_eq!(format.parse(text), direct, "{format} {text:?}");
        }
        match text.parse::<IdFormat>() {
            Ok(format) => assert_eq!(format.to_string(), text),
            Err(e) => {
                assert!(!["decimal", "base32", "base62"].contains(&text));
                assert_eq!(e.code(), ErrorCode::InvalidArgument);
            }
        }
    }
    if let Some(bytes) = data.get(..16) {
        let a = i64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        let b = i64::from_le_bytes(bytes[8..].try_into().expect("8 bytes"));
        check_id(a);
        check_id(b);
        // Small IDs and near neighbours too, where the order check is sharpest.
        let pairs = [(a, b), (a & 0xffff, b & 0xffff), (a, a.wrapping_add(1))];
        for (x, y) in pairs {
            if x < 0 || y < 0 {
                continue;
            }
            check_id(y);
            for (tx, ty) in [(to_base32(x), to_base32(y)), (to_base62(x), to_base62(y))] {
                let (tx, ty) = (tx.expect("non-negative"), ty.expect("non-negative"));
                assert_eq!(tx.cmp(&ty), x.cmp(&y), "{x} {tx} vs {y} {ty}");
            }
        }
    }
});

//! `parse_id` (decimal IDs, as the CLI and the string-taking bindings read them) against a
//! model: it accepts exactly an optional sign and decimal digits, trimmed, whose value is a
//! non-negative i64 ("-0" included), and then returns that value; everything else is
//! `invalid_argument`. And every non-negative i64, written in any accepted way, reads back.
#![no_main]

use flakery::{parse_id, ErrorCode};
use libfuzzer_sys::fuzz_target;

/// The value `text` spells when it is a sign and digits, else `None`; saturates at u128::MAX.
fn model(text: &str) -> Option<Result<i64, ()>> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = digits.bytes().fold(0u128, |acc, b| {
        acc.saturating_mul(10).saturating_add(u128::from(b - b'0'))
    });
    Some(if negative && value != 0 {
        Err(())
    } else {
        i64::try_from(value).map_err(|_| ())
    })
}

fn check(text: &str) {
    let got = parse_id(text);
    match (&got, model(text)) {
        (Ok(id), Some(Ok(expected))) => {
            assert_eq!(*id, expected, "{text:?}");
            // The canonical decimal of the value is the text without sign and leading zeros.
            let t = text.trim().trim_start_matches(['+', '-']);
            let stripped = t.trim_start_matches('0');
            let stripped = if stripped.is_empty() { "0" } else { stripped };
            assert_eq!(id.to_string(), stripped, "{text:?}");
        }
        (Err(e), Some(Err(())) | None) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text:?}: {e}");
            assert!(!e.message().is_empty());
        }
        (got, expected) => panic!("parse_id({text:?}) = {got:?}, model says {expected:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(text);
    }
    // Every non-negative ID in its plain, padded and signed forms reads back to itself.
    if let Some(bytes) = data.get(..8) {
        let id = i64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        let forms = [
            id.to_string(),
            format!("  {id}\t"),
            format!("+{id}"),
            format!("000{id}"),
        ];
        for form in &forms {
            check(form);
            if id >= 0 {
                assert_eq!(parse_id(form), Ok(id), "{form:?}");
            } else {
                assert!(parse_id(form).is_err(), "{form:?} was accepted");
            }
        }
    }
});

//! `parse_id` (decimal IDs, as the CLI, the server and the string-taking bindings read them)
//! against a model: it accepts exactly canonical decimal (ASCII digits, no sign, no leading
//! zero but "0" itself, no white space) whose value is at most 2^63-1, and then returns that
//! value; everything else is `invalid_argument`, with a bounded message. Every non-negative
//! i64 written plainly reads back; signed, padded and zero-led forms never do.
#![no_main]

use flakery::{parse_id, ErrorCode};
use libfuzzer_sys::fuzz_target;

/// The value `text` spells when it is canonical decimal, else `None`; saturates at u128::MAX.
fn model(text: &str) -> Option<Result<i64, ()>> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if !canonical {
        return None;
    }
    let value = text.bytes().fold(0u128, |acc, b| {
        acc.saturating_mul(10).saturating_add(u128::from(b - b'0'))
    });
    Some(i64::try_from(value).map_err(|_| ()))
}

fn check(text: &str) {
    let got = parse_id(text);
    match (&got, model(text)) {
        (Ok(id), Some(Ok(expected))) => {
            assert_eq!(*id, expected, "{text:?}");
            assert_eq!(id.to_string(), text, "{text:?}");
        }
        (Err(e), Some(Err(())) | None) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{text:?}: {e}");
            assert!(!e.message().is_empty());
            assert!(e.message().len() < 600, "{text:?}: {e}");
        }
        (got, expected) => panic!("parse_id({text:?}) = {got:?}, model says {expected:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(text);
    }
    // Every non-negative ID in its plain form reads back to itself; no other form does.
    if let Some(bytes) = data.get(..8) {
        let id = i64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        check(&id.to_string());
        if id >= 0 {
            assert_eq!(parse_id(&id.to_string()), Ok(id));
        }
        for form in [
            format!("  {id}\t"),
            format!("+{id}"),
            format!("0{id}"),
            format!("-{id}"),
            format!("{id} "),
        ] {
            check(&form);
            assert!(parse_id(&form).is_err(), "{form:?} was accepted");
        }
    }
});

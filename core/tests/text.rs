//! Property tests of the text forms: parse(format(x)) = x, and the strings sort as the IDs do.

use flakery::text::{from_base32, from_base62, to_base32, to_base62, BASE32_LEN, BASE62_LEN};
use flakery::{ErrorCode, IdFormat};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn every_form_round_trips(id in 0i64..=i64::MAX) {
        for format in IdFormat::ALL {
            prop_assert_eq!(format.parse(&format.format(id).unwrap()).unwrap(), id);
        }
        prop_assert_eq!(to_base32(id).unwrap().len(), BASE32_LEN);
        prop_assert_eq!(to_base62(id).unwrap().len(), BASE62_LEN);
    }

    #[test]
    fn string_order_is_id_order(a in 0i64..=i64::MAX, b in 0i64..=i64::MAX) {
        prop_assert_eq!(to_base32(a).unwrap().cmp(&to_base32(b).unwrap()), a.cmp(&b));
        prop_assert_eq!(to_base62(a).unwrap().cmp(&to_base62(b).unwrap()), a.cmp(&b));
    }

    #[test]
    fn neighbours_keep_their_order(a in 0i64..i64::MAX) {
        prop_assert!(to_base32(a).unwrap() < to_base32(a + 1).unwrap());
        prop_assert!(to_base62(a).unwrap() < to_base62(a + 1).unwrap());
    }

    #[test]
    fn lower_case_base32_reads_the_same(id in 0i64..=i64::MAX) {
        prop_assert_eq!(from_base32(&to_base32(id).unwrap().to_lowercase()).unwrap(), id);
    }

    #[test]
    fn any_other_string_is_refused_or_read_back_exactly(text in "\\PC{0,16}") {
        for (parse, format) in [(from_base32 as fn(&str) -> _, to_base32 as fn(i64) -> _),
                                (from_base62, to_base62)] {
            match parse(&text) {
                // Whatever is accepted is exactly one ID, which formats back to the same
                // string up to case and Crockford's aliases (base32) or exactly (base62).
                Ok(id) => {
                    let back: String = format(id).unwrap();
                    prop_assert_eq!(parse(&back).unwrap(), id);
                }
                Err(err) => prop_assert_eq!(err.code(), ErrorCode::InvalidArgument),
            }
        }
    }
}

#[test]
fn negative_ids_have_no_text_form() {
    for id in [-1, i64::MIN] {
        assert_eq!(
            to_base32(id).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            to_base62(id).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}

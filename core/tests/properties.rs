//! Property tests: every layout composes and decodes losslessly, and spec strings round-trip.

use flakery::{compose, decode, ErrorCode, FieldKind, Layout, Parts};
use proptest::prelude::*;

/// A random valid layout: time, sequence and optional node and constant fields in random
/// order, at most 64 bits, time and sequence together at most 63.
fn layouts() -> impl Strategy<Value = Layout> {
    let extra = prop::collection::vec(1u32..=12, 0..4);
    (
        20u32..=45,
        1u32..=16,
        extra,
        any::<u64>(),
        0i64..2_000_000_000_000,
        0usize..5,
    )
        .prop_filter_map(
            "too wide",
            |(time_bits, seq_bits, extra, order_seed, epoch, unit)| {
                let mut fields = vec![
                    ("time".to_string(), time_bits),
                    ("sequence".to_string(), seq_bits),
                ];
                let names = ["datacenter", "worker", "version", "kind"];
                for (i, bits) in extra.iter().enumerate() {
                    fields.push((names[i].to_string(), *bits));
                }
                let total: u32 = fields.iter().map(|(_, b)| b).sum();
                if total > 64 {
                    return None;
                }
                // A deterministic shuffle from the seed.
                let mut seed = order_seed;
                for i in (1..fields.len()).rev() {
                    let j = (seed % (i as u64 + 1)) as usize;
                    seed /= i as u64 + 1;
                    fields.swap(i, j);
                }
                let list: Vec<String> = fields.iter().map(|(n, b)| format!("{n}:{b}")).collect();
                let unit = ["ms", "10ms", "s", "7ms", "250ms"][unit];
                Layout::parse(&format!("{};epoch={epoch};unit={unit}", list.join(","))).ok()
            },
        )
}

fn all_layouts() -> impl Strategy<Value = Layout> {
    let presets: Vec<Layout> = Layout::presets().into_iter().map(|(_, l)| l).collect();
    prop_oneof![prop::sample::select(presets), layouts()]
}

/// Random parts that fit the layout.
fn parts_for(layout: &Layout) -> impl Strategy<Value = Parts> {
    let max = |bits: Option<u32>| bits.map_or(0, |b| (1u64 << b) - 1);
    let tick_max = layout.max_tick();
    let unit = layout.unit().millis();
    let epoch = layout.tick_origin_ms();
    let constants: Vec<(String, u64)> = layout
        .fields()
        .iter()
        .filter(|f| f.kind == FieldKind::Constant)
        .map(|f| (f.name.clone(), f.slot.max()))
        .collect();
    let top_is_constant = layout
        .fields()
        .first()
        .is_some_and(|f| f.kind == FieldKind::Constant && layout.total_bits() == 64);
    let top_name = layout.fields()[0].name.clone();
    (
        0..=tick_max.min((i64::MAX as u64 - epoch as u64) / unit as u64),
        0..=max(layout.datacenter().map(|s| s.bits)),
        0..=max(layout.worker().map(|s| s.bits)),
        0..=layout.sequence().max(),
        prop::collection::vec(any::<u64>(), constants.len()),
    )
        .prop_map(move |(tick, dc, worker, seq, raw)| Parts {
            timestamp_ms: epoch + tick as i64 * unit,
            datacenter_id: dc,
            worker_id: worker,
            sequence: seq,
            fields: constants
                .iter()
                .zip(raw)
                .map(|((name, mask), r)| {
                    let mut v = r & mask;
                    if top_is_constant && *name == top_name {
                        v &= mask >> 1; // bit 63 stays clear
                    }
                    (name.clone(), v)
                })
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decode_inverts_compose((layout, parts) in all_layouts().prop_flat_map(|l| {
        let p = parts_for(&l);
        (Just(l), p)
    })) {
        let id = compose(&parts, &layout).unwrap();
        prop_assert!(id >= 0);
        let d = decode(id, &layout).unwrap();
        prop_assert_eq!(d.timestamp_ms, parts.timestamp_ms);
        prop_assert_eq!(d.datacenter_id, parts.datacenter_id);
        prop_assert_eq!(d.worker_id, parts.worker_id);
        prop_assert_eq!(d.sequence, parts.sequence);
        for (name, value) in &parts.fields {
            prop_assert_eq!(d.field(name), Some(*value));
        }
        // And the other way: composing the decoded parts gives the ID back.
        let constants: Vec<(String, u64)> = d.fields.iter()
            .filter(|(n, _)| layout.field(n).unwrap().kind == FieldKind::Constant)
            .cloned().collect();
        let again = compose(&Parts { fields: constants, ..parts.clone() }, &layout).unwrap();
        prop_assert_eq!(again, id);
    }

    #[test]
    fn specs_round_trip(layout in all_layouts()) {
        let spec = layout.to_string();
        let parsed = Layout::parse(&spec).unwrap();
        prop_assert_eq!(&parsed, &layout);
        prop_assert_eq!(parsed.to_string(), spec);
    }

    #[test]
    fn junk_is_rejected_and_whatever_is_accepted_round_trips(spec in "[a-z0-9:,;=_ -]{0,40}") {
        match Layout::parse(&spec) {
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::InvalidLayout);
                prop_assert!(!e.message().is_empty());
            }
            Ok(layout) => {
                prop_assert_eq!(Layout::parse(&layout.to_string()).unwrap(), layout);
            }
        }
        // Without a field list the head must name a preset.
        let head = spec.split(';').next().unwrap_or("").trim();
        if !head.contains(':') && !flakery::layout::preset_names().contains(&head) {
            prop_assert!(Layout::parse(&spec).is_err(), "accepted {spec:?}");
        }
    }

    #[test]
    fn oversized_layouts_are_rejected(time in 30u32..=63, seq in 1u32..=40, worker in 1u32..=40) {
        let spec = format!("time:{time},worker:{worker},sequence:{seq};epoch=0");
        let result = Layout::parse(&spec);
        if time + seq + worker > 64 || time + seq > 63 {
            prop_assert_eq!(result.unwrap_err().code(), ErrorCode::InvalidLayout);
        } else {
            prop_assert!(result.is_ok());
        }
    }

    #[test]
    fn decode_rejects_ids_wider_than_the_layout(extra in 1u64..1000) {
        let layout = Layout::preset("safe53").unwrap();
        let too_wide = ((1u64 << 53) * extra) as i64;
        prop_assert_eq!(decode(too_wide, &layout).unwrap_err().code(), ErrorCode::InvalidArgument);
    }
}

#[test]
fn compose_rejects_values_that_do_not_fit() {
    let layout = Layout::twitter();
    let base = Parts {
        timestamp_ms: 1_700_000_000_000,
        ..Default::default()
    };
    for parts in [
        Parts {
            worker_id: 32,
            ..base.clone()
        },
        Parts {
            datacenter_id: 32,
            ..base.clone()
        },
        Parts {
            sequence: 4096,
            ..base.clone()
        },
        Parts {
            timestamp_ms: 0,
            ..base.clone()
        },
        Parts {
            timestamp_ms: i64::MAX,
            ..base.clone()
        },
        Parts {
            fields: vec![("version".into(), 1)],
            ..base.clone()
        },
        Parts {
            fields: vec![("worker".into(), 1)],
            ..base.clone()
        },
    ] {
        let err = compose(&parts, &layout).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{parts:?}");
    }
    let instagram = Layout::preset("instagram").unwrap();
    let err = compose(
        &Parts {
            datacenter_id: 1,
            ..base
        },
        &instagram,
    )
    .unwrap_err();
    assert!(err.message().contains("no datacenter field"), "{err}");
}

#[test]
fn decode_rejects_negative_ids() {
    let err = decode(-1, &Layout::twitter()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.message().contains("negative"));
}

#[test]
fn parse_id_reads_canonical_decimal_only() {
    assert_eq!(flakery::parse_id("42").unwrap(), 42);
    assert_eq!(flakery::parse_id("0").unwrap(), 0);
    assert_eq!(flakery::parse_id("9223372036854775807").unwrap(), i64::MAX);
    for bad in [
        "",
        "12x",
        "-1",
        "0x10",
        "1e3",
        "9223372036854775808",
        "1.0",
        " 42 ",
        "+42",
        "042",
        "-0",
        "\u{2003}5",
        "\u{FF11}",
    ] {
        assert_eq!(
            flakery::parse_id(bad).unwrap_err().code(),
            ErrorCode::InvalidArgument,
            "{bad}"
        );
    }
}

proptest! {
    /// The one decimal parser never panics on any text, and accepts exactly the canonical
    /// decimal of a value in range.
    #[test]
    fn decimal_parsers_are_total(text in any::<String>()) {
        let canonical = !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && (text == "0" || !text.starts_with('0'));
        let u = flakery::decimal::parse_u64("n", &text);
        prop_assert_eq!(u.is_ok(), canonical && text.parse::<u64>().is_ok());
        if let Ok(value) = u {
            prop_assert_eq!(value.to_string(), text.clone());
        }
        let i = flakery::decimal::parse_i64("t", &text);
        if let Ok(value) = i {
            prop_assert_eq!(value.to_string(), text.clone());
        }
        if let Ok(id) = flakery::parse_id(&text) {
            prop_assert_eq!(id.to_string(), text.clone());
        }
    }

    #[test]
    fn decimal_parsers_read_back_every_value(value in any::<i64>()) {
        prop_assert_eq!(flakery::decimal::parse_i64("t", &value.to_string()), Ok(value));
        prop_assert_eq!(flakery::parse_id(&value.to_string()).is_ok(), value >= 0);
        for padded in [format!("+{value}"), format!(" {value}"), format!("0{value}")] {
            prop_assert!(flakery::decimal::parse_i64("t", &padded).is_err(), "{}", padded);
        }
    }
}

proptest! {
    /// Every parser of text from outside (a URL, a layout, an instant, a host name, an ID in
    /// each form, a mode) answers any text, bytes that were not UTF-8 included (read as
    /// U+FFFD, as a host name or a C string is), with a value or an error: never a panic.
    #[test]
    fn parsers_of_outside_text_never_panic(
        text in any::<String>(),
        bytes in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        for input in [text.as_str(), lossy.as_str()] {
            if let Ok(url) = flakery::DatabaseUrl::parse(input) {
                let _ = (url.masked().len(), url.host().len(), url.scrub(input).len());
            }
            let _ = Layout::parse(input);
            let _ = flakery::timestamp::parse_instant_ms(input);
            let _ = flakery::options::hostname_ordinal(input);
            let _ = input.parse::<flakery::DatabaseMode>();
            for format in flakery::IdFormat::ALL {
                let _ = format.parse(input);
            }
            let _ = input.parse::<flakery::IdFormat>();
            let _ = flakery::decimal::parse_u64_at_most(input, input, 7);
            let cut = flakery::truncate::prefix(input, 64);
            prop_assert!(cut.len() <= 64 && input.starts_with(cut));
        }
    }
}

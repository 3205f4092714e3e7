//! `decode` and `compose` under any layout: presets, hand-written specs and layouts built from
//! the input's bytes (any field order, widths and constants). Checked against a model that
//! places each field's bits itself:
//! - `decode` takes every non-negative ID that fits the layout, reports each field's bits and
//!   the exact instant of its tick, and `compose(decode(x)) == x`; any other ID is refused
//!   with `invalid_argument`;
//! - `compose` of any parts gives exactly the model's ID, or refuses (`invalid_argument`)
//!   exactly when a value does not fit, a name is not a constant field, the time is outside
//!   the layout, or bit 63 would be set; what it builds decodes back to those parts.
//!
//! Input: a layout spec, a newline, then bytes for the ID and the parts. An empty spec means
//! "build a layout from the bytes".
#![no_main]

use flakery::{compose, decode, Decoded, ErrorCode, FieldKind, Layout, Parts};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 8] = [
    "time",
    "sequence",
    "datacenter",
    "worker",
    "version",
    "type",
    "method",
    "c",
];

/// A spec for a layout built from bytes: 2 to 6 fields of any kind, order and width.
fn spec_from(u: &mut Unstructured) -> Result<String> {
    let count = u.int_in_range(2..=6)?;
    let mut fields = Vec::new();
    for _ in 0..count {
        let name = NAMES[u.choose_index(NAMES.len())?];
        let bits: u32 = u.int_in_range(1..=63)?;
        let field = if FieldKind::Constant == kind_of(name) && u.arbitrary()? {
            let value: u64 = u.arbitrary()?;
            format!("{name}:{bits}={}", value & mask(bits))
        } else {
            format!("{name}:{bits}")
        };
        fields.push(field);
    }
    let epoch = u.int_in_range(0..=flakery::timestamp::MAX_TIMESTAMP_MS)?;
    let unit = *u.choose(&["ms", "10ms", "s"])?;
    Ok(format!("{};epoch={epoch};unit={unit}", fields.join(",")))
}

fn kind_of(name: &str) -> FieldKind {
    match name {
        "time" => FieldKind::Time,
        "sequence" => FieldKind::Sequence,
        "datacenter" => FieldKind::Datacenter,
        "worker" => FieldKind::Worker,
        _ => FieldKind::Constant,
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// The Unix millisecond a tick starts at, without saturation.
fn instant_of(layout: &Layout, tick: u64) -> i128 {
    i128::from(layout.tick_origin_ms()) + i128::from(tick) * i128::from(layout.unit().millis())
}

fn parts_of(d: &Decoded, layout: &Layout) -> Parts {
    Parts {
        timestamp_ms: d.timestamp_ms,
        datacenter_id: d.datacenter_id,
        worker_id: d.worker_id,
        sequence: d.sequence,
        fields: layout
            .fields()
            .iter()
            .filter(|f| f.kind == FieldKind::Constant)
            .map(|f| (f.name.clone(), d.field(&f.name).expect("decoded")))
            .collect(),
    }
}

fn check_decode(layout: &Layout, id: i64) {
    let total = layout.total_bits();
    let raw = id as u64;
    let fits = id >= 0 && (total >= 64 || raw >> total == 0);
    // A tick whose instant is past the last i64 millisecond has no timestamp to give.
    let time = layout.time();
    let representable =
        instant_of(layout, (raw >> time.shift) & mask(time.bits)) <= i64::MAX.into();
    let decoded = match decode(id, layout) {
        Ok(d) => d,
        Err(e) => {
            assert!(
                !fits || !representable,
                "decode({id}, {layout}) refused a fitting ID: {e}"
            );
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
            return;
        }
    };
    assert!(
        fits,
        "decode({id}, {layout}) accepted an ID that does not fit"
    );
    assert!(
        representable,
        "decode({id}, {layout}) gave an instant past i64"
    );
    assert_eq!(decoded.id, id as u64);
    assert_eq!(decoded.fields.len(), layout.fields().len());
    for (f, (name, value)) in layout.fields().iter().zip(&decoded.fields) {
        assert_eq!(&f.name, name);
        assert_eq!(*value, (raw >> f.slot.shift) & mask(f.slot.bits), "{name}");
    }
    let value_of = |kind| {
        layout
            .fields()
            .iter()
            .find(|f| f.kind == kind)
            .map_or(0, |f| (raw >> f.slot.shift) & mask(f.slot.bits))
    };
    assert_eq!(decoded.sequence, value_of(FieldKind::Sequence));
    assert_eq!(decoded.datacenter_id, value_of(FieldKind::Datacenter));
    assert_eq!(decoded.worker_id, value_of(FieldKind::Worker));
    let tick = value_of(FieldKind::Time);
    assert_eq!(
        i128::from(decoded.timestamp_ms),
        instant_of(layout, tick),
        "decode({id}, {layout}): tick {tick} does not start at the instant given"
    );
    let back = compose(&parts_of(&decoded, layout), layout);
    assert_eq!(back, Ok(id), "compose(decode({id})) under {layout}");
}

/// The ID `compose` must give for `parts`, or `None` when it must refuse.
fn model_compose(layout: &Layout, parts: &Parts) -> Option<i64> {
    let mut id = 0u64;
    for (name, _) in &parts.fields {
        if layout.field(name)?.kind != FieldKind::Constant {
            return None;
        }
    }
    let since = i128::from(parts.timestamp_ms) - i128::from(layout.tick_origin_ms());
    if since < 0 {
        return None;
    }
    let tick = u64::try_from(since / i128::from(layout.unit().millis())).ok()?;
    if tick > layout.max_tick() {
        return None;
    }
    let mut has = (false, false);
    for f in layout.fields() {
        let value = match f.kind {
            FieldKind::Time => tick,
            FieldKind::Sequence => parts.sequence,
            FieldKind::Datacenter => {
                has.0 = true;
                parts.datacenter_id
            }
            FieldKind::Worker => {
                has.1 = true;
                parts.worker_id
            }
            FieldKind::Constant => parts
                .fields
                .iter()
                .rev()
                .find(|(n, _)| *n == f.name)
                .map_or(f.default, |(_, v)| *v),
        };
        if value & !mask(f.slot.bits) != 0 {
            return None;
        }
        id |= value << f.slot.shift;
    }
    if (!has.0 && parts.datacenter_id != 0) || (!has.1 && parts.worker_id != 0) {
        return None;
    }
    i64::try_from(id).ok()
}

fn check_compose(layout: &Layout, parts: &Parts) {
    let got = compose(parts, layout);
    match (&got, model_compose(layout, parts)) {
        (Ok(id), Some(expected)) => {
            assert_eq!(*id, expected, "compose({parts:?}, {layout})");
            let d = decode(*id, layout).expect("a composed ID decodes");
            assert_eq!(d.sequence, parts.sequence);
            assert_eq!(d.datacenter_id, parts.datacenter_id);
            assert_eq!(d.worker_id, parts.worker_id);
            assert!(d.timestamp_ms <= parts.timestamp_ms);
            assert!(
                i128::from(parts.timestamp_ms) - i128::from(d.timestamp_ms)
                    < i128::from(layout.unit().millis()),
                "compose({parts:?}, {layout}) lost more than the tick"
            );
        }
        (Err(e), None) => assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}"),
        (got, expected) => {
            panic!("compose({parts:?}, {layout}) = {got:?}, the model gives {expected:?}")
        }
    }
}

fn run(data: &[u8]) -> Result<()> {
    let Some((head, tail)) = flakery_fuzz::split_head(data) else {
        return Ok(());
    };
    let mut u = Unstructured::new(tail);
    let spec = if head.is_empty() {
        spec_from(&mut u)?
    } else {
        head.to_string()
    };
    let Some(layout) = flakery_fuzz::parse_checked(&spec) else {
        return Ok(());
    };
    let total = layout.total_bits();

    let raw: i64 = u.arbitrary()?;
    check_decode(&layout, raw);
    // The same bits cut to the layout's width and made non-negative: an ID decode must take.
    check_decode(&layout, (raw as u64 & mask(total) & i64::MAX as u64) as i64);

    // Parts that mostly fit (so compose succeeds often) and sometimes do not.
    let fit: bool = u.arbitrary()?;
    let width = |kind| {
        layout
            .fields()
            .iter()
            .find(|f| f.kind == kind)
            .map_or(0, |f| f.slot.bits)
    };
    let value = |u: &mut Unstructured, bits: u32| -> Result<u64> {
        let v: u64 = u.arbitrary()?;
        Ok(if fit { v & mask(bits) } else { v })
    };
    let timestamp_ms = if fit {
        let tick = u.int_in_range(0..=layout.max_tick())?;
        let offset = u.int_in_range(0..=layout.unit().millis() - 1)?;
        i64::try_from(instant_of(&layout, tick) + i128::from(offset)).unwrap_or(i64::MAX)
    } else {
        u.arbitrary()?
    };
    let mut parts = Parts {
        timestamp_ms,
        datacenter_id: value(&mut u, width(FieldKind::Datacenter))?,
        worker_id: value(&mut u, width(FieldKind::Worker))?,
        sequence: value(&mut u, width(FieldKind::Sequence))?,
        fields: Vec::new(),
    };
    let named = u.int_in_range(0..=4)?;
    for _ in 0..named {
        let f = &layout.fields()[u.choose_index(layout.fields().len())?];
        let name = if fit || u.arbitrary()? {
            f.name.clone()
        } else {
            NAMES[u.choose_index(NAMES.len())?].to_string()
        };
        parts.fields.push((name, value(&mut u, f.slot.bits)?));
    }
    if fit {
        parts
            .fields
            .retain(|(n, _)| layout.field(n).map(|f| f.kind) == Some(FieldKind::Constant));
    }
    check_compose(&layout, &parts);
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

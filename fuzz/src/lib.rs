//! What the fuzz targets share: the properties every parsed layout must have, and the split of
//! one fuzz input into a text head and a binary tail (so seeds can be written by hand).

use flakery::{ErrorCode, FieldKind, Layout};

/// Parses `spec` and checks everything a layout promises. Returns the layout when it parses;
/// a refusal must be `invalid_layout` with a message.
pub fn parse_checked(spec: &str) -> Option<Layout> {
    let parsed = Layout::parse(spec);
    assert_eq!(
        parsed,
        spec.parse::<Layout>(),
        "FromStr and Layout::parse disagree on {spec:?}"
    );
    match parsed {
        Ok(layout) => {
            check_layout(&layout, spec);
            Some(layout)
        }
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::InvalidLayout, "{spec:?}: {e}");
            assert!(!e.message().is_empty(), "{spec:?}: empty message");
            None
        }
    }
}

/// The invariants of a layout that parsed from `spec`.
pub fn check_layout(layout: &Layout, spec: &str) {
    // Display is the canonical spec: it reads back to the same layout, and is a fixed point.
    let canonical = layout.to_string();
    let again = Layout::parse(&canonical)
        .unwrap_or_else(|e| panic!("{spec:?} printed as {canonical:?}, which fails: {e}"));
    assert_eq!(
        &again, layout,
        "{spec:?} -> {canonical:?} reads back different"
    );
    assert_eq!(
        again.to_string(),
        canonical,
        "{spec:?}: printing is not stable"
    );

    // Fields are packed most significant first down to bit 0, without gaps or overlaps.
    let fields = layout.fields();
    let total: u32 = fields.iter().map(|f| f.slot.bits).sum();
    assert_eq!(total, layout.total_bits(), "{spec:?}");
    assert!((1..=64).contains(&total), "{spec:?}: {total} bits");
    let mut next_shift = total;
    for f in fields {
        assert!(
            (1..=63).contains(&f.slot.bits),
            "{spec:?}: field {}",
            f.name
        );
        next_shift -= f.slot.bits;
        assert_eq!(
            f.slot.shift, next_shift,
            "{spec:?}: field {} misplaced",
            f.name
        );
        assert!(
            f.slot.bits >= 64 || f.default >> f.slot.bits == 0,
            "{spec:?}"
        );
        if f.kind != FieldKind::Constant {
            assert_eq!(f.default, 0, "{spec:?}: {} has a value", f.name);
        }
        assert_eq!(
            fields.iter().filter(|g| g.name == f.name).count(),
            1,
            "{spec:?}: {} twice",
            f.name
        );
    }
    assert_eq!(next_shift, 0, "{spec:?}");
    let slot = |kind| fields.iter().find(|f| f.kind == kind).map(|f| f.slot);
    assert_eq!(slot(FieldKind::Time), Some(layout.time()), "{spec:?}");
    assert_eq!(
        slot(FieldKind::Sequence),
        Some(layout.sequence()),
        "{spec:?}"
    );
    assert_eq!(slot(FieldKind::Datacenter), layout.datacenter(), "{spec:?}");
    assert_eq!(slot(FieldKind::Worker), layout.worker(), "{spec:?}");
    // Bit 63 is the sign bit: only the time field (which then loses its top bit) or a
    // constant may reach it.
    if total == 64 {
        assert!(
            matches!(fields[0].kind, FieldKind::Time | FieldKind::Constant),
            "{spec:?}: {} holds bit 63",
            fields[0].name
        );
    }
    assert!(
        layout.time().bits + layout.sequence().bits <= 63,
        "{spec:?}"
    );

    let capacity = layout.capacity();
    assert!(capacity.max_tick <= layout.time().max(), "{spec:?}");
    assert!(capacity.ids_per_tick >= 2, "{spec:?}");
    assert_eq!(
        capacity.node_ids,
        capacity.datacenter_ids.saturating_mul(capacity.worker_ids),
        "{spec:?}"
    );
    assert!(
        capacity.exhausted_at_ms > layout.epoch_ms(),
        "{spec:?}: runs out before it starts"
    );
    let _ = flakery::layout::describe(layout);

    if let Some(name) = layout.preset_name() {
        assert_eq!(Layout::preset(name).as_ref(), Ok(layout), "{spec:?}");
        assert_eq!(canonical, name, "{spec:?}");
    }
}

/// Splits an input at its first newline: the text before it (when it is UTF-8) and the bytes
/// after it. Targets that need a layout and binary values read the layout spec from the head,
/// so a seed is a spec a person can write, a newline, and some bytes.
pub fn split_head(data: &[u8]) -> Option<(&str, &[u8])> {
    let end = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let head = std::str::from_utf8(&data[..end]).ok()?;
    let tail = data.get(end + 1..).unwrap_or(&[]);
    Some((head, tail))
}

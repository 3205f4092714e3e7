//! `decode` and its inverse `compose`.

use crate::error::{Error, Result};
use crate::layout::{FieldKind, Layout};
use crate::lease::node::NodeId;

/// An ID taken apart. `fields` holds every field of the layout by name, in layout order, with
/// its raw value (the time field in ticks since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decoded {
    /// The ID as an unsigned 64-bit integer: 2^63 and above only under an unsigned layout.
    pub id: u64,
    pub timestamp_ms: i64,
    /// 0 when the layout has no datacenter field.
    pub datacenter_id: u64,
    /// 0 when the layout has no worker field.
    pub worker_id: u64,
    pub sequence: u64,
    pub fields: Vec<(String, u64)>,
}

impl Decoded {
    pub fn field(&self, name: &str) -> Option<u64> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| *value)
    }
}

/// What an ID is made of, for `compose`. `fields` gives the values of constant fields by
/// name; a constant not named takes its layout default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parts {
    pub timestamp_ms: i64,
    pub datacenter_id: u64,
    pub worker_id: u64,
    pub sequence: u64,
    pub fields: Vec<(String, u64)>,
}

pub fn decode(id: i64, layout: &Layout) -> Result<Decoded> {
    if id < 0 {
        return Err(Error::invalid_argument(format!(
            "ID {id} is negative; IDs are non-negative 64-bit integers"
        )));
    }
    decode_u64(id as u64, layout)
}

/// `decode` of an ID given as an unsigned 64-bit integer: one of 2^63 and above decodes only
/// under a layout whose origin defines its IDs as unsigned (`;unsigned=true`, `discord`).
pub fn decode_u64(id: u64, layout: &Layout) -> Result<Decoded> {
    if id >> 63 != 0 && !layout.is_unsigned() {
        return Err(Error::invalid_argument(format!(
            "ID {id} is larger than the largest ID of layout '{layout}', 2^63-1: it is signed \
             (only a layout with ;unsigned=true, such as discord, takes IDs of 2^63 and above)"
        )));
    }
    let raw = id;
    if layout.total_bits() < 64 && raw >> layout.total_bits() != 0 {
        return Err(Error::invalid_argument(format!(
            "ID {id} has bits set above the {} bits of layout '{layout}'",
            layout.total_bits()
        )));
    }
    let value_of = |slot: Option<crate::layout::Slot>| slot.map_or(0, |s| s.get(raw));
    let tick = layout.time().get(raw);
    // A wide time field in coarse units can name instants past the last i64 millisecond; the
    // saturated value would be a wrong answer, and compose could not give the ID back.
    let timestamp_ms = i64::try_from(
        i128::from(tick) * i128::from(layout.unit().millis()) + i128::from(layout.tick_origin_ms()),
    )
    .map_err(|_| {
        Error::invalid_argument(format!(
            "ID {id} names tick {tick} of layout '{layout}', an instant past the largest \
             Unix millisecond a timestamp can hold (2^63-1)"
        ))
    })?;
    Ok(Decoded {
        id,
        timestamp_ms,
        datacenter_id: value_of(layout.datacenter()),
        worker_id: value_of(layout.worker()),
        sequence: layout.sequence().get(raw),
        fields: layout
            .fields()
            .iter()
            .map(|f| (f.name.clone(), f.slot.get(raw)))
            .collect(),
    })
}

/// Builds the ID `decode` would take apart into `parts`. The timestamp is rounded down to its
/// tick, as generation does; every other value must fit its field exactly.
pub fn compose(parts: &Parts, layout: &Layout) -> Result<i64> {
    let id = compose_u64(parts, layout)?;
    i64::try_from(id).map_err(|_| {
        Error::invalid_argument(format!(
            "these values make ID {id}, above 2^63-1: compose it as an unsigned integer \
             (compose_u64)"
        ))
    })
}

/// `compose` giving an unsigned 64-bit integer: under an unsigned layout (`discord`) the
/// time field may use its top bit, which makes IDs of 2^63 and above.
pub fn compose_u64(parts: &Parts, layout: &Layout) -> Result<u64> {
    let fixed = constant_bits(layout, &parts.fields)?
        | node_bits(
            layout,
            NodeId {
                datacenter_id: parts.datacenter_id,
                worker_id: parts.worker_id,
            },
        )?;
    let tick = layout.tick_of_ms(parts.timestamp_ms).ok_or_else(|| {
        Error::invalid_argument(format!(
            "timestamp {} ms is before the epoch of layout '{layout}' ({} ms)",
            parts.timestamp_ms,
            layout.tick_origin_ms()
        ))
    })?;
    if tick > layout.max_tick_unsigned() {
        return Err(Error::invalid_argument(format!(
            "timestamp {} ms is past the end of layout '{layout}'",
            parts.timestamp_ms
        )));
    }
    let sequence = layout.sequence();
    check_fits("sequence", parts.sequence, sequence.bits).map_err(|e| e.about("sequence"))?;
    let id = layout.time().put(tick) | sequence.put(parts.sequence) | fixed;
    if id >> 63 != 0 && !layout.is_unsigned() {
        return Err(Error::invalid_argument(
            "these values set bit 63, which would make the ID negative",
        ));
    }
    Ok(id)
}

/// The constant fields' bits, in place: each the value `values` gives it (the last one named),
/// or its default. Every name in `values` must be a constant field of the layout.
pub(crate) fn constant_bits(layout: &Layout, values: &[(String, u64)]) -> Result<u64> {
    for (name, _) in values {
        match layout.field(name) {
            Some(f) if f.kind == FieldKind::Constant => {}
            Some(_) => {
                return Err(Error::invalid_argument(format!(
                    "'{name}' is not a constant field; pass it as its own argument"
                )))
            }
            None => {
                return Err(Error::invalid_argument(format!(
                    "layout '{layout}' has no constant field '{name}'"
                )))
            }
        }
    }
    let mut bits = 0;
    for field in layout
        .fields()
        .iter()
        .filter(|f| f.kind == FieldKind::Constant)
    {
        let value = values
            .iter()
            .rev()
            .find(|(n, _)| *n == field.name)
            .map_or(field.default, |(_, v)| *v);
        check_fits(&field.name, value, field.slot.bits)?;
        bits |= field.slot.put(value);
    }
    Ok(bits)
}

/// The datacenter and worker fields' bits, in place. A layout without one of them takes only 0
/// for it.
pub(crate) fn node_bits(layout: &Layout, node: NodeId) -> Result<u64> {
    let mut bits = 0;
    for (value, slot, name) in [
        (node.datacenter_id, layout.datacenter(), "datacenter_id"),
        (node.worker_id, layout.worker(), "worker_id"),
    ] {
        match slot {
            Some(slot) => {
                check_fits(name, value, slot.bits).map_err(|e| e.about(name))?;
                bits |= slot.put(value);
            }
            None if value != 0 => return Err(no_field(layout, name, value).about(name)),
            None => {}
        }
    }
    Ok(bits)
}

pub(crate) fn check_fits(name: &str, value: u64, bits: u32) -> Result<()> {
    if bits < 64 && value >> bits != 0 {
        return Err(does_not_fit(name, value, bits));
    }
    Ok(())
}

fn does_not_fit(name: &str, value: impl std::fmt::Display, bits: u32) -> Error {
    let max = if bits < 64 {
        (1u64 << bits) - 1
    } else {
        u64::MAX
    };
    Error::invalid_argument(format!(
        "{name} {value} does not fit in {bits} bits (0 to {max})"
    ))
}

/// The error for a value of `option` (`datacenter_id`, `worker_id` or `sequence`) that a
/// binding cannot even hold as a `u64` (negative, or 2^64 and above; `value` is its text),
/// naming the range that `layout` gives the field, as the error for a value that is merely too
/// large does.
pub fn out_of_range(layout: &Layout, option: &'static str, value: &str) -> Error {
    let slot = match option {
        "datacenter_id" => layout.datacenter(),
        "worker_id" => layout.worker(),
        _ => Some(layout.sequence()),
    };
    match slot {
        Some(slot) => does_not_fit(option, value, slot.bits),
        None => no_field(layout, option, value),
    }
    .about(option)
}

fn no_field(layout: &Layout, name: &str, value: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!(
        "layout '{layout}' has no {} field, so {name} must be 0, not {value}",
        name.trim_end_matches("_id")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decimal::{parse_id, parse_id_u64};

    /// @sapphire/snowflake's ID for 2093 (issue 21), above 2^63: Discord's IDs are unsigned
    /// with 42 time bits.
    #[test]
    fn discord_ids_above_2_pow_63_decode_and_compose_as_u64() {
        let discord = Layout::preset("discord").unwrap();
        let id = 10_401_578_640_998_539_267u64;
        let d = decode_u64(id, &discord).unwrap();
        assert_eq!(d.id, id);
        let parts = Parts {
            timestamp_ms: d.timestamp_ms,
            datacenter_id: d.datacenter_id,
            worker_id: d.worker_id,
            sequence: d.sequence,
            fields: vec![],
        };
        assert_eq!(compose_u64(&parts, &discord), Ok(id));
        assert!(compose(&parts, &discord)
            .unwrap_err()
            .message()
            .contains("compose_u64"));
        assert_eq!(parse_id_u64("10401578640998539267"), Ok(id));
        assert!(parse_id("10401578640998539267").is_err());
        // A signed layout refuses the same bits rather than misread them.
        let twitter = Layout::twitter();
        assert!(decode_u64(id, &twitter)
            .unwrap_err()
            .message()
            .contains("signed"));
        // Below 2^63 the two agree.
        assert_eq!(
            decode_u64(175928847299117063, &discord),
            decode(175928847299117063, &discord)
        );
    }

    /// Found by the decode_compose fuzz target: the tick of this ID starts 4.4e21 ms after the
    /// epoch, which no i64 holds; decode used to saturate it to i64::MAX.
    #[test]
    fn an_instant_past_i64_milliseconds_is_refused_not_saturated() {
        let layout = Layout::parse("time:62,sequence:1;epoch=0;unit=s").unwrap();
        let id = 8_717_274_513_940_545_279;
        let err = decode(id, &layout).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
        assert!(err.message().contains("past the largest"), "{err}");
        // The last ID whose instant fits still decodes and composes back.
        let last_tick = (i64::MAX as u64) / 1000;
        let id = (last_tick << 1 | 1) as i64;
        let decoded = decode(id, &layout).unwrap();
        let parts = Parts {
            timestamp_ms: decoded.timestamp_ms,
            sequence: decoded.sequence,
            ..Parts::default()
        };
        assert_eq!(compose(&parts, &layout), Ok(id));
    }
}

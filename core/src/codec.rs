//! `decode` and its inverse `compose`.

use crate::error::{Error, Result};
use crate::layout::{FieldKind, Layout};

/// An ID taken apart. `fields` holds every field of the layout by name, in layout order, with
/// its raw value (the time field in ticks since the epoch).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decoded {
    pub id: i64,
    pub timestamp_ms: i64,
    /// 0 when the layout has no datacenter field.
    pub datacenter_id: u64,
    /// 0 when the layout has no worker field.
    pub worker_id: u64,
    pub sequence: u64,
    pub fields: Vec<(String, u64)>,
}

impl Decoded {
    pub fn time(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(self.timestamp_ms as u64)
    }

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
    let raw = id as u64;
    if layout.total_bits() < 64 && raw >> layout.total_bits() != 0 {
        return Err(Error::invalid_argument(format!(
            "ID {id} has bits set above the {} bits of layout '{layout}'",
            layout.total_bits()
        )));
    }
    let value_of = |slot: Option<crate::layout::Slot>| slot.map_or(0, |s| s.get(raw));
    let tick = layout.time().get(raw);
    Ok(Decoded {
        id,
        timestamp_ms: layout.ms_of_tick(tick),
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
    for (name, _) in &parts.fields {
        match layout.field(name) {
            Some(f) if f.kind == FieldKind::Constant => {}
            Some(_) => {
                return Err(Error::invalid_argument(format!(
                    "'{name}' is not a constant field; pass it as its own argument"
                )))
            }
            None => {
                return Err(Error::invalid_argument(format!(
                    "layout '{layout}' has no field '{name}'"
                )))
            }
        }
    }
    let tick = layout.tick_of_ms(parts.timestamp_ms).ok_or_else(|| {
        Error::invalid_argument(format!(
            "timestamp {} ms is before the epoch of layout '{layout}' ({} ms)",
            parts.timestamp_ms,
            layout.epoch_ms()
        ))
    })?;
    if tick > layout.max_tick() {
        return Err(Error::invalid_argument(format!(
            "timestamp {} ms is past the end of layout '{layout}'",
            parts.timestamp_ms
        )));
    }
    let mut id = 0u64;
    for field in layout.fields() {
        let value = match field.kind {
            FieldKind::Time => tick,
            FieldKind::Sequence => parts.sequence,
            FieldKind::Datacenter => parts.datacenter_id,
            FieldKind::Worker => parts.worker_id,
            FieldKind::Constant => parts
                .fields
                .iter()
                .find(|(n, _)| *n == field.name)
                .map_or(field.default, |(_, v)| *v),
        };
        let label = match field.kind {
            FieldKind::Time => "time (ticks since the epoch)",
            FieldKind::Sequence => "sequence",
            FieldKind::Datacenter => "datacenter_id",
            FieldKind::Worker => "worker_id",
            FieldKind::Constant => &field.name,
        };
        check_fits(label, value, field.slot.bits)?;
        id |= field.slot.put(value);
    }
    if layout.datacenter().is_none() && parts.datacenter_id != 0 {
        return Err(Error::invalid_argument(format!(
            "layout '{layout}' has no datacenter field, but datacenter_id is {}",
            parts.datacenter_id
        )));
    }
    if layout.worker().is_none() && parts.worker_id != 0 {
        return Err(Error::invalid_argument(format!(
            "layout '{layout}' has no worker field, but worker_id is {}",
            parts.worker_id
        )));
    }
    if id >> 63 != 0 {
        return Err(Error::invalid_argument(
            "these values set bit 63, which would make the ID negative",
        ));
    }
    Ok(id as i64)
}

/// The values a constant field may take: `name` must fit `bits`.
pub(crate) fn check_fits(name: &str, value: u64, bits: u32) -> Result<()> {
    if bits < 64 && value >> bits != 0 {
        return Err(Error::invalid_argument(format!(
            "{name} {value} does not fit in {bits} bits (0 to {})",
            (1u64 << bits) - 1
        )));
    }
    Ok(())
}

/// Reads an ID written in decimal, as the CLI and string-accepting bindings take it.
pub fn parse_id(text: &str) -> Result<i64> {
    let digits = text.trim();
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits.strip_prefix('+').unwrap_or(digits)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid_argument(format!(
            "'{text}' is not an ID: an ID is a non-negative decimal integer"
        )));
    }
    if negative && digits.bytes().any(|b| b != b'0') {
        return Err(Error::invalid_argument(format!(
            "ID {} is negative; IDs are non-negative 64-bit integers",
            text.trim()
        )));
    }
    digits.parse::<i64>().map_err(|_| {
        Error::invalid_argument(format!(
            "{} is larger than the largest ID, 2^63-1",
            text.trim()
        ))
    })
}

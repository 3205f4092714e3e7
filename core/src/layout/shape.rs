//! The `Layout` type: which field sits where, the epoch and the tick, validated once when
//! built; and the arithmetic between instants, ticks and node indexes.

use super::field::{Field, FieldKind, Slot};
use super::units::TimeUnit;
use crate::error::{Error, Result};

/// A parsed, validated layout. Two layouts are equal when they cut IDs the same way.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    fields: Vec<Field>,
    epoch_ms: i64,
    unit: TimeUnit,
    /// Where tick 0 starts: the epoch rounded down to a whole unit since the Unix epoch.
    tick_origin_ms: i64,
    /// IDs are unsigned 64-bit integers by the origin's definition (Discord): decoding and
    /// composing take IDs of 2^63 and above (`decode_u64`, `compose_u64`).
    unsigned: bool,
    time: Slot,
    sequence: Slot,
    datacenter: Option<Slot>,
    worker: Option<Slot>,
    total_bits: u32,
}

impl Layout {
    /// The layout of `fields` (packed, most significant first), checked: it has a time and a
    /// sequence field, bit 63 is not a node or sequence bit, and time and sequence fit 63 bits.
    pub(super) fn from_fields(
        fields: Vec<Field>,
        epoch_ms: i64,
        unit: TimeUnit,
        unsigned: bool,
    ) -> Result<Layout> {
        let slot_of = |kind: FieldKind| fields.iter().find(|f| f.kind == kind).map(|f| f.slot);
        let time = slot_of(FieldKind::Time)
            .ok_or_else(|| Error::invalid_layout("a layout needs a 'time' field"))?;
        let sequence = slot_of(FieldKind::Sequence)
            .ok_or_else(|| Error::invalid_layout("a layout needs a 'sequence' field"))?;
        let total_bits = fields.iter().map(|f| f.slot.bits).sum();
        let layout = Layout {
            datacenter: slot_of(FieldKind::Datacenter),
            worker: slot_of(FieldKind::Worker),
            fields,
            epoch_ms,
            unit,
            tick_origin_ms: epoch_ms - epoch_ms.rem_euclid(unit.millis()),
            unsigned,
            time,
            sequence,
            total_bits,
        };
        if let Some(top) = layout.fields.first() {
            let can_hold_bit_63 = matches!(top.kind, FieldKind::Time | FieldKind::Constant);
            if total_bits == 64 && !can_hold_bit_63 {
                return Err(Error::invalid_layout(format!(
                    "field '{}' would hold bit 63, the sign bit: a 64-bit layout must start \
                     with the time field or a constant",
                    top.name
                )));
            }
        }
        if layout.time.bits + layout.sequence.bits > 63 {
            return Err(Error::invalid_layout(
                "time and sequence together may use at most 63 bits",
            ));
        }
        Ok(layout)
    }

    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn epoch_ms(&self) -> i64 {
        self.epoch_ms
    }

    pub fn unit(&self) -> TimeUnit {
        self.unit
    }

    pub fn time(&self) -> Slot {
        self.time
    }

    pub fn sequence(&self) -> Slot {
        self.sequence
    }

    pub fn datacenter(&self) -> Option<Slot> {
        self.datacenter
    }

    pub fn worker(&self) -> Option<Slot> {
        self.worker
    }

    pub fn total_bits(&self) -> u32 {
        self.total_bits
    }

    /// Whether the origin defines its IDs as unsigned 64-bit integers (`;unsigned=true`;
    /// the `discord` preset): then decoding and composing take IDs of 2^63 and above, which
    /// no generator makes (docs/layouts.md#unsigned-ids).
    pub fn is_unsigned(&self) -> bool {
        self.unsigned
    }

    /// The largest tick `compose_u64` accepts: the whole time field in an unsigned layout.
    pub fn max_tick_unsigned(&self) -> u64 {
        if self.unsigned {
            self.time.max()
        } else {
            self.max_tick()
        }
    }

    /// The largest tick that still gives a non-negative ID: a time field that reaches bit 63
    /// loses its top bit.
    pub fn max_tick(&self) -> u64 {
        if self.time.shift + self.time.bits >= 64 {
            self.time.max() >> 1
        } else {
            self.time.max()
        }
    }

    /// The first Unix millisecond of tick 0: the epoch itself when it lies on a unit
    /// boundary (every preset's does), else the boundary before it, as Sonyflake counts.
    pub fn tick_origin_ms(&self) -> i64 {
        self.tick_origin_ms
    }

    /// The tick a Unix millisecond falls in; `None` before tick 0.
    #[inline]
    pub fn tick_of_ms(&self, ms: i64) -> Option<u64> {
        let since = ms.checked_sub(self.tick_origin_ms)?;
        if since < 0 {
            return None;
        }
        // A match on the unit keeps the common divisors constants, which the compiler turns
        // into a multiply: a run-time division would cost more than the rest of next_id.
        Some(match self.unit {
            TimeUnit::Millis => since as u64,
            TimeUnit::TenMillis => since as u64 / 10,
            TimeUnit::Seconds => since as u64 / 1000,
            TimeUnit::Other(ms) => since as u64 / u64::from(ms),
        })
    }

    /// The first Unix millisecond of a tick (saturating).
    pub fn ms_of_tick(&self, tick: u64) -> i64 {
        let since = (tick as i128) * (self.unit.millis() as i128) + self.tick_origin_ms as i128;
        since.min(i64::MAX as i128) as i64
    }

    /// The bits the datacenter and worker fields hold together, datacenter high. Leases hand
    /// out node indexes in `0..capacity().node_ids`.
    pub fn node_of_index(&self, index: u64) -> (u64, u64) {
        let worker_bits = self.worker.map_or(0, |s| s.bits);
        let worker = if worker_bits == 0 {
            0
        } else {
            index & self.worker.map_or(0, Slot::max)
        };
        let datacenter = if worker_bits >= 64 {
            0
        } else {
            index >> worker_bits
        };
        (datacenter, worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twitter_slots() {
        let l = Layout::twitter();
        assert_eq!(
            l.time(),
            Slot {
                shift: 22,
                bits: 41
            }
        );
        assert_eq!(l.datacenter(), Some(Slot { shift: 17, bits: 5 }));
        assert_eq!(l.worker(), Some(Slot { shift: 12, bits: 5 }));
        assert_eq!(l.sequence(), Slot { shift: 0, bits: 12 });
        assert_eq!(l.capacity().ids_per_second, 4_096_000);
        assert_eq!(l.capacity().node_ids, 1024);
    }

    #[test]
    fn an_epoch_off_the_unit_starts_tick_0_at_the_boundary_before_it() {
        let l =
            Layout::parse("time:39,sequence:8,worker:16;epoch=1577836800005;unit=10ms").unwrap();
        assert_eq!(l.tick_origin_ms(), 1_577_836_800_000);
        assert_eq!(l.tick_of_ms(1_577_836_800_009), Some(0));
        assert_eq!(l.tick_of_ms(1_577_836_800_010), Some(1));
        assert_eq!(l.tick_of_ms(1_577_836_799_999), None);
        assert_eq!(l.ms_of_tick(1), 1_577_836_800_010);
    }
}

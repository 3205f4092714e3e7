//! How a 64-bit ID is cut into fields: parsed from a spec string (docs/spec.md#layouts),
//! validated, printable back to a spec string, and able to tell its capacity.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::timestamp::{format_rfc3339_ms, parse_instant_ms};

/// The length of one tick of the time field: a whole number of milliseconds. Ticks are
/// counted from the Unix epoch, as Sonyflake counts them: the tick of instant `t` is
/// `floor(t/unit) - floor(epoch/unit)`, so an epoch off a unit boundary starts its tick 0 at
/// the boundary before it (docs/spec.md#layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    Millis,
    TenMillis,
    Seconds,
    /// Any other length (Sonyflake v2's `TimeUnit`: 5 ms, 100 ms, ...), never 1, 10 or 1000.
    Other(u32),
}

/// The longest tick a layout may have: one day.
pub const MAX_UNIT_MS: u32 = 86_400_000;

impl TimeUnit {
    pub const fn millis(self) -> i64 {
        match self {
            TimeUnit::Millis => 1,
            TimeUnit::TenMillis => 10,
            TimeUnit::Seconds => 1000,
            TimeUnit::Other(ms) => ms as i64,
        }
    }

    /// The unit of `ms` milliseconds, one of the named variants where it is one.
    fn of_millis(ms: u32) -> Self {
        match ms {
            1 => TimeUnit::Millis,
            10 => TimeUnit::TenMillis,
            1000 => TimeUnit::Seconds,
            _ => TimeUnit::Other(ms),
        }
    }

    /// As `unit=` writes it: `ms`, `10ms`, `s`, `5ms`, `2s`.
    pub fn as_str(self) -> std::borrow::Cow<'static, str> {
        match self {
            TimeUnit::Millis => "ms".into(),
            TimeUnit::TenMillis => "10ms".into(),
            TimeUnit::Seconds => "s".into(),
            TimeUnit::Other(ms) if ms % 1000 == 0 => format!("{}s", ms / 1000).into(),
            TimeUnit::Other(ms) => format!("{ms}ms").into(),
        }
    }

    fn parse(text: &str) -> Result<Self> {
        let (count, scale) = match text {
            "ms" => ("1", 1),
            "s" => ("1", 1000),
            _ => match text.strip_suffix("ms") {
                Some(count) => (count, 1),
                None => (text.strip_suffix('s').unwrap_or(""), 1000),
            },
        };
        let ms = count
            .parse::<u32>()
            .ok()
            .filter(|n| count.bytes().all(|b| b.is_ascii_digit()) && *n > 0)
            .and_then(|n| n.checked_mul(scale))
            .filter(|ms| *ms <= MAX_UNIT_MS);
        ms.map(TimeUnit::of_millis).ok_or_else(|| {
            Error::invalid_layout(format!(
                "unit '{text}' is not ms, s, or a whole number of them from 1 ms to one day \
                 (10ms, 5ms, 100ms, 2s)"
            ))
        })
    }
}

/// What a field holds. Any name other than the four known ones is a constant field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    Time,
    Datacenter,
    Worker,
    Sequence,
    Constant,
}

impl FieldKind {
    /// "time", "datacenter", "worker", "sequence" or "constant".
    pub const fn as_str(self) -> &'static str {
        match self {
            FieldKind::Time => "time",
            FieldKind::Datacenter => "datacenter",
            FieldKind::Worker => "worker",
            FieldKind::Sequence => "sequence",
            FieldKind::Constant => "constant",
        }
    }

    fn of_name(name: &str) -> Self {
        match name {
            "time" => FieldKind::Time,
            "datacenter" => FieldKind::Datacenter,
            "worker" => FieldKind::Worker,
            "sequence" => FieldKind::Sequence,
            _ => FieldKind::Constant,
        }
    }
}

/// Where a field sits in the ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slot {
    pub shift: u32,
    pub bits: u32,
}

impl Slot {
    pub const fn max(self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    #[inline]
    pub const fn get(self, id: u64) -> u64 {
        (id >> self.shift) & self.max()
    }

    #[inline]
    pub const fn put(self, value: u64) -> u64 {
        value << self.shift
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    pub name: String,
    pub kind: FieldKind,
    pub slot: Slot,
    /// The value a constant field takes unless the generator is given another (`type:1=1`).
    pub default: u64,
}

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

/// The presets (docs/spec.md#presets), as spec strings, in the order `flakery layouts` lists them.
pub const PRESETS: [(&str, &str); 9] = [
    (
        "twitter",
        "time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;unit=ms",
    ),
    (
        // Discord's IDs are unsigned, with a 42-bit timestamp (its API reference).
        "discord",
        "time:42,datacenter:5,worker:5,sequence:12;epoch=1420070400000;unit=ms;unsigned=true",
    ),
    (
        "instagram",
        "time:41,worker:13,sequence:10;epoch=1314220021721;unit=ms",
    ),
    (
        "sonyflake",
        "time:39,sequence:8,worker:16;epoch=2014-09-01T00:00:00Z;unit=10ms",
    ),
    (
        // Sonyflake v2's defaults: v1's fields, a new start time.
        "sonyflake-v2",
        "time:39,sequence:8,worker:16;epoch=2025-01-01T00:00:00Z;unit=10ms",
    ),
    (
        "baidu",
        "time:28,worker:22,sequence:13;epoch=2016-05-20T00:00:00+08:00;unit=s",
    ),
    (
        "vesta-max-peak",
        "version:1,type:1=0,method:2,time:30,sequence:20,worker:10;epoch=1420041600000;unit=s",
    ),
    (
        "vesta-min-granularity",
        "version:1,type:1=1,method:2,time:40,sequence:10,worker:10;epoch=1420041600000;unit=ms",
    ),
    (
        "safe53",
        "time:41,worker:6,sequence:6;epoch=2024-01-01T00:00:00Z;unit=ms",
    ),
];

/// What a layout can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// IDs one node can make in one tick.
    pub ids_per_tick: u64,
    /// IDs one node can make in one second (saturating).
    pub ids_per_second: u64,
    pub datacenter_ids: u64,
    pub worker_ids: u64,
    /// Distinct node identities (datacenter × worker).
    pub node_ids: u64,
    /// The largest tick the time field can hold in a non-negative ID.
    pub max_tick: u64,
    /// The first Unix millisecond at which no ID can be made any more.
    pub exhausted_at_ms: i64,
}

impl Layout {
    /// Parses a spec string: a preset name, a preset with options, or a field list with options.
    pub fn parse(spec: &str) -> Result<Layout> {
        let mut parts = spec.split(';');
        let head = parts.next().unwrap_or("").trim();
        if head.is_empty() {
            return Err(Error::invalid_layout(format!(
                "layout '{spec}' is empty: give a preset name ({}) or a field list such as \
                 time:41,worker:10,sequence:12;epoch=1288834974657",
                preset_names().join(", ")
            )));
        }
        let (fields, mut epoch, mut unit, mut unsigned) = if head.contains(':') {
            (parse_fields(head)?, None, None, false)
        } else {
            let base = Layout::preset(head)?;
            (
                base.fields,
                Some(base.epoch_ms),
                Some(base.unit),
                base.unsigned,
            )
        };
        let mut seen_epoch = false;
        let mut seen_unit = false;
        let mut seen_unsigned = false;
        for option in parts {
            let option = option.trim();
            let (key, value) = option.split_once('=').ok_or_else(|| {
                Error::invalid_layout(format!(
                    "option '{option}' in layout '{spec}' is not key=value"
                ))
            })?;
            let (key, value) = (key.trim(), value.trim());
            match key {
                "epoch" if !seen_epoch => {
                    seen_epoch = true;
                    epoch = Some(parse_instant_ms(value).map_err(|e| {
                        Error::invalid_layout(format!("epoch in layout '{spec}': {e}"))
                    })?);
                }
                "unit" if !seen_unit => {
                    seen_unit = true;
                    unit = Some(TimeUnit::parse(value)?);
                }
                "unsigned" if !seen_unsigned => {
                    seen_unsigned = true;
                    unsigned = match value {
                        "true" => true,
                        "false" => false,
                        _ => {
                            return Err(Error::invalid_layout(format!(
                                "unsigned='{value}' in layout '{spec}' is not true or false"
                            )))
                        }
                    };
                }
                "epoch" | "unit" | "unsigned" => {
                    return Err(Error::invalid_layout(format!(
                        "option '{key}' appears twice in layout '{spec}'"
                    )))
                }
                _ => {
                    return Err(Error::invalid_layout(format!(
                        "unknown option '{key}' in layout '{spec}' (known: epoch, unit, unsigned)"
                    )))
                }
            }
        }
        let epoch = epoch.ok_or_else(|| {
            Error::invalid_layout(format!(
                "layout '{spec}' needs an epoch: add ;epoch=<Unix ms or RFC 3339>"
            ))
        })?;
        Layout::from_fields(fields, epoch, unit.unwrap_or(TimeUnit::Millis), unsigned)
    }

    /// One of the presets (docs/spec.md#presets) by name.
    pub fn preset(name: &str) -> Result<Layout> {
        parsed_presets()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, layout)| layout.clone())
            .ok_or_else(|| {
                Error::invalid_layout(format!(
                    "unknown preset '{name}' (known: {})",
                    preset_names().join(", ")
                ))
            })
    }

    /// Every preset with its name, in the order of docs/spec.md#presets.
    pub fn presets() -> Vec<(&'static str, Layout)> {
        parsed_presets().to_vec()
    }

    /// The default layout: `twitter`.
    pub fn twitter() -> Layout {
        Layout::preset("twitter").expect("twitter is a preset")
    }

    fn from_fields(
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

    pub fn capacity(&self) -> Capacity {
        let ids_per_tick = self.sequence.max().saturating_add(1);
        let count = |slot: Option<Slot>| slot.map_or(1, |s| s.max().saturating_add(1));
        let datacenter_ids = count(self.datacenter);
        let worker_ids = count(self.worker);
        let max_tick = self.max_tick();
        Capacity {
            ids_per_tick,
            ids_per_second: ids_per_tick.saturating_mul(1000 / self.unit.millis() as u64),
            datacenter_ids,
            worker_ids,
            node_ids: datacenter_ids.saturating_mul(worker_ids),
            max_tick,
            exhausted_at_ms: self.ms_of_tick(max_tick.saturating_add(1)),
        }
    }

    /// The name of the preset this layout is, if it is one exactly.
    pub fn preset_name(&self) -> Option<&'static str> {
        parsed_presets()
            .iter()
            .find(|(_, preset)| preset == self)
            .map(|(name, _)| *name)
    }

    /// Whether a generator may use this layout: `time` must be more significant than
    /// `sequence`, or one generator's IDs would decrease when a new tick resets the sequence.
    /// Decoding and composing accept such layouts (a foreign system may use one).
    pub fn check_generatable(&self) -> Result<()> {
        if self.time.shift < self.sequence.shift {
            return Err(Error::invalid_layout(format!(
                "layout '{self}' puts sequence above time: a generator's IDs would decrease at \
                 each new tick; list time before sequence (most significant first) to generate \
                 with it (decoding and composing still accept it)"
            )));
        }
        Ok(())
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

impl FromStr for Layout {
    type Err = Error;

    fn from_str(spec: &str) -> Result<Layout> {
        Layout::parse(spec)
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::twitter()
    }
}

/// The canonical spec: a preset's name where the layout is one (with `;epoch=` when only the
/// epoch differs), otherwise the full field list. `Layout::parse` reads it back to an equal
/// layout.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let presets = parsed_presets();
        if let Some((name, _)) = presets.iter().find(|(_, p)| p == self) {
            return f.write_str(name);
        }
        if let Some((name, _)) = presets.iter().find(|(_, p)| {
            p.fields == self.fields && p.unit == self.unit && p.unsigned == self.unsigned
        }) {
            return write!(f, "{name};epoch={}", self.epoch_ms);
        }
        for (i, field) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:{}", field.name, field.slot.bits)?;
            if field.default != 0 {
                write!(f, "={}", field.default)?;
            }
        }
        write!(f, ";epoch={};unit={}", self.epoch_ms, self.unit.as_str())?;
        if self.unsigned {
            f.write_str(";unsigned=true")?;
        }
        Ok(())
    }
}

/// How long before a layout runs out the server and the CLI warn at start, unless configured
/// (`FLAKERY_EXHAUSTION_WARNING_DAYS`): one year. uid-generator's default layout ran out
/// unannounced on 2024-11-20 and took production systems with it.
pub const DEFAULT_EXHAUSTION_WARNING_DAYS: u64 = 365;

const DAY_MS: i64 = 86_400_000;

impl Layout {
    /// Milliseconds from `now_ms` until this layout can make no more IDs (0 once it cannot).
    pub fn time_left_ms(&self, now_ms: i64) -> i64 {
        self.capacity()
            .exhausted_at_ms
            .saturating_sub(now_ms)
            .max(0)
    }

    /// The warning to log at start when less than `margin_days` are left at `now_ms`, or
    /// none at all (whatever the margin, a layout that has run out is worth a line).
    pub fn exhaustion_warning(&self, now_ms: i64, margin_days: u64) -> Option<String> {
        let left_ms = self.time_left_ms(now_ms);
        let margin_ms = i64::try_from(margin_days).map_or(i64::MAX, |d| d.saturating_mul(DAY_MS));
        if left_ms > 0 && left_ms >= margin_ms {
            return None;
        }
        let end = format_rfc3339_ms(self.capacity().exhausted_at_ms);
        Some(if left_ms == 0 {
            format!(
                "layout '{self}' ran out at {end}: every ID fails with time_exhausted; choose a \
                 layout with a later epoch or more time bits"
            )
        } else {
            format!(
                "layout '{self}' runs out at {end}, in {} days (less than the {margin_days} \
                 days of FLAKERY_EXHAUSTION_WARNING_DAYS); plan a layout with a later epoch or \
                 more time bits",
                left_ms / DAY_MS
            )
        })
    }
}

/// `FLAKERY_EXHAUSTION_WARNING_DAYS`, else the default: the one setting of the start-up
/// warning, shared by the server and the CLI.
pub fn exhaustion_warning_days() -> Result<u64> {
    match std::env::var("FLAKERY_EXHAUSTION_WARNING_DAYS") {
        Err(_) => Ok(DEFAULT_EXHAUSTION_WARNING_DAYS),
        Ok(text) => text.trim().parse().map_err(|_| {
            Error::invalid_argument(format!(
                "FLAKERY_EXHAUSTION_WARNING_DAYS='{}' is not a whole number of days",
                text.escape_debug()
            ))
        }),
    }
}

/// A human-readable description for listings: fields, capacity, exhaustion date.
pub fn describe(layout: &Layout) -> String {
    let c = layout.capacity();
    let fields: Vec<String> = layout
        .fields
        .iter()
        .map(|f| format!("{}:{}", f.name, f.slot.bits))
        .collect();
    format!(
        "{} | epoch {} | unit {} | {} IDs/tick/node ({} IDs/s) | {} node IDs | runs out {}",
        fields.join(","),
        format_rfc3339_ms(layout.epoch_ms),
        layout.unit.as_str(),
        c.ids_per_tick,
        c.ids_per_second,
        c.node_ids,
        format_rfc3339_ms(c.exhausted_at_ms)
    )
}

/// The presets, parsed once: printing a layout looks its name up among them.
fn parsed_presets() -> &'static [(&'static str, Layout)] {
    static PARSED: OnceLock<Vec<(&'static str, Layout)>> = OnceLock::new();
    PARSED.get_or_init(|| {
        PRESETS
            .iter()
            .map(|(name, spec)| (*name, Layout::parse(spec).expect("presets are valid")))
            .collect()
    })
}

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(name, _)| *name).collect()
}

fn parse_fields(list: &str) -> Result<Vec<Field>> {
    let mut parsed: Vec<(String, u32, u64)> = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let (name, rest) = item
            .split_once(':')
            .ok_or_else(|| Error::invalid_layout(format!("field '{item}' is not name:bits")))?;
        let name = name.trim();
        let (bits, default) = match rest.split_once('=') {
            Some((bits, default)) => (bits.trim(), Some(default.trim())),
            None => (rest.trim(), None),
        };
        if name.is_empty()
            || name.len() > 32
            || !name.starts_with(|c: char| c.is_ascii_lowercase())
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(Error::invalid_layout(format!(
                "field name '{name}' must be lower-case letters, digits or '_', starting with a letter"
            )));
        }
        let bits = crate::decimal::parse_u64("", bits)
            .ok()
            .and_then(|bits| u32::try_from(bits).ok())
            .ok_or_else(|| {
                Error::invalid_layout(format!(
                    "field '{name}' has width '{bits}', not a number of bits in plain decimal"
                ))
            })?;
        if bits == 0 || bits > 63 {
            return Err(Error::invalid_layout(format!(
                "field '{name}' has {bits} bits; a field has 1 to 63"
            )));
        }
        if parsed.iter().any(|(n, _, _)| n == name) {
            return Err(Error::invalid_layout(format!(
                "field '{name}' appears twice"
            )));
        }
        let default = match default {
            None => 0,
            Some(_) if FieldKind::of_name(name) != FieldKind::Constant => {
                return Err(Error::invalid_layout(format!(
                    "field '{name}' is not a constant and cannot have a value"
                )))
            }
            Some(text) => {
                let value = crate::decimal::parse_u64("", text).map_err(|_| {
                    Error::invalid_layout(format!(
                        "constant '{name}' has value '{text}', not a non-negative integer in \
                         plain decimal"
                    ))
                })?;
                if bits < 64 && value >> bits != 0 {
                    return Err(Error::invalid_layout(format!(
                        "constant '{name}' = {value} does not fit its {bits} bits"
                    )));
                }
                value
            }
        };
        parsed.push((name.to_string(), bits, default));
    }
    let total: u32 = parsed.iter().map(|(_, bits, _)| bits).sum();
    if total > 64 {
        return Err(Error::invalid_layout(format!(
            "fields use {total} bits; an ID has 64"
        )));
    }
    // Fields are listed most significant first and packed down to bit 0.
    let mut shift = total;
    Ok(parsed
        .into_iter()
        .map(|(name, bits, default)| {
            shift -= bits;
            Field {
                kind: FieldKind::of_name(&name),
                name,
                slot: Slot { shift, bits },
                default,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_print_as_their_names() {
        for (name, layout) in Layout::presets() {
            assert_eq!(layout.to_string(), name);
            assert_eq!(Layout::parse(name).unwrap(), layout);
        }
    }

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
    fn epoch_override_keeps_the_preset_name() {
        let l = Layout::parse("discord;epoch=2015-01-01T00:00:00Z").unwrap();
        assert_eq!(l.epoch_ms(), 1_420_070_400_000);
        assert_eq!(l.to_string(), "discord");
        let l = Layout::parse("twitter;epoch=1000").unwrap();
        assert_eq!(l.to_string(), "twitter;epoch=1000");
    }

    #[test]
    fn custom_layout_round_trips() {
        let spec = "v:2=3,time:40,worker:7,sequence:12;epoch=1700000000000;unit=10ms";
        let l = Layout::parse(spec).unwrap();
        assert_eq!(l.to_string(), spec);
        assert_eq!(l.field("v").unwrap().default, 3);
        assert_eq!(l.total_bits(), 61);
    }

    #[test]
    fn units_are_whole_milliseconds_and_print_back() {
        for (text, ms, printed) in [
            ("ms", 1, "ms"),
            ("1ms", 1, "ms"),
            ("10ms", 10, "10ms"),
            ("5ms", 5, "5ms"),
            ("100ms", 100, "100ms"),
            ("s", 1000, "s"),
            ("1000ms", 1000, "s"),
            ("2s", 2000, "2s"),
            ("86400s", 86_400_000, "86400s"),
        ] {
            let unit = TimeUnit::parse(text).unwrap();
            assert_eq!(
                (unit.millis(), unit.as_str().as_ref()),
                (ms, printed),
                "{text}"
            );
        }
        for bad in [
            "0ms",
            "-5ms",
            "5",
            "1.5ms",
            "+5ms",
            "86401s",
            "min",
            "",
            "99999999999ms",
        ] {
            assert!(TimeUnit::parse(bad).is_err(), "{bad}");
        }
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

    #[test]
    fn time_left_and_the_warning_count_down_to_the_end() {
        let baidu = Layout::preset("baidu").unwrap();
        let end = baidu.capacity().exhausted_at_ms;
        assert_eq!(baidu.time_left_ms(end - 5), 5);
        assert_eq!(baidu.time_left_ms(end), 0);
        assert_eq!(baidu.time_left_ms(i64::MIN), i64::MAX);
        assert_eq!(baidu.exhaustion_warning(end - 366 * DAY_MS, 365), None);
        let soon = baidu.exhaustion_warning(end - 364 * DAY_MS, 365).unwrap();
        assert!(
            soon.contains("in 364 days") && soon.contains("2024-11-20"),
            "{soon}"
        );
        assert!(baidu
            .exhaustion_warning(end + 1, 0)
            .unwrap()
            .contains("ran out"));
        assert_eq!(baidu.exhaustion_warning(end - 1, 0), None);
    }

    #[test]
    fn baidu_ran_out_on_2024_11_20() {
        let c = Layout::preset("baidu").unwrap().capacity();
        assert_eq!(
            format_rfc3339_ms(c.exhausted_at_ms),
            "2024-11-20T13:24:16.000Z"
        );
    }

    #[test]
    fn invalid_specs_name_the_bad_part() {
        for (spec, needle) in [
            ("", "empty"),
            ("nope", "unknown preset 'nope'"),
            ("time:41,sequence:12", "needs an epoch"),
            ("time:41,sequence:12;epoch=0;unit=min", "unit 'min'"),
            ("time:41,sequence:12;epoch=0;unit=0ms", "unit '0ms'"),
            ("time:41,sequence:0;epoch=0", "'sequence' has 0 bits"),
            ("time:41,time:3,sequence:2;epoch=0", "'time' appears twice"),
            ("time:41,worker:12,sequence:12;epoch=0", "65 bits"),
            ("worker:10,sequence:12;epoch=0", "needs a 'time'"),
            ("time:41,worker:10;epoch=0", "needs a 'sequence'"),
            (
                "time:41,sequence:12;epoch=0;color=red",
                "unknown option 'color'",
            ),
            ("time:41,Sequence:12;epoch=0", "field name 'Sequence'"),
            ("time:x,sequence:12;epoch=0", "width 'x'"),
            // Canonical decimal only (docs/spec.md#decimal-text).
            ("time:+41,sequence:12;epoch=0", "width '+41'"),
            ("time:041,sequence:12;epoch=0", "width '041'"),
            ("time:41,v:3=+1,sequence:12;epoch=0", "value '+1'"),
            ("time:41,v:3=01,sequence:12;epoch=0", "value '01'"),
            ("twitter;epoch=01288834974657", "leading zero"),
            ("time:41,v:1=2,sequence:12;epoch=0", "does not fit"),
            ("worker:11,time:41,sequence:12;epoch=0", "sign bit"),
            ("twitter;epoch=yesterday", "epoch in layout"),
        ] {
            let err = Layout::parse(spec).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidLayout, "{spec}");
            assert!(
                err.message().contains(needle),
                "{spec}: {} lacks {needle}",
                err.message()
            );
        }
    }
}

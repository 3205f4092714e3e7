//! The generator's ticks and where they sit in an ID: the state word is the last ID issued,
//! in the layout's own bits, so that the hot path makes the next ID by adding one sequence
//! step to it (docs/spec.md#the-state-word).
//!
//! A generator counts ticks as "t": the layout's tick plus the bits above the time field
//! (constants, a fixed node ID placed above time) shifted down to the tick's place, so that
//! `t * unit` is the first ID of the tick with those bits in place and an ID's `t` is the ID
//! shifted down. Those bits are fixed for a generator's life (a node ID above time never
//! changes: `identity::check_node_may_change`), and known once its first grant is taken.

use crate::layout::{Layout, TimeUnit};

#[derive(Debug, Clone)]
pub(super) struct Ticks {
    /// One tick in an ID: `1 << time_shift`.
    pub unit: u64,
    pub time_shift: u32,
    /// One sequence step in an ID, the sequence field's bits, its largest value.
    pub seq_unit: u64,
    pub seq_field: u64,
    pub seq_mask: u64,
    seq_shift: u32,
    /// The bits of an ID below the time field that are neither sequence: node and constants.
    node_below_time: u64,
    /// Every bit of an ID that is neither time nor sequence.
    pub node_field: u64,
    /// The bits above the time field, in ticks: `t` is the layout's tick plus this.
    pub high: u64,
    /// The first `t` past the layout's end: the limit never passes it, and `of_ms` caps a
    /// reading to it, so that no state past the end is ever made.
    pub past_end: u64,
    /// For a layout whose ticks are milliseconds: `tick_origin_ms - high`, so that the hot
    /// path's `t` is one subtraction from a reading; and one more than the largest `t` it
    /// takes (`reading - origin` as u64 below it), 0 for any other unit.
    pub hot_origin_ms: i64,
    pub hot_bound: u64,
    /// `cur - first_id(t)` below this: the state's tick is the clock's or ahead of it within
    /// the allowance, so the next ID is in the state's tick.
    pub same_tick_span: u64,
    time_unit: TimeUnit,
    origin_ms: i64,
    max_tick: u64,
}

impl Ticks {
    /// The ticks of `layout` for a generator whose state may run `ahead_allowance` ticks
    /// ahead of the clock; the bits above time are set by `set_node_bits`.
    pub fn new(layout: &Layout, ahead_allowance: u64) -> Ticks {
        let time_shift = layout.time().shift;
        let seq = layout.sequence();
        let unit = 1u64 << time_shift;
        let time_field = layout.time().max() << time_shift;
        let seq_field = seq.max() << seq.shift;
        // At most 2^62: then an ID behind the clock's tick, whose difference wraps to 2^63
        // or more, is never taken for one ahead of it. A state further ahead than this goes
        // to the slow path, which checks the whole allowance.
        let span = (u128::from(ahead_allowance) + 1) * u128::from(unit);
        let mut ticks = Ticks {
            unit,
            time_shift,
            seq_unit: 1 << seq.shift,
            seq_field,
            seq_mask: seq.max(),
            seq_shift: seq.shift,
            node_below_time: (unit - 1) & !seq_field,
            node_field: !(time_field | seq_field),
            high: 0,
            past_end: 0,
            hot_origin_ms: 0,
            hot_bound: 0,
            same_tick_span: span.min(1 << 62) as u64,
            time_unit: layout.unit(),
            origin_ms: layout.tick_origin_ms(),
            max_tick: layout.max_tick(),
        };
        ticks.set_node_bits(0, layout);
        ticks
    }

    /// Takes the bits above the time field from the generator's node bits (its first grant).
    pub fn set_node_bits(&mut self, node_bits: u64, layout: &Layout) {
        self.high = (node_bits & above_time_mask(layout)) >> self.time_shift;
        self.past_end = self.high + self.max_tick + 1;
        let origin = i128::from(self.origin_ms) - i128::from(self.high);
        // A reading not at hand (an i64 of `1 << 63 | ms`, ms below 2^62: `clock::ticker`)
        // gives a `t` of at least `2^63 - origin`, so a bound no higher fails it, for any
        // origin from -2^61 on (epochs start in 1970: origins are never negative).
        (self.hot_origin_ms, self.hot_bound) =
            if self.time_unit == TimeUnit::Millis && origin >= -(1 << 61) {
                let unread = ((1i128 << 63) - origin) as u64;
                (origin as i64, self.past_end.min(unread))
            } else {
                (0, 0)
            };
    }

    /// The `t` of a Unix millisecond, capped to `past_end`; `None` before the layout's first
    /// tick.
    #[inline(always)]
    pub fn of_ms(&self, layout: &Layout, ms: i64) -> Option<u64> {
        layout
            .tick_of_ms(ms)
            .map(|tick| tick.min(self.max_tick + 1) + self.high)
    }

    /// The `t` of a reading that is not at hand (`Generator::t_now`): `None` before the
    /// layout's first tick or past its last.
    pub fn of_ms_uncapped(&self, layout: &Layout, ms: i64) -> Option<u64> {
        let tick = layout.tick_of_ms(ms)?;
        (tick <= self.max_tick).then_some(tick + self.high)
    }

    /// The first Unix millisecond of `t`.
    pub fn ms_of(&self, layout: &Layout, t: u64) -> i64 {
        layout.ms_of_tick(t.saturating_sub(self.high))
    }

    /// The `t` of an ID (a state).
    #[inline(always)]
    pub fn of_id(&self, id: u64) -> u64 {
        id >> self.time_shift
    }

    /// The ID of `t`, sequence number `seq` and the node bits below time of `node`.
    #[inline(always)]
    pub fn id(&self, t: u64, seq: u64, node: u64) -> u64 {
        self.id_in(t.wrapping_shl(self.time_shift), seq, node)
    }

    /// The same, from the first ID of the tick (`t * unit`).
    #[inline(always)]
    pub fn id_in(&self, tick_start: u64, seq: u64, node: u64) -> u64 {
        tick_start | (node & self.node_below_time) | seq.wrapping_shl(self.seq_shift)
    }

    pub fn seq_of(&self, id: u64) -> u64 {
        (id & self.seq_field) >> self.seq_shift
    }

    /// The state of a generator that has issued nothing: negative, as no ID is, and with a
    /// full sequence, so that the hot path never builds on it (the slow path does).
    pub fn empty(&self) -> u64 {
        1 << 63 | self.seq_field
    }

    /// Whether no ID was issued from `state`: an empty state (any negative one).
    pub fn nothing_issued(&self, state: u64) -> bool {
        (state as i64) < 0
    }
}

/// The bits of an ID above its time field.
pub(super) fn above_time_mask(layout: &Layout) -> u64 {
    let top = layout.time().shift + layout.time().bits;
    if top >= 64 {
        0
    } else {
        !0 << top
    }
}

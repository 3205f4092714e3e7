//! What a layout can hold and for how long: its capacity, the time left before it runs out
//! and the warning about it, whether a generator may use it, and its one-line description.

use super::field::Slot;
use super::shape::Layout;
use crate::error::{Error, Result};
use crate::timestamp::format_rfc3339_ms;

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

/// How long before a layout runs out the server and the CLI warn at start, unless configured
/// (`FLAKERY_EXHAUSTION_WARNING_DAYS`): one year. uid-generator's default layout ran out
/// unannounced on 2024-11-20 and took production systems with it.
pub const DEFAULT_EXHAUSTION_WARNING_DAYS: u64 = 365;

const DAY_MS: i64 = 86_400_000;

impl Layout {
    pub fn capacity(&self) -> Capacity {
        let ids_per_tick = self.sequence().max().saturating_add(1);
        let count = |slot: Option<Slot>| slot.map_or(1, |s| s.max().saturating_add(1));
        let datacenter_ids = count(self.datacenter());
        let worker_ids = count(self.worker());
        let max_tick = self.max_tick();
        Capacity {
            ids_per_tick,
            ids_per_second: ids_per_tick.saturating_mul(1000 / self.unit().millis() as u64),
            datacenter_ids,
            worker_ids,
            node_ids: datacenter_ids.saturating_mul(worker_ids),
            max_tick,
            exhausted_at_ms: self.ms_of_tick(max_tick.saturating_add(1)),
        }
    }

    /// Whether a generator may use this layout: `time` must be more significant than
    /// `sequence`, or one generator's IDs would decrease when a new tick resets the sequence.
    /// Decoding and composing accept such layouts (a foreign system may use one).
    pub fn check_generatable(&self) -> Result<()> {
        if self.time().shift < self.sequence().shift {
            return Err(Error::invalid_layout(format!(
                "layout '{self}' puts sequence above time: a generator's IDs would decrease at \
                 each new tick; list time before sequence (most significant first) to generate \
                 with it (decoding and composing still accept it)"
            )));
        }
        Ok(())
    }

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
        .fields()
        .iter()
        .map(|f| format!("{}:{}", f.name, f.slot.bits))
        .collect();
    format!(
        "{} | epoch {} | unit {} | {} IDs/tick/node ({} IDs/s) | {} node IDs | runs out {}",
        fields.join(","),
        format_rfc3339_ms(layout.epoch_ms()),
        layout.unit().as_str(),
        c.ids_per_tick,
        c.ids_per_second,
        c.node_ids,
        format_rfc3339_ms(c.exhausted_at_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

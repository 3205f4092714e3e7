//! The layout's budget: when its time field runs out, when its IDs pass 2^53 (the largest
//! integer a JavaScript `Number` holds exactly) and 2^63, and how many IDs a node may make.

use super::value::{MapBuilder, Value};
use super::{Finding, Level};
use crate::layout::Layout;
use crate::timestamp::format_rfc3339_ms;

const DAY_MS: i64 = 86_400_000;

/// The first Unix millisecond at which an ID of `layout` can be `2^bits` or more: the first
/// tick whose largest ID (every bit below the time field set, constant fields above it at
/// their values in `fields`, else their defaults) reaches it; `None` if no tick's does, or if
/// `fields` would be refused.
pub fn first_ms_at_or_above(layout: &Layout, fields: &[(String, u64)], bits: u32) -> Option<i64> {
    let shift = layout.time().shift;
    let limit = 1u128 << bits;
    // The constant fields' bits as the generator puts them (codec's one reading of `fields`:
    // the last value given wins, a value too wide is refused); those below the time field are
    // within `below`.
    let above =
        u128::from(crate::codec::constant_bits(layout, fields).ok()? & !((1u64 << shift) - 1));
    let below = (1u128 << shift) - 1;
    let largest = |tick: u64| (u128::from(tick) << shift) + above + below;
    let last = layout.max_tick_unsigned();
    if largest(last) < limit {
        return None;
    }
    // The first tick whose largest ID reaches the limit: ceil((limit - above - below) / 2^shift).
    let need = limit.saturating_sub(above + below);
    let tick = need.div_ceil(1u128 << shift);
    Some(layout.ms_of_tick(tick as u64))
}

/// The note a server logs once at start, and the doctor gives, when IDs of `layout` pass 2^53
/// before it runs out; `None` when they never do.
pub fn js_safe_note(layout: &Layout, fields: &[(String, u64)], now_ms: i64) -> Option<String> {
    let at = first_ms_at_or_above(layout, fields, 53)?;
    if at >= layout.capacity().exhausted_at_ms {
        return None;
    }
    let when = if at <= now_ms { "since" } else { "from" };
    Some(format!(
        "IDs of layout '{layout}' are above 2^53 {when} {}: a JavaScript Number (JSON.parse \
         included) rounds them. Keep IDs as text there (the server's string IDs, the base32 or \
         base62 forms) or use the 'safe53' preset (41 time bits, 64 workers, 64 IDs per ms, \
         until 2093)",
        format_rfc3339_ms(at)
    ))
}

pub(super) fn section(
    layout: &Layout,
    fields: &[(String, u64)],
    now_ms: i64,
    margin_days: u64,
    findings: &mut Vec<Finding>,
) -> Value {
    let c = layout.capacity();
    let left_ms = layout.time_left_ms(now_ms);
    if let Err(error) = layout.check_generatable() {
        findings.push(Finding::new(Level::Refused, "layout", error.message(), ""));
    }
    if left_ms == 0 {
        findings.push(Finding::new(
            Level::Refused,
            "layout",
            &format!(
                "layout '{layout}' ran out at {}: every ID fails with time_exhausted",
                format_rfc3339_ms(c.exhausted_at_ms)
            ),
            "choose a layout with a later epoch or more time bits",
        ));
    } else if let Some(warning) = layout.exhaustion_warning(now_ms, margin_days) {
        findings.push(Finding::new(
            Level::Warning,
            "layout",
            &warning,
            "choose a layout with a later epoch or more time bits before that date",
        ));
    }
    if let Some(note) = js_safe_note(layout, fields, now_ms) {
        findings.push(Finding::new(Level::Note, "layout", &note, ""));
    }
    let date = |ms: Option<i64>| ms.map(format_rfc3339_ms);
    MapBuilder::new()
        .put("layout", layout.to_string())
        .put("preset", layout.preset_name())
        .put("time_runs_out", format_rfc3339_ms(c.exhausted_at_ms))
        .put("days_left", left_ms / DAY_MS)
        .put(
            "passes_2_53",
            date(first_ms_at_or_above(layout, fields, 53)),
        )
        .put(
            "passes_2_63",
            date(first_ms_at_or_above(layout, fields, 63)),
        )
        .put("ids_per_tick", c.ids_per_tick)
        .put("ids_per_second_per_node", c.ids_per_second)
        .put("node_ids", c.node_ids)
        .put("warning_margin_days", margin_days)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dates_ids_pass_2_53_and_2_63() {
        let twitter = Layout::twitter();
        // The largest ID of a tick is tick·2^22 + 2^22 - 1: 2^53 - 1 at tick 2^31 - 1, so the
        // first tick past it is 2^31.
        let at = first_ms_at_or_above(&twitter, &[], 53).unwrap();
        assert_eq!(at, twitter.ms_of_tick(1 << 31));
        assert!(format_rfc3339_ms(at).starts_with("2010-11-28"), "{at}");
        // A signed 64-bit layout never makes an ID of 2^63; discord, unsigned, does.
        assert_eq!(first_ms_at_or_above(&twitter, &[], 63), None);
        let discord = Layout::preset("discord").unwrap();
        assert_eq!(
            first_ms_at_or_above(&discord, &[], 63),
            Some(discord.ms_of_tick(1 << 41))
        );
        let safe = Layout::preset("safe53").unwrap();
        assert_eq!(first_ms_at_or_above(&safe, &[], 53), None);
        assert_eq!(js_safe_note(&safe, &[], 0), None);
        assert!(js_safe_note(&twitter, &[], 0).unwrap().contains("safe53"));
        // A constant above time counts: vesta-min-granularity's type bit 1 is 2^62.
        let vesta = Layout::preset("vesta-min-granularity").unwrap();
        assert_eq!(
            first_ms_at_or_above(&vesta, &[], 53),
            Some(vesta.ms_of_tick(0))
        );
        // `fields` read as the generator reads them: the last value given wins, and a value
        // too wide for its field is refused (no date), never masked.
        let field = |v: u64| ("type".to_string(), v);
        let twice = [field(1), field(0)];
        assert_eq!(
            first_ms_at_or_above(&vesta, &twice, 53),
            first_ms_at_or_above(&vesta, &[field(0)], 53)
        );
        assert_ne!(
            first_ms_at_or_above(&vesta, &twice, 53),
            Some(vesta.ms_of_tick(0))
        );
        assert_eq!(first_ms_at_or_above(&vesta, &[field(2)], 53), None);
    }
}

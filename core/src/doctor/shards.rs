//! Shard skew: the share of IDs each `id % shards` gets when one generator makes `rate` IDs a
//! second, evenly spaced, simulated exactly from the layout and the sequence start (not
//! measured). At low rates each ID opens a new tick, so with the sequence starting at 0 the
//! low bits are the node's and the time's alone, and `id % 2` can be the same for every ID.

use super::value::{MapBuilder, Value};
use super::{Finding, Level};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::lease::node::NodeId;

/// The most IDs simulated, whatever the rate: the window shrinks below a minute instead.
pub const MAX_SIMULATED: u64 = 1_000_000;
/// The window simulated when the rate allows: a minute.
pub const WINDOW_MS: u64 = 60_000;
/// The most shards: one count each.
pub const MAX_SHARDS: u64 = 1 << 16;
/// The key the simulation gives `random_sequence_start`: a generator draws its own at
/// random, so its shares are a sample of the same spread, not these exact counts.
pub const SIMULATED_KEY: u64 = 0x9E37_79B9_7F4A_7C15;

/// What is simulated.
#[derive(Debug, Clone)]
pub struct ShardQuestion {
    pub shards: u64,
    /// IDs per second, evenly spaced: request `i` arrives at `start_ms + i·1000/rate`.
    pub rate: u64,
    pub start_ms: i64,
    pub node: NodeId,
    pub fields: Vec<(String, u64)>,
}

/// `shards` and `rate` as a surface takes them in text (a flag's value): canonical decimal,
/// the rate as `10` or `10/s`; checked as `ShardQuestion::check` checks them. An error is
/// `about` the one at fault, so that each surface names it its own way (`--shards`).
pub fn parse_shards_and_rate(shards: &str, rate: &str) -> Result<(u64, u64)> {
    let shards = crate::decimal::parse_u64("shards", shards)
        .and_then(check_shards)
        .map_err(|e| e.about("shards"))?;
    let rate = crate::decimal::parse_u64("rate", rate.strip_suffix("/s").unwrap_or(rate))
        .and_then(check_rate)
        .map_err(|e| e.about("rate"))?;
    Ok((shards, rate))
}

fn check_shards(shards: u64) -> Result<u64> {
    if shards == 0 || shards > MAX_SHARDS {
        return Err(
            Error::invalid_argument(format!("shards={shards} must be 1 to {MAX_SHARDS}"))
                .about("shards"),
        );
    }
    Ok(shards)
}

fn check_rate(rate: u64) -> Result<u64> {
    if rate == 0 {
        return Err(Error::invalid_argument("rate must be at least 1 ID a second").about("rate"));
    }
    Ok(rate)
}

impl ShardQuestion {
    pub fn check(&self) -> Result<()> {
        check_shards(self.shards)?;
        check_rate(self.rate)?;
        Ok(())
    }

    /// How many IDs are simulated: a minute's, at most `MAX_SIMULATED`.
    pub fn count(&self) -> u64 {
        (self.rate.saturating_mul(WINDOW_MS) / 1000).clamp(1, MAX_SIMULATED)
    }
}

/// The number of IDs each `id % shards` gets: one generator of `layout` with the sequence
/// starting at 0 (`random_key` 0) or at `generator::start_sequence`'s value, queueing when a
/// tick is full (wait and borrow give the same IDs to a steady stream).
pub fn simulate(layout: &Layout, q: &ShardQuestion, random_key: u64) -> Result<Vec<u64>> {
    q.check()?;
    let node = crate::codec::node_bits(layout, q.node)?;
    let shift = layout.time().shift;
    let seq = layout.sequence();
    // The generator's own reading of the fields: the last of a field given twice, a value too
    // wide refused.
    let constants = crate::codec::constant_bits(layout, &q.fields)?;
    let mut counts = vec![0u64; q.shards as usize];
    let mut state: Option<(u64, u64)> = None;
    for i in 0..q.count() {
        let at = q.start_ms + (u128::from(i) * 1000 / u128::from(q.rate)) as i64;
        let tick = layout.tick_of_ms(at).ok_or_else(|| {
            Error::invalid_argument("the simulation starts before the layout's epoch")
        })?;
        let start = |tick: u64| {
            let tick_start = (tick << shift) | (constants & !((1u64 << shift) - 1));
            crate::generator::start_sequence(random_key, tick_start, seq.max())
        };
        let (tick, n) = match state {
            Some((t, n)) if t >= tick => {
                if n < seq.max() {
                    (t, n + 1)
                } else {
                    (t + 1, start(t + 1))
                }
            }
            _ => (tick, start(tick)),
        };
        if tick > layout.max_tick() {
            return Err(Error::invalid_argument(
                "the simulation runs past the layout's end",
            ));
        }
        state = Some((tick, n));
        let id = (tick << shift) | constants | node | seq.put(n);
        counts[(id % q.shards) as usize] += 1;
    }
    Ok(counts)
}

/// Whether one shard gets more than 1.5 times its fair share.
pub fn skewed(counts: &[u64]) -> bool {
    let total: u64 = counts.iter().sum();
    let max = counts.iter().copied().max().unwrap_or(0);
    2 * u128::from(max) * counts.len() as u128 > 3 * u128::from(total)
}

fn shares(counts: &[u64]) -> Value {
    let total: u64 = counts.iter().sum::<u64>().max(1);
    let max = counts.iter().copied().max().unwrap_or(0);
    let min = counts.iter().copied().min().unwrap_or(0);
    MapBuilder::new()
        .put(
            "ids",
            Value::List(counts.iter().map(|&c| c.into()).collect()),
        )
        .put("largest_share", Value::Float(max as f64 / total as f64))
        .put("smallest_share", Value::Float(min as f64 / total as f64))
        .put("skewed", skewed(counts))
        .build()
}

pub(super) fn section(
    layout: &Layout,
    random_start: bool,
    compare: Option<&Layout>,
    q: &ShardQuestion,
    findings: &mut Vec<Finding>,
) -> Result<Value> {
    let key = |on: bool| if on { SIMULATED_KEY } else { 0 };
    let configured = simulate(layout, q, key(random_start))?;
    let other = simulate(layout, q, key(!random_start))?;
    let mut map = MapBuilder::new()
        .put("shards", q.shards)
        .put("rate_per_second", q.rate)
        .put("simulated_ids", q.count())
        .put("start_ms", q.start_ms)
        .put("datacenter_id", q.node.datacenter_id)
        .put("worker_id", q.node.worker_id)
        .put("random_sequence_start", random_start)
        .put("configured", shares(&configured))
        .put(
            if random_start {
                "without_random_sequence_start"
            } else {
                "with_random_sequence_start"
            },
            shares(&other),
        );
    if let Some(compare) = compare {
        let counts = simulate(compare, q, key(random_start))?;
        map = map.put(
            "compare_layout",
            MapBuilder::new()
                .put("layout", compare.to_string())
                .put("shares", shares(&counts))
                .build(),
        );
    }
    if skewed(&configured) {
        let total: u64 = configured.iter().sum();
        let max = configured.iter().copied().max().unwrap_or(0);
        let fix = if !random_start && !skewed(&other) {
            "set random_sequence_start, which spreads these IDs evenly, or shard by a hash of \
             the ID rather than id % N"
        } else {
            "shard by a hash of the ID rather than id % N"
        };
        findings.push(Finding::new(
            Level::Warning,
            "shards",
            &format!(
                "at {} IDs/s, one of {} shards by id % {} gets {:.1}% of the IDs (a fair share \
                 is {:.1}%)",
                q.rate,
                q.shards,
                q.shards,
                100.0 * max as f64 / total.max(1) as f64,
                100.0 / q.shards as f64
            ),
            fix,
        ));
    }
    Ok(map.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(shards: u64, rate: u64) -> ShardQuestion {
        ShardQuestion {
            shards,
            rate,
            start_ms: 1_700_000_000_000,
            node: NodeId::default(),
            fields: Vec::new(),
        }
    }

    /// The text of `--shards`/`--rate` is read and checked in the core: each error is about
    /// the one at fault, which the CLI spells as its flag.
    #[test]
    fn shards_and_rate_are_read_and_checked_here() {
        use crate::option_table::message_on;
        use crate::Surface;
        assert_eq!(parse_shards_and_rate("4", "10/s"), Ok((4, 10)));
        assert_eq!(parse_shards_and_rate("65536", "10"), Ok((65536, 10)));
        for (shards, rate, about, said) in [
            ("0", "10", "shards", "--shards=0 must be 1 to 65536"),
            ("65537", "10", "shards", "--shards=65537 must be 1 to 65536"),
            ("-1", "10", "shards", "--shards=-1 "),
            ("4x", "10", "shards", "--shards="),
            ("4", "0/s", "rate", "--rate must be at least 1 ID a second"),
            ("4", "10/m", "rate", "--rate="),
            ("4", "", "rate", "--rate="),
        ] {
            let e = parse_shards_and_rate(shards, rate).unwrap_err();
            assert_eq!(e.code(), crate::ErrorCode::InvalidArgument);
            assert_eq!(e.option(), Some(about), "{e}");
            let shown = message_on(&e, Surface::Cli);
            assert!(shown.starts_with(said), "{shards} {rate}: {shown}");
        }
        // A question built in numbers is checked alike.
        let e = question(0, 10).check().unwrap_err();
        assert_eq!(e.option(), Some("shards"), "{e}");
    }

    /// The constant fields are read as the generator reads them (codec::constant_bits).
    #[test]
    fn the_constant_fields_are_the_generators() {
        let vesta = Layout::parse("vesta-min-granularity").unwrap();
        let with = |fields: &[(&str, u64)]| ShardQuestion {
            fields: fields.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            ..question(7, 1000)
        };
        let last = simulate(&vesta, &with(&[("method", 1), ("method", 2)]), 0).unwrap();
        assert_eq!(last, simulate(&vesta, &with(&[("method", 2)]), 0).unwrap());
        assert_ne!(last, simulate(&vesta, &with(&[("method", 1)]), 0).unwrap());
        let wide = simulate(&vesta, &with(&[("method", 1 << 20)]), 0).unwrap_err();
        assert_eq!(wide.code(), crate::ErrorCode::InvalidArgument, "{wide}");
    }

    #[test]
    fn twitter_at_low_rates_puts_every_id_on_even_shards() {
        let twitter = Layout::twitter();
        let counts = simulate(&twitter, &question(2, 10), 0).unwrap();
        assert_eq!(counts, vec![600, 0]);
        assert!(skewed(&counts));
        let spread = simulate(&twitter, &question(2, 10), SIMULATED_KEY).unwrap();
        assert_eq!(spread.iter().sum::<u64>(), 600);
        assert!(!skewed(&spread), "{spread:?}");
    }

    /// Past one tick's capacity the sequence counts up and spreads the IDs.
    #[test]
    fn a_full_tick_moves_to_the_next() {
        let layout = Layout::parse("time:41,worker:20,sequence:2;epoch=0;unit=ms").unwrap();
        let counts = simulate(&layout, &question(4, 8000), 0).unwrap();
        assert_eq!(counts, vec![120_000; 4]);
        assert!(question(0, 1).check().is_err() && question(1, 0).check().is_err());
    }
}

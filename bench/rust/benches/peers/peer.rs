//! What a generator under test is (the `Peer` trait) and what the table says about it (`Meta`),
//! with the helpers every peer shares: the time an ID holds, the Twitter layout's figures.

use std::time::Duration;

use flakery_bench::TWITTER_EPOCH_MS;

/// What the JSON (and so the table) says about a generator.
pub struct Meta {
    pub key: &'static str,
    pub name: &'static str,
    /// The crate, as Cargo.lock names it.
    pub library: &'static str,
    pub config: &'static str,
    pub layout: &'static str,
    /// IDs per second one generator can make on its layout, where the layout has a cap.
    pub ceiling_per_s: Option<f64>,
    pub tick_ms: i64,
    pub burst: u64,
    /// The batch is at most this many IDs (sonyflake makes 25,600 a second).
    pub batch_cap: Option<usize>,
    pub threads_note: Option<&'static str>,
    pub note: Option<&'static str>,
    pub flakery: bool,
}

pub const TWITTER_CEILING: Option<f64> = Some(4_096_000.0);
pub const TWITTER_LAYOUT: &str = "time 41 | datacenter 5 | worker 5 | sequence 12, 1 ms";

/// A generator with 1 ms ticks: bursts of 1,000 after a 1 ms boundary, Twitter's ceiling of
/// 4,096,000 IDs a second unless the caller sets another.
pub const fn ms_meta(
    key: &'static str,
    name: &'static str,
    library: &'static str,
    config: &'static str,
    layout: &'static str,
    note: &'static str,
) -> Meta {
    Meta {
        key,
        name,
        library,
        config,
        layout,
        ceiling_per_s: TWITTER_CEILING,
        tick_ms: 1,
        burst: 1000,
        batch_cap: None,
        threads_note: None,
        note: Some(note),
        flakery: false,
    }
}

pub fn twitter_ms(id: u128) -> i64 {
    ((id as u64 >> 22) as i64) + TWITTER_EPOCH_MS
}

pub fn uuid_ms(id: u128) -> i64 {
    (id >> 80) as i64
}

/// Sonyflake's default start time, 2014-09-01T00:00:00Z, in Unix ms; its ticks are 10 ms.
pub const SONYFLAKE_START_MS: i64 = 1_409_529_600_000;

pub fn sonyflake_ms(id: u128) -> i64 {
    ((id as u64 >> 24) as i64) * 10 + SONYFLAKE_START_MS
}

/// One generator under test: how to make it, call it, make a batch, and share it.
pub trait Peer {
    const META: Meta;
    type Gen;
    type Shared: Sync;
    fn make() -> Self::Gen;
    fn next(g: &mut Self::Gen) -> u128;
    /// The library's own batch: its ID type in a Vec.
    type Batch;
    /// One batch of `n` IDs (the figure): the library's batch call, or a loop into a Vec.
    fn batch(g: &mut Self::Gen, n: usize) -> Self::Batch;
    /// The batch as u128, for the checks (after the clock and the memory reading).
    fn ids(batch: Self::Batch) -> Vec<u128>;
    fn make_shared() -> Option<Self::Shared>;
    fn next_shared(s: &Self::Shared) -> u128;
    fn ts(id: u128) -> i64;
    /// What the generator's slow path did so far (flakery's `slow_path_counts`), for the
    /// per-call figure: whether it timed anything but the hot path.
    fn slow_path(_g: &Self::Gen) -> Option<serde_json::Value> {
        None
    }
}

/// Collects a batch with a loop, for libraries that have no batch call.
pub fn loop_batch<T>(n: usize, mut f: impl FnMut() -> T) -> Vec<T> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        ids.push(f());
    }
    ids
}

pub fn twitter_epoch() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS as u64)
}

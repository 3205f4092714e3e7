//! The measuring harness of `bench/rust/benches/peers/`: how a figure is taken, with no peer
//! library in it (the peers are dev-dependencies of this crate and live in the bench target).
//!
//! Every generator is measured the same way:
//! - per call: bursts of at most `burst` calls, each started right after a tick boundary of
//!   the wall clock, so that a layout with 4,096 IDs per ms never runs out inside a burst and
//!   the figure is the code's cost, not the layout's ceiling;
//! - sustained: one thread calling in a loop for a fixed time, IDs per second;
//! - batch: one batch of `n` IDs in a fresh child process, with the growth of its peak RSS;
//! - two threads sharing one generator.
//!
//! Beside each figure the IDs are checked: duplicates, IDs out of order within a thread, and
//! how far the newest ID's timestamp is ahead of the wall clock.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The Unix epoch plus Twitter's, in milliseconds (flakery's `twitter` layout).
pub const TWITTER_EPOCH_MS: i64 = 1_288_834_974_657;

/// Unix time in milliseconds (`CLOCK_REALTIME`).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Spins until the wall clock enters a new tick of `tick_ms` milliseconds.
pub fn wait_for_tick(tick_ms: i64) {
    let start = now_ms() / tick_ms;
    while now_ms() / tick_ms == start {
        std::hint::spin_loop();
    }
}

/// The time `iters` calls of `f` take, made in bursts of at most `burst` calls that each start
/// right after a tick boundary. Only the bursts are timed, never the waits between them.
pub fn time_in_bursts<T>(
    iters: u64,
    burst: u64,
    tick_ms: i64,
    f: &mut impl FnMut() -> T,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let k = left.min(burst);
        wait_for_tick(tick_ms);
        let start = Instant::now();
        for _ in 0..k {
            black_box(f());
        }
        total += start.elapsed();
        left -= k;
    }
    total
}

/// Peak resident set size of this process's memory so far, in bytes: `VmHWM` of
/// `/proc/self/status` where there is one, else `getrusage`'s `ru_maxrss`. Not `ru_maxrss` first:
/// Linux carries it across `execve` from the memory of the process that forked, so a fresh
/// child would start with its parent's peak.
pub fn max_rss_bytes() -> u64 {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(kb) = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            return kb * 1024;
        }
    }
    // SAFETY: an all-zero rusage is a valid value to be overwritten, and the pointer is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid, writable rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    // ru_maxrss is in kilobytes on Linux.
    usage.ru_maxrss.max(0) as u64 * 1024
}

/// The 1-, 5- and 15-minute load averages (`/proc/loadavg`), or `None` where there is none.
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<f64>().ok());
    Some([parts.next()??, parts.next()??, parts.next()??])
}

/// What the checks found in a run of IDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    pub count: usize,
    /// IDs equal to an earlier one (count minus distinct).
    pub duplicates: usize,
    /// Places where an ID is not greater than the one before it, in the order made.
    pub not_increasing: usize,
    /// The newest timestamp among the IDs minus the wall clock after they were made, in ms;
    /// positive means IDs ran ahead of the clock.
    pub max_ahead_ms: i64,
}

/// Checks IDs in the order they were made. `ts` takes an ID to its Unix milliseconds.
pub fn check(ids: &[u128], ts: fn(u128) -> i64, clock_after_ms: i64) -> Checked {
    let not_increasing = ids.windows(2).filter(|w| w[1] <= w[0]).count();
    let newest = ids.iter().map(|&id| ts(id)).max().unwrap_or(clock_after_ms);
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    Checked {
        count: ids.len(),
        duplicates: ids.len() - sorted.len(),
        not_increasing,
        max_ahead_ms: newest - clock_after_ms,
    }
}

/// A sustained run: one thread calling `f` for `length`.
#[derive(Debug, Clone, Copy)]
pub struct Sustained {
    pub ids: u64,
    pub seconds: f64,
    pub not_increasing: u64,
    pub ahead_ms: i64,
}

impl Sustained {
    pub fn ids_per_second(&self) -> f64 {
        self.ids as f64 / self.seconds
    }
}

/// Calls `f` in a loop for `length` (checking the time every 1,024 calls) and counts the IDs;
/// also counts IDs not greater than the one before (a duplicate in a tight loop shows here).
pub fn sustained(length: Duration, ts: fn(u128) -> i64, f: &mut impl FnMut() -> u128) -> Sustained {
    let start = Instant::now();
    let mut ids = 0u64;
    let mut not_increasing = 0u64;
    let mut last = f();
    while start.elapsed() < length {
        for _ in 0..1024 {
            let id = f();
            not_increasing += u64::from(id <= last);
            last = id;
        }
        ids += 1024;
    }
    let seconds = start.elapsed().as_secs_f64();
    Sustained {
        ids,
        seconds,
        not_increasing,
        ahead_ms: ts(last) - now_ms(),
    }
}

/// Two threads sharing one generator, `per_thread` IDs each.
#[derive(Debug, Clone, Copy)]
pub struct TwoThreads {
    pub seconds: f64,
    pub checked: Checked,
}

pub fn two_threads(
    per_thread: usize,
    ts: fn(u128) -> i64,
    f: &(impl Fn() -> u128 + Sync),
) -> TwoThreads {
    let start = Instant::now();
    let runs: Vec<Vec<u128>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut ids = Vec::with_capacity(per_thread);
                    for _ in 0..per_thread {
                        ids.push(f());
                    }
                    ids
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    let after = now_ms();
    // Order is checked within each thread; duplicates across both.
    let not_increasing: usize = runs
        .iter()
        .map(|r| check(r, ts, after).not_increasing)
        .sum();
    let all: Vec<u128> = runs.concat();
    let mut checked = check(&all, ts, after);
    checked.not_increasing = not_increasing;
    TwoThreads { seconds, checked }
}

/// The median of some values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_counts_duplicates_order_and_lead() {
        let ts = |id: u128| id as i64;
        let c = check(&[1, 3, 3, 2, 10], ts, 8);
        assert_eq!(
            c,
            Checked {
                count: 5,
                duplicates: 1,
                not_increasing: 2,
                max_ahead_ms: 2
            }
        );
    }

    #[test]
    fn bursts_time_every_call() {
        let mut calls = 0u64;
        time_in_bursts(2_500, 1_000, 1, &mut || calls += 1);
        assert_eq!(calls, 2_500);
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}

//! Where time comes from. The generator asks a cheap reading on every call and a precise one
//! only when the cheap one is not enough, so tests can substitute a fake clock and step it.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub trait Clock: Send + Sync + 'static {
    /// Unix time in milliseconds, as exact as the system offers.
    fn now_ms(&self) -> i64;

    /// Unix time in milliseconds that may lag `now_ms()` by a few milliseconds but never runs
    /// ahead of it. Generation reads this on every call, so it should be cheap.
    fn now_ms_coarse(&self) -> i64 {
        self.now_ms()
    }

    /// The cheap reading if one is at hand with no work at all (a word another thread
    /// keeps), else any negative number, and the caller asks `now_ms_coarse`. A generator's
    /// hot path reads this: a negative answer fails its check against the layout's origin
    /// (`Generator`'s `state_tick_now`), so it costs no test of its own.
    #[inline(always)]
    fn now_ms_at_hand(&self) -> i64 {
        self.now_ms_coarse()
    }

    /// Blocks until `now_ms()` may have reached `target_ms`.
    fn wait_until_ms(&self, target_ms: i64) {
        let left = target_ms.saturating_sub(self.now_ms());
        if left > 2 {
            std::thread::sleep(Duration::from_millis(left as u64 - 1));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// The system's wall clock. On Linux the cheap reading is one word that a thread of flakery's
/// stores once a millisecond while IDs are being made (`ticker`: when it runs, what it costs),
/// else `CLOCK_REALTIME_COARSE` (a call into the vDSO, ~4 ns, against ~18 ns for
/// `CLOCK_REALTIME`, and about half of what `next_id` cost before the thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

#[cfg(target_os = "linux")]
pub mod ticker;

/// The system's wall clock without the clock thread: its cheap reading is
/// `CLOCK_REALTIME_COARSE` (a vDSO call) on Linux, the precise one elsewhere. For hosts of many
/// processes that each make few IDs (PostgreSQL's backends), where a thread in every process
/// waking once a millisecond would cost more CPU than it saves.
#[derive(Debug, Clone, Copy, Default)]
pub struct CoarseSystemClock;

impl Clock for CoarseSystemClock {
    #[inline]
    fn now_ms(&self) -> i64 {
        SystemClock.now_ms()
    }

    #[inline(always)]
    fn now_ms_coarse(&self) -> i64 {
        #[cfg(target_os = "linux")]
        return read_coarse();
        #[cfg(not(target_os = "linux"))]
        return SystemClock.now_ms();
    }

    fn wait_until_ms(&self, target_ms: i64) {
        SystemClock.wait_until_ms(target_ms)
    }
}

/// Tells the clock that this process is a fork's child (called by the fork handler).
pub(crate) fn after_fork_in_child() {
    #[cfg(target_os = "linux")]
    ticker::after_fork_in_child();
}

/// `CLOCK_REALTIME` as whole milliseconds and the nanoseconds past the last one.
#[cfg(target_os = "linux")]
fn realtime_ms_and_rest() -> (i64, u64) {
    let ts = read_timespec(libc::CLOCK_REALTIME);
    #[allow(clippy::unnecessary_cast)]
    let (sec, nsec) = (ts.tv_sec as i64, ts.tv_nsec as i64);
    (sec * 1000 + nsec / 1_000_000, (nsec % 1_000_000) as u64)
}

/// How long before a millisecond a waiter for it wakes from its sleep: the default timer
/// slack (50 us) and a little more.
#[cfg(target_os = "linux")]
const WAKE_EARLY_NS: i128 = 70_000;

#[cfg(target_os = "linux")]
fn read_coarse() -> i64 {
    read_clock(libc::CLOCK_REALTIME_COARSE)
}

#[cfg(target_os = "linux")]
fn read_clock(id: libc::clockid_t) -> i64 {
    let ts = read_timespec(id);
    // time_t and long are 32 bits on some targets: the casts are not no-ops everywhere.
    #[allow(clippy::unnecessary_cast)]
    let ms = ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000;
    ms
}

#[cfg(target_os = "linux")]
#[inline(always)]
fn read_timespec(id: libc::clockid_t) -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clock ids exist on every Linux since 2.6.32.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts
}

impl Clock for SystemClock {
    #[cfg(target_os = "linux")]
    #[inline]
    fn now_ms(&self) -> i64 {
        read_clock(libc::CLOCK_REALTIME)
    }

    #[cfg(not(target_os = "linux"))]
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    #[cfg(target_os = "linux")]
    #[inline(always)]
    fn now_ms_coarse(&self) -> i64 {
        ticker::now_ms(read_coarse)
    }

    #[cfg(target_os = "linux")]
    #[inline(always)]
    fn now_ms_at_hand(&self) -> i64 {
        ticker::at_hand()
    }

    /// Sleeps until just before the millisecond starts, then yields the processor until it
    /// has: a waiter that spun the whole tick would hold a core that, on a machine with few
    /// cores, the threads that use the IDs need (a server's network threads, its clients);
    /// one that slept to the boundary would wake its timer slack (50 us) and a scheduler
    /// wake-up late, and lose that much of every tick it waits for.
    #[cfg(target_os = "linux")]
    fn wait_until_ms(&self, target_ms: i64) {
        let target_ns = i128::from(target_ms) * 1_000_000;
        let left_ns = || {
            let ts = read_timespec(libc::CLOCK_REALTIME);
            #[allow(clippy::unnecessary_cast)]
            let now_ns = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128;
            target_ns - now_ns
        };
        let left = left_ns();
        if left > WAKE_EARLY_NS {
            std::thread::sleep(Duration::from_nanos(
                u64::try_from(left - WAKE_EARLY_NS).unwrap_or(u64::MAX),
            ));
        }
        while left_ns() > 0 {
            std::thread::yield_now();
        }
    }
}

/// A clock that moves only when told to, shared by clones. Waiting on it advances it to the
/// target, as a real clock would have, and records the wait so tests can see it.
#[derive(Debug, Clone)]
pub struct FakeClock {
    now: Arc<AtomicI64>,
    waits: Arc<Mutex<Vec<i64>>>,
}

impl FakeClock {
    pub fn new(now_ms: i64) -> Self {
        FakeClock {
            now: Arc::new(AtomicI64::new(now_ms)),
            waits: Arc::default(),
        }
    }

    pub fn set(&self, now_ms: i64) {
        self.now.store(now_ms, Ordering::SeqCst);
    }

    pub fn advance(&self, by_ms: i64) {
        self.now.fetch_add(by_ms, Ordering::SeqCst);
    }

    /// The milliseconds each wait skipped, in order.
    pub fn waits(&self) -> Vec<i64> {
        self.waits.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

impl Clock for FakeClock {
    fn now_ms(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }

    fn wait_until_ms(&self, target_ms: i64) {
        let before = self.now.fetch_max(target_ms, Ordering::SeqCst);
        if target_ms > before {
            if let Ok(mut waits) = self.waits.lock() {
                waits.push(target_ms - before);
            }
        }
    }
}

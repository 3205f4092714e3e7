//! Where the client's time comes from: a monotonic count of milliseconds (a wall clock step
//! must not make a block look younger or a backoff end early). The logic that reads it
//! (`stock`, `sizing`, `failover`) takes the time as an argument, so its tests give it any.

use std::sync::OnceLock;

pub trait Ticks: Send + Sync + 'static {
    /// Milliseconds since some fixed point, never decreasing.
    fn now_ms(&self) -> u64;

    /// How far `now_ms` may lag the true time.
    fn lag_ms(&self) -> u64 {
        0
    }
}

/// `CLOCK_MONOTONIC_COARSE` (a vDSO read of a few ns, read on every `next_id`). It may lag the
/// precise clock by up to one kernel tick: `made_after` takes that off a block's stamp, so an
/// age is never measured short.
#[derive(Debug, Clone, Copy, Default)]
pub struct Monotonic;

impl Monotonic {
    fn read(id: libc::clockid_t) -> libc::timespec {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec and the clock ids exist on every Linux.
        unsafe { libc::clock_gettime(id, &mut ts) };
        ts
    }

    /// The coarse clock's resolution in whole milliseconds, rounded up.
    fn resolution_ms() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: as above.
        unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        #[allow(clippy::unnecessary_cast)]
        let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        ns.div_ceil(1_000_000).max(1)
    }
}

impl Ticks for Monotonic {
    #[inline]
    fn now_ms(&self) -> u64 {
        let ts = Monotonic::read(libc::CLOCK_MONOTONIC_COARSE);
        #[allow(clippy::unnecessary_cast)]
        let ms = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        ms
    }

    fn lag_ms(&self) -> u64 {
        static LAG: OnceLock<u64> = OnceLock::new();
        *LAG.get_or_init(Monotonic::resolution_ms)
    }
}

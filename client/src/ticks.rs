//! Where the client's time comes from: a monotonic count of milliseconds (a wall clock step
//! must not make a block look younger or a backoff end early), and for a block's age the
//! same count with the time the machine was suspended (`CLOCK_BOOTTIME`): the monotonic clock
//! stops during a suspend, so a block taken before one would look as young after it. The hot
//! path reads only the coarse monotonic clock (a boot-time reading costs about six times as
//! much: it is precise only); the boot-time clock is read wherever the stock's lock is taken
//! (`Stamp`). The logic that reads them (`stock`, `sizing`, `failover`) takes the time as an
//! argument, so its tests give it any.

use std::sync::atomic::{AtomicPtr, Ordering::Relaxed};
use std::sync::OnceLock;

/// A time on both clocks: what a block's age is measured against off the hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// `Ticks::now_ms`.
    pub ms: u64,
    /// `Ticks::boot_ms`.
    pub boot_ms: u64,
}

pub trait Ticks: Send + Sync + 'static {
    /// Milliseconds since some fixed point, never decreasing.
    fn now_ms(&self) -> u64;

    /// Milliseconds since some fixed point, never decreasing, counting the time the machine
    /// was suspended.
    fn boot_ms(&self) -> u64;

    /// Both, the boot-time clock read second (the block stamped with it is no younger).
    fn stamp(&self) -> Stamp {
        let ms = self.now_ms();
        Stamp {
            ms,
            boot_ms: self.boot_ms(),
        }
    }

    /// How far `now_ms` may lag the true time.
    fn lag_ms(&self) -> u64 {
        0
    }
}

/// `CLOCK_MONOTONIC_COARSE`, read on every `next_id` (the block's age). It may lag the
/// precise clock by up to one kernel tick: `made_after` takes that off a block's stamp, so an
/// age is never measured short.
#[derive(Debug, Clone, Copy, Default)]
pub struct Monotonic;

type ClockGettime = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;

/// The `clock_gettime` that `now_ms` calls: at first `resolve`, which puts the vDSO's own in
/// its place. Called directly it costs about two thirds of the C library's, whose wrapper
/// calls it (3.2 ns against 4.6 on the 2-core machine of bench/results): a third of the
/// client's steady-state call.
static CLOCK_GETTIME: AtomicPtr<()> = AtomicPtr::new(resolve as *mut ());

/// The kernel's `clock_gettime` in the vDSO if the C library lists it (glibc does, as
/// `linux-vdso.so.1`; its name is the architecture's), else the C library's (a process with
/// no vDSO, such as under valgrind).
unsafe extern "C" fn resolve(id: libc::clockid_t, ts: *mut libc::timespec) -> libc::c_int {
    let found = vdso_clock_gettime().unwrap_or(libc::clock_gettime);
    CLOCK_GETTIME.store(found as *mut (), Relaxed);
    // SAFETY: the caller's arguments, as `clock_gettime` takes them.
    unsafe { found(id, ts) }
}

fn vdso_clock_gettime() -> Option<ClockGettime> {
    // SAFETY: RTLD_NOLOAD only looks the vDSO up (it is never loaded or unloaded); the symbol
    // is the kernel's `clock_gettime`, with the C library's signature on these architectures.
    unsafe {
        let vdso = libc::dlopen(
            c"linux-vdso.so.1".as_ptr(),
            libc::RTLD_LAZY | libc::RTLD_NOLOAD,
        );
        if vdso.is_null() {
            return None;
        }
        let name = if cfg!(target_arch = "x86_64") {
            c"__vdso_clock_gettime"
        } else {
            c"__kernel_clock_gettime"
        };
        let symbol = libc::dlsym(vdso, name.as_ptr());
        (!symbol.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, ClockGettime>(symbol))
    }
}

impl Monotonic {
    #[inline(always)]
    fn read(id: libc::clockid_t) -> libc::timespec {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: the pointer is `resolve` or a `clock_gettime` it found (never anything else).
        let clock_gettime: ClockGettime =
            unsafe { std::mem::transmute(CLOCK_GETTIME.load(Relaxed)) };
        // SAFETY: `ts` is a valid, writable timespec and the clock ids exist on every Linux.
        if unsafe { clock_gettime(id, &mut ts) } != 0 {
            // The vDSO answers an error (which these clocks never give) without `errno`.
            // SAFETY: as above.
            unsafe { libc::clock_gettime(id, &mut ts) };
        }
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

impl Monotonic {
    /// `now_ms` in nanoseconds, for the hot path's comparison (`Block::claim_at_ns`): no
    /// division.
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        let ts = Monotonic::read(libc::CLOCK_MONOTONIC_COARSE);
        #[allow(clippy::unnecessary_cast)]
        let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
        ns
    }
}

impl Ticks for Monotonic {
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        let ts = Monotonic::read(libc::CLOCK_MONOTONIC_COARSE);
        #[allow(clippy::unnecessary_cast)]
        let ms = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        ms
    }

    fn boot_ms(&self) -> u64 {
        let ts = Monotonic::read(libc::CLOCK_BOOTTIME);
        #[allow(clippy::unnecessary_cast)]
        let ms = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        ms
    }

    fn lag_ms(&self) -> u64 {
        static LAG: OnceLock<u64> = OnceLock::new();
        *LAG.get_or_init(Monotonic::resolution_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c_library_ms() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid, writable timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
    }

    /// The vDSO's function is found and called, and reads the clock the C library reads:
    /// each reading falls between the C library's readings before and after it.
    #[test]
    fn the_vdso_is_called_for_the_c_librarys_coarse_clock() {
        for _ in 0..10_000 {
            let before = c_library_ms();
            let now = Monotonic.now_ms();
            let after = c_library_ms();
            assert!(before <= now && now <= after, "{before} {now} {after}");
        }
        let found = vdso_clock_gettime().expect("glibc lists the vDSO");
        assert_eq!(CLOCK_GETTIME.load(Relaxed), found as *mut ());
    }

    /// The boot-time clock is the C library's `CLOCK_BOOTTIME`, at or ahead of the monotonic
    /// clock's reading (it adds the suspended time).
    #[test]
    fn the_boot_time_clock_is_clock_boottime() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid, writable timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
        let before = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        let stamp = Monotonic.stamp();
        unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
        let after = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        assert!(
            before <= stamp.boot_ms && stamp.boot_ms <= after,
            "{before} {stamp:?} {after}"
        );
        assert!(stamp.boot_ms + Monotonic.lag_ms() >= stamp.ms, "{stamp:?}");
    }
}

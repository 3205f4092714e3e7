//! The system clock's wait: it returns once the millisecond has come, and sleeps to it rather
//! than spinning (a spinning waiter holds a core that, on a small machine, the callers need).

#![cfg(target_os = "linux")]

use std::time::Instant;

use flakery::{Clock, SystemClock};

fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec and a clock every Linux has.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[test]
fn waiting_for_the_next_millisecond_sleeps_until_it() {
    let clock = SystemClock;
    let (wall, cpu) = (Instant::now(), thread_cpu_seconds());
    for _ in 0..100 {
        let target = clock.now_ms() + 1;
        clock.wait_until_ms(target);
        let now = clock.now_ms();
        assert!(now >= target, "woke at {now}, before {target}");
    }
    let (wall, cpu) = (wall.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu);
    assert!(
        wall >= 0.05,
        "100 waits for the next millisecond took only {wall} s"
    );
    // A spinning wait burns about as much CPU as wall time; sleeping, a few microseconds a wake.
    assert!(
        cpu < wall * 0.1,
        "waiting used {cpu:.4} s of CPU in {wall:.3} s: it spins"
    );
}

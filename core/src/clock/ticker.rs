//! The system clock, read once a millisecond by a thread of its own while IDs are being made,
//! so that a call to `next_id` reads one word instead of calling `clock_gettime`.
//!
//! What it costs and when it runs (docs/spec.md#the-clock-thread):
//! - it starts on the first reading (the first ID a generator on the system clock makes), never
//!   when a process only loads flakery or builds a generator;
//! - while readings come it wakes once a millisecond, reads `CLOCK_REALTIME` and stores it;
//! - after `PARK_AFTER_MS` milliseconds in which nothing read it, it parks (blocked, no
//!   wake-ups) until the next reading, which reads the clock itself and wakes it;
//! - a fork's child has no such thread: the fork handler empties the word, and the child's
//!   first reading starts a thread of its own.
//!
//! The published time is a past reading of the clock, so it never runs ahead of it; it may lag
//! (a thread descheduled on a busy machine), as the coarse clock it replaces lags by up to a
//! scheduler tick. A lagging reading is safe: the generator issues no tick it has not reached,
//! and takes a used-up or stale tick to its slow path, which reads the precise clock.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::*};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::Duration;

/// Parks after this many milliseconds without a reading.
pub const PARK_AFTER_MS: u32 = 50;

/// The thread's last reading (Unix ms), with `UNREAD` set until the first caller reads it
/// (the thread counts the milliseconds nobody did). `UNREAD` alone while no thread publishes
/// (not started, parked, failed to start, a fork's child): callers read the clock themselves.
/// As an i64 a word with `UNREAD` is negative, below every layout's origin, so a generator's
/// hot path, which checks the reading against its origin anyway, needs no test of its own
/// (`at_hand`).
#[repr(align(64))]
struct Published(AtomicU64);

const UNREAD: u64 = 1 << 63;

/// Readings at or past this are never published (the hot path's proof that an unread word
/// fails its origin check needs the reading below 2^62: some hundred million years).
const PUBLISHABLE_END_MS: i64 = 1 << 62;

static PUBLISHED: Published = Published(AtomicU64::new(UNREAD));

const NOT_STARTED: u8 = 0;
const STARTING: u8 = 1;
const RUNNING: u8 = 2;
const PARKED: u8 = 3;
/// The thread could not be made: every reading reads the clock itself.
const FAILED: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(NOT_STARTED);
/// The thread, to wake it (set by the thread itself before it first parks).
static THREAD: Mutex<Option<Thread>> = Mutex::new(None);

/// The system clock in Unix milliseconds, never ahead of `CLOCK_REALTIME`; `read_clock` is the
/// reading used while no thread publishes.
#[inline(always)]
pub fn now_ms(read_clock: fn() -> i64) -> i64 {
    let word = PUBLISHED.0.load(Relaxed);
    if word & UNREAD == 0 {
        return word as i64;
    }
    first_reading(read_clock)
}

/// The published reading as it is: the Unix ms when read before, else negative (unread, or
/// nothing published): then `now_ms` answers.
#[inline(always)]
pub fn at_hand() -> i64 {
    PUBLISHED.0.load(Relaxed) as i64
}

/// The first reading of a millisecond's word marks it read; a reading while none is published
/// reads the clock and wakes (or starts) the thread.
#[cold]
#[inline(never)]
fn first_reading(read_clock: fn() -> i64) -> i64 {
    // Acquire: an empty word seen here was stored after the thread said it parks (see `park`).
    let word = PUBLISHED.0.load(Acquire);
    if word != UNREAD {
        let _ = PUBLISHED
            .0
            .compare_exchange(word, word & !UNREAD, Relaxed, Relaxed);
        return (word & !UNREAD) as i64;
    }
    wake();
    read_clock()
}

fn wake() {
    match STATE.load(SeqCst) {
        PARKED
            if STATE
                .compare_exchange(PARKED, RUNNING, SeqCst, SeqCst)
                .is_ok() =>
        {
            if let Some(thread) = crate::fork::lock(&THREAD).as_ref() {
                thread.unpark();
            }
        }
        NOT_STARTED
            if STATE
                .compare_exchange(NOT_STARTED, STARTING, SeqCst, SeqCst)
                .is_ok() =>
        {
            crate::fork::install();
            let spawned = with_signals_blocked(|| {
                std::thread::Builder::new()
                    .name("flakery-clock".into())
                    .stack_size(64 * 1024)
                    .spawn(run)
            });
            let next = if spawned.is_ok() { RUNNING } else { FAILED };
            let _ = STATE.compare_exchange(STARTING, next, SeqCst, SeqCst);
        }
        _ => {}
    }
}

/// Runs `spawn` with every signal blocked on this thread, so that the thread it makes
/// inherits a mask that takes none of the process's signals: a host that handles them
/// (PostgreSQL's backends, an interpreter) expects them on its own threads.
fn with_signals_blocked<T>(spawn: impl FnOnce() -> T) -> T {
    // SAFETY: plain sigset_t values on the stack; the old mask is restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let spawned = spawn();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        spawned
    }
}

fn run() {
    *crate::fork::lock(&THREAD) = Some(std::thread::current());
    let mut unread = 0;
    loop {
        let (ms, sub_ms_ns) = super::realtime_ms_and_rest();
        let word = if ms > 0 && ms < PUBLISHABLE_END_MS {
            ms as u64 | UNREAD
        } else {
            UNREAD
        };
        let before = PUBLISHED.0.swap(word, AcqRel);
        if before & UNREAD == 0 {
            unread = 0;
        } else {
            unread += 1;
        }
        if unread >= PARK_AFTER_MS {
            park();
            unread = 0;
            continue;
        }
        std::thread::sleep(Duration::from_nanos(1_000_000 - sub_ms_ns));
    }
}

/// Stops publishing until a reading wakes the thread.
fn park() {
    STATE.store(PARKED, SeqCst);
    PUBLISHED.0.store(UNREAD, SeqCst);
    while STATE.load(SeqCst) == PARKED {
        std::thread::park();
    }
}

/// In a fork's child: the thread is the parent's, so nothing publishes here.
pub fn after_fork_in_child() {
    PUBLISHED.0.store(UNREAD, SeqCst);
    STATE.store(NOT_STARTED, SeqCst);
}

/// Whether a thread publishes the time now (for tests).
pub fn publishing() -> bool {
    PUBLISHED.0.load(SeqCst) != UNREAD
}

//! The system clock, read once a millisecond by a thread of its own while IDs are being made,
//! so that a call to `next_id` reads one word instead of calling `clock_gettime`.
//!
//! What it costs and when it runs (docs/spec.md#the-clock-thread):
//! - it starts on the first reading (the first ID a generator on the system clock makes), never
//!   when a process only loads flakery or builds a generator;
//! - while readings come it wakes once a millisecond, reads `CLOCK_REALTIME` and stores it;
//! - once every `MARK_EVERY_MS` of its milliseconds it marks the word unread, and the mark stays
//!   on the words it stores until a reading clears it; after `PARK_AFTER_MS` milliseconds of
//!   marks nobody cleared it parks (blocked, no wake-ups) until the next reading, which reads
//!   the clock itself and wakes it;
//! - a fork's child has no such thread: the fork handler empties the word, and the child's
//!   first reading starts a thread of its own.
//!
//! Why a mark every 10 ms and not every millisecond: clearing it is a write to the line the
//! thread writes, a transfer between cores (a compare-and-swap on a line the other core holds)
//! that the first call of every millisecond paid, against one load for every other reading.
//!
//! The published time is a past reading of the clock, so it never runs ahead of it; it may lag
//! (a thread descheduled on a busy machine), as the coarse clock it replaces lags by up to a
//! scheduler tick. A lagging reading is safe: the generator issues no tick it has not reached,
//! and takes a used-up or stale tick to its slow path, which reads the precise clock.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::*};
use std::sync::Mutex;
use std::thread::Thread;
use std::time::Duration;

/// Parks after this many milliseconds of marks nobody cleared (between this and
/// `PARK_AFTER_MS + MARK_EVERY_MS` after the last reading).
pub const PARK_AFTER_MS: u32 = 50;

/// The thread marks its word unread once every this many of its milliseconds.
pub const MARK_EVERY_MS: u32 = 10;

/// The thread's last reading (Unix ms), with `UNREAD` set from a mark until the first caller
/// reads it (the thread counts the marks nobody cleared). `UNREAD` alone while no thread
/// publishes (not started, parked, failed to start, a fork's child): callers read the clock
/// themselves.
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

/// The first reading of a marked word clears the mark; a reading while none is published reads
/// the clock and wakes (or starts) the thread.
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
    let mut marks = Marks::default();
    loop {
        let (ms, sub_ms_ns) = super::realtime_ms_and_rest();
        // A reading that clears the mark between the load and the swap makes the swap fail,
        // and the word is made again without it.
        let before = match PUBLISHED
            .0
            .fetch_update(AcqRel, Acquire, |before| Some(marks.word(before, ms)))
        {
            Ok(before) | Err(before) => before,
        };
        if marks.published(before) {
            park();
            marks = Marks::default();
            continue;
        }
        std::thread::sleep(Duration::from_nanos(1_000_000 - sub_ms_ns));
    }
}

/// What the thread keeps between its milliseconds: where it is between two marks, and how many
/// marks in a row nobody cleared.
#[derive(Debug, Default)]
struct Marks {
    since_mark: u32,
    uncleared: u32,
}

impl Marks {
    /// The word to store for the reading `ms` in place of `before`: marked at a mark, and
    /// between marks carrying the mark `before` has (none once a reading cleared it).
    fn word(&self, before: u64, ms: i64) -> u64 {
        if ms <= 0 || ms >= PUBLISHABLE_END_MS {
            return UNREAD;
        }
        let mark = if self.since_mark == 0 {
            UNREAD
        } else {
            before & UNREAD
        };
        ms as u64 | mark
    }

    /// After storing the word that replaced `before`: at a mark, `before` tells whether the
    /// last mark was cleared. Whether the thread should park now.
    fn published(&mut self, before: u64) -> bool {
        if self.since_mark == 0 {
            self.uncleared = if before & UNREAD == 0 {
                0
            } else {
                self.uncleared + 1
            };
        }
        self.since_mark = (self.since_mark + 1) % MARK_EVERY_MS;
        self.uncleared >= PARK_AFTER_MS / MARK_EVERY_MS
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread's milliseconds from its start, with a caller that reads in the milliseconds
    /// `reads` says, as `first_reading` does: the writes those readings made (a cleared mark),
    /// and the millisecond the thread parked at, if it did.
    fn simulate(millis: u32, reads: impl Fn(u32) -> bool) -> (u32, Option<u32>) {
        let mut word = UNREAD;
        let mut marks = Marks::default();
        let mut writes = 0;
        for at in 0..millis {
            let before = word;
            word = marks.word(before, 1_700_000_000_000 + i64::from(at));
            if marks.published(before) {
                return (writes, Some(at));
            }
            if reads(at) && word & UNREAD != 0 && word != UNREAD {
                word &= !UNREAD;
                writes += 1;
            }
        }
        (writes, None)
    }

    #[test]
    fn a_caller_that_reads_every_millisecond_writes_once_a_mark() {
        let (writes, parked) = simulate(1_000, |_| true);
        assert_eq!(parked, None);
        assert_eq!(writes, 1_000 / MARK_EVERY_MS);
    }

    #[test]
    fn a_reading_anywhere_between_two_marks_keeps_the_thread_awake() {
        // One reading every 37 ms, at every place between two marks in turn: never 50 ms
        // without one.
        let (writes, parked) = simulate(10_000, |at| at % 37 == 3);
        assert_eq!(parked, None);
        assert_eq!(writes, (10_000u32 - 3).div_ceil(37));
    }

    #[test]
    fn the_thread_parks_between_50_and_60_ms_after_the_last_reading() {
        for last in 100..120 {
            let (_, parked) = simulate(1_000, |at| at <= last);
            let idle = parked.expect("parks") - last;
            assert!(
                (PARK_AFTER_MS..=PARK_AFTER_MS + MARK_EVERY_MS).contains(&idle),
                "last reading at {last} ms, parked {idle} ms later"
            );
        }
        // Never read once started (the reading that started it read the clock itself): the
        // empty word it found counts as a mark nobody cleared.
        let (_, parked) = simulate(1_000, |_| false);
        assert!(parked.expect("parks") <= PARK_AFTER_MS);
    }

    #[test]
    fn a_reading_outside_what_may_be_published_is_not_at_hand() {
        let marks = Marks::default();
        for ms in [i64::MIN, -1, 0, PUBLISHABLE_END_MS, i64::MAX] {
            assert_eq!(marks.word(0, ms), UNREAD);
        }
    }
}

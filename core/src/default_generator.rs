//! The process-wide generator behind `flakery::next_id()`, made from the environment on first
//! use. A failed attempt (ZooKeeper not up yet, say) is not remembered: the next call tries
//! again.

use std::sync::{Mutex, OnceLock};
use std::thread::Thread;

use crate::error::Result;
use crate::fork;
use crate::generator::Generator;
use crate::options::Options;

static DEFAULT: OnceLock<Generator> = OnceLock::new();
static MAKING: Mutex<Making> = Mutex::new(Making {
    generation: None,
    waiting: Vec::new(),
});

/// Who is making the default generator. Taken only for a moment, inside a fork section:
/// making it may claim a node ID from a coordinator (a network round trip or more), and a
/// `fork()` meanwhile must not wait for that, nor a child inherit a lock held.
struct Making {
    /// The fork generation of the thread making it; one of another generation (this process
    /// is a child forked meanwhile) made it in the parent, not here.
    generation: Option<u64>,
    /// Threads parked until it is made (or fails).
    waiting: Vec<Thread>,
}

pub fn default_generator() -> Result<&'static Generator> {
    if let Some(generator) = DEFAULT.get() {
        return Ok(generator);
    }
    loop {
        {
            let mut making = fork::lock(&MAKING);
            if let Some(generator) = DEFAULT.get() {
                return Ok(generator);
            }
            if making.generation != Some(fork::generation()) {
                making.generation = Some(fork::generation());
                making.waiting.clear();
                break;
            }
            making.waiting.push(std::thread::current());
        }
        // Another thread is making it: wait with no lock held (a spurious wake-up looks again).
        std::thread::park();
    }
    // Published before the mark is cleared, so that no waiter starts a second one.
    let result = Generator::new(Options::default()).map(|made| DEFAULT.get_or_init(|| made));
    let waiting = {
        let mut making = fork::lock(&MAKING);
        making.generation = None;
        std::mem::take(&mut making.waiting)
    };
    for thread in waiting {
        thread.unpark();
    }
    let generator = result?;
    #[cfg(unix)]
    // SAFETY: registers a plain extern "C" function with no captured state.
    unsafe {
        libc::atexit(release_at_exit);
    }
    Ok(generator)
}

/// A static is never dropped, so without this a leased node ID would keep its look-ahead
/// high-water mark, and the next process to lease it would wait up to that look-ahead for its
/// first ID. At a normal exit the lease is released with the time really used.
#[cfg(unix)]
extern "C" fn release_at_exit() {
    if let Some(generator) = DEFAULT.get() {
        generator.close();
    }
}

/// One ID from the process-wide generator.
#[inline]
pub fn next_id() -> Result<i64> {
    default_generator()?.next_id()
}

/// `n` IDs from the process-wide generator.
pub fn next_ids(n: usize) -> Result<Vec<i64>> {
    default_generator()?.next_ids(n)
}

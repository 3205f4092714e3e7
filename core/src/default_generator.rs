//! The process-wide generator behind `flakery::next_id()`, made from the environment on first
//! use. A failed attempt (ZooKeeper not up yet, say) is not remembered: the next call tries
//! again.

use std::sync::{Mutex, OnceLock};

use crate::error::Result;
use crate::generator::Generator;
use crate::options::Options;

static DEFAULT: OnceLock<Generator> = OnceLock::new();
static MAKING: Mutex<()> = Mutex::new(());

pub fn default_generator() -> Result<&'static Generator> {
    if let Some(generator) = DEFAULT.get() {
        return Ok(generator);
    }
    // Inside a fork section: a child forked meanwhile must not inherit MAKING held.
    let _making = crate::fork::lock(&MAKING);
    if let Some(generator) = DEFAULT.get() {
        return Ok(generator);
    }
    let generator = Generator::new(Options::default())?;
    let generator = DEFAULT.get_or_init(|| generator);
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

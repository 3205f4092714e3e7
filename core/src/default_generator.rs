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
    let _making = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(generator) = DEFAULT.get() {
        return Ok(generator);
    }
    let generator = Generator::new(Options::default())?;
    Ok(DEFAULT.get_or_init(|| generator))
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

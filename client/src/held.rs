//! The block each thread takes from: the steady state's `next_id` is one thread-local read,
//! one comparison of whose block it is, a clock reading and a claim (`Block::claim`), with no
//! lock, no reference count and no `RefCell`.
//!
//! A thread holds one block of one client's engine at a time, named by the client's number and
//! the process's fork generation: a block is claimed from only by the client whose engine it
//! came from, and never in a `fork()`'s child (whose generation differs: the forking thread's
//! hold is on the parent's block). A closed client's blocks are closed (`Stock::clear`), so a
//! thread still holding one gets nothing from it.
//!
//! The hold is a counted reference to the block (from `Arc::into_raw`), kept in a `Cell` of
//! plain words so that reading it costs no state check; a second thread-local, touched only
//! when a block is taken up, gives the reference back when the thread ends.

use std::cell::Cell;
use std::ptr;
use std::sync::Arc;

use flakery::fork;

use crate::stock::Block;
use crate::ticks::Monotonic;

#[derive(Clone, Copy)]
struct Held {
    /// The client's number (`next_owner`); 0: nothing held.
    owner: u64,
    /// The fork generation the block was taken up in.
    generation: u64,
    /// From `Arc::into_raw`; null when nothing is held.
    block: *const Block,
}

const NOTHING: Held = Held {
    owner: 0,
    generation: 0,
    block: ptr::null(),
};

/// Gives this thread's hold back when the thread ends.
struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        let held = HELD.with(|held| held.replace(NOTHING));
        give_back(held);
    }
}

thread_local! {
    static HELD: Cell<Held> = const { Cell::new(NOTHING) };
    static RELEASE: Release = const { Release };
}

/// A number for a new client, never 0 and never used again in this process.
pub fn next_owner() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static OWNERS: AtomicU64 = AtomicU64::new(1);
    OWNERS.fetch_add(1, Relaxed)
}

/// One ID from the block this thread holds for `owner` in this process, if it holds one that
/// has one young enough; with it, whether this claim left the stock at its low watermark.
#[inline(always)]
pub fn claim(owner: u64) -> Option<(i64, bool)> {
    let held = HELD.get();
    if held.owner != owner || held.generation != fork::generation() {
        return None;
    }
    // SAFETY: a held block is a counted reference this thread owns (`hold`), released only
    // by this thread when it takes up another or ends: it is alive here.
    let block = unsafe { &*held.block };
    block.claim_at_ns(Monotonic.now_ns())
}

/// Makes `block` (of the engine of `owner` in `generation`) this thread's hold, or nothing;
/// the hold given up is released.
pub fn hold(owner: u64, generation: u64, block: Option<Arc<Block>>) {
    let fresh = match block {
        // A thread that is ending (its `RELEASE` gone) holds nothing: none would give it back.
        Some(block) if RELEASE.try_with(|_| ()).is_ok() => Held {
            owner,
            generation,
            block: Arc::into_raw(block),
        },
        _ => NOTHING,
    };
    let before = HELD.with(|held| held.replace(fresh));
    give_back(before);
}

fn give_back(held: Held) {
    if !held.block.is_null() {
        // SAFETY: from `Arc::into_raw` in `hold`, and no longer in `HELD`.
        drop(unsafe { Arc::from_raw(held.block) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ticks::Ticks;

    fn young_block(ids: Vec<i64>) -> Arc<Block> {
        Arc::new(Block::new(ids, Monotonic.stamp(), 600_000))
    }

    #[test]
    fn a_hold_is_given_back_when_another_is_taken_up_and_when_the_thread_ends() {
        let (first, second) = (young_block(vec![1, 2]), young_block(vec![7, 8]));
        let owner = next_owner();
        let (one, two) = (Arc::clone(&first), Arc::clone(&second));
        std::thread::spawn(move || {
            hold(owner, fork::generation(), Some(one));
            assert_eq!(claim(owner).map(|c| c.0), Some(1));
            assert_eq!(claim(owner + 1), None, "another client's call");
            hold(owner, fork::generation(), Some(two));
            assert_eq!(claim(owner).map(|c| c.0), Some(7));
        })
        .join()
        .unwrap();
        assert_eq!(
            Arc::strong_count(&first),
            1,
            "given back when the second was taken up"
        );
        assert_eq!(
            Arc::strong_count(&second),
            1,
            "given back when the thread ended"
        );
    }
}

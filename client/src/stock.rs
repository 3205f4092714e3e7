//! The IDs a client holds: blocks as they came from the servers, each stamped with the last
//! millisecond its IDs may be handed out in (`max_age` after a time before its request was
//! sent), so that an ID whose age may be over `max_age` is dropped rather than handed out (an
//! ID is made after its request is sent: its real age is at most the one measured).
//!
//! The age is kept on two clocks (`ticks::Stamp`): the coarse monotonic one, which the
//! lock-free claim reads, and the boot-time one, which counts a suspend and is checked
//! wherever the stock's lock is taken (a block is taken up, the refiller's rounds, `fill`).
//! A block too old on either is closed, so a thread that held it across a suspend gets
//! nothing more from it once the client next takes the lock (at the latest the refiller's
//! next round: a second when idle, at most the 3 s backoff).
//!
//! A block is immutable but for its cursor: a caller claims an index with one `fetch_add`, so
//! each ID goes to one caller, and callers that hold the block (`Arc`) take from it without
//! the stock's lock. A block leaves the stock only once no index is left to claim (used up,
//! or closed when too old or the client closes), so a caller still holding it gets nothing
//! more from it and comes back to the stock.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::ticks::Stamp;

#[derive(Debug)]
pub struct Block {
    ids: Box<[i64]>,
    /// The next index to claim; at or past the end once used up or closed.
    next: AtomicUsize,
    /// A claim of an index below this is in bounds and leaves the stock above its low
    /// watermark: the hot path's one comparison after the claim (`min(low_at, ids.len())`).
    quiet_until: AtomicUsize,
    /// `young_until_ms` as the first nanosecond of the monotonic clock at which the block is
    /// too old: the hot path compares the clock's reading without dividing it into ms.
    old_from_ns: u64,
    /// `max_age` after a time at or before the request for this block was sent: no ID of it
    /// is handed out at a later time.
    young_until_ms: u64,
    /// The same on the boot-time clock (`Ticks::boot_ms`).
    young_until_boot_ms: u64,
    /// The claim of this index leaves the stock at its low watermark: its caller wakes the
    /// refiller (set by `Stock::arm`).
    low_at: AtomicUsize,
}

impl Block {
    pub fn new(ids: Vec<i64>, made_after: Stamp, max_age_ms: u64) -> Self {
        let young_until_ms = made_after.ms.saturating_add(max_age_ms);
        Block {
            quiet_until: AtomicUsize::new(ids.len()),
            ids: ids.into_boxed_slice(),
            next: AtomicUsize::new(0),
            old_from_ns: ms_to_ns(young_until_ms.saturating_add(1)),
            young_until_ms,
            young_until_boot_ms: made_after.boot_ms.saturating_add(max_age_ms),
            low_at: AtomicUsize::new(usize::MAX),
        }
    }

    /// One ID, if this block is not older than `max_age` at `now_ms` and one is left; with
    /// it, whether the stock is now at its low watermark.
    pub fn claim(&self, now_ms: u64) -> Option<(i64, bool)> {
        self.claim_at_ns(ms_to_ns(now_ms))
    }

    /// `claim` at `now_ns` on the monotonic clock (`Ticks::now_ms` in nanoseconds): one
    /// comparison of the time, the claim, one comparison of its index.
    #[inline(always)]
    pub fn claim_at_ns(&self, now_ns: u64) -> Option<(i64, bool)> {
        if now_ns >= self.old_from_ns {
            return None;
        }
        // Relaxed: the IDs are immutable and published with the `Arc`; only the uniqueness of
        // the index matters, which the read-modify-write gives.
        let index = self.next.fetch_add(1, Relaxed);
        if index < self.quiet_until.load(Relaxed) {
            // SAFETY: `quiet_until` is at most `ids.len()` (`new`, `Stock::arm`).
            return Some((unsafe { *self.ids.get_unchecked(index) }, false));
        }
        self.claimed_past_quiet(index)
    }

    /// The claim of `index` is at the low watermark, or past the end.
    #[cold]
    #[inline(never)]
    fn claimed_past_quiet(&self, index: usize) -> Option<(i64, bool)> {
        let id = *self.ids.get(index)?;
        Some((id, index == self.low_at.load(Relaxed)))
    }

    /// Up to `out.len()` IDs (the age is the caller's to check); answers how many.
    fn claim_into(&self, out: &mut [i64]) -> usize {
        let start = self.next.fetch_add(out.len(), Relaxed).min(self.ids.len());
        let end = (start + out.len()).min(self.ids.len());
        out[..end - start].copy_from_slice(&self.ids[start..end]);
        end - start
    }

    /// No index is claimed after this; answers how many were left.
    fn close(&self) -> usize {
        let before = self.next.fetch_max(self.ids.len(), Relaxed);
        self.ids.len().saturating_sub(before)
    }

    fn left(&self) -> usize {
        self.ids.len().saturating_sub(self.next.load(Relaxed))
    }

    fn too_old(&self, now: Stamp) -> bool {
        now.ms > self.young_until_ms || now.boot_ms > self.young_until_boot_ms
    }
}

/// Milliseconds as nanoseconds, `u64::MAX` past some 584 years.
fn ms_to_ns(ms: u64) -> u64 {
    ms.saturating_mul(1_000_000)
}

#[derive(Debug, Default)]
pub struct Stock {
    blocks: VecDeque<Arc<Block>>,
    /// IDs dropped unused because they grew too old.
    dropped: u64,
}

impl Stock {
    pub fn new() -> Self {
        Stock::default()
    }

    pub fn add(&mut self, block: Block) {
        self.blocks.push_back(Arc::new(block));
    }

    /// The block IDs are taken from now, for a caller to claim from without the lock.
    pub fn front(&self) -> Option<Arc<Block>> {
        self.blocks.front().cloned()
    }

    /// Marks the index of the front block whose claim leaves `watermark` IDs or fewer held
    /// (after a block is added or the front changes; an index already passed marks nothing:
    /// whoever holds the lock then sees the stock low).
    pub fn arm(&self, watermark: usize) {
        let Some(front) = self.blocks.front() else {
            return;
        };
        let rest: usize = self.blocks.iter().skip(1).map(|b| b.left()).sum();
        // After index i is claimed, len - i - 1 + rest are held.
        let at = (front.ids.len() + rest).checked_sub(watermark + 1);
        match at {
            Some(at) if at >= front.next.load(Relaxed) => {
                front.low_at.store(at, Relaxed);
                front.quiet_until.store(at.min(front.ids.len()), Relaxed);
            }
            // Already at or below the watermark: no claim marks it (the caller that armed
            // asks for a block itself), and every claim stays on the hot path's one comparison.
            _ => {
                front.low_at.store(usize::MAX, Relaxed);
                front.quiet_until.store(front.ids.len(), Relaxed);
            }
        }
    }

    /// Drops the blocks that are older than `max_age` at `now` (blocks arrive in order of
    /// their stamps, so only from the front).
    pub fn expire(&mut self, now: Stamp) {
        while let Some(front) = self.blocks.front() {
            if !front.too_old(now) {
                break;
            }
            self.dropped += front.close() as u64;
            self.blocks.pop_front();
        }
    }

    /// The next ID, if one young enough is held.
    pub fn take(&mut self, now: Stamp) -> Option<i64> {
        self.expire(now);
        loop {
            let front = self.blocks.front()?;
            if let Some((id, _)) = front.claim(now.ms) {
                return Some(id);
            }
            // Used up (it is young: `expire` kept it).
            self.blocks.pop_front();
        }
    }

    /// Up to `out.len()` IDs into `out`; answers how many were written.
    pub fn take_into(&mut self, now: Stamp, out: &mut [i64]) -> usize {
        self.expire(now);
        let mut written = 0;
        while written < out.len() {
            let Some(front) = self.blocks.front() else {
                break;
            };
            written += front.claim_into(&mut out[written..]);
            if front.left() == 0 {
                self.blocks.pop_front();
            }
        }
        written
    }

    /// Drops every ID held (a closed client's), from callers holding a block too.
    pub fn clear(&mut self) {
        for block in self.blocks.drain(..) {
            block.close();
        }
    }

    /// IDs held (some may be older than `max_age` until the next `expire`).
    pub fn left(&self) -> usize {
        self.blocks.iter().map(|b| b.left()).sum()
    }

    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time at which both clocks read `ms` (no suspend since their common origin).
    fn at(ms: u64) -> Stamp {
        Stamp { ms, boot_ms: ms }
    }

    #[test]
    fn hands_out_in_order_across_blocks() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2], at(0), 1000));
        stock.add(Block::new(vec![10, 11, 12], at(5), 1000));
        assert_eq!(stock.left(), 5);
        let taken: Vec<_> = std::iter::from_fn(|| stock.take(at(6))).collect();
        assert_eq!(taken, [1, 2, 10, 11, 12]);
        assert_eq!(stock.left(), 0);
        assert_eq!(stock.take(at(6)), None);
    }

    #[test]
    fn an_id_older_than_max_age_is_never_handed_out() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2, 3], at(0), 100));
        stock.add(Block::new(vec![7, 8], at(50), 100));
        assert_eq!(
            stock.take(at(100)),
            Some(1),
            "exactly max_age old: still given"
        );
        assert_eq!(
            stock.take(at(101)),
            Some(7),
            "1 ms over: its block is dropped"
        );
        assert_eq!(stock.dropped(), 2);
        assert_eq!(stock.left(), 1);
        assert_eq!(stock.take(at(151)), None, "the second block is too old too");
        assert_eq!(stock.dropped(), 3);
        assert_eq!(stock.left(), 0);
    }

    #[test]
    fn takes_many_at_once_without_old_ones() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2], at(0), 100));
        stock.add(Block::new(vec![5, 6, 7], at(80), 100));
        let mut out = [0; 4];
        assert_eq!(stock.take_into(at(150), &mut out), 3);
        assert_eq!(out[..3], [5, 6, 7]);
        stock.add(Block::new(vec![9, 10, 11], at(150), 100));
        let mut out = [0; 2];
        assert_eq!(stock.take_into(at(150), &mut out), 2);
        assert_eq!(out, [9, 10]);
        assert_eq!(stock.left(), 1);
    }

    #[test]
    fn threads_drawing_from_one_block_get_every_id_once() {
        const IDS: i64 = 2_000_000;
        const THREADS: usize = 8;
        let block = Arc::new(Block::new((0..IDS).collect(), at(0), 100));
        let start = Arc::new(std::sync::Barrier::new(THREADS));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let (block, start) = (Arc::clone(&block), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    std::iter::from_fn(|| block.claim(0).map(|(id, _)| id)).collect()
                })
            })
            .collect();
        let mut seen = vec![0u32; IDS as usize];
        let mut handed = Vec::new();
        for thread in threads {
            let ids: Vec<i64> = thread.join().unwrap();
            handed.push(ids.len());
            for id in ids {
                seen[id as usize] += 1;
            }
        }
        let twice = seen.iter().filter(|&&n| n > 1).count();
        let lost = seen.iter().filter(|&&n| n == 0).count();
        assert_eq!((twice, lost), (0, 0), "per thread: {handed:?}");
        assert_eq!(block.claim(0), None);
    }

    #[test]
    fn a_block_over_max_age_is_never_claimed_from() {
        let block = Block::new(vec![1, 2, 3], at(1000), 100);
        assert_eq!(
            block.claim(1100).map(|c| c.0),
            Some(1),
            "exactly max_age old"
        );
        assert_eq!(block.claim(1101), None, "1 ms over");
        assert_eq!(block.claim(u64::MAX), None);
        assert_eq!(block.left(), 2, "nothing claimed by a refused call");
        // A caller holding a block the stock dropped for its age gets nothing either.
        let mut stock = Stock::new();
        stock.add(Block::new(vec![4, 5], at(0), 100));
        let held = stock.front().unwrap();
        stock.expire(at(101));
        assert_eq!(held.claim(50), None, "closed when dropped");
        assert_eq!(stock.dropped(), 2);
    }

    #[test]
    fn the_claim_that_leaves_the_stock_low_says_so() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2, 3, 4], at(0), 100));
        stock.add(Block::new(vec![5, 6], at(0), 100));
        stock.arm(3);
        let front = stock.front().unwrap();
        let lows: Vec<bool> = std::iter::from_fn(|| front.claim(0).map(|c| c.1)).collect();
        assert_eq!(lows, [false, false, true, false], "after 3: 1 + 2 held");
        assert_eq!(stock.left(), 2);
    }

    /// A stock armed at or below its watermark (a block came into a stock that needs more at
    /// once, or the mark's index was claimed before it was set): no claim says low (the caller
    /// that armed asks for the next block itself), and each stays on the hot path's one
    /// comparison (`quiet_until`).
    #[test]
    fn a_stock_armed_at_or_below_its_watermark_marks_no_claim() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2, 3, 4], at(0), 100));
        stock.arm(4);
        let front = stock.front().unwrap();
        assert_eq!(front.quiet_until.load(Relaxed), 4);
        assert_eq!(front.claim(0), Some((1, false)), "index 0 is not a mark");
        front.claim(0);
        stock.arm(1);
        // After index 2 is claimed, 1 is held: index 2 is the mark, not yet passed.
        assert_eq!(front.quiet_until.load(Relaxed), 2);
        front.claim(0);
        stock.arm(1);
        assert_eq!(front.quiet_until.load(Relaxed), 4, "passed: no mark");
        assert_eq!(front.claim(0), Some((4, false)));
    }

    /// A suspend: the boot-time clock moves on, the monotonic one does not. The block is
    /// dropped by the next locked look at the stock, and a thread holding it gets nothing.
    #[test]
    fn a_block_older_than_max_age_across_a_suspend_is_never_handed_out() {
        let mut stock = Stock::new();
        stock.add(Block::new(vec![1, 2, 3, 4], at(1000), 100));
        let held = stock.front().unwrap();
        assert_eq!(stock.take(at(1010)), Some(1));
        let resumed = Stamp {
            ms: 1020,
            boot_ms: 1020 + 60_000,
        };
        assert_eq!(stock.take(resumed), None, "a minute suspended: too old");
        assert_eq!(stock.dropped(), 3);
        assert_eq!(held.claim(resumed.ms), None, "closed for its holder too");
        // A block stamped after the resume is young on both clocks.
        stock.add(Block::new(vec![9], resumed, 100));
        assert_eq!(stock.take(resumed), Some(9));
        let just = Stamp {
            ms: 1020,
            boot_ms: 1020 + 60_000 + 100,
        };
        stock.add(Block::new(vec![10], resumed, 100));
        assert_eq!(
            stock.take(just),
            Some(10),
            "exactly max_age on the boot-time clock"
        );
    }
}

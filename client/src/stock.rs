//! The IDs a client holds: blocks as they came from the servers, each stamped with a time
//! before its request was sent, so that an ID whose age may be over `max_age` is dropped
//! rather than handed out (an ID is made after its request is sent: its real age is at most
//! the one measured).

use std::collections::VecDeque;

#[derive(Debug)]
pub struct Block {
    ids: Vec<i64>,
    next: usize,
    /// A time at or before the request for this block was sent.
    made_after_ms: u64,
}

impl Block {
    pub fn new(ids: Vec<i64>, made_after_ms: u64) -> Self {
        Block {
            ids,
            next: 0,
            made_after_ms,
        }
    }

    fn left(&self) -> usize {
        self.ids.len() - self.next
    }
}

#[derive(Debug)]
pub struct Stock {
    blocks: VecDeque<Block>,
    left: usize,
    max_age_ms: u64,
    /// IDs dropped unused because they grew too old.
    dropped: u64,
}

impl Stock {
    pub fn new(max_age_ms: u64) -> Self {
        Stock {
            blocks: VecDeque::new(),
            left: 0,
            max_age_ms,
            dropped: 0,
        }
    }

    pub fn add(&mut self, block: Block) {
        self.left += block.left();
        self.blocks.push_back(block);
    }

    /// Drops the blocks that are older than `max_age` at `now_ms` (blocks arrive in order of
    /// their stamps, so only from the front).
    pub fn expire(&mut self, now_ms: u64) {
        while let Some(front) = self.blocks.front() {
            if now_ms.saturating_sub(front.made_after_ms) <= self.max_age_ms {
                break;
            }
            let front = self.blocks.pop_front().unwrap_or_else(|| unreachable!());
            self.left -= front.left();
            self.dropped += front.left() as u64;
        }
    }

    /// The next ID, if one young enough is held.
    #[inline]
    pub fn take(&mut self, now_ms: u64) -> Option<i64> {
        self.expire(now_ms);
        loop {
            let front = self.blocks.front_mut()?;
            if let Some(&id) = front.ids.get(front.next) {
                front.next += 1;
                self.left -= 1;
                return Some(id);
            }
            self.blocks.pop_front();
        }
    }

    /// Up to `out.len() - filled` IDs into `out[filled..]`; answers how many were written.
    pub fn take_into(&mut self, now_ms: u64, out: &mut [i64]) -> usize {
        self.expire(now_ms);
        let mut written = 0;
        while written < out.len() {
            let Some(front) = self.blocks.front_mut() else {
                break;
            };
            let n = front.left().min(out.len() - written);
            out[written..written + n].copy_from_slice(&front.ids[front.next..front.next + n]);
            front.next += n;
            self.left -= n;
            written += n;
            if front.left() == 0 {
                self.blocks.pop_front();
            }
        }
        written
    }

    /// Drops every ID held (a closed client's).
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.left = 0;
    }

    /// IDs held (some may be older than `max_age` until the next `expire`).
    pub fn left(&self) -> usize {
        self.left
    }

    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_out_in_order_across_blocks() {
        let mut stock = Stock::new(1000);
        stock.add(Block::new(vec![1, 2], 0));
        stock.add(Block::new(vec![10, 11, 12], 5));
        assert_eq!(stock.left(), 5);
        let taken: Vec<_> = std::iter::from_fn(|| stock.take(6)).collect();
        assert_eq!(taken, [1, 2, 10, 11, 12]);
        assert_eq!(stock.left(), 0);
        assert_eq!(stock.take(6), None);
    }

    #[test]
    fn an_id_older_than_max_age_is_never_handed_out() {
        let mut stock = Stock::new(100);
        stock.add(Block::new(vec![1, 2, 3], 0));
        stock.add(Block::new(vec![7, 8], 50));
        assert_eq!(stock.take(100), Some(1), "exactly max_age old: still given");
        assert_eq!(stock.take(101), Some(7), "1 ms over: its block is dropped");
        assert_eq!(stock.dropped(), 2);
        assert_eq!(stock.left(), 1);
        assert_eq!(stock.take(151), None, "the second block is too old too");
        assert_eq!(stock.dropped(), 3);
        assert_eq!(stock.left(), 0);
    }

    #[test]
    fn takes_many_at_once_without_old_ones() {
        let mut stock = Stock::new(100);
        stock.add(Block::new(vec![1, 2], 0));
        stock.add(Block::new(vec![5, 6, 7], 80));
        let mut out = [0; 4];
        assert_eq!(stock.take_into(150, &mut out), 3);
        assert_eq!(out[..3], [5, 6, 7]);
        stock.add(Block::new(vec![9, 10, 11], 150));
        let mut out = [0; 2];
        assert_eq!(stock.take_into(150, &mut out), 2);
        assert_eq!(out, [9, 10]);
        assert_eq!(stock.left(), 1);
    }
}

//! The sequence's slow path: a new tick read from the precise clock, a used-up tick (wait or
//! borrow), a clock step backwards, and the end of what the lease granted (handed to
//! `identity.rs`, which asks the lease with no lock held).

use std::sync::atomic::Ordering::*;

use super::{Generator, StateWord};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::options::SequencePolicy;
use crate::timestamp::format_rfc3339_ms;

impl<C: Clock, W: StateWord> Generator<C, W> {
    /// Reserves up to `want` consecutive sequence numbers of one tick: the first state, how
    /// many, and the node bits to pair them with. `None` when it would have to wait and
    /// `may_wait` is false.
    pub(super) fn reserve(&self, want: u64, may_wait: bool) -> Result<Option<(u64, u64, u64)>> {
        let mut waited = false;
        loop {
            if fork::generation() != self.fork_generation.load(SeqCst) {
                self.lease_after_fork()?;
            }
            let now_ms = self.clock.now_ms();
            let now = self.state_tick_of_ms(now_ms).ok_or_else(|| {
                Error::new(
                    ErrorCode::TimeExhausted,
                    format!(
                        "the clock ({}) is before the epoch of layout '{}' ({})",
                        format_rfc3339_ms(now_ms),
                        self.layout,
                        format_rfc3339_ms(self.layout.epoch_ms())
                    ),
                )
            })?;
            let cur = self.state.word().load(SeqCst);
            let node = self.node_bits.load(SeqCst);
            let limit = self.limit.limit();
            let cur_tick = cur >> self.seq_bits;
            let mut borrows = false;
            let first = if now > cur_tick {
                (now << self.seq_bits) | self.start_sequence(now)
            } else {
                let ahead = cur_tick - now;
                if ahead > self.ahead_allowance {
                    return Err(self.moved_backwards(ahead, cur_tick));
                }
                if cur & self.seq_mask != self.seq_mask {
                    cur + 1
                } else if self.policy == SequencePolicy::Borrow && ahead < self.max_borrow_ticks {
                    borrows = true;
                    ((cur_tick + 1) << self.seq_bits) | self.start_sequence(cur_tick + 1)
                } else if may_wait {
                    if !waited {
                        waited = true;
                        self.sequence_waits.fetch_add(1, Relaxed);
                    }
                    // Wait only as long as the bound demands: in borrow mode, until taking the
                    // next tick keeps the generator within max_borrow of the clock.
                    let target = (cur_tick + 1).saturating_sub(self.max_borrow_ticks);
                    self.clock.wait_until_ms(self.ms_of_state_tick(target));
                    continue;
                } else {
                    return Ok(None);
                }
            };
            let tick = first >> self.seq_bits;
            if tick >= limit {
                self.refresh_grant(tick, now_ms)?;
                continue;
            }
            let count = want.min(self.seq_mask - (first & self.seq_mask) + 1);
            let last = first + count - 1;
            if self
                .state
                .word()
                .compare_exchange(cur, last, SeqCst, SeqCst)
                .is_ok()
                // Else the node changed since `node` was loaded: give these up and start over.
                && self.node_bits.load(SeqCst) == node
            {
                if borrows {
                    self.ticks_borrowed.fetch_add(1, Relaxed);
                }
                return Ok(Some((first, count, node)));
            }
        }
    }

    fn moved_backwards(&self, ahead_ticks: u64, last_tick: u64) -> Error {
        let unit = self.layout.unit().millis() as u64;
        let borrowed = ahead_ticks.min(self.max_borrow_ticks);
        Error::new(
            ErrorCode::ClockMovedBackwards,
            format!(
                "the clock moved backwards by at least {} ms, more than the tolerance of {} ms; \
                 no IDs until it reaches {} again (the time of the last ID issued)",
                (ahead_ticks - borrowed) * unit,
                self.tolerance_ticks * unit,
                format_rfc3339_ms(self.ms_of_state_tick(last_tick))
            ),
        )
    }
}

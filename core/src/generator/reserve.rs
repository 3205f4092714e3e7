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
    /// Reserves up to `want` consecutive sequence numbers of one tick: the first ID and how
    /// many (each the one before plus one sequence step). `None` when it would have to wait
    /// and `may_wait` is false.
    pub(super) fn reserve(&self, want: u64, may_wait: bool) -> Result<Option<(u64, u64)>> {
        let mut waited = false;
        loop {
            if fork::generation() != self.fork_generation.load(SeqCst) {
                self.lease_after_fork()?;
            }
            let now_ms = self.clock.now_ms();
            let now = self.t_of_ms(now_ms).ok_or_else(|| {
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
            // Loaded in this order (state, node, limit): see `change_identity`.
            let cur = self.state.word().load(SeqCst);
            let node = self.node_bits.load(SeqCst);
            let limit = self.limit.limit();
            let ticks = &self.ticks;
            let cur_tick = ticks.of_id(cur);
            let mut borrows = false;
            let first = if now > cur_tick || ticks.nothing_issued(cur) {
                ticks.id(now, self.start_sequence(now << ticks.time_shift), node)
            } else {
                let ahead = cur_tick - now;
                if ahead > self.ahead_allowance {
                    return Err(self.moved_backwards(ahead, cur_tick));
                }
                // A state of other node bits (a word another node's generators share, or
                // one a change of node ID is about to raise) is used up for this generator:
                // its next ID goes to a later tick.
                let used_up = cur & ticks.seq_field == ticks.seq_field
                    || (cur ^ node) & ticks.node_field != 0;
                if !used_up {
                    cur + ticks.seq_unit
                } else if self.policy == SequencePolicy::Borrow && ahead < self.max_borrow_ticks {
                    borrows = true;
                    ticks.id(
                        cur_tick + 1,
                        self.start_sequence((cur_tick + 1) << ticks.time_shift),
                        node,
                    )
                } else if may_wait {
                    if !waited {
                        waited = true;
                        self.sequence_waits.fetch_add(1, Relaxed);
                    }
                    // Wait only as long as the bound demands: in borrow mode, until taking the
                    // next tick keeps the generator within max_borrow of the clock.
                    let target = (cur_tick + 1).saturating_sub(self.max_borrow_ticks);
                    self.clock.wait_until_ms(self.ms_of_t(target));
                    continue;
                } else {
                    return Ok(None);
                }
            };
            // The limit is the first ID of a tick: `first` is below it exactly when its tick is.
            if first >= limit {
                self.refresh_grant(ticks.of_id(first), now_ms)?;
                continue;
            }
            let count = want.min(ticks.seq_mask - ticks.seq_of(first) + 1);
            let last = first + (count - 1) * ticks.seq_unit;
            // A change of node ID changes the state word: a swap from a state read before it
            // fails, so the node bits loaded above are still this generator's.
            if self
                .state
                .word()
                .compare_exchange(cur, last, SeqCst, SeqCst)
                .is_ok()
            {
                if borrows {
                    self.ticks_borrowed.fetch_add(1, Relaxed);
                }
                return Ok(Some((first, count)));
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
                format_rfc3339_ms(self.ms_of_t(last_tick))
            ),
        )
    }
}

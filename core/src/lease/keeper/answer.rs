//! What an answer of the coordinator changes: a claim held (or refused by the clock check),
//! a claim confirmed or its mark moved, a claim lost or in doubt.

use super::state::{Holding, KeeperState, NoLease};
use super::{Keeper, Outcome, Request, Ticket, FRESH_RECORD_WAIT_MS, MAX_CLOCK_BEHIND_MS};
use crate::error::{Error, ErrorCode};
use crate::lease::coordinator::{Claim, Failure};

impl Keeper {
    /// The coordinator's answer to request `seq`, arriving at `now`.
    /// What it allows a generator now is published, and a want one waits on served.
    pub fn answer(&mut self, seq: u64, outcome: Outcome, now: i64) {
        let Some(ticket) = self.in_flight.take_if(|t| t.seq == seq) else {
            return; // given up on, or never sent: stale
        };
        if let KeeperState::Released = self.state {
            return;
        }
        self.apply_answer(ticket, outcome, now);
        self.serve_want(now);
        self.publish_held(now);
    }

    fn apply_answer(&mut self, ticket: Ticket, outcome: Outcome, now: i64) {
        let confirms = !matches!(ticket.request, Request::GiveBack(_));
        if confirms && matches!(outcome, Outcome::Done(_) | Outcome::Claimed { .. }) {
            let sample = now.saturating_sub(ticket.sent_ms).max(0);
            self.rtt_ms = sample.max(self.rtt_ms - self.rtt_ms / 8);
        }
        match (ticket.request, outcome) {
            (Request::Claim { abandoned, .. }, Outcome::Claimed { claim, local_ms }) => {
                match self.clock_check(&claim, local_ms) {
                    Ok(()) => self.hold(claim, ticket.sent_ms, now),
                    Err(error) => {
                        let since_ms = self.state.no_lease().map_or(now, |n| n.since_ms);
                        self.state = KeeperState::Refusing {
                            claim,
                            abandoned,
                            no_lease: NoLease { since_ms, error },
                            phase: self.state.phase().with_new_claim(),
                        };
                    }
                }
            }
            (Request::Claim { abandoned, .. }, Outcome::ClaimFailed(err)) => {
                if let KeeperState::Acquiring {
                    abandoned: kept, ..
                } = &mut self.state
                {
                    *kept = abandoned;
                }
                self.lose(now, err);
            }
            (Request::GiveBack(_), _) => {
                // Given back (or given up on: it expires by itself); now the refusal counts.
                if let KeeperState::Refusing { no_lease, .. } = &self.state {
                    let error = no_lease.error.clone();
                    self.lose(now, error);
                }
            }
            (Request::Renew(_), Outcome::Done(claim)) => {
                self.confirmed(ticket.sent_ms, claim, None, now)
            }
            (Request::WriteMark { new_ms, .. }, Outcome::Done(claim)) => {
                self.confirmed(ticket.sent_ms, claim, Some(new_ms), now)
            }
            (_, Outcome::Failed(Failure::Lost(why))) => {
                let err = self.lost_error(now, &why);
                self.lose(now, err);
            }
            (request, Outcome::Failed(Failure::Unanswered(_))) => {
                if let (Request::WriteMark { new_ms, .. }, Some(held)) =
                    (request, self.state.holding_mut())
                {
                    held.in_doubt_ms = Some(new_ms);
                }
                // The claim may be fine or gone: refuse until a request is confirmed again.
                self.turn_suspect();
                self.pause(now);
            }
            // An answer of the wrong kind: drop it.
            (_, _) => {}
        }
    }

    /// The clock check at claim: a coordinator whose clock is more than
    /// `MAX_CLOCK_BEHIND_MS` ahead of ours (`local_ms`, the local wall clock as the answer
    /// arrived) is refused, as IDs stamped with our clock could reuse time another host used.
    /// Records the difference for `clock_offset_ms`.
    fn clock_check(&mut self, claim: &Claim, local_ms: i64) -> Result<(), Error> {
        let Some(server_ms) = claim.server_ms else {
            return Ok(());
        };
        let behind = server_ms.saturating_sub(local_ms);
        self.server_offset_ms = Some(behind);
        if behind <= MAX_CLOCK_BEHIND_MS {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::ClockMovedBackwards,
            format!(
                "the local clock is {behind} ms behind that of {} (more than the \
                 {MAX_CLOCK_BEHIND_MS} ms allowed): IDs stamped with it could reuse time of \
                 another host; fix the clock (NTP) and start again",
                self.describe
            ),
        ))
    }

    /// A claim answered, `sent_ms` when it was asked: held, its first mark to be written.
    fn hold(&mut self, claim: Claim, sent_ms: i64, now: i64) {
        let floor_ms = self.floor_of(&claim, now);
        // The first mark is written at once, not when the generator first asks: a start
        // waits for it (`first_mark_confirmed`) instead of the generator's bounded grant
        // wait, so a coordinator slowed by many claims at once makes starts slower, never
        // refused.
        let gen_now = now.saturating_add(self.gen_offset_ms);
        let want_mark_ms = floor_ms
            .saturating_add(1)
            .max(gen_now)
            .saturating_add(self.ahead_ms());
        let phase = self.state.phase().with_new_claim();
        self.state = KeeperState::Held(Holding {
            mark_ms: claim.floor_ms,
            claim,
            confirmed_ms: sent_ms,
            floor_ms,
            want_mark_ms,
            in_doubt_ms: None,
            retry_at: i64::MIN,
            phase,
            mark_awaited_since: None,
        });
        // Re-leased while generating: the generator asks again and gets the new floor.
        self.close_fence();
    }

    /// Where IDs under a new claim start (generator time): after the mark it found; after
    /// anything a previous holder could still issue when it found none (the record is new,
    /// or was deleted or recreated while held); and never below the mark this keeper itself
    /// confirmed under the index before it lost it (a mark lowered by hand).
    fn floor_of(&self, claim: &Claim, now: i64) -> i64 {
        let found = claim.floor_ms.unwrap_or_else(|| {
            now.saturating_add(self.gen_offset_ms)
                .saturating_add(FRESH_RECORD_WAIT_MS)
        });
        match self.lost_mark {
            Some((index, mark)) if index == claim.index => found.max(mark),
            _ => found,
        }
    }

    fn confirmed(&mut self, sent_ms: i64, claim: Claim, mark_ms: Option<i64>, now: i64) {
        let half = self.term_ms / 2;
        let Some(held) = self.state.holding_mut() else {
            return;
        };
        if held.claim.index != claim.index {
            return;
        }
        held.claim = claim;
        held.confirmed_ms = held.confirmed_ms.max(sent_ms);
        if let Some(mark) = mark_ms {
            held.mark_ms = Some(held.mark_ms.map_or(mark, |m| m.max(mark)));
            held.in_doubt_ms = held.in_doubt_ms.filter(|doubt| *doubt > mark);
        }
        if now < held.confirmed_ms.saturating_add(half) {
            // Confirmed within the deadline again: grants resume.
            self.state = match std::mem::replace(&mut self.state, KeeperState::Released) {
                KeeperState::Suspect(held) => KeeperState::Held(held),
                other => other,
            };
        }
    }
}

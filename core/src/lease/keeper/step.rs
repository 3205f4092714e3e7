//! Moving the keeper on with the time: deadlines pass, requests time out, and `poll` says
//! what to send next or until when to sleep.

use super::state::KeeperState;
use super::{Keeper, Next, Outcome, Request, Ticket, CLAIM_SLACK_MS, MAX_MARK_AHEAD_MS};
use crate::lease::coordinator::{Claim, Failure};

impl Keeper {
    /// Moves the state on with the time: deadlines pass, requests time out.
    pub(super) fn advance(&mut self, now: i64) {
        if let Some(ticket) = &self.in_flight {
            if now >= ticket.deadline_ms {
                let ticket = ticket.clone();
                let failure = Failure::Unanswered(format!(
                    "no answer within {} ms",
                    ticket.deadline_ms - ticket.sent_ms
                ));
                let outcome = match ticket.request {
                    Request::Claim { .. } => {
                        Outcome::ClaimFailed(self.unavailable(&failure.to_string()))
                    }
                    _ => Outcome::Failed(failure),
                };
                self.answer(ticket.seq, outcome, now);
            }
        }
        let Some(held) = self.state.holding() else {
            return;
        };
        let (confirmed, index) = (held.confirmed_ms, held.claim.index);
        if now >= confirmed.saturating_add(self.term_ms) {
            let why = format!(
                "node index {index} was not confirmed for {} ms, the coordinator's term: it may \
                 belong to another holder now",
                now - confirmed
            );
            let err = self.lost_error(now, &why);
            self.lose(now, err);
        } else if now >= held.deadline(self.term_ms) {
            self.turn_suspect();
        }
    }

    /// What to do at `now` (the keeper's clock). A want a generator waits on is served first
    /// (what it needs written is sent now), and what the claim allows is published after.
    pub fn poll(&mut self, now: i64) -> Next {
        self.serve_want(now);
        let next = self.next_step(now);
        self.publish_held(now);
        match (next, self.want_wake(now)) {
            (Next::Sleep(at), Some(wake)) => Next::Sleep(at.min(wake)),
            (next, _) => next,
        }
    }

    fn next_step(&mut self, now: i64) -> Next {
        self.advance(now);
        if let KeeperState::Released = self.state {
            return Next::Finished;
        }
        if let Some(ticket) = &self.in_flight {
            // Wake at the deadline even while a request is out: the fence closes on time
            // however long the coordinator takes.
            let mut wake = ticket.deadline_ms;
            let next = match &self.state {
                KeeperState::Held(held) => Some(held.deadline(self.term_ms)),
                KeeperState::Suspect(held) => Some(held.confirmed_ms.saturating_add(self.term_ms)),
                _ => None,
            };
            if let Some(next) = next {
                wake = wake.min(next);
            }
            return Next::Sleep(wake);
        }
        if let Some(mark_ms) = self.release {
            return self.send_release(now, mark_ms);
        }
        match &mut self.state {
            KeeperState::Released => Next::Finished,
            KeeperState::Refusing { claim, .. } => {
                // Given back before the refusal is known: the index is free at once.
                let claim = claim.clone();
                self.send(now, self.term_ms / 2, Request::GiveBack(claim))
            }
            KeeperState::Lost { retry_at, .. } if now < *retry_at => Next::Sleep(*retry_at),
            KeeperState::Lost {
                no_lease,
                abandoned,
                phase,
                ..
            } => {
                let (no_lease, abandoned) = (Some(no_lease.clone()), abandoned.take());
                self.state = KeeperState::Acquiring {
                    abandoned: None,
                    no_lease,
                    phase: *phase,
                };
                self.send_claim(now, abandoned)
            }
            KeeperState::Acquiring { abandoned, .. } => {
                let abandoned = abandoned.take();
                self.send_claim(now, abandoned)
            }
            KeeperState::Held(held) | KeeperState::Suspect(held) if now < held.retry_at => {
                Next::Sleep(held.retry_at)
            }
            KeeperState::Held(_) | KeeperState::Suspect(_) => self.keep(now),
        }
    }

    /// Gives the index back (the keeper is then released), or ends when none is held.
    fn send_release(&mut self, now: i64, mark_ms: Option<i64>) -> Next {
        self.close_fence();
        let request = match std::mem::replace(&mut self.state, KeeperState::Released) {
            KeeperState::Held(held) | KeeperState::Suspect(held) => {
                let mark_ms = mark_ms.map(|m| m.max(held.floor_ms));
                // Never above what was confirmed: a mark brought down, or kept.
                let mark_ms = mark_ms.filter(|m| held.mark_ms.is_some_and(|c| *m < c));
                Request::Release {
                    claim: held.claim,
                    mark_ms,
                }
            }
            KeeperState::Refusing { claim, .. } => Request::Release {
                claim,
                mark_ms: None,
            },
            _ => return Next::Finished,
        };
        self.send(now, self.term_ms / 2, request)
    }

    fn send_claim(&mut self, now: i64, abandoned: Option<Claim>) -> Next {
        let request = Request::Claim {
            count: self.layout.capacity().node_ids,
            abandoned,
            mark_limit_ms: now
                .saturating_add(self.gen_offset_ms)
                .saturating_add(MAX_MARK_AHEAD_MS),
        };
        self.send(now, self.term_ms + CLAIM_SLACK_MS, request)
    }

    /// A claim held, no request out: confirm it, or move the mark, or sleep until either is
    /// due.
    fn keep(&mut self, now: i64) -> Next {
        let suspect = matches!(self.state, KeeperState::Suspect(_));
        let Some(held) = self.state.holding() else {
            return Next::Finished;
        };
        let gen_now = now.saturating_add(self.gen_offset_ms);
        let mark = held.mark_ms.unwrap_or(i64::MIN);
        let claim = held.claim.clone();
        let write = |new_ms: i64| Request::WriteMark {
            claim: claim.clone(),
            expected_ms: held.mark_ms,
            new_ms,
        };
        let busy = now < self.busy_until;
        let ahead = self.ahead_ms();
        let lead = self.lead_ms();
        let request = if suspect {
            // Only confirm: the mark never moves while the claim may be lost (see AHEAD_MS).
            Some(Request::Renew(claim.clone()))
        } else if let Some(in_doubt) = held.in_doubt_ms {
            // Settled first: a later mark written against the one before would be refused.
            Some(write(in_doubt))
        } else if held.want_mark_ms > mark {
            Some(write(held.want_mark_ms))
        } else if busy && mark.saturating_sub(gen_now) <= lead {
            Some(write(mark.max(gen_now.saturating_add(ahead))))
        } else if now >= held.confirmed_ms.saturating_add(self.term_ms / 4) {
            // A busy generator's renewal moves the mark too (any answered request of this
            // holder confirms the claim), so that no renewal delays the write it needs next.
            Some(if busy {
                write(mark.max(gen_now.saturating_add(ahead)))
            } else {
                Request::Renew(claim.clone())
            })
        } else {
            None
        };
        let confirmed = held.confirmed_ms;
        match request {
            Some(request) => self.send(now, self.term_ms / 2, request),
            None => {
                let mut wake = confirmed.saturating_add(self.term_ms / 4);
                if busy {
                    // The instant the mark comes within the lead of the generator.
                    let due = mark
                        .saturating_sub(self.gen_offset_ms)
                        .saturating_sub(lead)
                        .max(now.saturating_add(1));
                    wake = wake.min(due);
                }
                Next::Sleep(wake)
            }
        }
    }

    fn send(&mut self, now: i64, within: i64, request: Request) -> Next {
        self.seq += 1;
        let ticket = Ticket {
            seq: self.seq,
            sent_ms: now,
            deadline_ms: now.saturating_add(within.max(1)),
            request,
        };
        if !matches!(ticket.request, Request::Release { .. }) {
            self.in_flight = Some(ticket.clone());
        }
        Next::Send(ticket)
    }
}

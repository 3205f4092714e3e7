//! The keeper: the one state machine of every coordinator lease, with no I/O and no clock of
//! its own. Whoever drives it (`lease::kept`'s background thread, or a test) asks it what to
//! do now (`poll`), carries the request to a `Coordinator`, and hands the answer back
//! (`answer`), passing the keeper's clock reading each time. Generators ask it through
//! `grant`.
//!
//! Safety rests on two rules:
//! - **The deadline.** IDs are issued only until half the coordinator's term after the
//!   sending of the last request it answered with success (`Coordinator::term_ms`); past it
//!   the lease is suspect and grants are refused, and a term after it the claim is taken as
//!   lost. The other half of the term is the margin for clocks that run at different rates.
//! - **The mark.** IDs use only time up to a high-water mark the coordinator confirmed, which
//!   a successor reads and starts after; a write of a mark is compare-and-set, so a holder
//!   whose index passed to another learns it on its next write.
//!
//! Answers are matched to requests by a sequence number: an answer to a request the keeper
//! gave up on (its deadline passed) is ignored, whatever it says.

use crate::error::{Error, ErrorCode};
use crate::layout::Layout;
use crate::lease::coordinator::{Claim, Failure};
use crate::lease::node::{Fence, Grant, NodeId};
pub use crate::lease::requests::{carry, Next, Outcome, Request, Ticket};
use crate::timestamp::format_rfc3339_ms;

/// How far ahead of use the mark is written, plus the recent round trip, at most
/// `MAX_AHEAD_MS`. A coordinator hands a node ID to a successor only a term after its
/// holder's last request, by when the mark has passed, so the look-ahead costs a successor
/// nothing. The mark moves only while the claim is held and not suspect, at least half a term
/// before the claim can be lost, so a holder that takes back its own node ID after losing it
/// finds its mark at most `MAX_AHEAD_MS` less half a term (and the retry pause) ahead: within
/// the generator's default backwards tolerance (1 s) for any term, so it waits, never fails.
pub const AHEAD_MS: i64 = 1100;

/// The longest look-ahead.
pub const MAX_AHEAD_MS: i64 = 1500;

/// How far past the generator's clock a claim that finds **no mark** starts (a new row, a new
/// znode, a record deleted or recreated by hand): such a record cannot say what a previous
/// holder, still running unaware, may issue. That holder issues only up to a mark it had
/// confirmed, written at most the longest look-ahead past a tick it wanted, which is at most
/// the default borrowing (1 s) past its clock, and its clock may be the clock tolerance
/// (1 s, `kept::MAX_CLOCK_BEHIND_MS`) ahead of ours. Its next write fails on the new record,
/// so it stops there. The generator waits this long before its first ID (`Refusal::Wait`).
pub const FRESH_RECORD_WAIT_MS: i64 =
    MAX_AHEAD_MS + crate::options::DEFAULT_MAX_BORROW_MS as i64 + MAX_CLOCK_TOLERANCE_MS;

/// The clock tolerance between two holders' clocks that the fresh-record wait covers (the
/// same as the generator's default backwards tolerance and the claim's clock check).
pub const MAX_CLOCK_TOLERANCE_MS: i64 = 1000;

/// The furthest a stored mark may be past the generator's clock and still be used: as far as
/// a holder that started on a fresh record can have written it (the fresh-record wait, a
/// look-ahead, borrowing). A mark further ahead was written by a clock far ahead (a run
/// under faketime, a clock set back since): a generator under it could issue nothing until
/// then, so a claim skips that index and takes the next (as the host lease does), and
/// `worker_ids_exhausted` names it when none is left.
pub const MAX_MARK_AHEAD_MS: i64 =
    FRESH_RECORD_WAIT_MS + MAX_AHEAD_MS + crate::options::DEFAULT_MAX_BORROW_MS as i64;

/// A busy generator's mark is written again when it is this close to use, or the recent round
/// trip and a margin when that is longer: a round trip that grows suddenly from nothing to
/// half the look-ahead costs nothing, and a steady one up to about 750 ms neither.
pub const MIN_LEAD_MS: i64 = 800;

/// What the keeper thread's wake-up and a loaded machine may add to a round trip.
const LEAD_MARGIN_MS: i64 = 100;

/// The pause before a failed request is tried again.
pub const RETRY_PAUSE_MS: i64 = 200;

/// How long a claim may take past the coordinator's term (connecting, a few round trips).
pub const CLAIM_SLACK_MS: i64 = 1500;

/// The keeper's state, as tests and metrics see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No claim yet, or leasing anew; a claim request may be in flight.
    Acquiring,
    /// A claim confirmed within the deadline.
    Held,
    /// Held, with a renewal or a mark write in flight.
    Renewing,
    /// The deadline passed, a request went unanswered, or the backend raised its alarm:
    /// grants are refused while the keeper tries to confirm the claim again.
    Suspect,
    /// The claim is gone (or a term passed without confirmation): leasing anew after a pause.
    Lost,
    /// Given back; nothing more happens.
    Released,
}

/// Why `grant` did not grant.
#[derive(Debug, Clone)]
pub enum Refusal {
    /// No IDs now: the lease may be lost.
    Lost(Error),
    /// The mark must move first: wake the driver and ask again when it answered.
    NeedMark,
    /// The floor is ahead of the generator's clock (a fresh record, or a mark written ahead):
    /// ask again once the generator's clock has passed this Unix ms. The mark is being
    /// written meanwhile.
    Wait(i64),
}

#[derive(Debug, Clone)]
struct Holding {
    claim: Claim,
    /// When the last request the coordinator answered with success was sent.
    confirmed_ms: i64,
    /// The mark the coordinator confirmed.
    mark_ms: Option<i64>,
    /// IDs use time strictly after this (generator time): the stored mark the claim found, or
    /// for a record with none `FRESH_RECORD_WAIT_MS` past the claim, and never below the mark
    /// this keeper confirmed under the same index before it lost it.
    floor_ms: i64,
}

#[derive(Debug)]
pub struct Keeper {
    layout: Layout,
    describe: String,
    term_ms: i64,
    holding: Option<Holding>,
    /// Set when the held claim may be lost before its deadline said so.
    suspect: bool,
    released: bool,
    /// A release asked for, with the mark to leave (`None`: keep the written mark).
    release: Option<Option<i64>>,
    in_flight: Option<Ticket>,
    seq: u64,
    /// A claim given up on, to forget before the next claim.
    abandoned: Option<Claim>,
    /// The index and confirmed mark of the claim lost last: a claim of the same index that
    /// finds a lower mark (lowered by hand) starts after this one all the same.
    lost_mark: Option<(u64, i64)>,
    /// No request before this instant (after a failure).
    retry_at: i64,
    /// Since when (keeper clock) and why no lease is held; the first claim's error.
    lost: Option<(i64, Error)>,
    /// The generator's wish for the mark (generator time).
    want_mark_ms: i64,
    /// The generator asked recently: keep the mark ahead of it until then.
    busy_until: i64,
    /// Generator time minus keeper time, at the last grant.
    gen_offset_ms: i64,
    /// The recent round trip to the coordinator (the longest, decaying by an eighth per
    /// answer), so that the mark is written far enough ahead of a busy generator.
    rtt_ms: i64,
    fence: Option<Fence>,
}

impl Keeper {
    /// A keeper that has not claimed yet, for `layout`'s node IDs from a coordinator described
    /// by `describe` whose term is `term_ms`.
    pub fn new(layout: &Layout, describe: String, term_ms: i64) -> Keeper {
        Keeper {
            layout: layout.clone(),
            describe,
            term_ms: term_ms.max(2),
            holding: None,
            suspect: false,
            released: false,
            release: None,
            in_flight: None,
            seq: 0,
            abandoned: None,
            lost_mark: None,
            retry_at: i64::MIN,
            lost: None,
            want_mark_ms: i64::MIN,
            busy_until: i64::MIN,
            gen_offset_ms: 0,
            rtt_ms: 0,
            fence: None,
        }
    }

    /// A keeper for a forked child: the same settings, no claim, nothing of this one's state.
    pub fn after_fork(&self) -> Keeper {
        Keeper::new(&self.layout, self.describe.clone(), self.term_ms)
    }

    pub fn state(&self) -> State {
        if self.released {
            return State::Released;
        }
        match &self.holding {
            None if self.lost.is_some() && self.in_flight.is_none() => State::Lost,
            None => State::Acquiring,
            Some(_) if self.suspect => State::Suspect,
            Some(_) if self.in_flight.is_some() => State::Renewing,
            Some(_) => State::Held,
        }
    }

    /// The claim held now.
    pub fn claim(&self) -> Option<&Claim> {
        self.holding.as_ref().map(|h| &h.claim)
    }

    /// Whether the claim held has a mark past its floor confirmed: the first grant needs no
    /// write.
    pub fn first_mark_confirmed(&self) -> bool {
        self.holding
            .as_ref()
            .is_some_and(|h| h.mark_ms.is_some_and(|m| m > h.floor_ms))
    }

    /// The error of the latest failed claim (the first one is what starting reports).
    pub fn last_error(&self) -> Option<&Error> {
        self.lost.as_ref().map(|(_, e)| e)
    }

    /// How far ahead of use the mark is written: far enough that a write sent when it is
    /// `lead_ms` short, and the one after it, come back before the generator gets there.
    pub fn ahead_ms(&self) -> i64 {
        AHEAD_MS.saturating_add(self.rtt_ms).min(MAX_AHEAD_MS)
    }

    /// How close to use a busy generator's mark is written again: early enough that the
    /// answer arrives before the generator gets there, at the recent round trip.
    pub fn lead_ms(&self) -> i64 {
        self.rtt_ms
            .saturating_add(LEAD_MARGIN_MS)
            .clamp(MIN_LEAD_MS, self.ahead_ms())
    }

    /// The instant grants stop unless a request is confirmed again.
    pub fn deadline(&self) -> Option<i64> {
        self.holding
            .as_ref()
            .map(|h| h.confirmed_ms.saturating_add(self.term_ms / 2))
    }

    /// The generator's fence, closed whenever the lease may be lost.
    /// Generator time minus keeper time, for messages until the first grant tells it.
    pub fn set_gen_offset(&mut self, offset_ms: i64) {
        self.gen_offset_ms = offset_ms;
    }

    pub fn attach(&mut self, fence: Fence) {
        if self.state() != State::Held && self.state() != State::Renewing {
            fence.close();
        }
        self.fence = Some(fence);
    }

    /// The backend learned that the claim may be lost (a broken connection).
    pub fn alarm(&mut self) {
        if self.holding.is_some() {
            self.turn_suspect();
        }
    }

    /// Gives the index back at the next `poll`, with the mark brought down to `mark_ms`
    /// (never below the claim's floor), or kept when `None`.
    pub fn release(&mut self, mark_ms: Option<i64>) {
        self.release.get_or_insert(mark_ms);
        self.close_fence();
    }

    fn close_fence(&self) {
        if let Some(fence) = &self.fence {
            fence.close();
        }
    }

    fn turn_suspect(&mut self) {
        self.suspect = true;
        self.close_fence();
    }

    fn lose(&mut self, now: i64, why: Error) {
        if let Some(held) = self.holding.take() {
            let mark = held.mark_ms.unwrap_or(i64::MIN).max(held.floor_ms);
            self.lost_mark = Some((held.claim.index, mark));
            self.abandoned = Some(held.claim);
        }
        self.suspect = false;
        self.lost = Some((self.lost.as_ref().map_or(now, |l| l.0), why));
        self.retry_at = now.saturating_add(RETRY_PAUSE_MS);
        self.close_fence();
    }

    fn lost_error(&self, now: i64, why: &str) -> Error {
        let since = self.lost.as_ref().map_or(now, |l| l.0);
        Error::new(
            ErrorCode::LeaseLost,
            format!(
                "no lease of a node ID from {} since {}: {why}; flakery leases one again by \
                 itself and issues no IDs until it holds one",
                self.describe,
                format_rfc3339_ms(since.saturating_add(self.gen_offset_ms))
            ),
        )
    }

    /// Moves the state on with the time: deadlines pass, requests time out.
    fn advance(&mut self, now: i64) {
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
        let Some(held) = &self.holding else { return };
        let (confirmed, index) = (held.confirmed_ms, held.claim.index);
        if now >= confirmed.saturating_add(self.term_ms) {
            let why = format!(
                "node index {index} was not confirmed for {} ms, the coordinator's term: it may \
                 belong to another holder now",
                now - confirmed
            );
            let err = self.lost_error(now, &why);
            self.lose(now, err);
        } else if now >= confirmed.saturating_add(self.term_ms / 2) && !self.suspect {
            self.turn_suspect();
        }
    }

    fn unavailable(&self, why: &str) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!("{}: {why}", self.describe),
        )
    }

    /// What to do at `now` (the keeper's clock).
    pub fn poll(&mut self, now: i64) -> Next {
        self.advance(now);
        if self.released {
            return Next::Finished;
        }
        if let Some(ticket) = &self.in_flight {
            // Wake at the deadline even while a request is out: the fence closes on time
            // however long the coordinator takes.
            let mut wake = ticket.deadline_ms;
            if let Some(held) = &self.holding {
                let next = if self.suspect {
                    self.term_ms
                } else {
                    self.term_ms / 2
                };
                wake = wake.min(held.confirmed_ms.saturating_add(next));
            }
            return Next::Sleep(wake);
        }
        if let Some(mark_ms) = self.release {
            self.released = true;
            self.close_fence();
            let Some(held) = self.holding.take() else {
                return Next::Finished;
            };
            let floor = held.floor_ms;
            let mark_ms = mark_ms.map(|m| m.max(floor));
            // Never above what was confirmed: a mark brought down, or kept.
            let mark_ms = mark_ms.filter(|m| held.mark_ms.is_some_and(|c| *m < c));
            return self.send(
                now,
                self.term_ms / 2,
                Request::Release {
                    claim: held.claim,
                    mark_ms,
                },
            );
        }
        if now < self.retry_at {
            return Next::Sleep(self.retry_at);
        }
        let Some(held) = &self.holding else {
            let abandoned = self.abandoned.take();
            return self.send(
                now,
                self.term_ms + CLAIM_SLACK_MS,
                Request::Claim {
                    count: self.layout.capacity().node_ids,
                    abandoned,
                    mark_limit_ms: now
                        .saturating_add(self.gen_offset_ms)
                        .saturating_add(MAX_MARK_AHEAD_MS),
                },
            );
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
        let request = if self.suspect {
            // Only confirm: the mark never moves while the claim may be lost (see AHEAD_MS).
            Some(Request::Renew(claim.clone()))
        } else if self.want_mark_ms > mark {
            Some(write(self.want_mark_ms))
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

    /// The coordinator's answer to request `seq`, arriving at `now`.
    pub fn answer(&mut self, seq: u64, outcome: Outcome, now: i64) {
        let Some(ticket) = self.in_flight.take_if(|t| t.seq == seq) else {
            return; // given up on, or never sent: stale
        };
        if matches!(outcome, Outcome::Done(_) | Outcome::Claimed(_)) {
            let sample = now.saturating_sub(ticket.sent_ms).max(0);
            self.rtt_ms = sample.max(self.rtt_ms - self.rtt_ms / 8);
        }
        match (ticket.request, outcome) {
            (Request::Claim { .. }, Outcome::Claimed(claim)) => {
                let floor_ms = self.floor_of(&claim, now);
                self.holding = Some(Holding {
                    mark_ms: claim.floor_ms,
                    claim,
                    confirmed_ms: ticket.sent_ms,
                    floor_ms,
                });
                self.suspect = false;
                self.lost = None;
                // The first mark is written at once, not when the generator first asks: a
                // start waits for it (`first_mark_confirmed`) instead of the generator's
                // bounded grant wait, so a coordinator slowed by many claims at once makes
                // starts slower, never refused.
                let gen_now = now.saturating_add(self.gen_offset_ms);
                self.want_mark_ms = floor_ms
                    .saturating_add(1)
                    .max(gen_now)
                    .saturating_add(self.ahead_ms());
                // Re-leased while generating: the generator asks again and gets the new floor.
                self.close_fence();
            }
            (Request::Claim { abandoned, .. }, Outcome::ClaimFailed(err)) => {
                self.abandoned = abandoned;
                self.lose(now, err);
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
            (_, Outcome::Failed(Failure::Unanswered(_))) => {
                // The claim may be fine or gone: refuse until a request is confirmed again.
                self.turn_suspect();
                self.retry_at = now.saturating_add(RETRY_PAUSE_MS);
            }
            // A claim answered while released, or an answer of the wrong kind: drop it.
            (_, _) => {}
        }
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
        let Some(held) = &mut self.holding else {
            return;
        };
        if held.claim.index != claim.index {
            return;
        }
        held.claim = claim;
        held.confirmed_ms = held.confirmed_ms.max(sent_ms);
        if let Some(mark) = mark_ms {
            held.mark_ms = Some(held.mark_ms.map_or(mark, |m| m.max(mark)));
        }
        if self.suspect && now < held.confirmed_ms.saturating_add(half) {
            self.suspect = false;
        }
    }

    /// What a generator may issue now: `want_ms` is the tick it wants (generator time),
    /// `gen_now_ms` its clock now (not as read before a wait: the keeper learns from it where
    /// the generator is), `now` the keeper's clock.
    pub fn grant(&mut self, want_ms: i64, gen_now_ms: i64, now: i64) -> Result<Grant, Refusal> {
        self.gen_offset_ms = gen_now_ms.saturating_sub(now);
        self.busy_until = now.saturating_add(2 * AHEAD_MS);
        self.advance(now);
        if self.released || self.release.is_some() {
            return Err(Refusal::Lost(Error::new(
                ErrorCode::LeaseLost,
                format!("the lease from {} was released", self.describe),
            )));
        }
        let Some(held) = &self.holding else {
            let why = match &self.lost {
                Some((_, err)) => format!("leasing a node ID again ({})", err.message()),
                None => "leasing a node ID".into(),
            };
            return Err(Refusal::Lost(self.lost_error(now, &why)));
        };
        if self.suspect {
            let why = format!(
                "node index {} may be lost (not confirmed since {} ms ago); issuing no IDs until \
                 the coordinator confirms it or a new one is leased",
                held.claim.index,
                now - held.confirmed_ms
            );
            return Err(Refusal::Lost(self.lost_error(now, &why)));
        }
        let deadline = held.confirmed_ms.saturating_add(self.term_ms / 2);
        let mark = held.mark_ms.unwrap_or(i64::MIN);
        if gen_now_ms < held.floor_ms && held.floor_ms - gen_now_ms <= MAX_MARK_AHEAD_MS {
            // Nothing to issue before the floor: wait for it, and write the mark meanwhile.
            // (Further ahead, the generator's clock was set back since the claim: it refuses
            // with clock_moved_backwards itself.)
            let target = held
                .floor_ms
                .saturating_add(1)
                .saturating_add(self.ahead_ms());
            if target > mark {
                self.want_mark_ms = self.want_mark_ms.max(target);
            }
            return Err(Refusal::Wait(held.floor_ms));
        }
        if want_ms <= mark {
            let (datacenter_id, worker_id) = self.layout.node_of_index(held.claim.index);
            return Ok(Grant {
                node: NodeId {
                    datacenter_id,
                    worker_id,
                },
                floor_ms: held.floor_ms,
                until_ms: mark.min(gen_now_ms.saturating_add(deadline - now)),
            });
        }
        let target = want_ms.max(gen_now_ms).saturating_add(self.ahead_ms());
        self.want_mark_ms = self.want_mark_ms.max(target);
        Err(Refusal::NeedMark)
    }
}

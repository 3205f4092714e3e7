//! The keeper: the one state machine of every coordinator lease, with no I/O and no clock of
//! its own. Whoever drives it (`lease::kept`'s background thread, or a test) asks it what to
//! do now (`poll`), carries the request to a `Coordinator`, and hands the answer back
//! (`answer`), passing the keeper's clock reading each time. It publishes what a generator
//! may issue into the generator's fence after every change (`Fence::publish`), so that a
//! busy generator finds its next grant there before the one it holds runs out; a generator
//! that needs more asks through `grant`, and a want that cannot be granted at once is kept
//! and served as the keeper moves on (a mark confirmed, a floor reached, a refusal).
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
//!
//! ```text
//! keeper/
//! ├── mod.rs      the keeper and what others ask of it
//! ├── state.rs    its state: one enum whose variants carry their data
//! ├── policy.rs   every timing policy (look-ahead, waits, the clock check's bound)
//! ├── step.rs     moving on with the time: deadlines, requests to send
//! ├── answer.rs   what an answer changes, the clock check at claim included
//! └── grant.rs    what a generator may issue now
//! ```

mod answer;
mod grant;
mod policy;
mod state;
mod step;

use crate::error::{Error, ErrorCode};
use crate::layout::Layout;
use crate::lease::coordinator::Claim;
use crate::lease::node::Fence;
pub use crate::lease::requests::{carry, Next, Outcome, Request, Ticket};
use crate::timestamp::format_rfc3339_ms;

pub use policy::{
    claim_wait_ms, AHEAD_MS, CLAIM_SLACK_MS, FRESH_RECORD_WAIT_MS, GRANT_WAIT_MIN_MS,
    MARK_STALL_MS, MAX_AHEAD_MS, MAX_CLOCK_BEHIND_MS, MAX_CLOCK_TOLERANCE_MS, MAX_MARK_AHEAD_MS,
    MIN_LEAD_MS, RELEASE_WAIT_MS, RETRY_PAUSE_MS,
};
use policy::{BUSY_FOR_MS, LEAD_MARGIN_MS};
use state::{KeeperState, NoLease};
pub use state::{Phase, Refusal, State};

/// `Clone` is for the model checker (core/tests/keeper_model), which explores every branch
/// from a copy; a copy shares the attached fence, so it `detach`es it first.
#[derive(Debug, Clone)]
pub struct Keeper {
    layout: Layout,
    describe: String,
    term_ms: i64,
    state: KeeperState,
    /// A release asked for, with the mark to leave (`None`: keep the written mark). It may
    /// be asked in any state, and waits for the request in flight (a claim answered after it
    /// is given back too).
    release: Option<Option<i64>>,
    in_flight: Option<Ticket>,
    seq: u64,
    /// The index and confirmed mark of the claim lost last: a claim of the same index that
    /// finds a lower mark (lowered by hand) starts after this one all the same.
    lost_mark: Option<(u64, i64)>,
    /// The generator asked recently: keep the mark ahead of it until then.
    busy_until: i64,
    /// Generator time minus keeper time, at the last grant (before it, at the start).
    gen_offset_ms: i64,
    /// The recent round trip to the coordinator (the longest, decaying by an eighth per
    /// answer), so that the mark is written far enough ahead of a busy generator.
    rtt_ms: i64,
    /// The coordinator's clock minus the local wall clock, at the latest claim that said it.
    server_offset_ms: Option<i64>,
    fence: Option<Fence>,
    /// The furthest tick (generator time) a generator asked for and was not granted yet: served
    /// again at every step until it is granted or refused, and the answer published.
    wanted_ms: Option<i64>,
}

impl Keeper {
    /// A keeper that has not claimed yet, for `layout`'s node IDs from a coordinator described
    /// by `describe` whose term is `term_ms`.
    pub fn new(layout: &Layout, describe: String, term_ms: i64) -> Keeper {
        Keeper {
            layout: layout.clone(),
            describe,
            term_ms: term_ms.max(2),
            state: KeeperState::Acquiring {
                abandoned: None,
                no_lease: None,
                phase: Phase::Starting,
            },
            release: None,
            in_flight: None,
            seq: 0,
            lost_mark: None,
            busy_until: i64::MIN,
            gen_offset_ms: 0,
            rtt_ms: 0,
            server_offset_ms: None,
            fence: None,
            wanted_ms: None,
        }
    }

    /// A keeper for a forked child: the same settings, no claim, nothing of this one's state.
    pub fn after_fork(&self) -> Keeper {
        Keeper::new(&self.layout, self.describe.clone(), self.term_ms)
    }

    pub fn state(&self) -> State {
        match &self.state {
            KeeperState::Released => State::Released,
            KeeperState::Acquiring { .. } | KeeperState::Refusing { .. } => State::Acquiring,
            KeeperState::Lost { .. } if self.in_flight.is_some() => State::Acquiring,
            KeeperState::Lost { .. } => State::Lost,
            KeeperState::Suspect(_) => State::Suspect,
            KeeperState::Held(_) if self.in_flight.is_some() => State::Renewing,
            KeeperState::Held(_) => State::Held,
        }
    }

    /// Whether a generator was granted anything yet (a start is over at its first grant).
    pub fn phase(&self) -> Phase {
        self.state.phase()
    }

    /// The claim held now.
    pub fn claim(&self) -> Option<&Claim> {
        self.state.holding().map(|h| &h.claim)
    }

    /// Whether the claim held has a mark past its floor confirmed: the first grant needs no
    /// write.
    pub fn first_mark_confirmed(&self) -> bool {
        self.state
            .holding()
            .is_some_and(|h| h.mark_ms.is_some_and(|m| m > h.floor_ms))
    }

    /// The error of the latest failed claim (the first one is what starting reports).
    pub fn last_error(&self) -> Option<&Error> {
        self.state.no_lease().map(|n| &n.error)
    }

    /// The coordinator's clock minus the local wall clock, in ms, at the latest claim that
    /// said it (what the clock check at claim compared with `MAX_CLOCK_BEHIND_MS`).
    pub fn clock_offset_ms(&self) -> Option<i64> {
        self.server_offset_ms
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

    /// The longest a grant waits for the mark to move before it refuses: a quarter term, at
    /// least `GRANT_WAIT_MIN_MS`.
    pub fn grant_wait_ms(&self) -> i64 {
        (self.term_ms / 4).max(GRANT_WAIT_MIN_MS)
    }

    /// The longest a want the keeper kept waits for its answer (a grant or a refusal), when
    /// the keeper thread runs: the floor's wait, the mark's wait, and a term for the claim to
    /// be confirmed or lost; a start also waits for a claim lost to be leased again once (the
    /// retry pause, the claim's own bound, and a term for the new claim to be confirmed or
    /// lost). Past it, only a keeper thread that stopped leaves the want unanswered.
    pub fn answer_within_ms(&self) -> i64 {
        let within = MAX_MARK_AHEAD_MS
            .saturating_add(self.grant_wait_ms())
            .saturating_add(self.term_ms);
        if self.phase() == Phase::Started {
            return within;
        }
        within
            .saturating_add(RETRY_PAUSE_MS)
            .saturating_add(self.term_ms)
            .saturating_add(CLAIM_SLACK_MS)
            .saturating_add(self.term_ms)
    }

    /// The coordinator's term.
    pub fn term_ms(&self) -> i64 {
        self.term_ms
    }

    /// The longest a release waits for the index to be given back (`RELEASE_WAIT_MS`).
    pub fn release_wait_ms(&self) -> i64 {
        RELEASE_WAIT_MS
    }

    /// The instant grants stop unless a request is confirmed again.
    pub fn deadline(&self) -> Option<i64> {
        self.state.holding().map(|h| h.deadline(self.term_ms))
    }

    /// Generator time minus keeper time, for messages and the first marks until the first
    /// grant tells it.
    pub fn set_gen_offset(&mut self, offset_ms: i64) {
        self.gen_offset_ms = offset_ms;
    }

    /// The generator's fence, closed whenever the lease may be lost, and published into
    /// whenever the claim allows a generator more (from the next step on: `poll`, `answer`,
    /// `grant`, `publish_held`).
    pub fn attach(&mut self, fence: Fence) {
        if self.state() != State::Held && self.state() != State::Renewing {
            fence.close();
        }
        self.fence = Some(fence);
    }

    /// Takes the attached fence off: a model checker gives each copy of a keeper a fence of
    /// its own (a copy would share it, and so publish into another branch's).
    pub fn detach(&mut self) -> Option<Fence> {
        self.fence.take()
    }

    /// The backend learned that the claim may be lost (a broken connection).
    pub fn alarm(&mut self) {
        self.turn_suspect();
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

    /// A held claim becomes suspect (a suspect one stays so); the fence closes.
    fn turn_suspect(&mut self) {
        self.state = match std::mem::replace(&mut self.state, KeeperState::Released) {
            KeeperState::Held(held) => KeeperState::Suspect(held),
            other => other,
        };
        if self.state.holding().is_some() {
            self.close_fence();
        }
    }

    /// No request before `now` and the retry pause (after a request went unanswered).
    fn pause(&mut self, now: i64) {
        let until = now.saturating_add(RETRY_PAUSE_MS);
        match &mut self.state {
            KeeperState::Held(h) | KeeperState::Suspect(h) => h.retry_at = until,
            KeeperState::Lost { retry_at, .. } => *retry_at = until,
            _ => {}
        }
    }

    /// The lease is gone (or the claim failed) for `why`: a claim is sent again after the
    /// retry pause. A claim held is remembered, to forget and to start after.
    fn lose(&mut self, now: i64, why: Error) {
        let since_ms = self.state.no_lease().map_or(now, |n| n.since_ms);
        // A start's claim lost is leased again for it; a claim that failed fails the start.
        let (abandoned, phase) = match std::mem::replace(&mut self.state, KeeperState::Released) {
            KeeperState::Released => return,
            KeeperState::Held(held) | KeeperState::Suspect(held) => {
                self.lost_mark = Some((held.claim.index, held.used_up_to()));
                (Some(held.claim), held.phase.with_claim_lost())
            }
            KeeperState::Acquiring {
                abandoned, phase, ..
            }
            | KeeperState::Refusing {
                abandoned, phase, ..
            }
            | KeeperState::Lost {
                abandoned, phase, ..
            } => (abandoned, phase.with_new_claim()),
        };
        self.state = KeeperState::Lost {
            no_lease: NoLease {
                since_ms,
                error: why,
            },
            abandoned,
            retry_at: now.saturating_add(RETRY_PAUSE_MS),
            phase,
        };
        self.close_fence();
    }

    fn lost_error(&self, now: i64, why: &str) -> Error {
        let since = self.state.no_lease().map_or(now, |n| n.since_ms);
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

    fn unavailable(&self, why: &str) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!("{}: {why}", self.describe),
        )
    }
}

//! The keeper's state: one enum whose variants carry what only they need (quinn-proto's
//! connection `State` is the model), and the phase others see of it.

use crate::error::Error;
use crate::lease::coordinator::Claim;

/// The keeper's phase, as tests, metrics and the driver see it.
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
    /// A start: no grant was made yet and no claim is confirmed now: the claim is suspect (its
    /// last confirmation is more than half a term old), or it was lost and the keeper leases
    /// again (`Phase::LeasingAgain`). The want is kept until a claim is confirmed (then it is
    /// granted) or a claim fails (then refused with its error), both published.
    Unconfirmed,
}

/// How far the keeper's generator has come: starting (no grant made yet) or started. Every
/// variant of `KeeperState` but `Released` carries it, so that a claim lost and leased again
/// keeps it, and the simulation sees it (`Keeper::phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No grant was made yet: a suspect claim keeps a generator's want instead of refusing it
    /// (`Refusal::Unconfirmed`), as the start waits for the first claim, so that a start
    /// slowed past half a term between its first claim and its first grant waits for the
    /// renewal in flight instead of failing with `lease_lost`. With no claim held, a want is
    /// refused: the first claim is not answered yet, or a claim of the start failed (then
    /// with that claim's error, which is the start's).
    Starting,
    /// No grant was made yet, and the start's claim was lost (a term without confirmation on
    /// a starved machine, or the coordinator said so): the keeper leases again, and the start
    /// waits for the new claim as for the first (the want kept, `Refusal::Unconfirmed`). No ID
    /// was issued under the lost claim, so nothing is at risk; the new claim passes every
    /// check of a first one (the fresh-record wait, the floor never below the lost claim's
    /// mark, the clock check) and is bounded as the first: one that fails is the start's
    /// error (`StartingAgain`).
    LeasingAgain,
    /// No grant was made yet, on the claim leased again after the start's first was lost (or
    /// after that claim failed): as `Starting`, but a loss is the start's error (`lease_lost`)
    /// instead of leasing again. A start leases again once, so that it stays bounded: a
    /// coordinator that answers every claim later than a term after it was sent (each claim
    /// lost as it is held) would keep it leasing for ever.
    StartingAgain,
    /// A grant was made to a generator's ask: a claim that may be lost refuses at once. (A
    /// generator that took a grant published before it asked tells the keeper by asking: the
    /// ask counts, once the claim is held when it comes.) Never left but for `Released`.
    Started,
}

impl Phase {
    /// The phase once a claim is answered (held or refused) or fails: a start that was
    /// leasing again is on its second claim.
    pub(super) fn with_new_claim(self) -> Phase {
        match self {
            Phase::LeasingAgain => Phase::StartingAgain,
            other => other,
        }
    }

    /// The phase once the claim held is lost: a start's first claim is leased again.
    pub(super) fn with_claim_lost(self) -> Phase {
        match self {
            Phase::Starting => Phase::LeasingAgain,
            Phase::LeasingAgain => Phase::StartingAgain,
            other => other,
        }
    }
}

/// Since when (keeper clock) and why no lease is held: kept from the first failure until a
/// claim is held again, so that messages say how long IDs have been refused.
#[derive(Debug, Clone)]
pub(super) struct NoLease {
    pub since_ms: i64,
    pub error: Error,
}

/// A claim the coordinator answered, and what the keeper learned of it since.
#[derive(Debug, Clone)]
pub(super) struct Holding {
    pub claim: Claim,
    /// When the last request the coordinator answered with success was sent.
    pub confirmed_ms: i64,
    /// The mark the coordinator confirmed.
    pub mark_ms: Option<i64>,
    /// IDs use time strictly after this (generator time): the stored mark the claim found, or
    /// for a record with none `FRESH_RECORD_WAIT_MS` past the claim, and never below the mark
    /// this keeper confirmed under the same index before it lost it.
    pub floor_ms: i64,
    /// The mark to write next (generator time): the generator's wish, or the first mark.
    pub want_mark_ms: i64,
    /// A mark write whose answer never came (a statement that committed after its deadline):
    /// the coordinator holds this mark or the confirmed one. It is written again, exactly,
    /// before any later mark, as a coordinator takes a write of the mark it already holds as
    /// its retry, and refuses any other against the mark before it.
    pub in_doubt_ms: Option<i64>,
    /// No request before this instant (after a request went unanswered).
    pub retry_at: i64,
    /// Whether a grant was made yet.
    pub phase: Phase,
    /// Since when (keeper clock) a generator waits for the mark to move: from the first
    /// grant refused with `NeedMark` until one is made, or refused otherwise.
    pub mark_awaited_since: Option<i64>,
}

impl Holding {
    /// The instant grants stop unless a request is confirmed again.
    pub fn deadline(&self, term_ms: i64) -> i64 {
        self.confirmed_ms.saturating_add(term_ms / 2)
    }

    /// The highest mark confirmed, or the floor: what the claim may have used.
    pub fn used_up_to(&self) -> i64 {
        self.mark_ms.unwrap_or(i64::MIN).max(self.floor_ms)
    }
}

/// Where the keeper stands with its lease.
#[derive(Debug, Clone)]
pub(super) enum KeeperState {
    /// No claim held: a claim is to be sent, or is in flight.
    Acquiring {
        /// A claim given up on, to forget before the next claim (taken into the request).
        abandoned: Option<Claim>,
        /// The failure that ended the last lease or claim, when there was one.
        no_lease: Option<NoLease>,
        phase: Phase,
    },
    /// A claim answered by a coordinator whose clock is more than `MAX_CLOCK_BEHIND_MS`
    /// ahead of the generator's: it is given back, then the keeper is `Lost` with `no_lease`.
    Refusing {
        claim: Claim,
        abandoned: Option<Claim>,
        no_lease: NoLease,
        phase: Phase,
    },
    /// A claim confirmed within its deadline: grants are made.
    Held(Holding),
    /// A claim that may be lost: no grants until a request is confirmed within the deadline
    /// again, or a term passes and it is lost.
    Suspect(Holding),
    /// No claim, after a failure: a claim is sent again at `retry_at`.
    Lost {
        no_lease: NoLease,
        abandoned: Option<Claim>,
        retry_at: i64,
        phase: Phase,
    },
    /// Given back: nothing more happens.
    Released,
}

impl KeeperState {
    /// The claim held, suspect or not.
    pub fn holding(&self) -> Option<&Holding> {
        match self {
            KeeperState::Held(h) | KeeperState::Suspect(h) => Some(h),
            _ => None,
        }
    }

    pub fn holding_mut(&mut self) -> Option<&mut Holding> {
        match self {
            KeeperState::Held(h) | KeeperState::Suspect(h) => Some(h),
            _ => None,
        }
    }

    /// Whether a grant was made yet (`Started` once released: nothing is granted then).
    pub fn phase(&self) -> Phase {
        match self {
            KeeperState::Held(h) | KeeperState::Suspect(h) => h.phase,
            KeeperState::Acquiring { phase, .. }
            | KeeperState::Refusing { phase, .. }
            | KeeperState::Lost { phase, .. } => *phase,
            KeeperState::Released => Phase::Started,
        }
    }

    /// Why no lease is held, when a failure said so.
    pub fn no_lease(&self) -> Option<&NoLease> {
        match self {
            KeeperState::Acquiring { no_lease, .. } => no_lease.as_ref(),
            KeeperState::Refusing { no_lease, .. } | KeeperState::Lost { no_lease, .. } => {
                Some(no_lease)
            }
            _ => None,
        }
    }
}

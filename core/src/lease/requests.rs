//! What the keeper asks of a coordinator and what comes back: requests matched to answers by
//! a sequence number, and `carry`, which takes one request to a backend.

use crate::clock::Clock;
use crate::error::Error;
use crate::lease::coordinator::{Claim, Coordinator, Failure};

/// A request for the coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Claim the lowest free index of `0..count` whose mark is not past `mark_limit_ms`
    /// (Unix ms, the keeper's bound), after forgetting `abandoned` (a claim given up on).
    Claim {
        count: u64,
        abandoned: Option<Claim>,
        mark_limit_ms: i64,
    },
    Renew(Claim),
    WriteMark {
        claim: Claim,
        expected_ms: Option<i64>,
        new_ms: i64,
    },
    Release {
        claim: Claim,
        mark_ms: Option<i64>,
    },
    /// Give back a claim the keeper refused (the clock check at claim), and lease on: the
    /// index is freed at once, the written mark kept. Answered `Done` once carried.
    GiveBack(Claim),
}

/// A request with what the keeper needs to match its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub seq: u64,
    /// The keeper's clock when the request was handed out.
    pub sent_ms: i64,
    /// The request must be answered by then (the driver passes it to the coordinator).
    pub deadline_ms: i64,
    pub request: Request,
}

/// What the coordinator answered.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A claim, and the local wall clock (Unix ms) as its answer arrived: the keeper compares
    /// it with the coordinator's (`Claim::server_ms`), the clock check at claim.
    Claimed {
        claim: Claim,
        local_ms: i64,
    },
    ClaimFailed(Error),
    /// A renewal or write succeeded; the claim as the backend updated it.
    Done(Claim),
    Failed(Failure),
}

/// What the driver should do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Send(Ticket),
    /// Nothing to do before this instant of the keeper's clock (or before a grant wakes it).
    Sleep(i64),
    /// Released: the driver ends.
    Finished,
}

/// Carries `ticket` to `coordinator` and returns its answer (`None` for a release, which is
/// not answered). `wall` is the local wall clock, read as a claim's answer arrives.
pub fn carry(
    coordinator: &mut dyn Coordinator,
    ticket: &Ticket,
    wall: &dyn Clock,
) -> Option<Outcome> {
    let deadline = ticket.deadline_ms;
    let done = |result: Result<(), Failure>, claim: Claim| match result {
        Ok(()) => Outcome::Done(claim),
        Err(failure) => Outcome::Failed(failure),
    };
    Some(match ticket.request.clone() {
        Request::Claim {
            count,
            abandoned,
            mark_limit_ms,
        } => {
            if let Some(old) = &abandoned {
                coordinator.abandon(old);
            }
            match coordinator.claim_within(count, mark_limit_ms, deadline) {
                Ok(claim) => Outcome::Claimed {
                    claim,
                    local_ms: wall.now_ms(),
                },
                Err(err) => Outcome::ClaimFailed(err),
            }
        }
        Request::Renew(mut claim) => done(coordinator.renew(&mut claim, deadline), claim),
        Request::WriteMark {
            mut claim,
            expected_ms,
            new_ms,
        } => done(
            coordinator.write_mark(&mut claim, expected_ms, new_ms, deadline),
            claim,
        ),
        Request::GiveBack(claim) => {
            coordinator.release(claim.clone(), None, deadline);
            Outcome::Done(claim)
        }
        Request::Release { claim, mark_ms } => {
            coordinator.release(claim, mark_ms, deadline);
            return None;
        }
    })
}

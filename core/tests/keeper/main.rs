//! Every transition of the keeper, deterministic: fake clocks, the in-memory coordinator, the
//! keeper driven step by step. No sleeps, no threads.

#[path = "../keeper_sim/mod.rs"]
mod keeper_sim;

mod busy;
mod claim_checks;
mod marks;
mod published;
mod start;
mod transitions;

use flakery::lease::keeper::{
    Next, Outcome, Phase, Refusal, Request, State, Ticket, AHEAD_MS, MAX_AHEAD_MS, MIN_LEAD_MS,
};
use flakery::lease::Failure;
use flakery::{ErrorCode, Fence, Layout};
use keeper_sim::{Link, Sim, TERM};

/// How far the generator's clock may be behind the coordinator's at a claim (docs/spec.md,
/// the keeper: one second), written out so that a change of the keeper's bound fails here.
const BOUND_MS: i64 = 1000;

fn sim() -> Sim {
    Sim::new(Layout::twitter())
}

fn refused_lost(result: Result<flakery::Grant, Refusal>) -> flakery::Error {
    match result {
        Err(Refusal::Lost(err)) => err,
        other => panic!("expected lease_lost, got {other:?}"),
    }
}

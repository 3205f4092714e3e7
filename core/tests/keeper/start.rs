//! A start: between the first claim (its first mark confirmed) and the generator's first
//! grant, a loaded machine can let the deadline pass while a renewal is out. The first grant
//! waits for the claim to be confirmed again, as the start waits for the first claim, and is
//! refused only when the claim is lost; after it, a suspect claim refuses at once
//! (`transitions.rs`).

use super::*;

/// A holder whose claim and first mark were answered at once (what a start waits for), and
/// the renewal a quarter term later handed out, not yet answered; then, a millisecond past
/// the deadline (the starting thread was not scheduled for half a term), the generator's
/// fence attached (as `Generator::build` does after the start) and its first grant asked.
/// Returns the fence, the instant of the last confirmation, the renewal and the want.
fn first_ask_past_the_deadline(sim: &Sim, a: &mut keeper_sim::Holder) -> (Fence, i64, Ticket, i64) {
    a.settle(sim);
    assert!(a.keeper.first_mark_confirmed());
    let confirmed = sim.now();
    sim.clock.advance(TERM / 4);
    let renewal = a.take(sim);
    assert!(matches!(renewal.request, Request::Renew(_)), "{renewal:?}");
    sim.clock.set(confirmed + TERM / 2 + 1);
    let fence = Fence::default();
    a.keeper.attach(fence.clone());
    let wall = a.wall(sim);
    let first = a.keeper.grant(wall, wall, sim.now());
    assert!(
        matches!(first, Err(Refusal::Unconfirmed)),
        "a start refused while its renewal is out: {first:?}"
    );
    assert_eq!(a.state(), State::Suspect);
    assert!(a.keeper.is_wanted(), "the start's want was dropped");
    assert!(fence.published().refusal.is_none(), "a refusal published");
    (fence, confirmed, renewal, wall)
}

/// The first grant is asked a millisecond past the deadline (the generator's thread was not
/// scheduled for half a term); the renewal is answered after that, within half a term of its
/// sending. The want is kept, nothing is refused, and the grant is published once the claim is
/// confirmed again. Caught when the keeper refused a suspect claim's first grant at once (the
/// start failed with `lease_lost ... not confirmed since 5001 ms ago`, as the tests/db test
/// `a_paused_holder_is_lease_lost_...` did at a load average of 34, with 1001 ms on its 2 s
/// term).
#[test]
fn a_first_grant_asked_past_the_deadline_waits_for_the_late_renewal_and_is_granted() {
    let sim = sim();
    let mut a = sim.holder();
    let (fence, _, renewal, wall) = first_ask_past_the_deadline(&sim, &mut a);
    // The renewal's answer, late for the deadline it was sent to keep, within its own.
    sim.clock.set(renewal.sent_ms + TERM / 2 - 1);
    let outcome = a.deliver(&renewal).expect("an answer");
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert_eq!(a.state(), State::Held);
    // The mark to cover the want (half a term past the first one) is written, and the grant
    // published for the waiting generator.
    a.settle(&sim);
    let published = fence.published();
    assert!(published.refusal.is_none(), "{:?}", published.refusal);
    let grant = published.grant.expect("a grant published");
    assert!(grant.until_ms >= wall, "{grant:?} does not cover {wall}");
    assert!(!a.keeper.is_wanted());
}

/// The renewal is never answered: a term after the last confirmation the claim is lost, and
/// the start's want is refused then (published, as the start then fails with the error),
/// not before, and not kept.
#[test]
fn a_first_grant_is_refused_when_the_suspect_claim_is_lost() {
    let sim = sim();
    let mut a = sim.holder();
    let (fence, confirmed, _unanswered, _) = first_ask_past_the_deadline(&sim, &mut a);
    for at in [confirmed + TERM / 2 + 100, confirmed + TERM - 1] {
        sim.clock.set(at);
        a.keeper.poll(at);
        assert!(fence.published().refusal.is_none(), "refused at {at}");
    }
    sim.clock.set(confirmed + TERM);
    a.keeper.poll(sim.now());
    assert_eq!(a.state(), State::Lost);
    let (_, error) = fence.published().refusal.expect("the start refused");
    assert_eq!(error.code(), ErrorCode::LeaseLost, "{error}");
    assert!(!a.keeper.is_wanted());
}

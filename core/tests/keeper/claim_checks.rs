//! What the keeper refuses at a claim and at a grant: a coordinator clock ahead past the
//! bound, a refused claim given back, a mark not confirmed within the grant wait.

use super::*;

/// The clock check at claim: a coordinator whose clock is more than `BOUND_MS`
/// ahead of the generator's is refused with `clock_moved_backwards` (IDs stamped with our
/// clock could reuse time another host used), the claim is given back at once, and the
/// keeper keeps trying; one within the bound is held.
#[test]
fn a_claim_from_a_coordinator_whose_clock_is_ahead_past_the_bound_is_given_back_and_refused() {
    use flakery::lease::keeper::RETRY_PAUSE_MS;
    let sim = sim();
    // The coordinator's clock (the in-memory one answers with the keeper's) at Unix WALL0.
    sim.clock.set(keeper_sim::WALL0);

    let behind = BOUND_MS + 1;
    let mut a = sim.holder_with_wall_offset(-behind);
    let claim = a.take(&sim);
    assert!(matches!(claim.request, Request::Claim { .. }), "{claim:?}");
    let outcome = a.deliver(&claim).unwrap();
    assert!(sim.board.holder(0).is_some(), "claimed");
    a.keeper.answer(claim.seq, outcome, sim.now());
    assert_eq!(a.keeper.clock_offset_ms(), Some(behind));
    // Not held, and no grant, while the claim is given back.
    assert_eq!(a.state(), State::Acquiring);
    assert_eq!(a.keeper.claim(), None);
    refused_lost(a.keeper.grant(a.wall(&sim), a.wall(&sim), sim.now()));
    let give_back = a.take(&sim);
    assert!(
        matches!(give_back.request, Request::GiveBack(_)),
        "{give_back:?}"
    );
    let outcome = a.deliver(&give_back).unwrap();
    assert_eq!(
        sim.board.holder(0),
        None,
        "given back at once, not left to expire"
    );
    a.keeper.answer(give_back.seq, outcome, sim.now());
    assert_eq!(a.state(), State::Lost);
    let err = a.keeper.last_error().unwrap();
    assert_eq!(err.code(), ErrorCode::ClockMovedBackwards, "{err}");
    assert_eq!(
        err.message(),
        format!(
            "the local clock is {behind} ms behind that of test coordinator (more than the \
             1000 ms allowed): IDs stamped with it could reuse time of another \
             host; fix the clock (NTP) and start again"
        )
    );
    let err = refused_lost(a.keeper.grant(a.wall(&sim), a.wall(&sim), sim.now()));
    assert!(err.message().contains("ms behind that of"), "{err}");
    // It tries again after the pause, and is refused again while the clocks disagree.
    assert_eq!(
        a.keeper.poll(sim.now()),
        Next::Sleep(sim.now() + RETRY_PAUSE_MS)
    );
    sim.clock.advance(RETRY_PAUSE_MS);
    a.settle(&sim);
    assert_eq!(a.state(), State::Lost);
    assert_eq!(sim.board.holder(0), None);

    // At the bound: held, and grants are made.
    let mut b = sim.holder_with_wall_offset(-BOUND_MS);
    b.settle(&sim);
    assert_eq!(b.state(), State::Held);
    assert_eq!(b.keeper.clock_offset_ms(), Some(BOUND_MS));
    assert_eq!(b.keeper.last_error().map(|e| e.code()), None);
    let grant = b.grant_now(&sim).unwrap();
    assert_eq!(grant.floor_ms, keeper_sim::OLD_MARK);
}

/// A release asked while a refused claim is still to be given back gives it back itself:
/// the index is free at once, and the keeper ends.
#[test]
fn a_release_before_the_refused_claim_is_given_back_gives_it_back() {
    let sim = sim();
    sim.clock.set(keeper_sim::WALL0);
    let mut a = sim.holder_with_wall_offset(-BOUND_MS - 500);
    let claim = a.take(&sim);
    let outcome = a.deliver(&claim).unwrap();
    a.keeper.answer(claim.seq, outcome, sim.now());
    assert!(sim.board.holder(0).is_some());
    a.keeper.release(None);
    let release = a.take(&sim);
    assert!(
        matches!(release.request, Request::Release { mark_ms: None, .. }),
        "{release:?}"
    );
    assert!(a.deliver(&release).is_none(), "a release is not answered");
    assert_eq!(sim.board.holder(0), None);
    assert_eq!(a.state(), State::Released);
    assert_eq!(a.keeper.poll(sim.now()), Next::Finished);
}

/// The grant wait, decided by the keeper: a generator that asks for a mark the coordinator
/// does not confirm is refused with `lease_lost` once it has waited a quarter term (at least
/// a second), while the claim is still held; the next ask waits anew.
#[test]
fn a_mark_not_confirmed_within_the_grant_wait_is_refused_and_the_next_ask_waits_anew() {
    use flakery::lease::keeper::Keeper;
    // A quarter term, at least a second (docs/spec.md, the keeper's timing).
    const GRANT_WAIT: i64 = TERM / 4;
    let short = Keeper::new(&Layout::twitter(), "test coordinator".into(), 2000);
    assert_eq!(short.grant_wait_ms(), 1000);

    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    // Past the mark: the generator needs a write, which the coordinator never answers.
    let far = a.wall(&sim) + 10 * AHEAD_MS;
    let ask = |a: &mut keeper_sim::Holder| a.keeper.grant(far, a.wall(&sim), sim.now());
    assert!(matches!(ask(&mut a), Err(Refusal::NeedMark)));
    let write = a.take(&sim);
    assert!(
        matches!(write.request, Request::WriteMark { .. }),
        "{write:?}"
    );
    sim.clock.advance(GRANT_WAIT - 1);
    assert!(matches!(ask(&mut a), Err(Refusal::NeedMark)));
    assert_eq!(a.keeper.mark_awaited_ms(sim.now()), GRANT_WAIT - 1);
    sim.clock.advance(1);
    let err = refused_lost(ask(&mut a));
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    assert_eq!(
        err.message(),
        format!("test coordinator did not confirm the high-water mark within {GRANT_WAIT} ms")
    );
    // Still held (the write's deadline, half a term, has not passed): a new wait begins.
    assert_eq!(a.state(), State::Renewing);
    assert_eq!(a.keeper.mark_awaited_ms(sim.now()), 0);
    assert!(matches!(ask(&mut a), Err(Refusal::NeedMark)));
    sim.clock.advance(GRANT_WAIT - 1);
    assert!(matches!(ask(&mut a), Err(Refusal::NeedMark)));
}

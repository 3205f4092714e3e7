//! Acquire, renew, lose, release and fork: the keeper's transitions one by one.

use super::*;

#[test]
fn acquires_writes_the_mark_ahead_and_grants_within_it() {
    let sim = sim();
    let mut a = sim.holder();
    assert_eq!(a.state(), State::Acquiring);
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    assert_eq!(a.keeper.claim().unwrap().index, 0);
    let wall = a.wall(&sim);
    // The first mark is written as soon as the claim is answered, before any grant asks (a
    // start waits for it): the first grant needs no write.
    assert!(a.keeper.first_mark_confirmed());
    let requests = sim.board.requests();
    let grant = a.keeper.grant(wall, wall, sim.now()).unwrap();
    assert_eq!(sim.board.requests(), requests);
    assert_eq!(grant.until_ms, wall + AHEAD_MS);
    assert_eq!(
        sim.board.slot(0).mark,
        (wall + AHEAD_MS).to_string().as_bytes()
    );
    assert_eq!(grant.floor_ms, keeper_sim::OLD_MARK);
}

#[test]
fn renews_before_the_deadline_and_keeps_granting() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    a.grant_now(&sim).unwrap();
    for _ in 0..20 {
        // Idle for a quarter term: a renewal goes out and is confirmed.
        sim.clock.advance(TERM / 4);
        let next = a.step(&sim);
        assert!(
            matches!(next, Next::Send(ref t) if matches!(t.request, Request::Renew(_))),
            "{next:?}"
        );
        assert_eq!(a.state(), State::Held);
        assert_eq!(a.keeper.deadline(), Some(sim.now() + TERM / 2));
    }
    a.grant_now(&sim).unwrap();
}

#[test]
fn a_missed_renewal_is_lease_lost_at_the_deadline_exactly() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let confirmed = sim.now();
    let mark = a.grant_now(&sim).unwrap().until_ms;
    sim.board.set_partitioned(true);
    sim.clock.set(confirmed + TERM / 2 - 1);
    let wall = a.wall(&sim);
    let grant = a.keeper.grant(mark, wall, sim.now()).unwrap();
    assert_eq!(grant.until_ms, mark);
    sim.clock.set(confirmed + TERM / 2);
    let wall = a.wall(&sim);
    let err = refused_lost(a.keeper.grant(mark, wall, sim.now()));
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    assert_eq!(a.state(), State::Suspect);
    // A term after the last confirmation the claim is taken as lost.
    sim.clock.set(confirmed + TERM);
    a.keeper.poll(sim.now());
    assert_eq!(a.state(), State::Lost);
}

#[test]
fn after_a_partition_longer_than_the_term_another_holder_takes_over_and_the_first_recovers() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let first = a.grant_now(&sim).unwrap();
    let a_mark = first.until_ms;
    sim.board.set_partitioned(true);
    // The renewals go unanswered (each waits for its deadline on the fake clock).
    for _ in 0..10 {
        sim.clock.advance(TERM / 4);
        a.step(&sim);
    }
    assert_eq!(a.state(), State::Lost);
    let err = refused_lost(a.grant_now(&sim));
    assert_eq!(err.code(), ErrorCode::LeaseLost);
    sim.board.set_partitioned(false);
    // Meanwhile a successor took index 0, after the first holder's mark.
    let mut b = sim.holder();
    b.settle(&sim);
    assert_eq!(b.keeper.claim().unwrap().index, 0);
    let successor = b.grant_now(&sim).unwrap();
    assert_eq!(successor.floor_ms, a_mark);
    // The first holder leases anew: the next free index.
    sim.clock.advance(1000);
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    assert_eq!(a.keeper.claim().unwrap().index, 1);
    a.grant_now(&sim).unwrap();
}

#[test]
fn a_busy_generator_finds_the_mark_written_before_it_gets_there() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let mut grant = a.grant_now(&sim).unwrap();
    for _ in 0..100 {
        sim.clock.advance(AHEAD_MS / 5);
        let wall = a.wall(&sim);
        // The generator asks only when it reaches its limit; the keeper stays ahead of it.
        if wall > grant.until_ms {
            panic!("the generator passed the mark it was granted");
        }
        a.keeper.grant(wall, wall, sim.now()).unwrap();
        a.settle(&sim);
        grant = a.keeper.grant(wall, wall, sim.now()).unwrap();
        let stored: i64 = String::from_utf8(sim.board.slot(0).mark)
            .unwrap()
            .parse()
            .unwrap();
        assert!(grant.until_ms <= stored, "granted past the stored mark");
        assert!(stored - wall > MIN_LEAD_MS - AHEAD_MS / 5);
    }
}

#[test]
fn a_stale_answer_after_a_newer_one_changes_nothing() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    a.grant_now(&sim).unwrap();
    sim.clock.advance(TERM / 4);
    let old = a.take(&sim);
    // It times out; the keeper gives up on it, turns suspect, and later renews again.
    sim.clock.set(old.deadline_ms);
    a.keeper.poll(sim.now());
    assert_eq!(a.state(), State::Suspect);
    sim.clock.advance(300);
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    // The old request's answer finally arrives while a newer request is out, saying the
    // claim is lost: ignored, and the newer request is still the one awaited.
    sim.clock.advance(TERM / 4);
    let newer = a.take(&sim);
    let index = a.keeper.claim().unwrap().index;
    a.keeper.answer(
        old.seq,
        Outcome::Failed(Failure::Lost("late".into())),
        sim.now(),
    );
    assert_eq!(a.state(), State::Renewing);
    assert_eq!(a.keeper.claim().unwrap().index, index);
    // ... or success, which must not move the deadline either.
    let deadline = a.keeper.deadline();
    a.keeper.answer(
        old.seq,
        Outcome::Done(a.keeper.claim().unwrap().clone()),
        sim.now(),
    );
    assert_eq!(a.keeper.deadline(), deadline);
    assert_eq!(a.state(), State::Renewing);
    let outcome = a.deliver(&newer).unwrap();
    a.keeper.answer(newer.seq, outcome, sim.now());
    assert_eq!(a.state(), State::Held);
    assert_eq!(a.keeper.deadline(), Some(newer.sent_ms + TERM / 2));
}

#[test]
fn release_racing_a_renewal_refuses_at_once_and_frees_the_index() {
    let sim = sim();
    let mut a = sim.holder();
    let fence = Fence::default();
    a.keeper.attach(fence.clone());
    a.settle(&sim);
    let grant = a.grant_now(&sim).unwrap();
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    assert_eq!(a.state(), State::Renewing);
    a.keeper.release(Some(grant.until_ms - 100));
    assert!(matches!(a.grant_now(&sim), Err(Refusal::Lost(_))));
    // The renewal's answer comes back after the release: it revives nothing.
    let outcome = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert!(matches!(a.grant_now(&sim), Err(Refusal::Lost(_))));
    let next = a.step(&sim);
    assert!(matches!(next, Next::Send(ref t) if matches!(t.request, Request::Release { .. })));
    assert_eq!(a.state(), State::Released);
    assert_eq!(a.keeper.poll(sim.now()), Next::Finished);
    assert_eq!(sim.board.holder(0), None, "index 0 free at once");
    assert_eq!(
        sim.board.slot(0).mark,
        (grant.until_ms - 100).to_string().as_bytes()
    );
}

#[test]
fn fork_in_any_state_starts_the_child_from_nothing() {
    let sim = sim();
    let mut states = Vec::new();
    let mut a = sim.holder();
    let mut check = |a: &flakery::lease::keeper::Keeper, sim: &Sim| {
        states.push(a.state());
        let mut child = keeper_sim::Holder {
            keeper: a.after_fork(),
            coordinator: Box::new(sim.board.connect()),
            wall_offset: keeper_sim::WALL0,
            clock: sim.clock.clone(),
        };
        assert_eq!(child.state(), State::Acquiring);
        assert!(child.keeper.claim().is_none());
        assert!(matches!(child.grant_now(sim), Err(Refusal::Lost(_))));
        child.settle(sim);
        let index = child.keeper.claim().unwrap().index;
        if let Some(parent) = a.claim() {
            assert_ne!(index, parent.index, "the child shares its parent's index");
        }
        child.keeper.release(None);
        child.settle(sim);
    };
    check(&a.keeper, &sim); // acquiring
    a.settle(&sim);
    check(&a.keeper, &sim); // held
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    check(&a.keeper, &sim); // renewing
    let out = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, out, sim.now());
    a.keeper.alarm();
    check(&a.keeper, &sim); // suspect
    sim.clock.advance(TERM);
    a.keeper.poll(sim.now());
    check(&a.keeper, &sim); // lost
    a.keeper.release(None);
    a.keeper.poll(sim.now());
    check(&a.keeper, &sim); // released
    assert_eq!(
        states,
        [
            State::Acquiring,
            State::Held,
            State::Renewing,
            State::Suspect,
            State::Lost,
            State::Released
        ]
    );
}

#[test]
fn an_alarm_fences_at_once_and_a_confirmed_renewal_lifts_it() {
    let sim = sim();
    let mut a = sim.holder();
    let fence = Fence::default();
    a.keeper.attach(fence.clone());
    a.settle(&sim);
    a.grant_now(&sim).unwrap();
    a.keeper.alarm();
    assert_eq!(a.state(), State::Suspect);
    assert!(matches!(a.grant_now(&sim), Err(Refusal::Lost(_))));
    // The generator is busy, but the mark never moves while the claim may be lost: the
    // confirming request is a renewal.
    let next = a.step(&sim);
    assert!(matches!(next, Next::Send(ref t) if matches!(t.request, Request::Renew(_))));
    assert_eq!(a.state(), State::Held);
    a.grant_now(&sim).unwrap();
    // Idle for a while, an alarm is answered by a plain renewal.
    sim.clock.advance(2 * MAX_AHEAD_MS);
    a.settle(&sim);
    a.keeper.alarm();
    let next = a.step(&sim);
    assert!(matches!(next, Next::Send(ref t) if matches!(t.request, Request::Renew(_))));
    assert_eq!(a.state(), State::Held);
}

#[test]
fn a_write_whose_answer_was_lost_is_settled_by_its_retry() {
    let sim = sim();
    let mut a = sim.holder();
    a.step(&sim); // the claim
    sim.board.lose_answers(1);
    let wall = a.wall(&sim);
    a.step(&sim); // the first mark, applied, its answer lost
    assert_eq!(a.state(), State::Suspect);
    // No grant before the claim is confirmed again; at a start the want is kept for then
    // (`start.rs`).
    assert!(matches!(
        a.keeper.grant(wall, wall, sim.now()),
        Err(Refusal::Unconfirmed)
    ));
    sim.clock.advance(300);
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    a.grant_now(&sim).unwrap();
}

/// A write applied whose answer was lost (a statement that committed after its deadline on a
/// loaded machine) is in doubt: the coordinator holds its mark or the one before. The keeper
/// writes that same mark again before any later one (the coordinator takes a write whose
/// mark is already stored as its retry), so a generator that asks for more meanwhile costs
/// nothing. Caught when the keeper wrote the generator's later mark first, against the mark
/// before the lost write: the coordinator refused it as another holder's, and the claim was
/// lost.
#[test]
fn a_write_in_doubt_is_retried_before_a_later_mark_is_written() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let grant = a.grant_now(&sim).unwrap();
    let wall = a.wall(&sim);
    assert!(matches!(
        a.keeper.grant(grant.until_ms + 1, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    sim.board.lose_answers(1);
    a.step(&sim); // the write, applied, its answer lost
    assert_eq!(a.state(), State::Suspect);
    sim.clock.advance(300);
    a.step(&sim); // a renewal: held again
    assert_eq!(a.state(), State::Held);
    // The generator wants further still before the write in doubt is retried.
    let wall = a.wall(&sim);
    let further = grant.until_ms + 200;
    assert!(matches!(
        a.keeper.grant(further, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    let granted = a.keeper.grant(further, wall, sim.now()).unwrap();
    assert!(granted.until_ms >= further, "{granted:?}");
}

#[test]
fn a_mark_written_by_another_holder_is_lost_at_once() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    a.grant_now(&sim).unwrap();
    sim.board.store_mark(0, b"1800000000000");
    sim.clock.advance(AHEAD_MS);
    let wall = a.wall(&sim);
    let _ = a.keeper.grant(wall, wall, sim.now());
    a.step(&sim);
    assert_eq!(a.state(), State::Lost);
    let err = refused_lost(a.grant_now(&sim));
    assert!(err.message().contains("another holder"), "{err}");
}

#[test]
fn the_first_claims_error_is_kept_for_the_caller() {
    let sim = Sim::new(Layout::parse("time:41,worker:1,sequence:12;epoch=0").unwrap());
    let mut a = sim.holder();
    let mut b = sim.holder();
    let mut c = sim.holder();
    a.settle(&sim);
    b.settle(&sim);
    c.step(&sim);
    assert_eq!(c.state(), State::Lost);
    let err = c.keeper.last_error().unwrap();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
}

//! Every transition of the keeper, deterministic: fake clocks, the in-memory coordinator, the
//! keeper driven step by step. No sleeps, no threads.

mod keeper_sim;

use flakery::lease::keeper::{
    Next, Outcome, Refusal, Request, State, Ticket, AHEAD_MS, MAX_AHEAD_MS, MIN_LEAD_MS,
};
use flakery::lease::Failure;
use flakery::{ErrorCode, Fence, Layout};
use keeper_sim::{Sim, TERM};

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
    assert!(matches!(
        a.keeper.grant(wall, wall, sim.now()),
        Err(Refusal::Lost(_))
    ));
    sim.clock.advance(300);
    a.settle(&sim);
    assert_eq!(a.state(), State::Held);
    a.grant_now(&sim).unwrap();
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

/// A generator that wants a new tick every millisecond for `run_ms`, against a coordinator
/// that answers each request `rtt(sent)` ms after it was sent; the keeper driven as its
/// thread drives it (at the instant `poll` names, after each answer, after a refused grant).
/// Returns each wait of the generator for its mark (when it began, how long) and the number
/// of requests sent.
fn run_busy(run_ms: i64, rtt: impl Fn(i64) -> i64) -> (Vec<(i64, i64)>, usize) {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let start = sim.now();
    let mut until = i64::MIN;
    let mut waiting_since = None;
    let mut waits = Vec::new();
    let mut in_flight: Option<(Ticket, i64)> = None;
    let mut wake_at = start;
    let mut sent = 0;
    while sim.now() - start < run_ms {
        let now = sim.now();
        let mut poll = now >= wake_at;
        if let Some((ticket, due)) = in_flight.take_if(|(_, due)| now >= *due) {
            let _ = due;
            let outcome = a.deliver(&ticket).expect("an answer");
            a.keeper.answer(ticket.seq, outcome, now);
            poll = true;
        }
        let wall = a.wall(&sim);
        if waiting_since.is_some() || wall > until {
            match a.keeper.grant(wall, wall, now) {
                Ok(grant) => {
                    until = grant.until_ms;
                    if let Some(since) = waiting_since.take() {
                        waits.push((since - start, now - since));
                    }
                }
                Err(Refusal::NeedMark) => {
                    waiting_since.get_or_insert(now);
                    poll = true;
                }
                Err(Refusal::Lost(err)) => panic!("lost at {}: {err}", now - start),
                Err(Refusal::Wait(floor)) => panic!("waits for the floor {floor}"),
            }
        }
        while poll {
            match a.keeper.poll(now) {
                Next::Send(ticket) => {
                    sent += 1;
                    in_flight = Some((ticket, now + rtt(now - start)));
                }
                Next::Sleep(at) => {
                    wake_at = at;
                    poll = false;
                }
                Next::Finished => panic!("finished"),
            }
        }
        sim.clock.advance(1);
    }
    (waits, sent)
}

#[test]
fn a_busy_generator_never_waits_for_its_mark_on_a_slow_link() {
    // Once the keeper has measured the round trip (the first grant waits for the first
    // mark, and a slow link may cost a short wait or two while the keeper learns it), none.
    for rtt in [1, 100, 300, 500, 600, 750] {
        let (waits, _) = run_busy(20_000, |_| rtt);
        assert!(
            waits.iter().all(|&(at, _)| at < 2_000),
            "round trip {rtt} ms: the generator waited for its mark {waits:?}"
        );
    }
}

#[test]
fn a_round_trip_that_grows_suddenly_to_the_lead_costs_nothing() {
    let jump = AHEAD_MS / 2;
    let (waits, _) = run_busy(20_000, |t| if t < 5_000 { 2 } else { jump });
    assert!(
        waits.iter().all(|&(at, _)| at == 0),
        "waited for the mark after the round trip grew to {jump} ms: {waits:?}"
    );
    // Longer: one wait (the second write comes back two round trips after the first was
    // sent, which the old look-ahead did not cover), then none.
    let (waits, _) = run_busy(20_000, |t| if t < 5_000 { 2 } else { 750 });
    let later: Vec<_> = waits.iter().filter(|w| w.0 > 0).collect();
    assert!(
        later.len() <= 1
            && later
                .iter()
                .all(|w| w.0 < 7_000 && w.1 <= 2 * 750 - AHEAD_MS),
        "{later:?}"
    );
}

#[test]
fn a_busy_generator_costs_a_few_writes_a_second() {
    let (_, sent) = run_busy(10_000, |_| 1);
    // Written AHEAD_MS ahead when MIN_LEAD_MS short of it: one write per 300 ms.
    let per_second = sent as f64 / 10.0;
    assert!(
        (2.0..=4.0).contains(&per_second),
        "{per_second} requests a second"
    );
}

#[test]
fn slow_answers_write_the_mark_sooner_but_never_further_ahead() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    assert_eq!(a.keeper.lead_ms(), MIN_LEAD_MS);
    // A renewal answered 700 ms after it was sent: the next write goes out 800 ms short.
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    sim.clock.advance(700);
    let outcome = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert_eq!(a.keeper.lead_ms(), MIN_LEAD_MS.max(800));
    let wall = a.wall(&sim);
    assert!(matches!(
        a.keeper.grant(wall, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    a.settle(&sim);
    let grant = a.keeper.grant(wall, wall, sim.now()).unwrap();
    assert_eq!(grant.until_ms, wall + MAX_AHEAD_MS.min(AHEAD_MS + 700));
    // Very slow answers: the lead reaches the look-ahead (writes follow one another), and
    // the look-ahead stays below the generator's backwards tolerance.
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    sim.clock.advance(2000);
    let outcome = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert_eq!(a.keeper.ahead_ms(), MAX_AHEAD_MS);
    assert_eq!(a.keeper.lead_ms(), MAX_AHEAD_MS);
}

/// A busy holder on a link with round trip `rtt` whose connection breaks at `break_at`: the
/// answers are lost from then until the claim is, when the link heals. Returns how far ahead
/// of the generator's clock the floor is when the holder has taken its node ID back.
fn floor_ahead_after_taking_back(term: i64, rtt: i64, break_at: i64) -> i64 {
    use flakery::lease::keeper::{carry, Keeper};
    use flakery::lease::Board;
    use flakery::{Clock, FakeClock};
    use std::sync::Arc;
    let clock = FakeClock::new(0);
    let board = Board::new(Arc::new(clock.clone()), term);
    board.store_mark(0, keeper_sim::OLD_MARK.to_string().as_bytes());
    let mut coordinator = board.connect();
    let mut keeper = Keeper::new(&Layout::twitter(), "test".into(), term);
    keeper.set_gen_offset(keeper_sim::WALL0);
    let wall = |clock: &FakeClock| clock.now_ms() + keeper_sim::WALL0;
    // Requests the keeper gave up on still land.
    let mut in_flight: Vec<(Ticket, i64)> = Vec::new();
    let mut wake_at = 0;
    let mut was_lost = false;
    for _ in 0..20_000 {
        let now = clock.now_ms();
        let lossy = now >= break_at && !was_lost;
        let mut poll = now >= wake_at;
        if now == break_at {
            keeper.alarm();
            poll = true;
        }
        for (ticket, _) in in_flight.extract_if(.., |(_, due)| now >= *due) {
            let at_wall = FakeClock::new(wall(&clock));
            let outcome = carry(&mut coordinator, &ticket, &at_wall).expect("an answer");
            if !lossy {
                keeper.answer(ticket.seq, outcome, now);
                poll = true;
            }
        }
        was_lost |= keeper.state() == State::Lost;
        match keeper.grant(wall(&clock), wall(&clock), now) {
            Ok(grant) if was_lost => {
                assert_eq!(grant.node.worker_id, 0, "took its own node ID back");
                return grant.floor_ms - wall(&clock);
            }
            Ok(_) => {}
            Err(_) => poll = true,
        }
        while poll {
            match keeper.poll(now) {
                Next::Send(ticket) => {
                    let rtt = if was_lost { 1 } else { rtt };
                    in_flight.push((ticket, now + rtt));
                }
                Next::Sleep(at) => {
                    wake_at = at;
                    poll = false;
                }
                Next::Finished => panic!("finished"),
            }
        }
        clock.advance(1);
    }
    panic!("never took its node ID back");
}

#[test]
fn a_holder_taking_back_its_own_node_id_finds_its_mark_within_the_backwards_tolerance() {
    use flakery::lease::keeper::RETRY_PAUSE_MS;
    use flakery::options::DEFAULT_BACKWARDS_TOLERANCE_MS;
    // The shortest term a lease may have; round trips up to what it allows, breaks at any
    // phase of the writes. The mark that landed last is the floor when the holder takes its
    // node ID back (at once: as in a SQL table, a holder's own claim is its to take again).
    let term = 1000;
    let mut worst = i64::MIN;
    for rtt in [1, 100, 200, 250, 300, 400] {
        for break_at in (3_000..3_400).step_by(7) {
            let ahead = floor_ahead_after_taking_back(term, rtt, break_at);
            assert!(
                ahead <= MAX_AHEAD_MS - term / 2 - RETRY_PAUSE_MS
                    && ahead < DEFAULT_BACKWARDS_TOLERANCE_MS as i64,
                "round trip {rtt} ms, broken at {break_at}: the floor is {ahead} ms ahead"
            );
            worst = worst.max(ahead);
        }
    }
    eprintln!("the floor was at most {worst} ms ahead");
}

/// Drives `h` until its first grant, moving the fake clock as the generator's wait would;
/// returns the grant and how long the generator waited (fake time).
fn first_grant_waiting(sim: &Sim, h: &mut keeper_sim::Holder) -> (flakery::Grant, i64) {
    let start = sim.now();
    for _ in 0..64 {
        let wall = h.wall(sim);
        match h.keeper.grant(wall, wall, sim.now()) {
            Ok(grant) => return (grant, sim.now() - start),
            Err(Refusal::Wait(floor)) => {
                // The mark is written, and the claim renewed, while the generator waits.
                h.settle(sim);
                sim.clock.advance((floor - wall).min(TERM / 8));
            }
            Err(Refusal::NeedMark) => h.settle(sim),
            Err(Refusal::Lost(err)) => panic!("lost: {err}"),
        }
    }
    panic!("never granted");
}

#[test]
fn a_record_deleted_while_held_makes_the_next_holder_start_past_anything_the_first_can_issue() {
    use flakery::lease::keeper::FRESH_RECORD_WAIT_MS;
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let a_mark = a.grant_now(&sim).unwrap().until_ms;
    // DELETE FROM flakery_node_leases WHERE node_index = 0 (or the znodes deleted).
    sim.board.delete_record(0);
    let mut b = sim.holder();
    b.settle(&sim);
    assert_eq!(b.keeper.claim().unwrap().index, 0);
    assert_eq!(
        b.keeper.claim().unwrap().floor_ms,
        None,
        "the record has no mark"
    );
    let claimed_at = b.wall(&sim);
    // The first holder still issues up to its confirmed mark until a write tells it.
    let wall = a.wall(&sim);
    assert_eq!(
        a.keeper.grant(wall, wall, sim.now()).unwrap().until_ms,
        a_mark
    );
    let (grant, waited) = first_grant_waiting(&sim, &mut b);
    assert_eq!(grant.floor_ms, claimed_at + FRESH_RECORD_WAIT_MS);
    assert!(grant.floor_ms > a_mark, "{} <= {a_mark}", grant.floor_ms);
    assert_eq!(waited, FRESH_RECORD_WAIT_MS);
    // The first holder's next request finds the record another's: lost, never recreated.
    sim.clock.advance(TERM / 4);
    a.settle(&sim);
    assert_ne!(a.keeper.claim().map(|c| c.index), Some(0));
    b.settle(&sim);
    assert_eq!(b.state(), State::Held);
    assert_eq!(b.keeper.claim().unwrap().index, 0);
}

#[test]
fn a_namespace_never_used_waits_once_then_a_successor_starts_at_once() {
    use flakery::lease::keeper::FRESH_RECORD_WAIT_MS;
    let sim = Sim::fresh(Layout::twitter());
    let mut a = sim.holder();
    a.settle(&sim);
    let (first, waited) = first_grant_waiting(&sim, &mut a);
    assert_eq!(waited, FRESH_RECORD_WAIT_MS);
    a.keeper.release(Some(first.floor_ms + 1));
    a.settle(&sim);
    sim.clock.advance(1);
    let mut b = sim.holder();
    b.settle(&sim);
    let (second, waited) = first_grant_waiting(&sim, &mut b);
    assert_eq!(second.floor_ms, first.floor_ms + 1);
    assert_eq!(waited, 0, "a record with a mark costs no wait");
}

#[test]
fn a_mark_lowered_while_held_is_not_trusted_by_the_holder_that_takes_it_back() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let a_mark = a.grant_now(&sim).unwrap().until_ms;
    sim.board
        .store_mark(0, keeper_sim::OLD_MARK.to_string().as_bytes());
    // Busy: the next write finds another mark and is lost; the keeper leases anew.
    let wall = a.wall(&sim);
    let _ = a.keeper.grant(a_mark + 1, wall, sim.now());
    a.settle(&sim);
    assert!(
        a.keeper.claim().is_none(),
        "the lowered mark went unnoticed"
    );
    sim.clock.advance(1000);
    a.settle(&sim);
    assert_eq!(a.keeper.claim().unwrap().index, 0);
    let (grant, _) = first_grant_waiting(&sim, &mut a);
    assert!(grant.floor_ms >= a_mark, "{} < {a_mark}", grant.floor_ms);
}

#[test]
fn a_mark_far_ahead_is_skipped_and_named_when_no_index_is_left() {
    use flakery::lease::keeper::MAX_MARK_AHEAD_MS;
    let sim = Sim::new(Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap());
    let ahead = keeper_sim::WALL0 + 120_000;
    sim.board.store_mark(0, ahead.to_string().as_bytes());
    // Just within the bound: used (the generator waits for it).
    let within = keeper_sim::WALL0 + MAX_MARK_AHEAD_MS;
    sim.board.store_mark(2, within.to_string().as_bytes());
    let mut holders = Vec::new();
    for expected in [1, 2, 3] {
        let mut h = sim.holder();
        h.settle(&sim);
        assert_eq!(h.keeper.claim().unwrap().index, expected);
        holders.push(h);
    }
    let (grant, waited) = first_grant_waiting(&sim, &mut holders[1]);
    assert_eq!(grant.floor_ms, within);
    assert_eq!(waited, MAX_MARK_AHEAD_MS);
    let mut last = sim.holder();
    last.settle(&sim);
    let err = last.keeper.last_error().unwrap();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
    assert!(err.message().contains("node index 0"), "{}", err.message());
    assert!(
        err.message().contains(&ahead.to_string()),
        "{}",
        err.message()
    );
}

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

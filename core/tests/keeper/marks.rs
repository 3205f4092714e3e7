//! Marks found in the coordinator: the holder's own taken back, and marks deleted, lowered or
//! left far ahead by hand.

use super::*;

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
            Err(Refusal::Unconfirmed) => panic!("suspect"),
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

//! The in-memory coordinator keeps the promises every backend keeps (see
//! `flakery::lease::coordinator`): exclusive claims of the lowest free index, expiry in the
//! coordinator's clock, strict marks, compare-and-set writes.

use std::sync::Arc;

use flakery::lease::{Board, Coordinator, Failure};
use flakery::{ErrorCode, FakeClock};

const TERM: i64 = 1000;

fn board() -> (FakeClock, Board) {
    let clock = FakeClock::new(1_000_000);
    let board = Board::new(Arc::new(clock.clone()), TERM);
    (clock, board)
}

#[test]
fn claims_are_exclusive_and_lowest_first() {
    let (_, board) = board();
    let mut a = board.connect();
    let mut b = board.connect();
    let mut c = board.connect();
    assert_eq!(a.claim(2, i64::MAX).unwrap().index, 0);
    assert_eq!(b.claim(2, i64::MAX).unwrap().index, 1);
    let err = c.claim(2, i64::MAX).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
}

#[test]
fn a_claim_expires_a_term_after_its_last_request() {
    let (clock, board) = board();
    let mut a = board.connect();
    let mut b = board.connect();
    let mut claim = a.claim(1, i64::MAX).unwrap();
    clock.advance(TERM - 1);
    a.renew(&mut claim, i64::MAX).unwrap();
    clock.advance(TERM - 1);
    assert!(b.claim(1, i64::MAX).is_err(), "renewed claim taken");
    clock.advance(1);
    let taken = b.claim(1, i64::MAX).unwrap();
    assert_eq!(taken.index, 0);
    assert!(matches!(
        a.renew(&mut claim, i64::MAX),
        Err(Failure::Lost(_))
    ));
}

#[test]
fn the_mark_is_compare_and_set_and_the_successor_starts_after_it() {
    let (clock, board) = board();
    let mut a = board.connect();
    let mut claim = a.claim(1, i64::MAX).unwrap();
    assert_eq!(claim.floor_ms, None);
    a.write_mark(&mut claim, None, 5_000, i64::MAX).unwrap();
    // A retry of the same write is fine; a write from a stale expectation is not.
    a.write_mark(&mut claim, None, 5_000, i64::MAX).unwrap();
    let stale = a.write_mark(&mut claim, Some(4_000), 6_000, i64::MAX);
    assert!(matches!(stale, Err(Failure::Lost(_))), "{stale:?}");
    clock.advance(TERM);
    let mut b = board.connect();
    let successor = b.claim(1, i64::MAX).unwrap();
    assert_eq!(successor.floor_ms, Some(5_000));
    let late = a.write_mark(&mut claim, Some(5_000), 7_000, i64::MAX);
    assert!(matches!(late, Err(Failure::Lost(_))), "{late:?}");
}

#[test]
fn an_unreadable_mark_is_never_no_mark() {
    let (_, board) = board();
    board.store_mark(0, b"garbage");
    board.store_mark(1, b"17000000000000000000000000");
    let mut a = board.connect();
    assert_eq!(a.claim(3, i64::MAX).unwrap().index, 2);
    let mut b = board.connect();
    let err = b.claim(3, i64::MAX).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
    assert!(err.message().contains("node index 0"), "{err}");
    assert!(err.message().contains("node index 1"), "{err}");
}

#[test]
fn a_partition_waits_for_the_deadline_and_applies_nothing() {
    let (clock, board) = board();
    let mut a = board.connect();
    let mut claim = a.claim(1, i64::MAX).unwrap();
    board.set_partitioned(true);
    let start = 1_000_000;
    let out = a.write_mark(&mut claim, None, 9_000, start + 300);
    assert!(matches!(out, Err(Failure::Unanswered(_))), "{out:?}");
    assert_eq!(clock_now(&clock), start + 300);
    assert_eq!(board.slot(0).mark, b"");
    board.set_partitioned(false);
    board.lose_answers(1);
    let out = a.write_mark(&mut claim, None, 9_000, i64::MAX);
    assert!(matches!(out, Err(Failure::Unanswered(_))), "{out:?}");
    assert_eq!(board.slot(0).mark, b"9000", "applied, answer lost");
}

#[test]
fn release_frees_the_index_at_once_with_the_mark_brought_down() {
    let (_, board) = board();
    let mut a = board.connect();
    let mut claim = a.claim(1, i64::MAX).unwrap();
    a.write_mark(&mut claim, None, 9_000, i64::MAX).unwrap();
    a.release(claim, Some(8_500), i64::MAX);
    let mut b = board.connect();
    let next = b.claim(1, i64::MAX).unwrap();
    assert_eq!(next.floor_ms, Some(8_500));
}

fn clock_now(clock: &FakeClock) -> i64 {
    use flakery::Clock;
    clock.now_ms()
}

//! The lock-free lease status a generator hands out (`Generator::lease_status`), over the
//! in-memory coordinator with real time: it follows the keeper (held, not issuing once a
//! request is refused, held again, released), counts why it stopped, and reports the
//! coordinator, its term, the round trip and the mark. Times are checked as orders of events.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flakery::lease::kept::{KeptLease, MonotonicClock};
use flakery::lease::Board;
use flakery::{Clock, Generator, LeaseState, LossReason};

const TERM: i64 = 1000;

/// Polls until `done`; the bound is a safety net against a hang, not a measure.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} never happened"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn the_status_follows_the_lease_without_a_lock() {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
    let board = Board::new(Arc::clone(&clock), TERM);
    let lease = KeptLease::start(
        Box::new(board.connect()),
        &flakery::Layout::twitter(),
        clock,
    )
    .unwrap();
    let generator = Generator::builder().lease(Box::new(lease)).build().unwrap();
    let status = generator.lease_status();
    assert!(status.is_coordinated());
    assert_eq!(status.state(), LeaseState::Held);
    assert_eq!(status.term_ms(), Some(TERM));
    assert!(status.coordinator().is_some());
    generator.next_ids(1000).unwrap();
    assert!(status.round_trip_s().is_some());
    assert!(status.mark_ms().is_some());

    board.set_partitioned(true);
    // Issue until refused: from that moment on the status says no, with a reason counted.
    eventually("a refusal", || generator.next_id().is_err());
    assert!(!status.can_issue(), "{:?} after a refusal", status.state());
    let losses: u64 = LossReason::ALL.iter().map(|r| status.losses(*r)).sum();
    assert!(losses >= 1);

    board.set_partitioned(false);
    eventually("recovery", || generator.next_id().is_ok());
    assert_eq!(status.state(), LeaseState::Held);

    generator.close();
    assert_eq!(status.state(), LeaseState::Released);
}

#[test]
fn a_fixed_node_id_is_always_held() {
    let generator = Generator::builder().worker_id(3).build().unwrap();
    let status = generator.lease_status();
    assert_eq!(status.state(), LeaseState::Held);
    assert!(!status.is_coordinated() && status.coordinator().is_none());
}

#[test]
fn a_closed_fixed_node_id_is_released_for_every_reader() {
    let generator = Generator::builder().worker_id(3).build().unwrap();
    let before = generator.lease_status();
    generator.close();
    assert_eq!(before.state(), LeaseState::Released);
    assert!(!generator.lease_status().can_issue());
}

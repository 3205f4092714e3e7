//! The keeper on its threads (`KeptLease`) over the in-memory coordinator, with real time:
//! a generator leases, loses its lease in a partition, recovers, and releases.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flakery::lease::kept::{KeptLease, MonotonicClock};
use flakery::lease::Board;
use flakery::{decode, Clock, ErrorCode, Generator, Layout};

const TERM: i64 = 1000;

fn board() -> (Arc<dyn Clock>, Board) {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
    (Arc::clone(&clock), Board::new(clock, TERM))
}

fn until(what: &str, within: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < within,
            "{what} took longer than {within:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    start.elapsed()
}

#[test]
fn leases_loses_in_a_partition_recovers_and_releases() {
    let (clock, board) = board();
    let layout = Layout::twitter();
    let lease = KeptLease::start(Box::new(board.connect()), &layout, Arc::clone(&clock)).unwrap();
    assert_eq!(lease.index(), Some(0));
    let generator = Generator::builder().lease(Box::new(lease)).build().unwrap();
    let ids = generator.next_ids(1000).unwrap();
    assert_eq!(decode(ids[0], &layout).unwrap().worker_id, 0);

    board.set_partitioned(true);
    let cut = Instant::now();
    let mut last_ok = None;
    let lost_after = until(
        "lease_lost",
        Duration::from_millis(TERM as u64),
        || match generator.next_id() {
            Ok(id) => {
                last_ok = Some(Instant::now());
                let _ = id;
                false
            }
            Err(err) => {
                assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
                true
            }
        },
    );
    assert!(
        lost_after <= Duration::from_millis(TERM as u64 / 2 + 100),
        "{lost_after:?}"
    );
    if let Some(at) = last_ok {
        // No ID after the deadline: half the term after the last confirmed request.
        assert!(at.duration_since(cut) < Duration::from_millis(TERM as u64 / 2 + 50));
    }
    board.set_partitioned(false);
    until("recovery", Duration::from_millis(4 * TERM as u64), || {
        generator.next_id().is_ok()
    });

    let last = generator.next_ids(10).unwrap();
    let last_ms = decode(*last.last().unwrap(), &layout).unwrap().timestamp_ms;
    generator.close();
    assert_eq!(board.holder(0), None, "released at once");
    assert_eq!(board.slot(0).mark, last_ms.to_string().as_bytes());
}

#[test]
fn the_first_claims_error_is_the_constructors() {
    let (clock, board) = board();
    let layout = Layout::parse("time:41,worker:1,sequence:12;epoch=0").unwrap();
    let a = KeptLease::start(Box::new(board.connect()), &layout, Arc::clone(&clock)).unwrap();
    let b = KeptLease::start(Box::new(board.connect()), &layout, Arc::clone(&clock)).unwrap();
    assert_ne!(a.index(), b.index());
    let err = KeptLease::start(Box::new(board.connect()), &layout, Arc::clone(&clock)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    board.set_partitioned(true);
    let err = KeptLease::start(Box::new(board.connect()), &layout, clock).unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
}

//! The start's timeout, on a fake clock: a start against a ZooKeeper that is down (a closed
//! port on 127.0.0.1, refused at once) goes through the whole start (`KeptLease::start`, the
//! keeper's claim, this crate's connect loop) with the keeper's clock and the connect loop's
//! pauses on one fake clock, so the instant it gives up is known to the millisecond and no
//! real time passes but the refused connections'. A start that ignored its timeout (gave up
//! at the claim's own deadline, or never) or gave up early (after a fixed time) fails here
//! every time, not about half the time as an order of events between two starts would.

use std::net::TcpListener;
use std::sync::Arc;

use flakery::error::ErrorCode;
use flakery::{Clock, FakeClock, KeptLease, Layout};

use crate::connect::{Time, BACKOFF_CAP};
use crate::settings::Settings;
use crate::ZooKeeperCoordinator;

/// A fake clock that a sleep moves.
struct FakeTime(FakeClock);

impl Time for FakeTime {
    fn now_ms(&self) -> i64 {
        self.0.now_ms()
    }

    fn sleep_ms(&self, ms: i64) {
        self.0.advance(ms.max(0));
    }
}

/// An address on 127.0.0.1 that nothing listens on: a port the system gave and took back.
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    address.to_string()
}

/// Starts a lease of session timeout `timeout_ms` against a closed port, on the fake clock:
/// the error, the address, and how long the start took on that clock.
fn start_with_zookeeper_down(timeout_ms: u64) -> (flakery::Error, String, i64) {
    let layout = Layout::twitter();
    let connect = closed_port();
    let settings = Settings::parse(&connect, "down", timeout_ms, &layout).unwrap();
    let clock = FakeClock::new(1_000_000);
    let coordinator = ZooKeeperCoordinator::with_time(settings, Arc::new(FakeTime(clock.clone())));
    let started = clock.now_ms();
    let err = KeptLease::start(Box::new(coordinator), &layout, Arc::new(clock.clone()))
        .expect_err("a start against a closed port");
    (err, connect, clock.now_ms() - started)
}

/// The start tries until its next attempt would fall past the session timeout (a pause is at
/// most `BACKOFF_CAP`), never past it, and fails with `coordinator_unavailable` naming the
/// address and the timeout. Breaks caught: connecting until the claim's deadline (the term
/// and 1.5 s, the timeout ignored) and giving up after a fixed 1 s.
#[test]
fn a_start_with_zookeeper_down_gives_up_at_its_session_timeout() {
    let cap = BACKOFF_CAP.as_millis() as i64;
    for timeout in [2_000u64, 10_000, 60_000] {
        let (err, connect, took) = start_with_zookeeper_down(timeout);
        assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
        assert!(err.message().contains(&connect), "{err}");
        assert!(
            err.message().contains(&format!("within {timeout} ms")),
            "{err}"
        );
        let timeout = timeout as i64;
        assert!(
            took < timeout,
            "gave up {took} ms into a {timeout} ms timeout"
        );
        assert!(
            took >= timeout - cap,
            "gave up {took} ms into a {timeout} ms timeout, with attempts still due"
        );
    }
}

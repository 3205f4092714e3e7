//! The keeper on its threads (`KeptLease`) over the in-memory coordinator, with real time:
//! a generator leases, loses its lease in a partition, recovers, and releases; a claim from a
//! coordinator whose clock is ahead is refused by the keeper and given back by the driver.
//! Times are checked as orders of events (the coordinator's claim expired before a call, the
//! coordinator answered so many requests); the keeper's exact deadlines are checked on the
//! fake clock in `keeper/`.

use std::sync::Arc;
use std::time::Duration;

use flakery::lease::kept::{KeptLease, MonotonicClock};
use flakery::lease::Board;
use flakery::{
    decode, Clock, ErrorCode, FakeClock, Generator, Layout, NodeLease, SequencePolicy, SystemClock,
};

const TERM: i64 = 1000;

fn board() -> (Arc<dyn Clock>, Board) {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
    (Arc::clone(&clock), Board::new(clock, TERM))
}

/// A generator leasing from a coordinator of term `term_ms` whose namespace was used before
/// (no fresh-record wait at the start).
fn leased_generator(term_ms: i64) -> (Board, Generator) {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
    let board = Board::new(Arc::clone(&clock), term_ms);
    let old_mark = SystemClock.now_ms() - 60_000;
    board.store_mark(0, old_mark.to_string().as_bytes());
    let lease = KeptLease::start(Box::new(board.connect()), &Layout::twitter(), clock).unwrap();
    let generator = Generator::builder().lease(Box::new(lease)).build().unwrap();
    (board, generator)
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
    // Issue until refused. No ID once the coordinator's claim has expired (from then on it
    // may give index 0 to another holder): the keeper refuses at its deadline, half a term
    // earlier, so the loop ends by then at the latest.
    loop {
        let expired = board.holder(0).is_none();
        match generator.next_id() {
            Ok(id) => assert!(
                !expired,
                "{id} issued after the coordinator's claim of index 0 expired"
            ),
            Err(err) => {
                assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
                break;
            }
        }
    }
    board.set_partitioned(false);
    // Recovers while the coordinator answers the keeper: a claim, its first mark and a
    // write are a handful of requests, not twenty.
    let healed_at = board.requests();
    while generator.next_id().is_err() {
        assert!(
            board.requests() < healed_at + 20,
            "no ID after the coordinator answered {} requests since the partition healed",
            board.requests() - healed_at
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    let last = generator.next_ids(10).unwrap();
    let last_ms = decode(*last.last().unwrap(), &layout).unwrap().timestamp_ms;
    generator.close();
    assert_eq!(board.holder(0), None, "released at once");
    assert_eq!(board.slot(0).mark, last_ms.to_string().as_bytes());
}

/// The clock check at claim, through the driver: the keeper decides, the driver carries its
/// decision (the claim given back), and starting fails with the keeper's error.
#[test]
fn a_coordinator_whose_clock_is_ahead_past_the_bound_is_refused_and_given_back() {
    // The in-memory coordinator's clock is the keeper's: set it ahead of this host's wall
    // clock, which the keeper takes as the generator's at the start.
    let start = |ahead_ms: i64| {
        let clock = FakeClock::new(SystemClock.now_ms() + ahead_ms);
        let board = Board::new(Arc::new(clock.clone()), TERM);
        let lease = KeptLease::start(
            Box::new(board.connect()),
            &Layout::twitter(),
            Arc::new(clock),
        );
        (lease, board)
    };
    let (refused, board) = start(60_000);
    let err = refused.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockMovedBackwards, "{err}");
    assert!(
        err.message().contains("ms behind that of")
            && err.message().contains("(more than the 1000 ms allowed)"),
        "{err}"
    );
    assert_eq!(board.holder(0), None, "the refused claim is given back");

    let (held, board) = start(500);
    let lease = held.unwrap();
    assert_eq!(lease.index(), Some(0));
    let offset = lease.clock_offset_ms().unwrap();
    assert!(
        offset <= 500,
        "the coordinator's clock minus ours: {offset}"
    );
    // A release that waits until it is carried (a drop only signals it).
    lease.release(i64::MIN);
    assert_eq!(board.holder(0), None, "released");
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

/// The grant's wait for a mark, decided by the keeper and carried by the driver: a generator
/// whose mark write does not come back (the coordinator cut off) waits a quarter term for it
/// and is then refused with `lease_lost`, before the keeper's deadline (half the term) would
/// have refused it; the status counts the stall.
#[test]
fn a_mark_that_is_not_confirmed_is_refused_after_the_keepers_grant_wait() {
    use flakery::LossReason;
    // A long term, so that the grant's wait (a quarter term: 5 s from about 1.6 s) ends well
    // before the deadline (half the term: 10 s).
    const LONG_TERM: i64 = 20_000;
    let (board, generator) = leased_generator(LONG_TERM);
    let status = generator.lease_status();
    generator.next_id().unwrap();
    board.set_partitioned(true);
    // Past the mark written at the start (1.1 s ahead, plus the round trip): the next ID
    // needs a write, which the cut-off coordinator never answers.
    std::thread::sleep(Duration::from_millis(1600));
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    assert!(
        err.message()
            .starts_with("the in-memory coordinator did not confirm the high-water mark within "),
        "refused by the grant's wait, not by the deadline: {err}"
    );
    assert!(status.losses(LossReason::MarkStalled) >= 1);
    board.set_partitioned(false);
}

/// The keeper publishes each grant on its own thread, before the one the generator holds runs
/// out: a generator issuing steadily across many mark writes and renewals takes each from its
/// fence, never asks and never waits (counted by the generator itself). The run is measured in
/// requests the coordinator answered, not in time.
#[test]
fn a_steady_generator_takes_each_published_grant_and_never_waits() {
    // A term long enough that a renewal is never due near its deadline on a loaded machine.
    const STEADY_TERM: i64 = 6000;
    let (board, generator) = leased_generator(STEADY_TERM);
    let first = board.requests();
    let mut issued = 0u64;
    // The mark moves every few hundred ms while the generator is busy.
    while board.requests() < first + 8 {
        generator.next_id().unwrap();
        issued += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    let counts = generator.slow_path_counts();
    assert_eq!(
        (counts.grant_asks, counts.grant_waits),
        (0, 0),
        "{issued} IDs across {} requests",
        board.requests() - first
    );
}

/// A generator that borrows ticks further ahead than the lease's deadline (half the term
/// after the last confirmation) is refused at once with `lease_lost` ("covers IDs only up
/// to") once its tick lies within the mark but past the deadline, as before grants were
/// published: the keeper answers the want with the grant that does not cover it, and the
/// generator never waits for a renewal to move the deadline. Caught when `KeptLease::ask`
/// answered that grant as a wait (`Asked::Within`): no call was refused, the borrowed ticks
/// waited for renewals instead.
#[test]
fn a_tick_borrowed_past_the_deadline_is_refused_at_once() {
    // Deadline 1 s after each confirmation; two IDs a millisecond, so that borrowing 5 s
    // ahead takes a few thousand calls.
    const SHORT_TERM: i64 = 2000;
    let layout =
        Layout::parse("time:41,datacenter:5,worker:5,sequence:1;epoch=1288834974657;unit=ms")
            .unwrap();
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
    let board = Board::new(Arc::clone(&clock), SHORT_TERM);
    board.store_mark(0, (SystemClock.now_ms() - 60_000).to_string().as_bytes());
    let lease = KeptLease::start(Box::new(board.connect()), &layout, clock).unwrap();
    let generator = Generator::builder()
        .layout(layout)
        .sequence_policy(SequencePolicy::Borrow)
        .max_borrow_ms(5000)
        .lease(Box::new(lease))
        .build()
        .unwrap();
    let mut last = generator.next_id().unwrap();
    let mut issued = 0;
    let refused = (0..24_000).find_map(|_| match generator.next_id() {
        Ok(id) => {
            assert!(id > last);
            last = id;
            issued += 1;
            None
        }
        Err(err) => Some(err),
    });
    let err = refused.expect("5 s of borrowed ticks, none refused past a 1 s deadline");
    // Refused only once it borrowed past the deadline: at least the ticks up to it were
    // issued (two a millisecond).
    assert!(issued >= 1000, "refused after {issued} IDs: {err}");
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    assert!(err.message().contains("covers IDs only up to"), "{err}");
}

/// A start slowed past the deadline between its first claim and its first grant (the
/// starting thread not scheduled for half a term on a loaded machine, while the renewal is
/// due) waits for the keeper to renew, and starts. The keeper's and the generator's clock are
/// one fake clock, moved by the test between the start and the build, 10 s past the deadline
/// (the keeper's estimate of the generator's clock is off by the few ms the start took to read
/// both, which must not make the grant published at the attach cover the first want); the
/// term is long, so that the keeper thread (which sleeps a quarter term, at most a minute, in
/// real time) renews only when the generator's ask wakes it, and the claim is not lost. Caught
/// when the keeper refused a suspect claim's first grant at once: the build failed with
/// `lease_lost ... may be lost (not confirmed since 130001 ms ago)`, as the
/// streaming child of tests/db's `a_paused_holder_is_lease_lost_...` did at a load average of
/// 34 (1001 ms on its 2 s term).
#[test]
fn a_start_past_the_deadline_before_its_first_grant_waits_for_the_renewal() {
    use flakery::lease::keeper::State;
    const LONG_TERM: i64 = 240_000;
    let keeper_clock = FakeClock::new(SystemClock.now_ms());
    let clock: Arc<dyn Clock> = Arc::new(keeper_clock.clone());
    let board = Board::new(Arc::clone(&clock), LONG_TERM);
    board.store_mark(0, (SystemClock.now_ms() - 60_000).to_string().as_bytes());
    let layout = Layout::twitter();
    let lease = KeptLease::start(Box::new(board.connect()), &layout, clock).unwrap();
    assert_eq!(lease.state(), State::Held);
    let before = board.requests();
    keeper_clock.advance(LONG_TERM / 2 + 10_001);
    let generator = Generator::builder()
        .clock(keeper_clock.clone())
        .lease(Box::new(lease))
        .build()
        .expect("the start waits for the renewal");
    assert!(board.requests() > before, "granted with no renewal");
    let id = generator.next_id().unwrap();
    assert_eq!(decode(id, &layout).unwrap().worker_id, 0);
}

/// A start starved for a whole term between its first claim and its first grant (the claim
/// expired at the coordinator; the keeper takes it as lost when the generator first asks)
/// leases again and starts, instead of failing with `lease_lost`: nothing was issued under
/// the lost claim. The keeper's, the coordinator's and the generator's clock are one fake
/// clock, moved by the test a term past the start, and from there on by a thread of the test
/// one ms per real ms at most (never faster than the keeper's real sleeps), so that the
/// keeper's retry pause passes. Caught when the keeper refused a start's want at the loss:
/// the build failed with `lease_lost ... was not confirmed for 4001 ms`.
#[test]
fn a_start_whose_claim_expired_before_its_first_grant_leases_again_and_starts() {
    use flakery::lease::status::LossReason;
    const SHORT_TERM: i64 = 4_000;
    // A term behind the real clock, so that once moved on it is not ahead of the real clock
    // that the driver reads for the clock check at claim (the coordinator answers with it).
    // The generator's clock is it plus that term, as the keeper measures at the start (to
    // the few ms the start took).
    let keeper_clock = FakeClock::new(SystemClock.now_ms() - SHORT_TERM - 1);
    let generator_clock = Ahead(keeper_clock.clone(), SHORT_TERM + 1);
    let clock: Arc<dyn Clock> = Arc::new(keeper_clock.clone());
    let board = Board::new(Arc::clone(&clock), SHORT_TERM);
    board.store_mark(0, (SystemClock.now_ms() - 60_000).to_string().as_bytes());
    let layout = Layout::twitter();
    let lease = KeptLease::start(Box::new(board.connect()), &layout, clock).unwrap();
    keeper_clock.advance(SHORT_TERM + 1);
    assert_eq!(board.holder(0), None, "expired at the coordinator");
    let built = with_clock_ticking(&keeper_clock, || {
        Generator::builder()
            .clock(generator_clock)
            .lease(Box::new(lease))
            .build()
    });
    let generator = built.expect("the start leases again");
    assert_eq!(generator.lease_status().losses(LossReason::Lost), 1);
    assert!(board.holder(0).is_some(), "claimed again");
    let id = generator.next_id().unwrap();
    assert_eq!(decode(id, &layout).unwrap().worker_id, 0);
}

/// Runs `run` while a thread moves `clock` on, 1 ms per real ms at most: never faster than
/// the keeper thread's real sleeps, so that the keeper's pauses pass and none of its deadlines
/// passes while it sleeps.
fn with_clock_ticking<T>(clock: &FakeClock, run: impl FnOnce() -> T) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let ticking = Arc::new(AtomicBool::new(true));
    let ticker = {
        let (ticking, clock) = (Arc::clone(&ticking), clock.clone());
        std::thread::spawn(move || {
            while ticking.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
                clock.advance(1);
            }
        })
    };
    let result = run();
    ticking.store(false, Ordering::Relaxed);
    ticker.join().unwrap();
    result
}

/// A fake clock read `.1` ms ahead.
struct Ahead(FakeClock, i64);

impl Clock for Ahead {
    fn now_ms(&self) -> i64 {
        self.0.now_ms() + self.1
    }
}

/// A start starved while its first mark write is out (the write applied, its answer lost, and
/// a whole term gone before the keeper runs again): the claim is lost before the start
/// returns, and `KeptLease::start` waits while the keeper leases again instead of failing
/// with `lease_lost`. Clocks as in the test above. Caught when the start's wait for the first
/// claim took any `Lost` as the start's failure: `lease_lost ... was not confirmed for 4002 ms`.
#[test]
fn a_start_whose_claim_is_lost_before_its_first_mark_is_confirmed_leases_again() {
    use flakery::lease::keeper::State;
    use flakery::lease::{Claim, Coordinator, Failure, MemoryCoordinator};

    /// The in-memory coordinator, but the answer to the first mark write is lost after the
    /// keeper's clock moved a term and a millisecond (the write itself applied).
    #[derive(Debug)]
    struct StarvedFirstWrite(MemoryCoordinator, FakeClock, bool);

    impl Coordinator for StarvedFirstWrite {
        fn source(&self) -> flakery::NodeSource {
            self.0.source()
        }
        fn describe(&self) -> String {
            self.0.describe()
        }
        fn term_ms(&self) -> i64 {
            self.0.term_ms()
        }
        fn claim_within(&mut self, count: u64, limit: i64, by: i64) -> flakery::Result<Claim> {
            self.0.claim_within(count, limit, by)
        }
        fn renew(&mut self, claim: &mut Claim, by: i64) -> Result<(), Failure> {
            self.0.renew(claim, by)
        }
        fn write_mark(
            &mut self,
            claim: &mut Claim,
            expected_ms: Option<i64>,
            new_ms: i64,
            by: i64,
        ) -> Result<(), Failure> {
            let written = self.0.write_mark(claim, expected_ms, new_ms, by);
            if std::mem::replace(&mut self.2, true) {
                return written;
            }
            self.1.advance(SHORT_TERM + 1);
            Err(Failure::Unanswered("the answer was lost".into()))
        }
        fn release(&mut self, claim: Claim, mark_ms: Option<i64>, by: i64) {
            self.0.release(claim, mark_ms, by)
        }
        fn abandon(&mut self, claim: &Claim) {
            self.0.abandon(claim)
        }
        fn reopen(&self) -> flakery::Result<Box<dyn Coordinator>> {
            self.0.reopen()
        }
    }

    const SHORT_TERM: i64 = 4_000;
    let keeper_clock = FakeClock::new(SystemClock.now_ms() - SHORT_TERM - 1);
    let clock: Arc<dyn Clock> = Arc::new(keeper_clock.clone());
    let board = Board::new(Arc::clone(&clock), SHORT_TERM);
    let old_mark = SystemClock.now_ms() - 60_000;
    board.store_mark(0, old_mark.to_string().as_bytes());
    let coordinator = StarvedFirstWrite(board.connect(), keeper_clock.clone(), false);
    let started = with_clock_ticking(&keeper_clock, || {
        KeptLease::start(Box::new(coordinator), &Layout::twitter(), clock)
    });
    let lease = started.expect("the start leases again");
    assert_eq!(lease.state(), State::Held);
    // Claimed again: the floor is the mark the lost claim wrote, not the old one it found.
    assert!(lease.floor_ms() > Some(old_mark), "{:?}", lease.floor_ms());
}

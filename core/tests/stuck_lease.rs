//! A generator whose coordinator is stuck in a request (docs/spec.md#the-generators-slow-path):
//! a thread waiting in the slow path holds no lock and no fork section, so `fork()` goes on at
//! once and `node()` / `source()` answer; a dropped generator or lease signals its release and
//! returns, the release finishing in the background once the coordinator answers. Every
//! assertion is an order of events, proven by the coordinator's own state (a request held at
//! its gate) and by calls that have not returned yet; none is a bound on time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;

use flakery::lease::coordinator::{Alarm, Claim, Coordinator, Failure};
use flakery::lease::kept::{KeptLease, MonotonicClock};
use flakery::lease::{Board, MemoryCoordinator};
use flakery::{Clock, Error, Generator, Grant, Layout, LeaseState, NodeId, NodeLease, NodeSource};

/// Long enough that nothing is renewed, and that a grant waits up to a quarter of it (15 s)
/// for a mark: a fork that waited for that wait would come after it.
const TERM: i64 = 60_000;

/// Holds every request to the coordinator while shut, and says how many are held.
#[derive(Debug, Default)]
struct Gate {
    state: Mutex<(bool, u32)>,
    changed: Condvar,
}

impl Gate {
    fn set_shut(&self, shut: bool) {
        self.state.lock().unwrap().0 = shut;
        self.changed.notify_all();
    }

    fn pass(&self) {
        let mut state = self.state.lock().unwrap();
        state.1 += 1;
        self.changed.notify_all();
        while state.0 {
            state = self.changed.wait(state).unwrap();
        }
        state.1 -= 1;
        self.changed.notify_all();
    }

    fn held(&self) -> u32 {
        self.state.lock().unwrap().1
    }

    fn wait_until_held(&self) {
        let mut state = self.state.lock().unwrap();
        while state.1 == 0 {
            state = self.changed.wait(state).unwrap();
        }
    }
}

/// The in-memory coordinator behind a gate.
#[derive(Debug)]
struct Gated {
    inner: MemoryCoordinator,
    gate: Arc<Gate>,
}

impl Coordinator for Gated {
    fn source(&self) -> NodeSource {
        self.inner.source()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn term_ms(&self) -> i64 {
        self.inner.term_ms()
    }
    fn claim_within(&mut self, count: u64, limit: i64, deadline: i64) -> Result<Claim, Error> {
        self.gate.pass();
        self.inner.claim_within(count, limit, deadline)
    }
    fn renew(&mut self, claim: &mut Claim, deadline: i64) -> Result<(), Failure> {
        self.gate.pass();
        self.inner.renew(claim, deadline)
    }
    fn write_mark(
        &mut self,
        claim: &mut Claim,
        expected: Option<i64>,
        new_ms: i64,
        deadline: i64,
    ) -> Result<(), Failure> {
        self.gate.pass();
        self.inner.write_mark(claim, expected, new_ms, deadline)
    }
    fn release(&mut self, claim: Claim, mark: Option<i64>, deadline: i64) {
        self.gate.pass();
        self.inner.release(claim, mark, deadline)
    }
    fn abandon(&mut self, claim: &Claim) {
        self.inner.abandon(claim)
    }
    fn set_alarm(&mut self, alarm: Alarm) {
        self.inner.set_alarm(alarm)
    }
    fn reopen(&self) -> Result<Box<dyn Coordinator>, Error> {
        self.inner.reopen()
    }
}

/// The monotonic clock, noting whether one chosen thread ever read it: the lease waits for a
/// release on this clock, so a drop that waited would read it.
#[derive(Debug, Default)]
struct WatchedClock {
    watched: Mutex<Option<ThreadId>>,
    read_by_watched: AtomicBool,
}

impl Clock for WatchedClock {
    fn now_ms(&self) -> i64 {
        if *self.watched.lock().unwrap() == Some(std::thread::current().id()) {
            self.read_by_watched.store(true, SeqCst);
        }
        MonotonicClock.now_ms()
    }
}

fn gated_lease(board: &Board, gate: &Arc<Gate>, clock: Arc<dyn Clock>) -> KeptLease {
    let gated = Gated {
        inner: board.connect(),
        gate: Arc::clone(gate),
    };
    KeptLease::start(Box::new(gated), &Layout::twitter(), clock).unwrap()
}

#[test]
fn a_generator_waiting_on_a_stuck_coordinator_forks_and_answers_at_once() {
    let clock: Arc<dyn Clock> = Arc::new(MonotonicClock);
    let board = Board::new(Arc::clone(&clock), TERM);
    let gate = Arc::new(Gate::default());
    // Another holder takes index 0, so that this generator's node ID is not all zeros.
    let _other = gated_lease(&board, &Arc::new(Gate::default()), Arc::clone(&clock));
    let lease = gated_lease(&board, &gate, clock);
    let generator = Arc::new(Generator::builder().lease(Box::new(lease)).build().unwrap());
    generator.next_id().unwrap();
    let node = generator.node();
    assert_ne!(node, NodeId::default());

    // From now on the mark cannot move: the thread below uses up what is written and then
    // waits in the slow path for a mark write held at the gate.
    gate.set_shut(true);
    let returned = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let worker = {
        let (generator, returned, stop) = (generator.clone(), returned.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                let _ = generator.next_id();
                returned.fetch_add(1, SeqCst);
            }
        })
    };
    gate.wait_until_held();
    // Suspect while held: a caller has waited for the mark longer than MARK_STALL_MS, so the
    // worker is inside the slow path's wait now.
    while generator.lease_status().state() != LeaseState::Suspect {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let calls_before = returned.load(SeqCst);

    // SAFETY: the child only reads atomics and calls _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = if generator.node() == node { 0 } else { 3 };
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);

    assert_eq!(generator.node(), node);
    assert_eq!(generator.source(), NodeSource::ZooKeeper);
    assert!(format!("{generator:?}").contains("ZooKeeper"));
    // All of that happened while the worker's call was still waiting and the mark write
    // still held by the coordinator.
    assert_eq!(
        returned.load(SeqCst),
        calls_before,
        "the slow path's call returned before the fork and the reads: they waited for it"
    );
    assert_eq!(gate.held(), 1);

    gate.set_shut(false);
    while returned.load(SeqCst) == calls_before {
        std::thread::yield_now();
    }
    stop.store(true, SeqCst);
    worker.join().unwrap();
    generator.next_id().unwrap();
}

#[test]
fn a_dropped_kept_lease_returns_before_its_release_is_carried() {
    let clock = Arc::new(WatchedClock::default());
    let board = Board::new(Arc::new(MonotonicClock), TERM);
    let gate = Arc::new(Gate::default());
    let lease = gated_lease(&board, &gate, clock.clone());
    let generator = Generator::builder().lease(Box::new(lease)).build().unwrap();
    generator.next_ids(10).unwrap();
    assert!(board.holder(0).is_some());

    gate.set_shut(true);
    *clock.watched.lock().unwrap() = Some(std::thread::current().id());
    drop(generator);
    *clock.watched.lock().unwrap() = None;
    assert!(
        !clock.read_by_watched.load(SeqCst),
        "drop read the lease's clock: it waited for the release"
    );
    // The release reaches the coordinator after the drop returned, and stays held there.
    gate.wait_until_held();
    assert!(
        board.holder(0).is_some(),
        "released while the gate was shut"
    );

    gate.set_shut(false);
    while board.holder(0).is_some() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A lease whose `release` blocks until the test lets it go, and which notes what was called.
#[derive(Debug, Default)]
struct BlockingRelease {
    events: Mutex<Vec<&'static str>>,
    changed: Condvar,
    let_go: AtomicBool,
}

#[derive(Debug)]
struct Shared(Arc<BlockingRelease>);

impl BlockingRelease {
    fn note(&self, event: &'static str) {
        self.events.lock().unwrap().push(event);
        self.changed.notify_all();
    }

    /// Waits for the first of `events` to happen and says which.
    fn first_of(&self, events: &[&'static str]) -> &'static str {
        let mut seen = self.events.lock().unwrap();
        loop {
            if let Some(event) = seen.iter().find(|e| events.contains(e)) {
                return event;
            }
            seen = self.changed.wait(seen).unwrap();
        }
    }
}

impl NodeLease for Shared {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }
    fn grant(&self, _want_ms: i64, _now_ms: i64) -> flakery::Result<Grant> {
        Ok(Grant {
            node: NodeId {
                datacenter_id: 0,
                worker_id: 1,
            },
            floor_ms: i64::MIN,
            until_ms: i64::MAX,
        })
    }
    fn after_fork(&self) -> flakery::Result<Box<dyn NodeLease>> {
        unreachable!()
    }
    fn release(&self, _last_used_ms: i64) {
        self.0.note("release");
        let mut events = self.0.events.lock().unwrap();
        while !self.0.let_go.load(SeqCst) {
            events = self.0.changed.wait(events).unwrap();
        }
    }
    fn signal_release(&self, _last_used_ms: i64) {
        self.0.note("signal_release");
    }
}

#[test]
fn drop_signals_the_release_and_close_waits_for_it() {
    let lease = Arc::new(BlockingRelease::default());
    let generator = Generator::builder()
        .lease(Box::new(Shared(lease.clone())))
        .build()
        .unwrap();
    generator.next_id().unwrap();
    let dropper = std::thread::spawn(move || {
        drop(generator);
    });
    let first = lease.first_of(&["release", "signal_release"]);
    lease.let_go.store(true, SeqCst);
    lease.changed.notify_all();
    dropper.join().unwrap();
    assert_eq!(first, "signal_release", "drop called the waiting release");
    assert_eq!(*lease.events.lock().unwrap(), ["signal_release"]);

    // close() is the waiting one; a drop after it releases nothing more.
    let lease = Arc::new(BlockingRelease::default());
    lease.let_go.store(true, SeqCst);
    let generator = Generator::builder()
        .lease(Box::new(Shared(lease.clone())))
        .build()
        .unwrap();
    generator.close();
    drop(generator);
    assert_eq!(*lease.events.lock().unwrap(), ["release"]);
}

//! A `NodeLease` on any `Coordinator`: the keeper driven by two threads of its own. The
//! keeper thread polls the keeper and sleeps until the instant it names, so the generator's
//! fence closes at the deadline however long a request takes; the request thread carries
//! requests to the backend one at a time and hands the answers back. The keeper publishes
//! each grant into the generator's fence; a generator that needs more asks (`ask`), which
//! never waits and never does I/O: the generator waits on its fence for the publication.

use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, ErrorCode, Result};
use crate::layout::Layout;
use crate::lease::coordinator::{Alarm, Coordinator};
use crate::lease::keeper::{carry, Keeper, Next, Outcome, Phase, Refusal, Request, State, Ticket};
use crate::lease::node::{Asked, Fence, Grant, NodeLease, NodeSource};
use crate::lease::status::{LeaseState, LeaseStatus, MARK_STALL_MS};

/// Milliseconds of the system's monotonic clock, for the keeper's deadlines: a step of the
/// wall clock moves no deadline. Every instance reads the same clock (no origin of its own),
/// so a keeper and its backend agree even when made apart, and nothing is kept that a
/// forked child could inherit half-made.
#[derive(Debug, Clone, Copy, Default)]
pub struct MonotonicClock;

impl MonotonicClock {
    pub fn new() -> MonotonicClock {
        MonotonicClock
    }
}

impl Clock for MonotonicClock {
    #[cfg(unix)]
    fn now_ms(&self) -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC exists on every Unix.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        // time_t and long are 32 bits on some targets: the casts are not no-ops everywhere.
        #[allow(clippy::unnecessary_cast)]
        let ms = ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000;
        ms
    }

    #[cfg(not(unix))]
    fn now_ms(&self) -> i64 {
        use std::sync::OnceLock;
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed().as_millis() as i64
    }
}

struct Shared {
    keeper: Mutex<Keeper>,
    /// Wakes the keeper thread (an answer, a grant that wants the mark moved, a release).
    wake: Condvar,
    /// Tells waiters in `grant` and `release` that the keeper changed.
    changed: Condvar,
    clock: Arc<dyn Clock>,
    finished: Mutex<bool>,
    /// The keeper's state as others read it without the lock, published after each change.
    status: LeaseStatus,
}

impl Shared {
    fn keeper(&self) -> MutexGuard<'_, Keeper> {
        self.keeper.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Publishes the keeper's state (call with the keeper locked, after it may have changed).
    fn publish(&self, keeper: &Keeper, alarm: bool) {
        let state = match keeper.state() {
            State::Acquiring => LeaseState::Acquiring,
            State::Held | State::Renewing => LeaseState::Held,
            State::Suspect => LeaseState::Suspect,
            State::Lost => LeaseState::Lost,
            State::Released => LeaseState::Released,
        };
        self.status.set_state(state, alarm);
    }
}

/// A node ID leased from a coordinator, kept by the keeper.
pub struct KeptLease {
    /// Never dropped in a forked child: the parent's threads and connection are not there.
    shared: ManuallyDrop<Arc<Shared>>,
    /// A backend with the same settings, never connected, for a forked child to reopen.
    template: ManuallyDrop<Mutex<Box<dyn Coordinator>>>,
    source: NodeSource,
    describe: String,
    layout: Layout,
    owner_pid: u32,
}

impl KeptLease {
    /// Claims a node index of `layout` from `coordinator` and keeps it. Fails with the error
    /// of the first claim that fails (`worker_ids_exhausted`, `coordinator_unavailable`, ...);
    /// a claim lost before the generator's first grant is leased again, not a failure.
    pub fn start(
        mut coordinator: Box<dyn Coordinator>,
        layout: &Layout,
        clock: Arc<dyn Clock>,
    ) -> Result<KeptLease> {
        let template = coordinator.reopen()?;
        let describe = coordinator.describe();
        let term_ms = coordinator.term_ms();
        let mut keeper = Keeper::new(layout, describe.clone(), coordinator.term_ms());
        keeper.set_gen_offset(SystemClock.now_ms() - clock.now_ms());
        let shared = Arc::new(Shared {
            keeper: Mutex::new(keeper),
            wake: Condvar::new(),
            changed: Condvar::new(),
            clock,
            finished: Mutex::new(false),
            status: LeaseStatus::new(),
        });
        shared.status.set_coordinator(describe.clone(), term_ms);
        let weak = Arc::downgrade(&shared);
        coordinator.set_alarm(Alarm::new(move || {
            if let Some(shared) = weak.upgrade() {
                let mut keeper = shared.keeper();
                keeper.alarm();
                shared.publish(&keeper, true);
                drop(keeper);
                shared.wake.notify_all();
                shared.changed.notify_all();
            }
        }));
        let requests = spawn_requests(Arc::clone(&shared), coordinator)?;
        let driver = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("flakery-keeper".into())
            .spawn(move || drive(&driver, requests))
            .map_err(|e| thread_error(&e))?;
        let lease = KeptLease {
            shared: ManuallyDrop::new(shared),
            source: template.source(),
            template: ManuallyDrop::new(Mutex::new(template)),
            describe,
            layout: layout.clone(),
            owner_pid: std::process::id(),
        };
        lease.wait_for_first_claim()?;
        Ok(lease)
    }

    fn wait_for_first_claim(&self) -> Result<()> {
        let shared = &self.shared;
        let mut keeper = shared.keeper();
        loop {
            match keeper.state() {
                // Held with its first mark written, so that the first grant is at once.
                State::Held | State::Renewing if keeper.first_mark_confirmed() => return Ok(()),
                // Suspect too: a claim whose answer took longer than half the term (its
                // confirmation counts from the sending, and connecting under many starts at
                // once can take that long) is confirmed again by the keeper, or lost within
                // a term, and a start waits for either instead of refusing at once. The first
                // grant waits the same way (the keeper keeps a start's want while the claim
                // is suspect: `Refusal::Unconfirmed`), as a start slowed on a loaded machine
                // can pass the deadline again between this return and that grant.
                State::Held | State::Renewing | State::Suspect => {}
                // A claim lost before the first grant: the keeper leases again for the start,
                // whose new claim is bounded as the first (`Phase::LeasingAgain`).
                State::Lost if keeper.phase() == Phase::LeasingAgain => {}
                State::Lost | State::Released => {
                    let err = keeper.last_error().cloned().unwrap_or_else(|| {
                        Error::new(
                            ErrorCode::CoordinatorUnavailable,
                            format!("{}: the first claim was not confirmed", self.describe),
                        )
                    });
                    keeper.release(None);
                    shared.wake.notify_all();
                    return Err(err);
                }
                State::Acquiring => {}
            }
            keeper = shared
                .changed
                .wait(keeper)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The node index held now (`None` while leasing anew).
    pub fn index(&self) -> Option<u64> {
        self.shared.keeper().claim().map(|c| c.index)
    }

    /// The previous holder's mark: IDs use time after it.
    pub fn floor_ms(&self) -> Option<i64> {
        self.shared.keeper().claim().and_then(|c| c.floor_ms)
    }

    /// The coordinator's clock minus the local clock, in ms, measured at the latest claim.
    pub fn clock_offset_ms(&self) -> Option<i64> {
        self.shared.keeper().clock_offset_ms()
    }

    pub fn state(&self) -> State {
        self.shared.keeper().state()
    }

    fn is_owner(&self) -> bool {
        std::process::id() == self.owner_pid
    }

    /// Tells the keeper to give the index back, and returns at once: the keeper thread hands
    /// the release to the request thread, which carries it when the request before it (a
    /// claim, say) is answered.
    fn signal_stop(&self, mark_ms: Option<i64>) {
        let shared = &self.shared;
        let mut keeper = shared.keeper();
        keeper.release(mark_ms);
        shared.status.set_state(LeaseState::Released, false);
        drop(keeper);
        shared.wake.notify_all();
    }

    /// Signals the release, then waits (at most the keeper's release wait) until it is carried.
    fn stop(&self, mark_ms: Option<i64>) {
        self.signal_stop(mark_ms);
        let shared = &self.shared;
        let release_wait = shared.keeper().release_wait_ms();
        // On the keeper's clock, as every other deadline of the lease.
        let until = shared.now().saturating_add(release_wait);
        let mut finished = shared.finished.lock().unwrap_or_else(|e| e.into_inner());
        while !*finished {
            let now = shared.now();
            if now >= until {
                return; // the claim expires by itself; the written mark stays
            }
            finished = shared
                .changed
                .wait_timeout(finished, Duration::from_millis((until - now) as u64))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

fn thread_error(err: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::CoordinatorUnavailable,
        format!("cannot start a lease thread: {err}"),
    )
}

/// The request thread: carries each ticket to the backend and gives the answer back.
fn spawn_requests(
    shared: Arc<Shared>,
    mut coordinator: Box<dyn Coordinator>,
) -> Result<mpsc::Sender<Ticket>> {
    let (tx, rx) = mpsc::channel::<Ticket>();
    std::thread::Builder::new()
        .name("flakery-lease-io".into())
        .spawn(move || {
            for ticket in rx {
                let sent = Instant::now();
                let outcome = carry(coordinator.as_mut(), &ticket, &SystemClock);
                let Some(outcome) = outcome else {
                    finish(&shared); // a release, carried: the last request
                    return;
                };
                report(&shared.status, &ticket, &outcome, sent.elapsed());
                let mut keeper = shared.keeper();
                keeper.answer(ticket.seq, outcome, shared.now());
                shared.publish(&keeper, false);
                drop(keeper);
                shared.wake.notify_all();
                shared.changed.notify_all();
            }
        })
        .map_err(|e| thread_error(&e))?;
    Ok(tx)
}

/// Tells the status what an answer confirmed: the round trip, and a mark.
fn report(status: &LeaseStatus, ticket: &Ticket, outcome: &Outcome, took: Duration) {
    match (&ticket.request, outcome) {
        (_, Outcome::Claimed { claim, .. }) => {
            status.set_round_trip(took);
            status.set_mark(claim.floor_ms, false);
            status.unstall();
        }
        (Request::WriteMark { new_ms, .. }, Outcome::Done(_)) => {
            status.set_round_trip(took);
            status.set_mark(Some(*new_ms), true);
            status.unstall();
        }
        (_, Outcome::Done(_)) => status.set_round_trip(took),
        _ => {}
    }
}

/// The keeper thread. It ends when the keeper is released: after handing the release to the
/// request thread (which finishes once it is carried), or at once when nothing is held.
fn drive(shared: &Shared, requests: mpsc::Sender<Ticket>) {
    let mut keeper = shared.keeper();
    loop {
        let now = shared.now();
        let next = keeper.poll(now);
        shared.publish(&keeper, false);
        // Others learn at once (lock-free) that IDs wait on an unconfirmed mark.
        if keeper.mark_awaited_ms(now) >= MARK_STALL_MS {
            shared.status.stall();
        }
        shared.changed.notify_all();
        match next {
            Next::Send(ticket) => {
                let release = matches!(ticket.request, Request::Release { .. });
                if requests.send(ticket).is_err() || release {
                    return;
                }
            }
            Next::Sleep(at) => {
                let wait = Duration::from_millis(at.saturating_sub(now).clamp(1, 60_000) as u64);
                keeper = shared
                    .wake
                    .wait_timeout(keeper, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            Next::Finished => break,
        }
    }
    drop(keeper);
    finish(shared);
}

fn finish(shared: &Shared) {
    *shared.finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
    shared.changed.notify_all();
}

impl fmt::Debug for KeptLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeptLease")
            .field("coordinator", &self.describe)
            .field("owner_pid", &self.owner_pid)
            .finish()
    }
}

impl NodeLease for KeptLease {
    fn source(&self) -> NodeSource {
        self.source
    }

    /// What the keeper grants now, without waiting (a generator never calls this: the
    /// keeper publishes its grants, and the generator asks through `ask`).
    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        let shared = &self.shared;
        let mut keeper = shared.keeper();
        let granted = keeper.grant(want_ms, now_ms, shared.now());
        shared.publish(&keeper, false);
        drop(keeper);
        shared.wake.notify_all();
        granted.map_err(|refusal| match refusal {
            Refusal::Lost(err) => err,
            Refusal::Unconfirmed => Error::new(
                ErrorCode::LeaseLost,
                format!("{}: the claim is not confirmed again yet", self.describe),
            ),
            Refusal::NeedMark | Refusal::Wait(_) => Error::new(
                ErrorCode::LeaseLost,
                format!(
                    "{}: the high-water mark does not cover {} yet",
                    self.describe,
                    crate::timestamp::format_rfc3339_ms(want_ms)
                ),
            ),
        })
    }

    fn publishes(&self) -> bool {
        true
    }

    /// Hands the want to the keeper, which grants it at once when it can (and publishes the
    /// grant), or keeps it and has its thread write the mark (the answer is published when
    /// it comes). The keeper thread is woken either way: a generator that asks is busy, and
    /// the keeper keeps a busy generator's mark ahead of it.
    fn ask(&self, want_ms: i64, now_ms: i64) -> Asked {
        let shared = &self.shared;
        let mut keeper = shared.keeper();
        let granted = keeper.grant(want_ms, now_ms, shared.now());
        shared.publish(&keeper, false);
        if let Ok(grant) = granted {
            shared.status.unstall();
            drop(keeper);
            shared.wake.notify_all();
            return Asked::Granted(grant);
        }
        let within = keeper.answer_within_ms();
        drop(keeper);
        shared.wake.notify_all();
        Asked::Within(Duration::from_millis(within as u64))
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        // Only the never-connected template is used: nothing of the parent's threads.
        let coordinator = self
            .template
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reopen()?;
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
        Ok(Box::new(KeptLease::start(
            coordinator,
            &self.layout,
            clock,
        )?))
    }

    fn attach(&self, fence: Fence) {
        fence.report(self.shared.status.clone());
        let mut keeper = self.shared.keeper();
        keeper.attach(fence);
        keeper.publish_held(self.shared.now());
    }

    fn release(&self, last_used_ms: i64) {
        if self.is_owner() {
            self.stop((last_used_ms != i64::MIN).then_some(last_used_ms));
        }
    }

    fn signal_release(&self, last_used_ms: i64) {
        if self.is_owner() {
            self.signal_stop((last_used_ms != i64::MIN).then_some(last_used_ms));
        }
    }
}

impl Drop for KeptLease {
    fn drop(&mut self) {
        if !self.is_owner() {
            // A forked child: the threads and the connection are the parent's.
            return;
        }
        // Nothing blocks in Drop: the keeper and request threads hold the shared state and
        // finish the release after this returns (or the claim expires by itself).
        self.signal_stop(None);
        // SAFETY: dropped once, here, and never used again.
        unsafe {
            ManuallyDrop::drop(&mut self.shared);
            ManuallyDrop::drop(&mut self.template);
        }
    }
}

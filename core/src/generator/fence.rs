//! What a generator and its node lease share: the node ID and its source, the grant (what may
//! be issued under it), the `NodeLease` trait the generator asks, and the `Fence` through
//! which a lease closes the generator's hot path (docs/spec.md#the-generators-slow-path).

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::sync::{self, AtomicU64, Condvar, Mutex, MutexGuard};
use crate::error::{Error, Result};
use crate::lease::status::LeaseStatus;

/// Where a generator's node ID came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSource {
    /// Passed to the constructor.
    Explicit,
    /// `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID` as integers.
    Environment,
    /// `FLAKERY_WORKER_ID=hostname-ordinal`: the trailing number of the host name.
    Hostname,
    /// Leased from ZooKeeper.
    ZooKeeper,
    /// Leased among the processes of this host through lock files.
    HostLease,
    /// Leased from a table in PostgreSQL or MySQL/MariaDB.
    Database,
}

impl NodeSource {
    pub const fn as_str(self) -> &'static str {
        match self {
            NodeSource::Explicit => "explicit",
            NodeSource::Environment => "environment",
            NodeSource::Hostname => "hostname",
            NodeSource::ZooKeeper => "zookeeper",
            NodeSource::HostLease => "host_lease",
            NodeSource::Database => "database",
        }
    }
}

impl fmt::Display for NodeSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NodeId {
    pub datacenter_id: u64,
    pub worker_id: u64,
}

/// What a lease allows at the moment it is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    pub node: NodeId,
    /// IDs must use time strictly after this Unix millisecond (an earlier holder of the node
    /// ID may have used it); `i64::MIN` for none.
    pub floor_ms: i64,
    /// IDs may use ticks that start at or before this Unix millisecond; asking again past it.
    pub until_ms: i64,
}

/// A source of node identity. Implementations must be cheap to ask again: the generator asks
/// whenever it reaches `until_ms`, and never on its hot path otherwise.
pub trait NodeLease: Send + Sync + fmt::Debug {
    fn source(&self) -> NodeSource;

    /// What may be issued now, for a generator that wants to use the tick starting at
    /// `want_ms`. `now_ms` is the generator's clock. A lease that may be lost answers
    /// `lease_lost`; one that can extend its high-water mark does so before answering.
    ///
    /// Grants are asked with no lock held, so two answers may be applied in either order: a
    /// lease whose node ID changes must close the attached fence (`Fence::close`) before it
    /// answers with the new one, so that an answer given before the change is discarded
    /// rather than applied after it (`Generator::refresh_grant`).
    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant>;

    /// Whether this lease publishes its grants into the attached fence (`Fence::publish`,
    /// `Fence::refuse`, `Fence::close`) from a driver of its own. The generator then never
    /// calls `grant`: it takes the published grant, and when that does not cover the tick it
    /// wants it calls `ask` and waits for the next publication, holding no lock
    /// (docs/spec.md#the-generators-slow-path).
    fn publishes(&self) -> bool {
        false
    }

    /// For a lease that publishes: a generator wants the tick starting at `want_ms` (`now_ms`
    /// its clock). Records the need and returns at once; the answer is published. Also called
    /// once each time the generator takes a new published grant, so that the lease knows the
    /// generator is busy and publishes its next grant before this one runs out.
    ///
    /// Answers with the grant when the lease can answer at once (`Asked::Granted`: it may not
    /// cover `want_ms`, and the generator then refuses at once, as with `grant`), or else how
    /// long the generator may wait for the publication before it gives up with
    /// `coordinator_unavailable`: a bound the lease's driver always answers within (a grant,
    /// or a refusal), so that only a driver that stopped ever reaches it.
    fn ask(&self, want_ms: i64, now_ms: i64) -> Asked {
        let _ = (want_ms, now_ms);
        Asked::Within(Duration::ZERO)
    }

    /// The lease a forked child uses in place of this one: a fresh lease of its own, or
    /// `forked` for an identity that cannot be leased anew.
    fn after_fork(&self) -> Result<Box<dyn NodeLease>>;

    /// Called once with the generator's fence: closing it sends the generator's next call to
    /// the slow path at once, for a lease that learns it may be lost (a ZooKeeper disconnect)
    /// between grants; a lease that publishes publishes into it.
    fn attach(&self, fence: Fence) {
        let _ = fence;
    }

    /// Gives the node ID back now; later grants fail. `last_used_ms` is the time of the last
    /// ID issued under it (`i64::MIN` for none), so that a persisted high-water mark can be
    /// brought down from its look-ahead to what was really used.
    ///
    /// It may wait (bounded) until the coordinator confirms: `Generator::close` calls it.
    fn release(&self, last_used_ms: i64) {
        let _ = last_used_ms;
    }

    /// Like `release`, but returns at once: the lease gives the node ID back in the
    /// background (its own threads), or lets it expire. A dropped generator calls it, so
    /// nothing blocks in `Drop` (a garbage collector's thread, a JavaScript finalizer). The
    /// default calls `release`, which is right for a lease whose release is local and quick
    /// (a fixed ID, the host lease's file); a lease that talks to a server must override it.
    fn signal_release(&self, last_used_ms: i64) {
        self.release(last_used_ms)
    }
}

/// A lease's answer to `NodeLease::ask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// All the lease grants now, whether or not it covers the tick asked for: one past the
    /// lease's deadline but within its mark is refused at once, never awaited (a renewal
    /// moves the deadline by at most half a term, which a far borrowed tick may never reach).
    Granted(Grant),
    /// The answer will be published within this bound.
    Within(Duration),
}

// Dropping a lease must be safe in a forked child that inherited it: there it must give
// nothing back on the parent's behalf (no unlock, no write, no use of the parent's threads).

/// The generator's limit on the ticks it may issue without asking its lease again, and the
/// grant its lease published, shared with the lease. The limit and its close count belong to
/// the generator for its life; the publication belongs to one lease (`for_new_lease`), so
/// that a forked child's new lease never shows the child its parent's grant, nor leaves the
/// child a lock the parent's keeper thread held at the fork.
#[derive(Debug, Clone, Default)]
pub struct Fence {
    state: Arc<FenceState>,
    posted: Arc<Posted>,
}

/// Aligned to a cache line of its own: the hot path reads `limit` on every call.
#[derive(Debug, Default)]
#[repr(align(64))]
struct FenceState {
    limit: AtomicU64,
    /// Its place in the fork list (`GENERATOR_FENCES`; 0 for a fence not in it).
    slot: usize,
    /// Counts `close` calls, so that a limit granted while the lease was being lost cannot
    /// reopen the fence (see `Generator::refresh_grant`).
    closes: AtomicU64,
    /// What the lease attached to this fence says of itself (none: a node ID that cannot be
    /// lost). Carried here so that any lease, however wrapped, reports it in `attach`.
    status: std::sync::Mutex<Option<LeaseStatus>>,
    /// Times the generator found no published grant that covered the tick it wanted, and
    /// asked; and times it then waited for a publication. Counted without a lock.
    grant_asks: AtomicU64,
    grant_waits: AtomicU64,
}

/// The grant a lease published, and the condition variable a generator that needs more waits
/// on. Its lock is held only to copy a few words: never across I/O, never with another of
/// flakery's locks taken after it.
#[derive(Debug, Default)]
struct Posted {
    slot: Mutex<Published>,
    changed: Condvar,
}

/// What a lease published, as a generator reads it in one piece.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// What may be issued now; `None` while the lease may be lost, or before its first grant.
    pub grant: Option<Grant>,
    /// The latest refusal (`lease_lost`, a released lease) and the epoch it was published at:
    /// the answer to a generator that asked before that epoch.
    pub refusal: Option<(u64, Error)>,
    /// Counts every change of the publication (a grant, a refusal, a close).
    pub epoch: u64,
    /// The fence's close count as the grant was read: opening with it fails after a close.
    pub closes: u64,
}

/// The fences of every open generator of this process, so that a fork's child closes them all
/// before it runs anything else: a generator's hot path then needs no fork check of its own
/// (a forked child's first call finds its limit at 0 and takes the slow path, which leases
/// anew). A closed generator leaves the list (`Fence::unregister`): its limit stays 0 for
/// good, so the list costs what the open generators do, whenever a runtime frees the closed
/// ones. Taken only inside a fork section, so no thread holds it at a fork.
static GENERATOR_FENCES: std::sync::Mutex<Fences> = std::sync::Mutex::new(Fences {
    slots: Vec::new(),
    free: Vec::new(),
});

/// A slot per open generator; a closed one's slot is reused by the next generator made.
struct Fences {
    slots: Vec<Option<Weak<FenceState>>>,
    free: Vec<usize>,
}

/// In a fork's child (the `pthread_atfork` child handler, one thread): closes every
/// generator's limit. Only stores: no lock another thread could have held, no allocation.
pub(crate) fn shut_all_after_fork() {
    let fences = GENERATOR_FENCES.lock().unwrap_or_else(|e| e.into_inner());
    for fence in fences.slots.iter().flatten() {
        if let Some(state) = fence.upgrade() {
            state.limit.store(0, Ordering::SeqCst);
        }
    }
}

/// How many generators the fork list holds.
#[cfg(test)]
fn fork_list_len() -> usize {
    let fences = GENERATOR_FENCES.lock().unwrap_or_else(|e| e.into_inner());
    fences.slots.iter().filter(|slot| slot.is_some()).count()
}

impl Fence {
    /// A generator's own fence, closed in a fork's child (`shut_all_after_fork`) until the
    /// generator is closed (`unregister`).
    pub(crate) fn for_generator() -> Fence {
        let mut fences = crate::fork::lock(&GENERATOR_FENCES);
        let slot = match fences.free.pop() {
            Some(slot) => slot,
            None => {
                fences.slots.push(None);
                fences.slots.len() - 1
            }
        };
        let fence = Fence {
            state: Arc::new(FenceState {
                slot,
                ..FenceState::default()
            }),
            posted: Arc::default(),
        };
        fences.slots[slot] = Some(Arc::downgrade(&fence.state));
        drop(fences);
        fence
    }

    /// Takes a closed generator's fence off the fork list (its limit is 0 for good): once,
    /// from `Generator::close` or its drop. A short lock, never a wait.
    pub(crate) fn unregister(&self) {
        let mut fences = crate::fork::lock(&GENERATOR_FENCES);
        let slot = self.state.slot;
        let mine = fences
            .slots
            .get(slot)
            .and_then(Option::as_ref)
            .is_some_and(|weak| std::ptr::eq(weak.as_ptr(), Arc::as_ptr(&self.state)));
        if mine {
            fences.slots[slot] = None;
            fences.free.push(slot);
        }
    }

    /// A handle on the same limit with a publication of its own, for a lease attached anew
    /// (the first, or a forked child's).
    pub(crate) fn for_new_lease(&self) -> Fence {
        Fence {
            state: Arc::clone(&self.state),
            posted: Arc::default(),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Published> {
        self.posted.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the generator ask its lease again before its next ID: the limit closes and the
    /// published grant is withdrawn, in one step as a reader of the publication sees it.
    pub fn close(&self) {
        let mut slot = self.slot();
        slot.grant = None;
        slot.epoch += 1;
        self.state.closes.fetch_add(1, Ordering::SeqCst);
        self.state.limit.store(0, Ordering::SeqCst);
        drop(slot);
        self.posted.changed.notify_all();
    }

    /// Publishes what may be issued now (a lease's driver, after each change of its state).
    /// A grant equal to the one published changes nothing and wakes no one.
    pub fn publish(&self, grant: Grant) {
        let mut slot = self.slot();
        if slot.grant == Some(grant) {
            return;
        }
        slot.grant = Some(grant);
        slot.epoch += 1;
        drop(slot);
        self.posted.changed.notify_all();
    }

    /// Publishes why nothing may be issued: a generator that asked before this is answered
    /// with `error`. The grant is withdrawn.
    pub fn refuse(&self, error: Error) {
        let mut slot = self.slot();
        slot.grant = None;
        slot.epoch += 1;
        slot.refusal = Some((slot.epoch, error));
        drop(slot);
        self.posted.changed.notify_all();
    }

    /// Makes every generator waiting for a publication look again and ask anew, the grant
    /// unchanged: the lease dropped a want it kept, whose answer a new ask now gets at once.
    pub fn wake(&self) {
        let mut slot = self.slot();
        slot.epoch += 1;
        drop(slot);
        self.posted.changed.notify_all();
    }

    /// The publication as it stands, read in one piece with the close count.
    pub fn published(&self) -> Published {
        let slot = self.slot();
        Published {
            closes: self.closes(),
            ..slot.clone()
        }
    }

    /// Waits until the publication changes from `epoch`, or `timeout` passes, and counts the
    /// wait. No other lock is held: a fork, a reader and the lease's driver go
    /// on meanwhile.
    pub(crate) fn wait_for_publication(&self, epoch: u64, timeout: Duration) {
        let slot = self.slot();
        if slot.epoch != epoch {
            return;
        }
        // Counted before the wait (with the lock held, so a publisher that sees the count
        // finds the waiter waiting).
        self.state.grant_waits.fetch_add(1, Ordering::SeqCst);
        sync::wait_while(&self.posted.changed, slot, timeout, |slot| {
            slot.epoch == epoch
        });
    }

    /// Times the generator found no published grant covering the tick it wanted and asked
    /// (`NodeLease::ask`): a lease that publishes ahead keeps this still while the generator
    /// is busy.
    pub fn grant_asks(&self) -> u64 {
        self.state.grant_asks.load(Ordering::SeqCst)
    }

    pub(crate) fn count_grant_ask(&self) {
        self.state.grant_asks.fetch_add(1, Ordering::SeqCst);
    }

    /// Times the generator waited for a publication after it asked (counted as the wait
    /// begins).
    pub fn grant_waits(&self) -> u64 {
        self.state.grant_waits.load(Ordering::SeqCst)
    }

    #[inline(always)]
    pub(crate) fn limit(&self) -> u64 {
        self.state.limit.load(Ordering::SeqCst)
    }

    /// How many times the fence was closed: a limit granted before a close is void.
    pub fn closes(&self) -> u64 {
        self.state.closes.load(Ordering::SeqCst)
    }

    /// Opens the fence up to `limit`, unless it was closed since `closes_before` was read:
    /// then it stays closed, and the next call asks the lease again. Called on the handle the
    /// lease closes through, under the lock its `close` holds: a close is wholly before the
    /// opening (which sees its count) or after it (and shuts what it opened). A check, store
    /// and check again without the lock is right only under a total order of every SeqCst
    /// access, which the loom models do not assume (docs/development.md#loom-models).
    pub(crate) fn open(&self, limit: u64, closes_before: u64) {
        let _slot = self.slot();
        if self.closes() == closes_before {
            self.state.limit.store(limit, Ordering::SeqCst);
        }
    }

    /// Called by a lease in `attach`: its status is what `status` answers from then on.
    pub fn report(&self, status: LeaseStatus) {
        *self.state.status.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
    }

    /// The attached lease's status, readable without a lock; a node ID that cannot be lost
    /// is held (one status, kept, so that every reader sees its close).
    pub fn status(&self) -> LeaseStatus {
        self.state
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(LeaseStatus::fixed)
            .clone()
    }

    /// Closes the fence from the generator's side (a change of identity, a fork, `close`).
    pub(crate) fn shut(&self) {
        self.state.limit.store(0, Ordering::SeqCst);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use crate::Generator;

    /// The fork list holds the open generators, not every generator not yet freed: 100,000
    /// made and closed, kept as a runtime keeps the objects its collector has not finalized
    /// yet (Node's `new Generator().close()`), and as many dropped, leave it as short as the
    /// open ones make it (other tests of this process run beside this one and hold a few).
    #[test]
    fn the_fork_list_costs_what_the_open_generators_do() {
        let open = Generator::builder().worker_id(1).build().unwrap();
        let mut closed = Vec::with_capacity(100_000);
        for _ in 0..100_000 {
            let generator = Generator::builder().worker_id(2).build().unwrap();
            generator.close();
            closed.push(generator);
            drop(Generator::builder().worker_id(3).build().unwrap());
        }
        let listed = super::fork_list_len();
        assert!(listed < 1_000, "{listed} generators in the fork list");
        drop((open, closed));
    }
}

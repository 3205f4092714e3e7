//! What a generator and its node lease share: the node ID and its source, the grant (what may
//! be issued under it), the `NodeLease` trait the generator asks, and the `Fence` through
//! which a lease closes the generator's hot path (docs/spec.md#the-generators-slow-path).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Result;
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

    /// The lease a forked child uses in place of this one: a fresh lease of its own, or
    /// `forked` for an identity that cannot be leased anew.
    fn after_fork(&self) -> Result<Box<dyn NodeLease>>;

    /// Called once with the generator's fence: closing it sends the generator's next call to
    /// `grant` at once, for a lease that learns it may be lost (a ZooKeeper disconnect)
    /// between grants.
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

// Dropping a lease must be safe in a forked child that inherited it: there it must give
// nothing back on the parent's behalf (no unlock, no write, no use of the parent's threads).

/// The generator's limit on the ticks it may issue without asking its lease again, shared
/// with the lease.
#[derive(Debug, Clone, Default)]
pub struct Fence(Arc<FenceState>);

/// Aligned to a cache line of its own: the hot path reads `limit` on every call.
#[derive(Debug, Default)]
#[repr(align(64))]
struct FenceState {
    limit: AtomicU64,
    /// Counts `close` calls, so that a limit granted while the lease was being lost cannot
    /// reopen the fence (see `Generator::refresh_grant`).
    closes: AtomicU64,
    /// What the lease attached to this fence says of itself (none: a node ID that cannot be
    /// lost). Carried here so that any lease, however wrapped, reports it in `attach`.
    status: Mutex<Option<LeaseStatus>>,
}

impl Fence {
    /// Makes the generator ask its lease again before its next ID.
    pub fn close(&self) {
        self.0.closes.fetch_add(1, Ordering::SeqCst);
        self.0.limit.store(0, Ordering::SeqCst);
    }

    #[inline(always)]
    pub(crate) fn limit(&self) -> u64 {
        self.0.limit.load(Ordering::SeqCst)
    }

    /// How many times the fence was closed: a limit granted before a close is void.
    pub fn closes(&self) -> u64 {
        self.0.closes.load(Ordering::SeqCst)
    }

    /// Opens the fence up to `limit`, unless it was closed since `closes_before` was read:
    /// then it stays closed, and the next call asks the lease again.
    pub(crate) fn open(&self, limit: u64, closes_before: u64) {
        if self.closes() != closes_before {
            return;
        }
        self.0.limit.store(limit, Ordering::SeqCst);
        // A close between the check and the store: take the store back.
        if self.closes() != closes_before {
            self.0.limit.store(0, Ordering::SeqCst);
        }
    }

    /// Called by a lease in `attach`: its status is what `status` answers from then on.
    pub fn report(&self, status: LeaseStatus) {
        *self.0.status.lock().unwrap_or_else(|e| e.into_inner()) = Some(status);
    }

    /// The attached lease's status, readable without a lock; a node ID that cannot be lost
    /// is held (one status, kept, so that every reader sees its close).
    pub fn status(&self) -> LeaseStatus {
        self.0
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(LeaseStatus::fixed)
            .clone()
    }

    /// Closes the fence from the generator's side (a change of identity, a fork, `close`).
    pub(crate) fn shut(&self) {
        self.0.limit.store(0, Ordering::SeqCst);
    }
}

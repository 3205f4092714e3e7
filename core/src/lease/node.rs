//! Node identity: which datacenter and worker IDs a generator stamps into its IDs, where they
//! came from, and what time it may use under them. A generator asks its `NodeLease` once when
//! it starts and again, off the hot path, whenever it has used up what it was granted.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorCode, Result};
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

/// How far ahead of use a lease writes its high-water mark: one write per this much time under
/// sustained generation, and the longest a successor of a crashed holder may have to wait on
/// one host. It stays below the default backwards tolerance (1 s), so that a generator that
/// takes back its own ZooKeeper index right after losing it waits instead of failing.
pub const LOOKAHEAD_MS: i64 = 500;

/// The longest text a stored high-water mark may have: 20 digits and sign, padding, a newline.
pub const MAX_MARK_BYTES: usize = 64;

/// A stored high-water mark, read strictly: `Ok(None)` for no mark (empty, or only white
/// space), `Ok(Some(ms))` for a decimal Unix millisecond, and `Err(reason)` for anything else
/// (not UTF-8, not a number, too long). A lease must treat `Err` as "this node ID's floor is
/// unknown" and refuse the node ID, never as "no floor".
pub fn read_mark(data: &[u8]) -> std::result::Result<Option<i64>, String> {
    if data.len() > MAX_MARK_BYTES {
        return Err(format!(
            "{} bytes, more than a high-water mark ever has ({MAX_MARK_BYTES})",
            data.len()
        ));
    }
    let text = std::str::from_utf8(data).map_err(|_| "not text".to_string())?;
    let text = text.trim_matches(|c| c == ' ' || c == '\n');
    if text.is_empty() {
        return Ok(None);
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{}' is not a decimal Unix millisecond",
            text.escape_debug()
        ));
    }
    text.parse::<i64>()
        .map(Some)
        .map_err(|_| format!("'{text}' is out of range"))
}

/// Why a claim skips an index whose stored mark `mark_ms` is past the keeper's
/// `limit_ms` (`keeper::MAX_MARK_AHEAD_MS` past the clock), for `worker_ids_exhausted`.
pub fn mark_ahead(mark_ms: i64, limit_ms: i64) -> String {
    let ahead_ms = mark_ms
        .saturating_sub(limit_ms)
        .saturating_add(crate::lease::keeper::MAX_MARK_AHEAD_MS);
    format!(
        "its high-water mark {mark_ms} ({}) is {ahead_ms} ms ahead of this host's clock (more \
         than the {} ms a holder writes it ahead; written under a clock far ahead, or this \
         clock was set back?): a generator under it could issue nothing until then",
        crate::timestamp::format_rfc3339_ms(mark_ms),
        crate::lease::keeper::MAX_MARK_AHEAD_MS
    )
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
    fn release(&self, last_used_ms: i64) {
        let _ = last_used_ms;
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

/// A node ID fixed for the life of the generator: explicit or from the environment.
#[derive(Debug, Clone)]
pub struct FixedNode {
    node: NodeId,
    source: NodeSource,
}

impl FixedNode {
    pub fn new(node: NodeId, source: NodeSource) -> Self {
        FixedNode { node, source }
    }
}

impl NodeLease for FixedNode {
    fn source(&self) -> NodeSource {
        self.source
    }

    fn grant(&self, _want_ms: i64, _now_ms: i64) -> Result<Grant> {
        Ok(Grant {
            node: self.node,
            floor_ms: i64::MIN,
            until_ms: i64::MAX,
        })
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        let how = match self.source {
            NodeSource::Explicit => "passed to the constructor",
            NodeSource::Environment => "taken from FLAKERY_WORKER_ID / FLAKERY_DATACENTER_ID",
            _ => "taken from the host name",
        };
        Err(Error::new(
            ErrorCode::Forked,
            format!(
                "this generator was made before fork() with a fixed node ID (datacenter {}, \
                 worker {}, {how}); the child would repeat its parent's IDs. Make a new \
                 generator in the child with a node ID of its own, or leave the node ID \
                 unset so that flakery leases one",
                self.node.datacenter_id, self.node.worker_id
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::read_mark;

    #[test]
    fn marks_are_read_strictly() {
        assert_eq!(read_mark(b""), Ok(None));
        assert_eq!(read_mark(b"   \n"), Ok(None));
        assert_eq!(read_mark(b"1700000000000"), Ok(Some(1_700_000_000_000)));
        assert_eq!(
            read_mark(b"       1700000000000\n"),
            Ok(Some(1_700_000_000_000))
        );
        assert_eq!(read_mark(b"-5"), Ok(Some(-5)));
        for bad in [
            &b"garbage"[..],
            b"+5",
            b"1e3",
            b"12 34",
            b"\xff",
            b"-",
            b"99999999999999999999",
        ] {
            assert!(read_mark(bad).is_err(), "{bad:?} was read as a mark");
        }
        assert!(read_mark(&[b'1'; 65]).is_err());
    }
}

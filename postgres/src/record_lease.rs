//! A backend's `NodeLease` when the node ID is leased: the lease worker's grant in shared
//! memory (`GrantRecord`), bounded by the cluster's own high-water mark (`ClusterMark`),
//! which stays the floor against this server's clock whatever node ID the coordinator gives.
//!
//! The generator asks only when it reaches the end of what it holds. A grant that covers the
//! tick is answered at once (and the want told to the worker, so that the keeper knows the
//! cluster is busy and writes its mark ahead). Otherwise the want is recorded, the worker's
//! latch set, and the record read again until it covers the tick, or the worker refuses the
//! want (the keeper's code and message), or the worker's bound passes. The wait holds no lock,
//! and sleeps on the backend's latch between two readings: a cancel, a statement timeout or a
//! terminate ends it there, as it ends any of PostgreSQL's waits.

use std::time::Instant;

use flakery::{Clock as _, Error, Grant, NodeLease, NodeSource};
use pgrx::pg_sys;

use crate::cluster_mark::{pause, ClusterMark};
use crate::grant_record::{no_answer, GrantRecord};

pub struct RecordLease {
    record: &'static GrantRecord,
    mark: ClusterMark,
    source: NodeSource,
    /// The coordinator, its password masked, and the setting that names it.
    describe: String,
    setting: &'static str,
    /// The coordinator's term: bounds the wait for a worker that said no bound yet.
    term_ms: i64,
}

impl std::fmt::Debug for RecordLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordLease")
            .field("coordinator", &self.describe)
            .finish()
    }
}

/// The worker's grant read from shared memory moves in these steps (ms) while a backend waits.
const POLL_MS: i64 = 1;

impl RecordLease {
    pub fn new(
        record: &'static GrantRecord,
        mark: ClusterMark,
        source: NodeSource,
        describe: String,
        term_ms: i64,
    ) -> RecordLease {
        let setting = match source {
            NodeSource::ZooKeeper => "flakery.zookeeper",
            _ => "flakery.database_url",
        };
        RecordLease {
            record,
            mark,
            source,
            describe,
            setting,
            term_ms,
        }
    }

    fn wake_worker(&self) {
        let latch = self.record.latch();
        if latch != 0 {
            // SAFETY: the worker's PGPROC latch, in shared memory mapped at the same address
            // in every process of the cluster; SetLatch on a latch whose owner left only
            // wakes whoever owns it now.
            unsafe { pg_sys::SetLatch(latch as *mut pg_sys::Latch) };
        }
    }

    fn named(&self, e: Error) -> Error {
        Error::new(
            e.code(),
            format!("{} ({} in postgresql.conf)", e.message(), self.setting),
        )
    }

    /// The worker's grant that covers `want_ms`, waiting for it if need be.
    fn leased(&self, want_ms: i64) -> flakery::Result<Grant> {
        let seen = self.record.read();
        self.record.want(want_ms);
        if let Some(grant) = seen.grant.filter(|g| want_ms <= g.until_ms) {
            return Ok(grant);
        }
        self.wake_worker();
        let started = Instant::now();
        loop {
            let now = self.record.read();
            if let Some(grant) = now.grant.filter(|g| want_ms <= g.until_ms) {
                return Ok(grant);
            }
            if now.refusals > seen.refusals {
                if let Some(refusal) = now.refusal {
                    return Err(self.named(refusal));
                }
            }
            // The keeper's own bound once the worker said it; before (the first claim in
            // flight: a connection, the claim, the first mark, each bounded by the term)
            // three terms.
            let bound = match now.within_ms {
                0 => self.term_ms.saturating_mul(3),
                within => within.max(self.term_ms),
            };
            let waited = started.elapsed().as_millis() as i64;
            if waited >= bound {
                return Err(no_answer(&self.describe, want_ms, waited));
            }
            pause(POLL_MS);
        }
    }
}

impl NodeLease for RecordLease {
    fn source(&self) -> NodeSource {
        self.source
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> flakery::Result<Grant> {
        let leased = self.leased(want_ms)?;
        // Before the predecessor's mark (or a new node ID's start, past every tick the last
        // one covered): nothing to issue yet, as the keeper waits for a floor.
        let mut now_ms = now_ms;
        let started = Instant::now();
        while now_ms <= leased.floor_ms
            && leased.floor_ms - now_ms <= flakery::lease::keeper::MAX_MARK_AHEAD_MS
            && started.elapsed().as_millis() as i64 <= flakery::lease::keeper::MAX_MARK_AHEAD_MS
        {
            pause((leased.floor_ms - now_ms + 1).min(POLL_MS * 100));
            now_ms = flakery::SystemClock.now_ms();
        }
        let local = self.mark.grant(want_ms, now_ms)?;
        Ok(Grant {
            node: leased.node,
            floor_ms: leased.floor_ms.max(local.floor_ms),
            until_ms: leased.until_ms.min(local.until_ms),
        })
    }

    /// Backends are forked by the postmaster before they build a generator; a backend never
    /// forks.
    fn after_fork(&self) -> flakery::Result<Box<dyn NodeLease>> {
        Err(Error::new(
            flakery::ErrorCode::Forked,
            "a PostgreSQL backend forked after it made IDs",
        ))
    }
}

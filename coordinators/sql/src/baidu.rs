//! uid-generator's worker IDs (`FLAKERY_DATABASE_MODE=baidu`), for services that leave
//! Baidu's uid-generator and keep its table and layout: as its `DisposableWorkerIdAssigner`,
//! each start inserts one new row into `WORKER_NODE` and takes the row's auto-increment `ID`
//! as its node ID, which no other start ever gets (so there is nothing to renew and no mark:
//! the ID is never used twice). An `ID` past the layout's node IDs fails with
//! `worker_ids_exhausted`, where uid-generator throws "Worker id ... exceeds the max".

use std::time::Duration;

use flakery::clock::{Clock, SystemClock};
use flakery::error::{Error, ErrorCode, Result};
use flakery::layout::Layout;
use flakery::lease::node::{Grant, NodeId, NodeLease, NodeSource};

use super::coordinator::{host_name, open_link};
use super::link::Unanswered;
use flakery::DatabaseUrl;

/// uid-generator's `WorkerNodeType`: 1 is CONTAINER, 2 is ACTUAL (a real machine).
const ACTUAL: i32 = 2;

/// A node ID taken from a new `WORKER_NODE` row.
#[derive(Debug, Clone)]
pub struct BaiduWorkerNode {
    url: DatabaseUrl,
    layout: Layout,
    timeout: Duration,
    row_id: i64,
    node: NodeId,
    /// IDs use time after this: a new row has no mark, so the start waits as the keeper's
    /// does for any record with none (`keeper::FRESH_RECORD_WAIT_MS`): a row ID given again
    /// (the table emptied, its counter reset) could belong to a generator still running.
    floor_ms: i64,
}

impl BaiduWorkerNode {
    /// Inserts a `WORKER_NODE` row (creating the table if it is missing) within `timeout`.
    pub fn acquire(url: DatabaseUrl, layout: &Layout, timeout: Duration) -> Result<Self> {
        let unavailable = |detail: String| {
            Error::new(
                ErrorCode::CoordinatorUnavailable,
                format!(
                    "{} at {} (WORKER_NODE table): {}",
                    url.kind().name(),
                    url.host(),
                    url.scrub(&detail)
                ),
            )
        };
        let described = |unanswered| match unanswered {
            Unanswered::Timeout => format!("no answer within {} ms", timeout.as_millis()),
            Unanswered::Failed(why) => why,
        };
        let link = open_link(&url, timeout).map_err(|u| unavailable(described(u)))?;
        let host = host_name();
        // uid-generator's PORT for a real machine: the start time and a random number.
        let port = format!("{}-{}", SystemClock.now_ms(), std::process::id());
        let row_id = link
            .call(timeout, move |db| {
                db.ensure_worker_node_table()?;
                db.insert_worker_node(&host, &port, ACTUAL)
            })
            .map_err(|u| unavailable(described(u)))?;
        let node_ids = layout.capacity().node_ids;
        let index = u64::try_from(row_id)
            .ok()
            .filter(|&id| id < node_ids)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::WorkerIdsExhausted,
                    format!(
                        "WORKER_NODE in {} at {} gave ID {row_id}, past the layout's {node_ids} \
                     node IDs (0 to {}); every start takes a new row, so the IDs are used \
                     up: a layout with more node bits, or a new WORKER_NODE table with a \
                     new epoch, is needed",
                        url.kind().name(),
                        url.host(),
                        node_ids.saturating_sub(1)
                    ),
                )
            })?;
        let (datacenter_id, worker_id) = layout.node_of_index(index);
        Ok(BaiduWorkerNode {
            url,
            layout: layout.clone(),
            timeout,
            row_id,
            node: NodeId {
                datacenter_id,
                worker_id,
            },
            floor_ms: SystemClock
                .now_ms()
                .saturating_add(flakery::lease::keeper::FRESH_RECORD_WAIT_MS),
        })
    }

    /// The `ID` of the row this start inserted.
    pub fn row_id(&self) -> i64 {
        self.row_id
    }
}

impl NodeLease for BaiduWorkerNode {
    fn source(&self) -> NodeSource {
        NodeSource::Database
    }

    fn grant(&self, _want_ms: i64, now_ms: i64) -> Result<Grant> {
        if now_ms < self.floor_ms {
            // Once, at start (bounded by the wait): nothing may be issued before the floor.
            let left = (self.floor_ms - now_ms).min(flakery::lease::keeper::FRESH_RECORD_WAIT_MS);
            std::thread::sleep(Duration::from_millis(left as u64 + 1));
        }
        Ok(Grant {
            node: self.node,
            floor_ms: self.floor_ms,
            until_ms: i64::MAX,
        })
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        // A forked child is a new start: a row of its own.
        Ok(Box::new(BaiduWorkerNode::acquire(
            self.url.clone(),
            &self.layout,
            self.timeout,
        )?))
    }
}

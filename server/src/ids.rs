//! The one generator the server hands IDs out of, and what it knows of its identity: whether
//! it can issue now (for `/readyz` and the metrics), and a log line whenever that changes.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use flakery::{ErrorCode, Generator, NodeId};
use tokio::sync::watch;

use crate::error::ApiError;
use crate::metrics::Metrics;

/// Batches larger than this are made on a blocking thread: they may wait for ticks.
const INLINE_BATCH: usize = 4096;

/// Large batches made at once: each holds up to 100000 IDs and their text until answered, so
/// this (not the request count) bounds a batch flood's memory. Others wait their turn.
const BATCH_SLOTS: usize = 8;

/// How often the identity is checked when no request has told us anything.
const PROBE_EVERY: Duration = Duration::from_millis(250);

pub struct Ids {
    pub generator: Generator,
    pub metrics: Metrics,
    /// The constant fields' values given to the generator (Vesta's version, type, method).
    constants: Vec<(String, u64)>,
    ready: AtomicBool,
    batch_slots: tokio::sync::Semaphore,
}

impl Ids {
    pub fn new(generator: Generator, metrics: Metrics, constants: Vec<(String, u64)>) -> Arc<Self> {
        let node = generator.node();
        metrics.datacenter_id.set(node.datacenter_id as i64);
        metrics.worker_id.set(node.worker_id as i64);
        metrics.lease_held.set(1);
        Arc::new(Ids {
            generator,
            metrics,
            constants,
            ready: AtomicBool::new(true),
            batch_slots: tokio::sync::Semaphore::new(BATCH_SLOTS),
        })
    }

    pub fn own_constants(&self) -> Vec<(String, u64)> {
        self.constants.clone()
    }

    /// Whether the last attempt to issue (a request's or the probe's) succeeded.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Relaxed)
    }

    pub fn next_id(&self) -> Result<i64, ApiError> {
        let result = match self.generator.try_next_id() {
            Ok(Some(id)) => Ok(id),
            Ok(None) => {
                self.metrics.waits.inc();
                self.generator.next_id()
            }
            Err(error) => Err(error),
        };
        self.account(result.map(|id| (id, 1)))
    }

    /// `count` increasing IDs; a large batch is made off the async threads.
    pub async fn next_ids(self: &Arc<Self>, count: usize) -> Result<Vec<i64>, ApiError> {
        let result = if count <= INLINE_BATCH {
            self.generator.next_ids(count)
        } else {
            let Ok(_slot) = self.batch_slots.acquire().await else {
                return Err(ApiError::overloaded("the server is stopping"));
            };
            let this = Arc::clone(self);
            match tokio::task::spawn_blocking(move || this.generator.next_ids(count)).await {
                Ok(result) => result,
                Err(_) => return Err(ApiError::overloaded("the batch was cancelled")),
            }
        };
        let ids = self.account(result.map(|ids| {
            let n = ids.len() as u64;
            (ids, n)
        }))?;
        Ok(ids)
    }

    fn account<T>(&self, result: flakery::Result<(T, u64)>) -> Result<T, ApiError> {
        match result {
            Ok((value, n)) => {
                self.metrics.ids_issued.inc_by(n);
                if !self.ready.load(Relaxed) {
                    self.set_ready(true, None);
                }
                Ok(value)
            }
            Err(error) => {
                match error.code() {
                    ErrorCode::LeaseLost | ErrorCode::CoordinatorUnavailable => {
                        self.set_ready(false, Some(&error))
                    }
                    ErrorCode::ClockMovedBackwards => self.metrics.clock_backwards.inc(),
                    _ => {}
                }
                Err(error.into())
            }
        }
    }

    fn set_ready(&self, ready: bool, error: Option<&flakery::Error>) {
        if self.ready.swap(ready, Relaxed) == ready {
            return;
        }
        self.metrics.lease_held.set(ready as i64);
        self.metrics.lease_changes.inc();
        let node = self.generator.node();
        self.show_node(node);
        if ready {
            tracing::info!(
                event = "lease_held",
                datacenter_id = node.datacenter_id,
                worker_id = node.worker_id,
                source = %self.generator.source(),
                "identity held again: issuing IDs"
            );
        } else {
            tracing::warn!(
                event = "lease_lost",
                datacenter_id = node.datacenter_id,
                worker_id = node.worker_id,
                reason = error.map(|e| e.message()).unwrap_or(""),
                "identity may be lost: ID requests answer 503 until it is held again"
            );
        }
    }

    fn show_node(&self, node: NodeId) {
        self.metrics.datacenter_id.set(node.datacenter_id as i64);
        self.metrics.worker_id.set(node.worker_id as i64);
    }

    /// Checks the identity every `PROBE_EVERY` by asking for an ID (a gap in the IDs costs
    /// nothing), so `/readyz` turns 503 when a lease is lost even with no traffic, and back.
    pub async fn watch_identity(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut last_node = self.generator.node();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(PROBE_EVERY) => {}
                _ = stop.changed() => return,
            }
            let this = Arc::clone(&self);
            let probe = tokio::task::spawn_blocking(move || this.generator.try_next_id()).await;
            let Ok(result) = probe else { continue };
            match result {
                Ok(_) => self.set_ready(true, None),
                Err(error)
                    if matches!(
                        error.code(),
                        ErrorCode::LeaseLost | ErrorCode::CoordinatorUnavailable
                    ) =>
                {
                    self.set_ready(false, Some(&error))
                }
                Err(_) => {}
            }
            let node = self.generator.node();
            if node != last_node {
                tracing::info!(
                    event = "node_changed",
                    datacenter_id = node.datacenter_id,
                    worker_id = node.worker_id,
                    "the lease gave this server another node ID"
                );
                self.show_node(node);
                last_node = node;
            }
        }
    }
}

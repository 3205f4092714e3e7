//! The one generator the server hands IDs out of, and what it knows of its identity: whether
//! it can issue now (for `/readyz` and the metrics), and a log line whenever that changes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flakery::{ErrorCode, Generator, LeaseState, NodeId};

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::readiness::Readiness;
use crate::stopping::Ticks;

/// Batches up to this size are first tried on the async threads through the generator's
/// lock-free hot path (about 10 ns an ID); the rest of a batch, and every larger one, is made
/// on a blocking thread, where waiting for a tick or asking the lease for time may block.
const INLINE_BATCH: usize = 4096;

/// Large batches made at once: this bounds the blocking threads and CPU a batch flood takes
/// (their memory until sent is bounded by `budget`). Others wait their turn.
const BATCH_SLOTS: usize = 8;

/// Requests on the slow path at once (a used-up tick, the lease asked for time, the identity
/// lost). They serialise on the generator's identity lock anyway; the bound keeps a flood
/// while the lease is lost from holding a blocking thread per request. Others wait their turn
/// without a thread.
const SLOW_SLOTS: usize = 4;

/// How often a request waiting on the slow path reads the lease's status (a few atomic loads).
const STATUS_POLL: Duration = Duration::from_millis(10);

/// How often the identity is checked when no request has told us anything.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

pub struct Ids {
    pub generator: Generator,
    pub metrics: Metrics,
    /// The constant fields' values given to the generator (Vesta's version, type, method).
    constants: Vec<(String, u64)>,
    pub readiness: Readiness,
    batch_slots: Arc<tokio::sync::Semaphore>,
    slow_slots: Arc<tokio::sync::Semaphore>,
    /// Serialises copying the core's slow-path counts into the Prometheus counters.
    slow_path_synced: Mutex<()>,
}

impl Ids {
    pub fn new(generator: Generator, metrics: Metrics, constants: Vec<(String, u64)>) -> Arc<Self> {
        let node = generator.node();
        metrics.datacenter_id.set(node.datacenter_id as i64);
        metrics.worker_id.set(node.worker_id as i64);
        let readiness = Readiness::new(generator.lease_status());
        metrics.show_lease(readiness.lease());
        Arc::new(Ids {
            generator,
            metrics,
            constants,
            readiness,
            batch_slots: Arc::new(tokio::sync::Semaphore::new(BATCH_SLOTS)),
            slow_slots: Arc::new(tokio::sync::Semaphore::new(SLOW_SLOTS)),
            slow_path_synced: Mutex::new(()),
        })
    }

    pub fn own_constants(&self) -> Vec<(String, u64)> {
        self.constants.clone()
    }

    /// Whether load balancers should send requests here (see `readiness`).
    pub fn is_ready(&self) -> bool {
        self.readiness.is_ready()
    }

    /// One ID. The async threads only take the generator's lock-free hot path; what may
    /// block (a used-up tick's wait, the lease asked for more time) runs on a blocking thread,
    /// so that a slow lease write never stalls the other requests of a worker.
    pub async fn next_id(self: &Arc<Self>) -> Result<i64, ApiError> {
        if let Some(made) = self.next_id_now() {
            return made;
        }
        // A lease that cannot issue now would only make this wait: refuse at once.
        if let Some(refusal) = self.readiness.refuse_fast() {
            return Err(refusal);
        }
        let slot = self.slot(&self.slow_slots).await?;
        // The tick may have turned, or the lease been renewed, while this waited its turn.
        if let Some(id) = self.generator.try_next_id_fast() {
            return self.account(Ok((id, 1)));
        }
        if let Some(refusal) = self.readiness.refuse_fast() {
            return Err(refusal);
        }
        let this = Arc::clone(self);
        let made = tokio::task::spawn_blocking(move || {
            let _slot = slot; // held until the generator returns, however this request ends
            this.generator.next_id()
        });
        let result = match self.unless_lease_stops(made).await? {
            Ok(result) => result,
            Err(_) => return Err(ApiError::overloaded("the request was cancelled")),
        };
        self.account(result.map(|id| (id, 1)))
    }

    /// One ID from the generator's fast path, counted, if it has one now (nearly always): a
    /// request that gets one needs no future (`guard`).
    pub fn next_id_now(&self) -> Option<Result<i64, ApiError>> {
        let id = self.generator.try_next_id_fast()?;
        Some(self.account(Ok((id, 1))))
    }

    /// `count` increasing IDs. A small batch comes from the hot path when the current tick
    /// has room; the rest is made off the async threads.
    pub async fn next_ids(self: &Arc<Self>, count: usize) -> Result<Vec<i64>, ApiError> {
        let mut ids = Vec::with_capacity(count);
        if count <= INLINE_BATCH {
            while ids.len() < count {
                match self.generator.try_next_id_fast() {
                    Some(id) => ids.push(id),
                    None => break,
                }
            }
        }
        let result = if ids.len() == count {
            Ok(ids)
        } else if let Some(refusal) = self.readiness.refuse_fast() {
            return Err(refusal);
        } else {
            let slots = if count > INLINE_BATCH {
                &self.batch_slots
            } else {
                &self.slow_slots
            };
            let slot = self.slot(slots).await?;
            let this = Arc::clone(self);
            let made = tokio::task::spawn_blocking(move || {
                let _slot = slot;
                let done = ids.len();
                ids.resize(count, 0);
                this.generator.fill(&mut ids[done..]).map(|()| ids)
            });
            match self.unless_lease_stops(made).await? {
                Ok(result) => result,
                Err(_) => return Err(ApiError::overloaded("the batch was cancelled")),
            }
        };
        self.account(result.map(|ids| {
            let n = ids.len() as u64;
            (ids, n)
        }))
    }

    /// A turn on the slow path, unless the lease stops issuing while this waits for it.
    async fn slot(
        &self,
        slots: &Arc<tokio::sync::Semaphore>,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.unless_lease_stops(Arc::clone(slots).acquire_owned())
            .await?
            .map_err(|_| ApiError::overloaded("the server is stopping"))
    }

    /// `wait`'s output, or the refusal as soon as the lease cannot issue: a request that
    /// waits in line, or on a lease that stopped confirming, is answered 503 at once (what it
    /// waited for goes on without it; an ID made for nobody is a gap, which costs nothing).
    async fn unless_lease_stops<T>(
        &self,
        wait: impl std::future::Future<Output = T>,
    ) -> Result<T, ApiError> {
        let stops = async {
            loop {
                if let Some(refusal) = self.readiness.refuse_fast() {
                    return refusal;
                }
                tokio::time::sleep(STATUS_POLL).await;
            }
        };
        tokio::select! {
            out = wait => Ok(out),
            refusal = stops => Err(refusal),
        }
    }

    /// Brings the core's slow-path counts (sequence waits, borrowed ticks) into the
    /// Prometheus counters, just before they are rendered.
    pub fn sync_slow_path_counts(&self) {
        let Ok(_serial) = self.slow_path_synced.lock() else {
            return;
        };
        let counts = self.generator.slow_path_counts();
        let waits = &self.metrics.sequence_waits;
        waits.inc_by(counts.sequence_waits.saturating_sub(waits.get()));
        let borrowed = &self.metrics.ticks_borrowed;
        borrowed.inc_by(counts.ticks_borrowed.saturating_sub(borrowed.get()));
    }

    fn account<T>(&self, result: flakery::Result<(T, u64)>) -> Result<T, ApiError> {
        match result {
            Ok((value, n)) => {
                self.metrics.ids_issued.inc_by(n);
                self.record(Ok(()));
                Ok(value)
            }
            Err(error) => {
                if error.code() == ErrorCode::ClockMovedBackwards {
                    self.metrics.clock_backwards.inc();
                }
                self.record(Err(&error));
                Err(error.into())
            }
        }
    }

    /// Records an attempt to issue, and logs when it changes whether this server can.
    pub fn record(&self, outcome: Result<(), &flakery::Error>) {
        if !self.readiness.record(outcome.map_err(|e| e.code())) {
            return;
        }
        self.metrics.lease_changes.inc();
        let node = self.generator.node();
        self.show_node(node);
        match outcome {
            Ok(()) => tracing::info!(
                event = "issuing",
                datacenter_id = node.datacenter_id,
                worker_id = node.worker_id,
                source = %self.generator.source(),
                "IDs are issued again; /readyz answers 200"
            ),
            Err(error) => tracing::warn!(
                event = "not_issuing",
                datacenter_id = node.datacenter_id,
                worker_id = node.worker_id,
                code = error.code().as_str(),
                reason = error.message(),
                "cannot issue IDs: ID requests and /readyz answer 503 until this passes; \
                 the reason says what to fix"
            ),
        }
    }

    /// Logs a change of the lease's state once, with what it means for requests.
    fn show_lease_state(&self, before: LeaseState, now: LeaseState) {
        self.metrics.show_lease(self.readiness.lease());
        if before == now {
            return;
        }
        let coordinator = self.readiness.lease().coordinator().unwrap_or("");
        if now.can_issue() {
            tracing::info!(
                event = "lease_state",
                state = now.as_str(),
                was = before.as_str(),
                coordinator,
                "node ID lease confirmed: issuing IDs"
            );
        } else {
            tracing::warn!(
                event = "lease_state",
                state = now.as_str(),
                was = before.as_str(),
                coordinator,
                "node ID lease not confirmed: ID requests and /readyz answer 503 until it is; \
                 check that the coordinator is reachable and answering"
            );
        }
    }

    fn show_node(&self, node: NodeId) {
        self.metrics.datacenter_id.set(node.datacenter_id as i64);
        self.metrics.worker_id.set(node.worker_id as i64);
    }

    /// Checks the identity every `PROBE_EVERY` by asking for an ID (a gap in the IDs costs
    /// nothing), so `/readyz` turns 503 when a lease is lost even with no traffic, and back.
    pub async fn watch_identity(self: Arc<Self>, mut ticks: Ticks) {
        let mut last_node = self.generator.node();
        let mut last_state = self.readiness.lease().state();
        while ticks.next().await {
            let this = Arc::clone(&self);
            let probe = tokio::task::spawn_blocking(move || this.generator.try_next_id()).await;
            let Ok(result) = probe else { continue };
            match result {
                Ok(_) => self.record(Ok(())),
                Err(error) => self.record(Err(&error)),
            }
            let state = self.readiness.lease().state();
            self.show_lease_state(last_state, state);
            last_state = state;
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

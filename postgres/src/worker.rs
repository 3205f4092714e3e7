//! The lease worker: a background worker, registered in `_PG_init` when a coordinator is set
//! (`flakery.zookeeper` or `flakery.database_url`), that holds the cluster's node ID with the
//! core's kept lease (the keeper and its threads, through flakery-coordinators) and publishes
//! each of the keeper's grants into shared memory (`GrantRecord`) for the backends.
//!
//! Its threads (the opener below, the keeper's own) never call PostgreSQL. The main loop waits
//! on the worker's latch, which a backend sets when it wants more than the record grants, and
//! wakes on its own every `IDLE` (every `BUSY` while a want is not answered) to copy the
//! keeper's publication out; no lock is held across I/O (the opener's lock only hands over a
//! lease or an error).
//!
//! A new node ID is a new generation, and its grants start after every tick a grant of this
//! run of the server covered (`GrantRecord::covered`): backends still under the old node ID
//! issue only within their old grant, which ends before, so the cluster's IDs keep increasing.

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flakery::lease::keeper::RETRY_PAUSE_MS;
use flakery::{
    Asked, Clock as _, Connector, CoordinatorPlan, Error, ErrorCode, Fence, Grant, Layout, NodeId,
    NodeLease, SystemClock,
};
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::grant_record::GrantRecord;
use crate::settings::{self, Node};

const NAME: &str = "flakery lease worker";
/// How often an idle worker copies the keeper's publication (a renewal moves `until_ms`).
const IDLE: Duration = Duration::from_millis(100);
/// How often while a backend waits for a want to be answered.
const BUSY: Duration = Duration::from_millis(2);

pub fn register() {
    BackgroundWorkerBuilder::new(NAME)
        .set_type(NAME)
        .set_library("flakery")
        .set_function("flakery_lease_worker_main")
        // On a hot standby too: it leases a node ID of its own.
        .set_start_time(BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(Duration::from_secs(1)))
        .enable_shmem_access(None)
        .load();
}

/// What the opener thread hands the main loop.
#[derive(Default)]
struct Opening {
    lease: Option<Box<dyn NodeLease>>,
    error: Option<Error>,
    /// Counts failed opens: each is the answer to a backend waiting meanwhile.
    failures: u64,
}

/// The worker's main function, named in its registration.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn flakery_lease_worker_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let (layout, plan, describe) = match lease_plan() {
        Ok(found) => found,
        Err(e) => {
            // Backends refuse with the same error; restarting cannot help until the
            // settings change, which needs a restart of the server.
            pgrx::warning!("{NAME}: {}: {}", e.code(), e.message());
            return;
        }
    };
    let record = crate::generate::record();
    // SAFETY: MyLatch is this process's PGPROC latch, in shared memory, set before the
    // worker's main function runs.
    record.set_latch(unsafe { pg_sys::MyLatch } as usize);
    pgrx::log!("{NAME}: leasing a node ID from {describe}");

    let opening = Arc::new(Mutex::new(Opening::default()));
    let stop = Arc::new(AtomicBool::new(false));
    if let Err(e) = spawn_opener(plan, layout, Arc::clone(&opening), Arc::clone(&stop)) {
        pgrx::warning!("{NAME}: cannot start a thread: {e}");
        return;
    }
    let mut worker = Worker::new(record, describe);
    loop {
        worker.step(&opening);
        let wait = if worker.pending() { BUSY } else { IDLE };
        if !BackgroundWorker::wait_latch(Some(wait)) {
            break;
        }
    }
    stop.store(true, SeqCst);
    record.set_latch(0);
    record.withdraw();
    if let Some(lease) = worker.lease.take() {
        // The mark stays where it is (the backends' last tick is theirs): bounded wait.
        lease.release(i64::MIN);
    }
    // Exit code 1: restarted after its restart time, unless the server is shutting down (a
    // worker ended by pg_terminate_backend comes back; code 0 would unregister it).
    // SAFETY: ends this process as PostgreSQL ends a background worker.
    unsafe { pg_sys::proc_exit(1) };
}

fn lease_plan() -> flakery::Result<(Layout, CoordinatorPlan, String)> {
    let layout = settings::layout()?;
    match settings::node(&layout)? {
        Node::Leased { plan, describe } => Ok((layout, plan, describe)),
        Node::Fixed(_) => Err(Error::invalid_argument(
            "flakery.worker_id is set: the node ID is fixed, and no lease is held",
        )),
    }
}

/// Opens the lease (which blocks until the first claim is answered), again after each
/// failure, and hands it over; never calls PostgreSQL.
fn spawn_opener(
    plan: CoordinatorPlan,
    layout: Layout,
    opening: Arc<Mutex<Opening>>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("flakery-lease-open".into())
        .spawn(move || {
            while !stop.load(SeqCst) {
                let opened = flakery_coordinators::Coordinators.open(&plan, &layout);
                let mut slot = opening.lock().unwrap_or_else(|e| e.into_inner());
                match opened {
                    Ok(lease) => {
                        slot.lease = Some(lease);
                        return;
                    }
                    Err(e) => {
                        slot.error = Some(e);
                        slot.failures += 1;
                    }
                }
                drop(slot);
                std::thread::sleep(Duration::from_millis(RETRY_PAUSE_MS as u64));
            }
        })
        .map(|_| ())
}

struct Worker {
    record: &'static GrantRecord,
    describe: String,
    fence: Fence,
    lease: Option<Box<dyn NodeLease>>,
    /// The keeper's publication last copied, and its refusal's epoch.
    epoch: Option<u64>,
    refusal_at: u64,
    /// The opener's failures seen so far.
    failures: u64,
    /// The backends' asks handed to the keeper so far.
    asked: u64,
    want_ms: i64,
    /// When a backend last asked: the worker copies fast for as long as one may wait.
    asked_at: std::time::Instant,
    /// The node ID published, its generation, and where that generation's IDs start.
    node: Option<NodeId>,
    generation: u64,
    generation_after_ms: i64,
    /// The last error logged, so that a coordinator that stays down logs once.
    logged: Option<String>,
}

impl Worker {
    fn new(record: &'static GrantRecord, describe: String) -> Worker {
        let (_, generation) = record.covered();
        Worker {
            record,
            describe,
            fence: Fence::default(),
            lease: None,
            epoch: None,
            refusal_at: 0,
            failures: 0,
            asked: record.wanted().0,
            want_ms: i64::MIN,
            asked_at: std::time::Instant::now(),
            node: None,
            generation,
            generation_after_ms: i64::MIN,
            logged: None,
        }
    }

    /// Whether a backend waits for a want the record does not grant.
    fn pending(&self) -> bool {
        if self.asked_at.elapsed().as_millis() as i64 > settings::session_timeout_ms() {
            return false;
        }
        let until = self.record.read().grant.map_or(i64::MIN, |g| g.until_ms);
        self.want_ms > until
    }

    fn step(&mut self, opening: &Mutex<Opening>) {
        let failed = self.take_lease(opening);
        let (asks, want_ms) = self.record.wanted();
        self.want_ms = want_ms;
        if asks != self.asked {
            self.asked = asks;
            self.asked_at = std::time::Instant::now();
            self.ask(want_ms, failed.clone());
        } else if let (Some(e), true) = (failed, self.pending()) {
            // A backend waits, and the open it waits for failed: that is its answer.
            self.record.refuse(&e);
        }
        self.copy_publication();
    }

    /// The lease, once the opener has it; else the opener's error, when it failed again
    /// since the last step.
    fn take_lease(&mut self, opening: &Mutex<Opening>) -> Option<Error> {
        if self.lease.is_some() {
            return None;
        }
        let mut slot = opening.lock().unwrap_or_else(|e| e.into_inner());
        let error = (slot.failures != self.failures)
            .then(|| slot.error.clone())
            .flatten();
        self.failures = slot.failures;
        let lease = slot.lease.take();
        drop(slot);
        match lease {
            Some(lease) => {
                lease.attach(self.fence.clone());
                self.lease = Some(lease);
                None
            }
            None => {
                if let Some(e) = &error {
                    self.log_error(e);
                }
                error
            }
        }
    }

    fn ask(&mut self, want_ms: i64, opening_error: Option<Error>) {
        let Some(lease) = &self.lease else {
            // Still claiming: a claim that failed is the answer; one in flight is awaited.
            if let Some(e) = opening_error {
                self.record.refuse(&e);
            }
            return;
        };
        match lease.ask(want_ms, SystemClock.now_ms()) {
            Asked::Granted(grant) if grant.until_ms < want_ms => {
                self.record.refuse(&Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "the lease from {} covers IDs only up to {}, not {}",
                        self.describe,
                        flakery::timestamp::format_rfc3339_ms(grant.until_ms),
                        flakery::timestamp::format_rfc3339_ms(want_ms)
                    ),
                ));
            }
            Asked::Granted(_) => {} // published into the fence: copied below
            Asked::Within(within) => self.record.set_within_ms(within.as_millis() as i64),
        }
    }

    /// The keeper's publication into the record, when it changed.
    fn copy_publication(&mut self) {
        if self.lease.is_none() {
            return;
        }
        let published = self.fence.published();
        if self.epoch == Some(published.epoch) {
            return;
        }
        self.epoch = Some(published.epoch);
        match published.grant {
            Some(grant) => self.publish(grant),
            None => self.record.withdraw(),
        }
        if let Some((at, error)) = published.refusal {
            if at != self.refusal_at {
                self.refusal_at = at;
                self.record.refuse(&error);
                self.log_error(&error);
            }
        }
    }

    fn publish(&mut self, grant: Grant) {
        if self.node != Some(grant.node) {
            // A new node ID: after every tick any earlier grant of this run covered.
            let (covered_ms, _) = self.record.covered();
            self.generation += 1;
            self.generation_after_ms = covered_ms;
            self.node = Some(grant.node);
            self.logged = None;
            pgrx::log!(
                "{NAME}: node ID datacenter {} worker {} leased from {} (generation {}; IDs \
                 after {})",
                grant.node.datacenter_id,
                grant.node.worker_id,
                self.describe,
                self.generation,
                flakery::timestamp::format_rfc3339_ms(grant.floor_ms.max(covered_ms))
            );
        }
        self.record.publish(
            self.generation,
            Grant {
                floor_ms: grant.floor_ms.max(self.generation_after_ms),
                ..grant
            },
        );
    }

    fn log_error(&mut self, error: &Error) {
        let text = format!("{}: {}", error.code(), error.message());
        if self.logged.as_deref() != Some(text.as_str()) {
            pgrx::warning!("{NAME}: {text}");
            self.logged = Some(text);
        }
    }
}

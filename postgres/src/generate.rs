//! `next_id()` and `next_ids(n)`: one generator per cluster. Its state is one word in shared
//! memory (`SharedWord`), so every backend advances the same state and no two sessions make
//! the same ID; each backend builds its own `Generator` on that word when it first asks
//! (after the postmaster forked it), with the cluster's mark as its lease (`cluster_mark.rs`):
//! the node ID from postgresql.conf and the high-water mark in `$PGDATA/flakery.mark` and in
//! shared memory, written ahead of every ID, so that a restart (with the clock set back, or
//! after a crash) starts above every ID issued before. The postmaster reads the mark once when
//! it makes the shared memory (each start, and each reinitialization after a backend
//! crashed): that is the floor of the run. Each new mark is in the WAL too (`wal_mark.rs`),
//! whose replay raises the floor: a promoted standby starts above every mark its primary
//! wrote.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::OnceLock;

use flakery::lease::shared_mark::read_floor;
use flakery::{
    CoarseSystemClock, CoordinatorKind, Error, ErrorCode, Generator, NodeId, NodeLease, NodeSource,
    SharedWord,
};
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgAtomic};

use crate::cluster_mark::{ClusterMark, MarkState, FLOOR_UNREADABLE};
use crate::errors::OrRaise;
use crate::grant_record::GrantRecord;
use crate::record_lease::RecordLease;
use crate::settings::Node;

static STATE: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakery.state") };
/// The run's floor and the mark, and the wait for a new one (`cluster_mark.rs`).
static MARK: PgAtomic<MarkState> = unsafe { PgAtomic::new(c"flakery.mark") };
/// The lease worker's grant (`worker.rs`), when the node ID is leased.
static RECORD: PgAtomic<GrantRecord> = unsafe { PgAtomic::new(c"flakery.grant") };
/// Loaded by shared_preload_libraries: only then is there shared memory of ours.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// IDs a set-returning `next_ids` makes at a time: memory stays bounded whatever `n` is.
const BATCH: usize = 4096;

pub fn init() {
    // SAFETY: a global PostgreSQL sets while it loads shared_preload_libraries.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        // Loaded by a session: its settings cannot be defined now (they are read only as
        // the server starts), and next_id refuses without the shared memory anyway.
        return;
    }
    crate::settings::define();
    crate::wal_mark::register();
    pg_shmem_init!(STATE);
    pg_shmem_init!(MARK = MarkState::new(crate::cluster_mark::startup_floor()));
    pg_shmem_init!(RECORD);
    if crate::settings::lease_configured() {
        crate::worker::register();
    }
    PRELOADED.store(true, SeqCst);
}

pub fn record() -> &'static GrantRecord {
    RECORD.get()
}

/// A mark replayed from the WAL: nothing of this run may be issued at or below it.
pub fn replay(mark_ms: i64) -> flakery::Result<()> {
    if !PRELOADED.load(SeqCst) {
        return Ok(());
    }
    crate::cluster_mark::replay(MARK.get(), mark_ms)
}

fn refused(code: ErrorCode, message: String) -> Error {
    Error::new(code, message)
}

/// This backend's generator on the cluster's word.
fn generator() -> &'static Generator<CoarseSystemClock, SharedWord> {
    static GENERATOR: OnceLock<Generator<CoarseSystemClock, SharedWord>> = OnceLock::new();
    if let Some(generator) = GENERATOR.get() {
        return generator;
    }
    // Not cached when it fails: a mark that could not be written may be writable next time.
    let built = build().or_raise();
    GENERATOR.get_or_init(|| built)
}

fn build() -> flakery::Result<Generator<CoarseSystemClock, SharedWord>> {
    if !PRELOADED.load(SeqCst) {
        return Err(refused(
            ErrorCode::InvalidArgument,
            "flakery is not in shared_preload_libraries: next_id needs the cluster's one \
             generator in shared memory, which exists only when the server loads flakery \
             as it starts. Add flakery to shared_preload_libraries in postgresql.conf and \
             restart the server"
                .into(),
        ));
    }
    // Recovery never resumes once it ended: a backend that built its generator stays on a
    // primary.
    if crate::wal_mark::in_recovery() {
        return Err(crate::wal_mark::recovery_refusal());
    }
    let layout = crate::settings::layout()?;
    let node = crate::settings::node(&layout)?;
    if MARK.get().floor_ms() == FLOOR_UNREADABLE {
        let path = crate::cluster_mark::mark_path();
        read_floor(&path)?;
        return Err(refused(
            ErrorCode::LeaseLost,
            format!(
                "the high-water mark file {} was unreadable when the server started; restart \
                 the server once it holds a mark again",
                path.display()
            ),
        ));
    }
    let lease: Box<dyn NodeLease> = match node {
        Node::Fixed(node) => Box::new(ClusterMark::open(MARK.get(), node)?),
        Node::Leased { plan, describe } => {
            let source = match plan.kind {
                CoordinatorKind::ZooKeeper { .. } => NodeSource::ZooKeeper,
                CoordinatorKind::Database { .. } => NodeSource::Database,
            };
            // The local mark bounds the leased grants: its node ID is not used.
            let mark = ClusterMark::open(MARK.get(), NodeId::default())?;
            Box::new(RecordLease::new(
                RECORD.get(),
                mark,
                source,
                describe,
                crate::settings::session_timeout_ms(),
            ))
        }
    };
    let fixed = lease.source() == NodeSource::Explicit;
    // No clock thread in every backend: CLOCK_REALTIME_COARSE is the cheap reading.
    Generator::builder()
        .clock(CoarseSystemClock)
        .layout(layout)
        .lease(lease)
        .build_on(SharedWord::new(STATE.get()))
        .map_err(|e| {
            if !fixed || e.code() == ErrorCode::LeaseLost {
                return e; // the lease's refusals name their setting; a mark's, its cause
            }
            refused(
                e.code(),
                format!(
                    "{} (flakery.layout, flakery.datacenter_id, flakery.worker_id in \
                     postgresql.conf)",
                    e.message()
                ),
            )
        })
}

/// A new ID, larger than every ID this cluster made before: usable as a column default.
/// VOLATILE; PARALLEL SAFE, as gen_random_uuid() is: a parallel worker advances the same
/// shared word as its leader.
#[pg_extern(volatile, parallel_safe)]
fn next_id() -> i64 {
    generator().next_id().or_raise()
}

/// `n` new IDs, in increasing order, made a batch at a time as the rows are read.
#[pg_extern(volatile, strict, parallel_safe)]
fn next_ids(n: i32) -> SetOfIterator<'static, i64> {
    if n < 0 {
        crate::errors::raise(Error::invalid_argument(format!(
            "n is {n}: next_ids makes 0 or more IDs"
        )));
    }
    let generator = generator();
    let mut left = n as usize;
    let batches = std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let take = left.min(BATCH);
        left -= take;
        Some(generator.next_ids(take).or_raise())
    });
    SetOfIterator::new(batches.flatten())
}

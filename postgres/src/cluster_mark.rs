//! The cluster's high-water mark, kept in shared memory (`MarkState`) and written ahead by one
//! process at a time, with PostgreSQL's own primitives so that every wait can be canceled.
//!
//! A backend whose generator wants a tick past the mark claims the writing (an atomic word:
//! the writer's PID) and, holding no lock, journals the new mark in the WAL (`wal_mark.rs`:
//! flushed, and confirmed by the synchronous standby when `flakery.synchronous_mark` says so),
//! writes it to `$PGDATA/flakery.mark`, raises the mark in shared memory and wakes the others.
//! Every other backend that wants past the mark meanwhile sleeps on the condition variable
//! (`ConditionVariableSleep`: a cancel, a statement timeout, a terminate or a shutdown ends its
//! wait as any of PostgreSQL's waits ends) and looks again when the writer is done, written or
//! not. A writer that ends by an ERROR gives the claim back as it unwinds; one that ends by a
//! FATAL (a terminate while it waits for the standby) in its `before_shmem_exit` callback; one
//! killed outright makes the postmaster reinitialize the shared memory.
//!
//! The postmaster reads the mark file when it makes the shared memory (each start, and each
//! reinitialization after a backend crashed): that mark is the run's floor, and the mark in
//! shared memory starts there. WAL replay raises both (`replay`).

use std::cell::UnsafeCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, Ordering::SeqCst};

use flakery::lease::node::{write_mark, LOOKAHEAD_MS};
use flakery::lease::shared_mark::{mark_error, open_mark_file as open, read_floor};
use flakery::{Error, ErrorCode, Grant, NodeId, NodeLease, NodeSource};
use pgrx::pg_sys;
use pgrx::PGRXSharedMemory;

pub const MARK_FILE: &str = "flakery.mark";
/// The furthest ahead of the clock a mark is written: within the generator's default
/// backwards tolerance (1 s), so that after a restart the first IDs wait for the clock to pass
/// the mark instead of refusing with clock_moved_backwards.
const MAX_AHEAD_MS: i64 = flakery::options::DEFAULT_BACKWARDS_TOLERANCE_MS as i64;
/// The floor the postmaster could not read: every call reads the file again for the reason.
pub const FLOOR_UNREADABLE: i64 = i64::MAX;

#[repr(C)]
pub struct MarkState {
    /// The mark of the run's start (raised by WAL replay): nothing of this run at or below it.
    floor_ms: AtomicI64,
    /// The mark in the WAL and in the file: IDs up to it may be issued.
    mark_ms: AtomicI64,
    /// How long the last new mark took to write (ms): the next one is written that much
    /// further ahead, so that a slow synchronous standby does not leave the clock past each
    /// mark by the time it is confirmed (each call writing mark after mark).
    write_ms: AtomicI64,
    /// The PID of the process writing a new mark (0: none).
    writer: AtomicI32,
    /// Broadcast each time a writer is done.
    written: UnsafeCell<pg_sys::ConditionVariable>,
}

// SAFETY: atomics and a condition variable that PostgreSQL's functions alone touch (under its
// own spinlock); nothing points into one process's memory.
unsafe impl PGRXSharedMemory for MarkState {}
unsafe impl Sync for MarkState {}

impl MarkState {
    /// In the postmaster, as it makes the shared memory.
    pub fn new(floor_ms: i64) -> MarkState {
        let mut written = pg_sys::ConditionVariable::default();
        // SAFETY: initializes the value, which is then moved into shared memory as bytes
        // (a spinlock and two process numbers: no pointer).
        unsafe { pg_sys::ConditionVariableInit(&mut written) };
        MarkState {
            floor_ms: AtomicI64::new(floor_ms),
            mark_ms: AtomicI64::new(if floor_ms == FLOOR_UNREADABLE {
                i64::MIN
            } else {
                floor_ms
            }),
            write_ms: AtomicI64::new(0),
            writer: AtomicI32::new(0),
            written: UnsafeCell::new(written),
        }
    }

    pub fn floor_ms(&self) -> i64 {
        self.floor_ms.load(SeqCst)
    }

    fn cv(&self) -> *mut pg_sys::ConditionVariable {
        self.written.get()
    }

    /// The writing given back, and every sleeper woken.
    fn release(&self, pid: i32) {
        if self.writer.compare_exchange(pid, 0, SeqCst, SeqCst).is_ok() {
            // SAFETY: a condition variable in shared memory, initialized by the postmaster.
            unsafe { pg_sys::ConditionVariableBroadcast(self.cv()) };
        }
    }
}

/// The mark file's path.
pub fn mark_path() -> PathBuf {
    // SAFETY: DataDir is set before any library is loaded and never changes.
    let dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) };
    PathBuf::from(dir.to_string_lossy().into_owned()).join(MARK_FILE)
}

/// In the postmaster, as it makes the shared memory: the mark the last run left.
pub fn startup_floor() -> i64 {
    match read_floor(&mark_path()) {
        Ok(floor_ms) => floor_ms,
        Err(e) => {
            pgrx::warning!("flakery: {}: {}; next_id refuses", e.code(), e.message());
            FLOOR_UNREADABLE
        }
    }
}

fn store(path: &Path, file: &File, mark_ms: i64) -> flakery::Result<()> {
    write_mark(file, mark_ms)
        .map_err(|e| mark_error(path, &format!("cannot record the high-water mark: {e}")))
}

/// Replay of a journaled mark (crash recovery, or a standby's startup process, the only
/// process that writes then): the floor, the mark and the file raised to it, never lowered.
pub fn replay(state: &MarkState, mark_ms: i64) -> flakery::Result<()> {
    state.floor_ms.fetch_max(mark_ms, SeqCst);
    state.mark_ms.fetch_max(mark_ms, SeqCst);
    let path = mark_path();
    if read_floor(&path)? < mark_ms {
        store(&path, &open(&path)?, mark_ms)?;
    }
    Ok(())
}

/// A backend's lease on a fixed node ID (and the bound of a leased one's grants): the
/// cluster's mark.
pub struct ClusterMark {
    state: &'static MarkState,
    path: PathBuf,
    file: File,
    node: NodeId,
}

impl std::fmt::Debug for ClusterMark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterMark")
            .field("path", &self.path)
            .field("node", &self.node)
            .finish()
    }
}

impl ClusterMark {
    pub fn open(state: &'static MarkState, node: NodeId) -> flakery::Result<ClusterMark> {
        let path = mark_path();
        let file = open(&path)?;
        Ok(ClusterMark {
            state,
            path,
            file,
            node,
        })
    }

    /// A mark that covers `want_ms`: the one in shared memory, or a new one this process
    /// writes, or one another process writes while this one sleeps.
    pub fn cover(&self, want_ms: i64, now_ms: i64) -> flakery::Result<i64> {
        let state = self.state;
        // SAFETY: this process's PID, set before any library code runs.
        let pid = unsafe { pg_sys::MyProcPid };
        loop {
            let mark_ms = state.mark_ms.load(SeqCst);
            if want_ms <= mark_ms {
                cancel_sleep();
                return Ok(mark_ms);
            }
            if state
                .writer
                .compare_exchange(0, pid, SeqCst, SeqCst)
                .is_ok()
            {
                cancel_sleep();
                let _writing = Writing { state, pid };
                release_at_exit(state);
                return self.write(want_ms, now_ms);
            }
            // Another process writes: until it is done (the first call only prepares, and
            // the condition is looked at again before the sleep). A cancel raises here.
            // SAFETY: a condition variable in shared memory, initialized by the postmaster.
            unsafe { pg_sys::ConditionVariableSleep(state.cv(), pg_sys::PG_WAIT_EXTENSION) };
        }
    }

    /// Under the claim: a new mark past `want_ms`, journaled before it is stored, stored
    /// before it is published.
    fn write(&self, want_ms: i64, now_ms: i64) -> flakery::Result<i64> {
        let mark_ms = self.state.mark_ms.load(SeqCst);
        if want_ms <= mark_ms {
            return Ok(mark_ms); // written by the last writer, after this one looked
        }
        let ahead_ms = LOOKAHEAD_MS
            .max(self.state.write_ms.load(SeqCst).saturating_mul(2))
            .min(MAX_AHEAD_MS);
        let mark_ms = want_ms.max(now_ms).saturating_add(ahead_ms);
        let started = std::time::Instant::now();
        crate::wal_mark::journal(mark_ms)?;
        store(&self.path, &self.file, mark_ms)?;
        self.state.mark_ms.fetch_max(mark_ms, SeqCst);
        let took_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.state.write_ms.store(took_ms, SeqCst);
        Ok(mark_ms)
    }
}

/// The claim to write, given back however the writer's call ends (an ERROR unwinds through
/// here).
struct Writing {
    state: &'static MarkState,
    pid: i32,
}

impl Drop for Writing {
    fn drop(&mut self) {
        self.state.release(self.pid);
    }
}

fn cancel_sleep() {
    // SAFETY: a no-op unless this process prepared to sleep on a condition variable.
    unsafe { pg_sys::ConditionVariableCancelSleep() };
}

/// A writer that ends by FATAL (or proc_exit) unwinds nothing: its claim is given back as
/// the process leaves. Registered once per process.
fn release_at_exit(state: &'static MarkState) {
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if REGISTERED.swap(true, SeqCst) {
        return;
    }
    #[pgrx::pg_guard]
    unsafe extern "C-unwind" fn at_exit(_code: std::ffi::c_int, arg: pg_sys::Datum) {
        let state = &*(arg.cast_mut_ptr::<MarkState>());
        state.release(pg_sys::MyProcPid);
    }
    // SAFETY: the state lives in shared memory for the life of the process.
    unsafe {
        pg_sys::before_shmem_exit(
            Some(at_exit),
            pg_sys::Datum::from(state as *const MarkState as usize),
        )
    };
}

impl NodeLease for ClusterMark {
    fn source(&self) -> NodeSource {
        NodeSource::Explicit
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> flakery::Result<Grant> {
        Ok(Grant {
            node: self.node,
            floor_ms: self.state.floor_ms(),
            until_ms: self.cover(want_ms, now_ms)?,
        })
    }

    /// Backends are forked by the postmaster before they build a generator; a backend never
    /// forks.
    fn after_fork(&self) -> flakery::Result<Box<dyn NodeLease>> {
        Err(Error::new(
            ErrorCode::Forked,
            "a PostgreSQL backend forked after it made IDs",
        ))
    }

    /// The mark stays where it is: other backends may still issue under it.
    fn release(&self, _last_used_ms: i64) {}
}

/// Sleeps on this process's latch for up to `ms` (a signal, a cancel among them, ends it
/// early), then raises any pending cancel, timeout or terminate.
pub fn pause(ms: i64) {
    // SAFETY: this process's latch; WL_EXIT_ON_PM_DEATH ends the process if the postmaster
    // died.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
            ms.clamp(0, i64::from(i32::MAX)) as std::ffi::c_long,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    pgrx::check_for_interrupts!();
}

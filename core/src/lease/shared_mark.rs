//! A fixed node ID whose generators live in several processes and share one state word
//! (`SharedWord`, as PostgreSQL's backends share one in shared memory), with one high-water
//! mark in a file that all of them write ahead of use.
//!
//! The mark is the host lease's (`node::write_mark`, `node::read_mark`, `LOOKAHEAD_MS`):
//! written ahead and synced before any ID under it is issued, so that the next run of the
//! processes (after a restart with the clock set back, or a crash) starts after every ID the
//! last one issued. The mark found when a run starts is that run's floor; it must be read once,
//! before any process of the run issues (`read_floor`), and given to every process's lease:
//! a process that read the mark later would find its own run's look-ahead and wait for it.
//!
//! Processes extend the mark under an exclusive `flock` of the file, each through its own
//! open file description (a forked child opens the file again: a shared description would
//! share the lock), reading the mark under the lock, so that it never goes down.
//!
//! A `MarkJournal` records each new mark somewhere else as well (PostgreSQL: its WAL, so
//! that a streaming standby has it when it is promoted), under the lock and before the file:
//! a process that reads the new mark from the file, and issues under it, finds it journaled.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering::SeqCst};
use std::sync::Arc;

use crate::error::{Error, ErrorCode, Result};
use crate::lease::node::{
    read_mark, write_mark, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS, MAX_MARK_BYTES,
};

/// Where a new mark is recorded besides the file: called under the file's lock, before the
/// file is written and before any ID under the mark is issued. An error refuses the grant.
pub trait MarkJournal: Send + Sync + std::fmt::Debug {
    fn record(&self, mark_ms: i64) -> Result<()>;
}

#[derive(Debug)]
pub struct SharedMark {
    path: PathBuf,
    file: File,
    node: NodeId,
    floor_ms: i64,
    /// The largest mark this process has read or written: a grant under it needs no I/O.
    known_ms: AtomicI64,
    journal: Option<Arc<dyn MarkJournal>>,
}

/// The mark stored in `path`, the floor of a run that starts now (`i64::MIN`: no file, or no
/// mark in it). An unreadable mark is an error, never "no floor".
pub fn read_floor(path: &Path) -> Result<i64> {
    match std::fs::read(path) {
        Ok(data) => parse(path, &data).map(|mark| mark.unwrap_or(i64::MIN)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(i64::MIN),
        Err(e) => Err(mark_error(path, &format!("cannot read it: {e}"))),
    }
}

fn parse(path: &Path, data: &[u8]) -> Result<Option<i64>> {
    read_mark(data).map_err(|why| {
        mark_error(
            path,
            &format!(
                "it is unreadable ({why}), so the last time used under this node ID is \
                 unknown; restore it from a backup or remove it only once the clock is past \
                 every ID issued"
            ),
        )
    })
}

/// Opens (or creates, mode 0600) a high-water mark file, never through a symbolic link: the
/// one way every holder of a mark file (this lease, the PostgreSQL extension's) opens it.
pub fn open_mark_file(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| mark_error(path, &format!("cannot open it: {e}")))
}

/// A mark file's failure: `lease_lost`, naming the file and why.
pub fn mark_error(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorCode::LeaseLost,
        format!("the high-water mark file {}: {why}", path.display()),
    )
}

impl SharedMark {
    /// This process's lease on `node`, its mark in `path` (created if missing, mode 0600),
    /// for a run whose floor is `floor_ms` (`read_floor` at the start of the run).
    pub fn open(path: &Path, node: NodeId, floor_ms: i64) -> Result<SharedMark> {
        let file = open_mark_file(path)?;
        Ok(SharedMark {
            path: path.to_path_buf(),
            file,
            node,
            floor_ms,
            known_ms: AtomicI64::new(floor_ms),
            journal: None,
        })
    }

    /// Each new mark recorded in `journal` too, before the file.
    pub fn with_journal(mut self, journal: Arc<dyn MarkJournal>) -> SharedMark {
        self.journal = Some(journal);
        self
    }

    /// The stored mark raised to `mark_ms` if it is lower (a mark journaled elsewhere, being
    /// replayed): not journaled again. Returns the stored mark.
    pub fn raise(&self, mark_ms: i64) -> Result<i64> {
        self.locked(|| self.store_above(mark_ms, || mark_ms, false))
    }

    /// Under the file's lock: the stored mark, raised to cover `want_ms` if it does not.
    fn extend(&self, want_ms: i64, now_ms: i64) -> Result<i64> {
        self.locked(|| {
            self.store_above(
                want_ms,
                || want_ms.max(now_ms).saturating_add(LOOKAHEAD_MS),
                true,
            )
        })
    }

    fn locked(&self, under_lock: impl FnOnce() -> Result<i64>) -> Result<i64> {
        let fd = self.file.as_raw_fd();
        // SAFETY: flock on a descriptor this lease owns; released below on every path (and by
        // the kernel if the process dies).
        while unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(mark_error(&self.path, &format!("cannot lock it: {e}")));
            }
        }
        let result = under_lock();
        // SAFETY: as above.
        unsafe { libc::flock(fd, libc::LOCK_UN) };
        result
    }

    /// The stored mark if it covers `want_ms`; else `new_mark()`, journaled (if `journal`)
    /// and stored.
    fn store_above(
        &self,
        want_ms: i64,
        new_mark: impl FnOnce() -> i64,
        journal: bool,
    ) -> Result<i64> {
        let mut data = [0u8; MAX_MARK_BYTES + 1];
        let n = self
            .file
            .read_at(&mut data, 0)
            .map_err(|e| mark_error(&self.path, &format!("cannot read it: {e}")))?;
        let stored = parse(&self.path, &data[..n])?.unwrap_or(i64::MIN);
        if want_ms <= stored {
            return Ok(stored);
        }
        let mark = new_mark();
        if let (true, Some(journal)) = (journal, &self.journal) {
            journal.record(mark)?;
        }
        write_mark(&self.file, mark).map_err(|e| {
            mark_error(
                &self.path,
                &format!("cannot record the high-water mark: {e}"),
            )
        })?;
        Ok(mark)
    }
}

impl NodeLease for SharedMark {
    fn source(&self) -> NodeSource {
        NodeSource::Explicit
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        let known = self.known_ms.load(SeqCst);
        let until_ms = if want_ms <= known {
            known
        } else {
            let mark = self.extend(want_ms, now_ms)?;
            self.known_ms.fetch_max(mark, SeqCst);
            mark
        };
        Ok(Grant {
            node: self.node,
            floor_ms: self.floor_ms,
            until_ms,
        })
    }

    /// The child shares the parent's state word, so it keeps the node ID; it opens the file
    /// again, so that its lock excludes the parent's.
    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        let mut child = SharedMark::open(&self.path, self.node, self.floor_ms)?;
        child.journal = self.journal.clone();
        Ok(Box::new(child))
    }

    /// The mark stays where it is: other processes may still issue under it.
    fn release(&self, _last_used_ms: i64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records each mark with what the file held when it was journaled; fails when told.
    #[derive(Debug, Default)]
    struct Recorder {
        path: PathBuf,
        seen: Mutex<Vec<(i64, i64)>>,
        fail: std::sync::atomic::AtomicBool,
    }

    impl MarkJournal for Recorder {
        fn record(&self, mark_ms: i64) -> Result<()> {
            if self.fail.load(SeqCst) {
                return Err(Error::new(ErrorCode::LeaseLost, "journal down"));
            }
            let in_file = read_floor(&self.path)?;
            self.seen.lock().unwrap().push((mark_ms, in_file));
            Ok(())
        }
    }

    /// A journaled mark on a file of this test alone (none there yet; the test removes it).
    fn journaled(name: &str) -> (PathBuf, Arc<Recorder>, SharedMark) {
        let path = std::env::temp_dir().join(format!("flakery-mark-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let journal = Arc::new(Recorder {
            path: path.clone(),
            ..Recorder::default()
        });
        let node = NodeId {
            datacenter_id: 0,
            worker_id: 1,
        };
        let mark = SharedMark::open(&path, node, i64::MIN)
            .unwrap()
            .with_journal(journal.clone());
        (path, journal, mark)
    }

    #[test]
    fn each_new_mark_is_journaled_before_the_file_and_a_journal_error_refuses() {
        let (path, journal, mark) = journaled("journaled");
        let first = mark.grant(1_000, 1_000).unwrap().until_ms;
        assert_eq!(first, 1_000 + LOOKAHEAD_MS);
        // Under the mark: no new mark, nothing journaled.
        mark.grant(1_200, 1_200).unwrap();
        assert_eq!(*journal.seen.lock().unwrap(), vec![(first, i64::MIN)]);

        journal.fail.store(true, SeqCst);
        let refused = mark.grant(first + 1, first + 1).unwrap_err();
        assert_eq!(refused.code(), ErrorCode::LeaseLost);
        assert_eq!(
            read_floor(&path).unwrap(),
            first,
            "the file moved past the journal"
        );

        // A forked child's lease journals too.
        journal.fail.store(false, SeqCst);
        let child = mark.after_fork().unwrap();
        let second = child.grant(first + 1, first + 1).unwrap().until_ms;
        assert_eq!(journal.seen.lock().unwrap().last(), Some(&(second, first)));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_replayed_mark_raises_the_file_never_lowers_it_and_is_not_journaled_again() {
        let (path, journal, mark) = journaled("replayed");
        assert_eq!(mark.raise(5_000).unwrap(), 5_000);
        assert_eq!(mark.raise(4_000).unwrap(), 5_000);
        assert_eq!(read_floor(&path).unwrap(), 5_000);
        assert!(journal.seen.lock().unwrap().is_empty());
        std::fs::remove_file(&path).unwrap();
    }
}

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

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering::SeqCst};

use crate::error::{Error, ErrorCode, Result};
use crate::lease::node::{
    read_mark, write_mark, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS, MAX_MARK_BYTES,
};

#[derive(Debug)]
pub struct SharedMark {
    path: PathBuf,
    file: File,
    node: NodeId,
    floor_ms: i64,
    /// The largest mark this process has read or written: a grant under it needs no I/O.
    known_ms: AtomicI64,
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

fn mark_error(path: &Path, why: &str) -> Error {
    Error::new(
        ErrorCode::LeaseLost,
        format!("the high-water mark file {}: {why}", path.display()),
    )
}

impl SharedMark {
    /// This process's lease on `node`, its mark in `path` (created if missing, mode 0600),
    /// for a run whose floor is `floor_ms` (`read_floor` at the start of the run).
    pub fn open(path: &Path, node: NodeId, floor_ms: i64) -> Result<SharedMark> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| mark_error(path, &format!("cannot open it: {e}")))?;
        Ok(SharedMark {
            path: path.to_path_buf(),
            file,
            node,
            floor_ms,
            known_ms: AtomicI64::new(floor_ms),
        })
    }

    /// Under the file's lock: the stored mark, raised to cover `want_ms` if it does not.
    fn extend(&self, want_ms: i64, now_ms: i64) -> Result<i64> {
        let fd = self.file.as_raw_fd();
        // SAFETY: flock on a descriptor this lease owns; released below on every path (and by
        // the kernel if the process dies).
        while unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(mark_error(&self.path, &format!("cannot lock it: {e}")));
            }
        }
        let result = self.extend_locked(want_ms, now_ms);
        // SAFETY: as above.
        unsafe { libc::flock(fd, libc::LOCK_UN) };
        result
    }

    fn extend_locked(&self, want_ms: i64, now_ms: i64) -> Result<i64> {
        let mut data = [0u8; MAX_MARK_BYTES + 1];
        let n = self
            .file
            .read_at(&mut data, 0)
            .map_err(|e| mark_error(&self.path, &format!("cannot read it: {e}")))?;
        let stored = parse(&self.path, &data[..n])?.unwrap_or(i64::MIN);
        if want_ms <= stored {
            return Ok(stored);
        }
        let mark = want_ms.max(now_ms).saturating_add(LOOKAHEAD_MS);
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
        Ok(Box::new(SharedMark::open(
            &self.path,
            self.node,
            self.floor_ms,
        )?))
    }

    /// The mark stays where it is: other processes may still issue under it.
    fn release(&self, _last_used_ms: i64) {}
}

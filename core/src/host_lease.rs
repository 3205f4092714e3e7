//! The zero-configuration node identity: the lowest node index that no other live process on
//! this host holds, through one lock file per index.
//!
//! `flock` locks belong to an open file description, so two generators in one process
//! exclude each other, and the kernel drops a lock when its process dies, even by `kill -9`:
//! no stale leases. Each file also keeps the high-water mark of the time used under its
//! index, written ahead of use, so that a process that takes the index over (after a restart
//! with the clock set back, say) starts after it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{Error, ErrorCode, Result};
use crate::layout::Layout;
use crate::node::{parse_mark, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS};

/// Where leases live unless `FLAKERY_LEASE_DIR` or `lease_dir` says otherwise: the host's
/// runtime lock directory, shared by every user and service that does not hide it.
pub fn default_lease_dir() -> PathBuf {
    if Path::new("/run/lock").is_dir() {
        PathBuf::from("/run/lock/flakery")
    } else {
        std::env::temp_dir().join("flakery-leases")
    }
}

/// Dropped, it closes its file: in the owner that drops the lock (keeping the mark written);
/// in a forked child it closes only the child's copy, and the parent keeps its lock.
#[derive(Debug)]
pub struct HostLease {
    dir: PathBuf,
    layout: Layout,
    index: u64,
    node: NodeId,
    owner_pid: u32,
    /// The high-water mark found when the lease was taken: the previous holder's last time.
    floor_ms: i64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: Option<File>,
    /// The high-water mark written to the file.
    written_ms: i64,
}

impl HostLease {
    /// Takes the lowest free node index in `dir` (created if missing).
    pub fn acquire(dir: &Path, layout: &Layout) -> Result<HostLease> {
        create_shared_dir(dir)?;
        let count = layout.capacity().node_ids;
        for index in 0..count {
            let path = dir.join(format!("node-{index}"));
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o666)
                .custom_flags(libc::O_CLOEXEC)
                .open(&path)
                .map_err(|e| lease_dir_error(dir, &e))?;
            // Other users' processes must be able to lock it too, whatever our umask.
            let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
            // SAFETY: a valid, open descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    continue;
                }
                return Err(lease_dir_error(dir, &err));
            }
            let floor_ms = read_high_water(&mut file);
            let (datacenter_id, worker_id) = layout.node_of_index(index);
            return Ok(HostLease {
                dir: dir.to_path_buf(),
                layout: layout.clone(),
                index,
                node: NodeId {
                    datacenter_id,
                    worker_id,
                },
                owner_pid: std::process::id(),
                floor_ms,
                state: Mutex::new(State {
                    file: Some(file),
                    written_ms: floor_ms,
                }),
            });
        }
        Err(Error::new(
            ErrorCode::WorkerIdsExhausted,
            format!(
                "all {count} node IDs of layout '{layout}' are held by live processes on this \
                 host (lease directory {})",
                dir.display()
            ),
        ))
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl NodeLease for HostLease {
    fn source(&self) -> NodeSource {
        NodeSource::HostLease
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        let mut state = self.lock_state();
        let Some(file) = &state.file else {
            return Err(Error::new(
                ErrorCode::LeaseLost,
                "the host lease was released",
            ));
        };
        if want_ms > state.written_ms {
            let high_water = want_ms.max(now_ms).saturating_add(LOOKAHEAD_MS);
            write_high_water(file, high_water).map_err(|e| {
                Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "cannot record the high-water mark in {}: {e}",
                        self.dir.join(format!("node-{}", self.index)).display()
                    ),
                )
            })?;
            state.written_ms = high_water;
        }
        Ok(Grant {
            node: self.node,
            floor_ms: self.floor_ms,
            until_ms: state.written_ms,
        })
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        Ok(Box::new(HostLease::acquire(&self.dir, &self.layout)?))
    }

    fn release(&self, last_used_ms: i64) {
        let mut state = self.lock_state();
        if std::process::id() != self.owner_pid {
            return; // a forked child: the lock and the mark are the parent's
        }
        if let Some(file) = state.file.take() {
            // Down from the look-ahead to what was used, never below the previous holder's.
            let _ = write_high_water(&file, last_used_ms.max(self.floor_ms));
            // Closing the file drops the lock.
        }
    }
}

fn create_shared_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| lease_dir_error(dir, &e))?;
    // Shared by every user on the host, like /tmp: sticky and world-writable.
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
    Ok(())
}

fn lease_dir_error(dir: &Path, err: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "cannot use the lease directory {}: {err}; set FLAKERY_LEASE_DIR (or lease_dir) to \
             a directory every process on this host can write",
            dir.display()
        ),
    )
}

fn read_high_water(file: &mut File) -> i64 {
    let mut data = Vec::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.read_to_end(&mut data);
    parse_mark(&data)
}

fn write_high_water(file: &File, ms: i64) -> std::io::Result<()> {
    // Fixed width, so a shorter number never leaves digits of a longer one behind.
    let text = format!("{ms:>20}\n");
    file.write_all_at(text.as_bytes(), 0)?;
    file.sync_data()
}

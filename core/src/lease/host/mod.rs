//! The zero-configuration node identity: the lowest node index that no other live process on
//! this host holds, through one lock file per index.
//!
//! `flock` locks belong to an open file description, so two generators in one process
//! exclude each other, and the kernel drops a lock when its process dies, even by `kill -9`:
//! no stale leases. Each file also keeps the high-water mark of the time used under its
//! index, written ahead of use, so that a process that takes the index over (after a restart
//! with the clock set back, say) starts after it.
//!
//! The directory is shared with every local user, so nothing in it is trusted (the threat
//! model is in docs/security.md). The lease files lie directly in it (no subdirectory that
//! one user would own and could swap): `flakery.<namespace>.node-<index>`. A process uses an
//! index only through a file it owns, opened without following links, that is a regular file
//! with one link, not writable by others, and whose mark it can read; any other file at that
//! name (another user's, a link, a FIFO, a directory, garbage) makes it skip the index, so
//! another user can deny an index but never share one nor make flakery write elsewhere.

pub(crate) mod container;
mod secure_dir;
#[cfg(test)]
mod writing_tests;

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::SeqCst};
use std::sync::Mutex;

use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::{
    read_mark, write_mark as write_high_water, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS,
    MAX_MARK_BYTES,
};
use crate::options::DEFAULT_BACKWARDS_TOLERANCE_MS;
use crate::timestamp::format_rfc3339_ms;
use secure_dir::{c_name, euid, fstat, SecureDir};

/// The host's runtime lock directory, used when neither `FLAKERY_LEASE_DIR` nor `lease_dir`
/// is set (and this is not a container).
pub const DEFAULT_LEASE_DIR: &str = "/run/lock";

/// A mark further ahead of this host's clock than a crashed holder's look-ahead plus the
/// default backwards tolerance: a generator under it could issue nothing until the clock got
/// there, so the index is skipped instead.
const MAX_MARK_AHEAD_MS: i64 = LOOKAHEAD_MS + DEFAULT_BACKWARDS_TOLERANCE_MS as i64;

/// How many unusable files an error lists by name.
const LISTED: usize = 8;

/// The implicit lease directory, or the refusal that says what to set instead.
pub fn implicit_lease_dir() -> Result<PathBuf> {
    if !Path::new(DEFAULT_LEASE_DIR).is_dir() {
        return Err(Error::invalid_argument(format!(
            "refusing the implicit host-local node ID lease: {DEFAULT_LEASE_DIR} does not exist \
             on this host, and flakery does not fall back to another directory (processes \
             with different TMPDIRs would share node IDs). Set FLAKERY_LEASE_DIR (or \
             lease_dir) to a directory that every process on this host shares, or give each \
             process its own node ID: FLAKERY_WORKER_ID (with FLAKERY_DATACENTER_ID), \
             FLAKERY_ZOOKEEPER or FLAKERY_DATABASE_URL"
        )));
    }
    if let Some(sign) = container::container_sign() {
        return Err(Error::invalid_argument(format!(
            "refusing the implicit host-local node ID lease: this looks like a container \
             ({sign}), and lease files in its own {DEFAULT_LEASE_DIR} are not seen by other \
             containers, so replicas would share node IDs. Set FLAKERY_LEASE_DIR (or \
             lease_dir) to a directory that every generator that could collide shares (a host \
             directory mounted into each container), or give each process its own node ID: \
             FLAKERY_WORKER_ID (with FLAKERY_DATACENTER_ID), FLAKERY_WORKER_ID=hostname-ordinal, \
             FLAKERY_ZOOKEEPER or FLAKERY_DATABASE_URL"
        )));
    }
    Ok(PathBuf::from(DEFAULT_LEASE_DIR))
}

/// Which node IDs a host lease chooses among: a namespace, and the node fields fixed by the
/// configuration (the others are leased under them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub namespace: String,
    pub datacenter_id: Option<u64>,
    pub worker_id: Option<u64>,
}

impl Default for Scope {
    fn default() -> Self {
        Scope {
            namespace: crate::options::DEFAULT_NAMESPACE.to_string(),
            datacenter_id: None,
            worker_id: None,
        }
    }
}

impl Scope {
    fn admits(&self, node: (u64, u64)) -> bool {
        self.datacenter_id.is_none_or(|d| d == node.0) && self.worker_id.is_none_or(|w| w == node.1)
    }

    /// The lock file name of node index `index`.
    pub fn file_name(&self, index: u64) -> String {
        format!("flakery.{}.node-{index}", self.namespace)
    }
}

/// Dropped, it closes its file: in the owner that drops the lock (keeping the mark written);
/// in a forked child it closes only the child's copy, and the parent keeps its lock.
#[derive(Debug)]
pub struct HostLease {
    dir: PathBuf,
    scope: Scope,
    layout: Layout,
    path: PathBuf,
    node: NodeId,
    owner_pid: u32,
    /// The high-water mark found when the lease was taken: the previous holder's last time.
    floor_ms: i64,
    /// The high-water mark written to the file: a grant it covers is answered from here,
    /// with no lock.
    written_ms: AtomicI64,
    /// Set by `release`, before it lowers the mark: no grant is answered after it.
    released: AtomicBool,
    /// The lock file, held while the mark is written (write and fsync), so that writes land
    /// in the order they were decided and a release never lands under a grant's; `None` once
    /// released. It is the lease's only lock, taken outside any fork section: a `fork()`
    /// during a write goes on at once and leaves it held only in the child's copy of this
    /// lease, which the child never uses (`grant` and `release` check the owner first;
    /// `after_fork` takes a lease of the child's own).
    file: Mutex<Option<File>>,
}

/// What became of one index.
enum Attempt {
    Taken(File, Option<i64>),
    /// Locked by a live process.
    Held,
    /// A file of another user: theirs, never touched.
    Foreign(u32),
    Unusable(String),
}

impl HostLease {
    /// Takes the lowest free node index of the default namespace in `dir`.
    pub fn acquire(dir: &Path, layout: &Layout) -> Result<HostLease> {
        HostLease::acquire_in(dir, &Scope::default(), layout)
    }

    /// Takes the lowest free node index in `dir` among those `scope` admits.
    ///
    /// The scan (an open, a lock and a read per index, a write of the mark) holds no lock and
    /// no fork section: a `fork()` meanwhile goes on, and the child inherits at most the
    /// descriptors opened so far, as it inherits a lease's own; a lock it keeps alive that way
    /// only keeps that index from others longer, never lets two share one.
    pub fn acquire_in(dir: &Path, scope: &Scope, layout: &Layout) -> Result<HostLease> {
        fork::install();
        let open = SecureDir::open(dir, 0o1777).map_err(|why| lease_dir_error(dir, &why))?;
        let now_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
        let count = layout.capacity().node_ids;
        let (mut admitted, mut held, mut foreign) = (0u64, 0u64, Vec::new());
        let mut unusable = Vec::new();
        for index in 0..count {
            let node = layout.node_of_index(index);
            if !scope.admits(node) {
                continue;
            }
            admitted += 1;
            let name = scope.file_name(index);
            match attempt(&open, &name, now_ms)? {
                Attempt::Taken(file, mark) => {
                    let floor_ms = mark.unwrap_or(i64::MIN);
                    return Ok(HostLease {
                        dir: dir.to_path_buf(),
                        scope: scope.clone(),
                        layout: layout.clone(),
                        path: open.path().join(&name),
                        node: NodeId {
                            datacenter_id: node.0,
                            worker_id: node.1,
                        },
                        owner_pid: std::process::id(),
                        floor_ms,
                        written_ms: AtomicI64::new(floor_ms),
                        released: AtomicBool::new(false),
                        file: Mutex::new(Some(file)),
                    });
                }
                Attempt::Held => held += 1,
                Attempt::Foreign(uid) => foreign.push((name, uid)),
                Attempt::Unusable(why) => unusable.push(format!("{}: {why}", name)),
            }
        }
        Err(exhausted(
            &open, scope, layout, admitted, held, &foreign, &unusable,
        ))
    }

    /// The lock file this lease holds.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn exhausted(
    dir: &SecureDir,
    scope: &Scope,
    layout: &Layout,
    admitted: u64,
    held: u64,
    foreign: &[(String, u32)],
    unusable: &[String],
) -> Error {
    let under = match (scope.datacenter_id, scope.worker_id) {
        (Some(d), _) => format!(" under datacenter {d}"),
        (None, Some(w)) => format!(" with worker {w}"),
        (None, None) => String::new(),
    };
    let mut message = format!(
        "all {admitted} node IDs of layout '{layout}'{under} are taken or unusable in the \
         lease directory {}: {held} held by live processes",
        dir.path().display()
    );
    if !foreign.is_empty() {
        let names: Vec<String> = foreign
            .iter()
            .take(LISTED)
            .map(|(name, uid)| format!("{name} (uid {uid})"))
            .collect();
        message += &format!(
            "; {} are files of other users, which only they (or root) can remove: {}",
            foreign.len(),
            names.join(", ")
        );
    }
    if !unusable.is_empty() {
        message += &format!(
            "; {} cannot be used: {}",
            unusable.len(),
            unusable
                .iter()
                .take(LISTED)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if unusable.len() > LISTED || foreign.len() > LISTED {
        message += "; and more";
    }
    if !foreign.is_empty() || !unusable.is_empty() {
        message += ". Remove the files named (after checking who made them), or set \
                    FLAKERY_LEASE_DIR to a directory that only the generators' users can write";
    }
    Error::new(ErrorCode::WorkerIdsExhausted, message)
}

const OPEN_FLAGS: libc::c_int =
    libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

/// Opens and locks one index's file, trusting nothing found at its name.
fn attempt(dir: &SecureDir, name: &str, now_ms: i64) -> Result<Attempt> {
    let c = c_name(Path::new(name)).map_err(Error::invalid_argument)?;
    // Created here (O_EXCL), or opened as found: never through a link, never blocking.
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    let mut fd = unsafe {
        libc::openat(
            dir.raw_fd(),
            c.as_ptr(),
            OPEN_FLAGS | libc::O_CREAT | libc::O_EXCL,
            0o644 as libc::c_uint,
        )
    };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EEXIST) => {
                // SAFETY: as above.
                fd = unsafe { libc::openat(dir.raw_fd(), c.as_ptr(), OPEN_FLAGS) };
            }
            Some(libc::ELOOP) => return Ok(Attempt::Unusable("a symbolic link".into())),
            _ => {
                return Err(lease_dir_error(
                    dir.path(),
                    &format!("cannot create {name}: {err}"),
                ))
            }
        }
    }
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Ok(match err.raw_os_error() {
            Some(libc::ELOOP) => Attempt::Unusable("a symbolic link".into()),
            Some(libc::EISDIR) => Attempt::Unusable("a directory".into()),
            Some(libc::EACCES) | Some(libc::EPERM) => match owner_of(dir, name) {
                Some(uid) if uid != euid() => Attempt::Foreign(uid),
                _ => Attempt::Unusable(format!("cannot open it: {err}")),
            },
            Some(libc::ENXIO) => Attempt::Unusable("not a regular file".into()),
            _ => Attempt::Unusable(format!("cannot open it: {err}")),
        });
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    let file = unsafe { File::from_raw_fd(fd) };
    let stat =
        fstat(file.as_raw_fd()).map_err(|e| Error::invalid_argument(format!("{name}: {e}")))?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Ok(Attempt::Unusable("not a regular file".into()));
    }
    if stat.st_uid != euid() {
        return Ok(Attempt::Foreign(stat.st_uid));
    }
    if stat.st_nlink != 1 {
        return Ok(Attempt::Unusable(format!(
            "has {} hard links (a lease file has one)",
            stat.st_nlink
        )));
    }
    if stat.st_mode & 0o022 != 0 {
        return Ok(Attempt::Unusable(format!(
            "writable by other users (mode {:o}), who could lower its mark; remove it",
            stat.st_mode & 0o7777
        )));
    }
    if stat.st_size > MAX_MARK_BYTES as i64 {
        return Ok(Attempt::Unusable(format!(
            "{} bytes, longer than a high-water mark",
            stat.st_size
        )));
    }
    // SAFETY: a valid, open descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Ok(Attempt::Held);
        }
        return Ok(Attempt::Unusable(format!("cannot lock it: {err}")));
    }
    let mut data = [0u8; MAX_MARK_BYTES + 1];
    let n = file
        .read_at(&mut data, 0)
        .map_err(|e| Error::invalid_argument(format!("cannot read {name}: {e}")))?;
    let mark = match read_mark(&data[..n]) {
        Ok(mark) => mark,
        Err(why) => {
            return Ok(Attempt::Unusable(format!(
                "its high-water mark is unreadable ({why}), so the last time used under this \
                 node ID is unknown; remove the file if no generator used this node ID lately"
            )))
        }
    };
    if let Some(ms) = mark {
        if ms > now_ms.saturating_add(MAX_MARK_AHEAD_MS) {
            return Ok(Attempt::Unusable(format!(
                "its high-water mark {ms} ({}) is {} ms ahead of this host's clock (was the \
                 clock set back?); a generator under it could issue nothing until then",
                format_rfc3339_ms(ms),
                ms.saturating_sub(now_ms)
            )));
        }
    }
    Ok(Attempt::Taken(file, mark))
}

/// The owner of `name` in `dir`, looked at without following a link.
fn owner_of(dir: &SecureDir, name: &str) -> Option<u32> {
    let c = c_name(Path::new(name)).ok()?;
    // SAFETY: zeroed stat is valid; a valid descriptor and C string.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::fstatat(
            dir.raw_fd(),
            c.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (rc == 0).then_some(stat.st_uid)
}

impl NodeLease for HostLease {
    fn source(&self) -> NodeSource {
        NodeSource::HostLease
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        if std::process::id() != self.owner_pid {
            return Err(released());
        }
        if let Some(grant) = self.covered(want_ms)? {
            return Ok(grant);
        }
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread's write, finished while this one waited, may cover the tick.
        if let Some(grant) = self.covered(want_ms)? {
            return Ok(grant);
        }
        let file = file.as_ref().ok_or_else(released)?;
        let high_water = want_ms.max(now_ms).saturating_add(LOOKAHEAD_MS);
        write_high_water(file, high_water).map_err(|e| {
            Error::new(
                ErrorCode::LeaseLost,
                format!(
                    "cannot record the high-water mark in {}: {e}",
                    self.path.display()
                ),
            )
        })?;
        // Raised only once the mark is on disk, and under the file's lock: a release lowers
        // the mark after it, never under it.
        let until_ms = self
            .written_ms
            .fetch_max(high_water, SeqCst)
            .max(high_water);
        Ok(Grant {
            node: self.node,
            floor_ms: self.floor_ms,
            until_ms,
        })
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        Ok(Box::new(HostLease::acquire_in(
            &self.dir,
            &self.scope,
            &self.layout,
        )?))
    }

    fn release(&self, last_used_ms: i64) {
        if std::process::id() != self.owner_pid {
            return; // a forked child: the lock and the mark are the parent's
        }
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        self.released.store(true, SeqCst);
        let Some(file) = file.take() else {
            return;
        };
        // Down from the look-ahead to what was used, never below the previous holder's.
        let _ = write_high_water(&file, last_used_ms.max(self.floor_ms));
        // Dropping the file closes it, which drops the lock.
    }
}

impl HostLease {
    /// The grant for `want_ms` if the mark already written covers it, with no I/O.
    fn covered(&self, want_ms: i64) -> Result<Option<Grant>> {
        if self.released.load(SeqCst) {
            return Err(released());
        }
        let written_ms = self.written_ms.load(SeqCst);
        Ok((want_ms <= written_ms).then_some(Grant {
            node: self.node,
            floor_ms: self.floor_ms,
            until_ms: written_ms,
        }))
    }
}

fn released() -> Error {
    Error::new(ErrorCode::LeaseLost, "the host lease was released")
}

fn lease_dir_error(dir: &Path, why: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "cannot use the lease directory {}: {why}. Set FLAKERY_LEASE_DIR (or lease_dir) to \
             a directory that only root or this user can change and this user can write; for \
             processes of several users on one host, have root create one with mode 1777 \
             (install -d -m 1777 DIR)",
            dir.display()
        ),
    )
}

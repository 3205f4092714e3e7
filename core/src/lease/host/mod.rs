//! The zero-configuration node identity: a node index that no other live process on this host
//! holds, through one lock file per index: the lowest free one whose high-water mark has
//! passed, else the free one whose mark is oldest.
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
mod index_file;
mod secure_dir;
#[cfg(test)]
mod writing_tests;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering::SeqCst};
use std::sync::Mutex;

use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::{
    write_mark as write_high_water, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS,
};
use crate::options::DEFAULT_BACKWARDS_TOLERANCE_MS;
use index_file::{attempt, Attempt};
use secure_dir::SecureDir;

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

impl HostLease {
    /// Takes a free node index of the default namespace in `dir` (see `acquire_in`).
    pub fn acquire(dir: &Path, layout: &Layout) -> Result<HostLease> {
        HostLease::acquire_in(dir, &Scope::default(), layout)
    }

    /// Takes a free node index in `dir` among those `scope` admits: the lowest whose mark has
    /// passed (or that has none), else the one whose mark is the oldest. A pre-fork server's
    /// new worker so starts at once on another free index instead of waiting out the mark its
    /// predecessor left (up to `LOOKAHEAD_MS` ahead, when it exited without releasing). The
    /// index taken is as safe as any: its mark is the lease's floor, which the generator
    /// starts after, so a mark still ahead is waited for, never skipped.
    ///
    /// The scan (an open, a lock and a read per index, a write of the mark) holds no lock and
    /// no fork section: a `fork()` meanwhile goes on, and the child inherits at most the
    /// descriptors opened so far, as it inherits a lease's own; a lock it keeps alive that way
    /// only keeps that index from others longer, never lets two share one. It holds at most
    /// one index besides the one it looks at (the best with a mark ahead, so far).
    pub fn acquire_in(dir: &Path, scope: &Scope, layout: &Layout) -> Result<HostLease> {
        let now_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
        HostLease::acquire_as_of(dir, scope, layout, now_ms)
    }

    /// `acquire_in` with the host's clock reading `now_ms`: which index a claim takes, checked
    /// on a fixed clock by this crate's tests (core/tests/host_lease.rs).
    #[cfg(feature = "test-hooks")]
    pub fn acquire_at(
        dir: &Path,
        scope: &Scope,
        layout: &Layout,
        now_ms: i64,
    ) -> Result<HostLease> {
        HostLease::acquire_as_of(dir, scope, layout, now_ms)
    }

    fn acquire_as_of(dir: &Path, scope: &Scope, layout: &Layout, now_ms: i64) -> Result<HostLease> {
        fork::install();
        let open = SecureDir::open(dir, 0o1777).map_err(|why| lease_dir_error(dir, &why))?;
        let count = layout.capacity().node_ids;
        let (mut admitted, mut held, mut foreign) = (0u64, 0u64, Vec::new());
        let mut unusable = Vec::new();
        // The free index with the oldest mark still ahead, locked: taken if no index with a
        // mark passed is free (replacing it closes its file, which unlocks it).
        let mut ahead: Option<(i64, (u64, u64), String, File)> = None;
        for index in 0..count {
            let node = layout.node_of_index(index);
            if !scope.admits(node) {
                continue;
            }
            admitted += 1;
            let name = scope.file_name(index);
            match attempt(&open, &name, now_ms)? {
                Attempt::Taken(file, Some(mark)) if mark > now_ms => {
                    if ahead.as_ref().is_none_or(|(oldest, ..)| mark < *oldest) {
                        ahead = Some((mark, node, name, file));
                    }
                }
                Attempt::Taken(file, mark) => {
                    let path = open.path().join(&name);
                    return Ok(HostLease::taken(dir, scope, layout, path, node, file, mark));
                }
                Attempt::Held => held += 1,
                Attempt::Foreign(uid) => foreign.push((name, uid)),
                Attempt::Unusable(why) => unusable.push(format!("{}: {why}", name)),
            }
        }
        if let Some((mark, node, name, file)) = ahead {
            let path = open.path().join(&name);
            return Ok(HostLease::taken(
                dir,
                scope,
                layout,
                path,
                node,
                file,
                Some(mark),
            ));
        }
        Err(exhausted(
            &open, scope, layout, admitted, held, &foreign, &unusable,
        ))
    }

    /// The lease of the index whose file `file` is locked, its mark `mark` the floor.
    fn taken(
        dir: &Path,
        scope: &Scope,
        layout: &Layout,
        path: PathBuf,
        node: (u64, u64),
        file: File,
        mark: Option<i64>,
    ) -> HostLease {
        let floor_ms = mark.unwrap_or(i64::MIN);
        HostLease {
            dir: dir.to_path_buf(),
            scope: scope.clone(),
            layout: layout.clone(),
            path,
            node: NodeId {
                datacenter_id: node.0,
                worker_id: node.1,
            },
            owner_pid: std::process::id(),
            floor_ms,
            written_ms: AtomicI64::new(floor_ms),
            released: AtomicBool::new(false),
            file: Mutex::new(Some(file)),
        }
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

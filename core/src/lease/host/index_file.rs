//! One node index's lock file, opened, locked and read: what the scan of `HostLease::acquire_in`
//! found at its name, trusting nothing there (the threat model is in docs/security.md).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::secure_dir::{c_name, euid, fstat, SecureDir};
use super::{lease_dir_error, MAX_MARK_AHEAD_MS};
use crate::error::{Error, Result};
use crate::lease::node::{read_mark, MAX_MARK_BYTES};
use crate::timestamp::format_rfc3339_ms;

/// What became of one index.
pub(super) enum Attempt {
    Taken(File, Option<i64>),
    /// Locked by a live process.
    Held,
    /// A file of another user: theirs, never touched.
    Foreign(u32),
    Unusable(String),
}

const OPEN_FLAGS: libc::c_int =
    libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

/// Opens and locks one index's file, trusting nothing found at its name.
pub(super) fn attempt(dir: &SecureDir, name: &str, now_ms: i64) -> Result<Attempt> {
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

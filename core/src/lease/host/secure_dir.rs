//! Opens a directory that other local users may share without trusting them: every
//! directory on the way must be one that only root or this user can change (a world-writable
//! one only if it is sticky, as `/tmp` and `/run/lock` are), and every symbolic link on the way
//! must belong to root or this user. Otherwise another user could swap the directory (or a
//! parent) for one of their own, and two processes would lease from different directories.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links one lookup may follow (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// An open directory, checked as described above, with the path it was reached by.
#[derive(Debug)]
pub(crate) struct SecureDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// Why a directory cannot be used, in words that name it and say what to do.
pub(crate) type Refusal = String;

pub(crate) fn euid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() }
}

/// The trust rule for one directory on the way.
#[allow(clippy::unnecessary_cast)] // mode_t is not u32 everywhere
fn untrusted_dir(path: &Path, uid: u32, mode: u32) -> Option<Refusal> {
    let me = euid();
    if uid != 0 && uid != me {
        return Some(format!(
            "{} belongs to uid {uid}, neither root nor this process's user (uid {me}), so that \
             user could replace what is in it",
            path.display()
        ));
    }
    if mode & 0o022 != 0 && mode & libc::S_ISVTX as u32 == 0 {
        return Some(format!(
            "{} is writable by other users (mode {:o}) and not sticky, so they could replace \
             what is in it",
            path.display(),
            mode & 0o7777
        ));
    }
    None
}

impl SecureDir {
    /// Opens `path` (relative to the working directory if not absolute), creating the missing
    /// trailing directories with `create_mode` (then the umask; root's last one is made
    /// exactly `create_mode`, so that other users can share it).
    pub(crate) fn open(path: &Path, create_mode: u32) -> Result<SecureDir, Refusal> {
        let absolute = std::path::absolute(path)
            .map_err(|e| format!("{} cannot be made absolute: {e}", path.display()))?;
        let (existing, missing) = resolve(&absolute)?;
        let mut fd = open_dir_at(None, Path::new("/"))?;
        let mut at = PathBuf::from("/");
        check_fd(&fd, &at)?;
        for part in existing.iter().skip(1) {
            at.push(part);
            fd = open_dir_at(Some(fd.as_raw_fd()), Path::new(part))?;
            check_fd(&fd, &at)?;
        }
        let last = missing.len();
        for (i, part) in missing.iter().enumerate() {
            at.push(part);
            let name = c_name(Path::new(part))?;
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            let made = unsafe { libc::mkdirat(fd.as_raw_fd(), name.as_ptr(), 0o755) };
            if made != 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() != Some(libc::EEXIST) {
                    return Err(format!("cannot create {}: {err}", at.display()));
                }
            }
            if made == 0 && i + 1 == last && euid() == 0 {
                // Ours, just made, in a directory no one else can change: safe to set.
                // SAFETY: a valid directory descriptor and a NUL-terminated name.
                unsafe {
                    libc::fchmodat(
                        fd.as_raw_fd(),
                        name.as_ptr(),
                        create_mode as libc::mode_t,
                        0,
                    )
                };
            }
            fd = open_dir_at(Some(fd.as_raw_fd()), Path::new(part))?;
            check_fd(&fd, &at)?;
        }
        Ok(SecureDir { fd, path: at })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The directories of `path` that exist, with every symbolic link on the way resolved and
/// checked, and the trailing names that do not exist yet.
fn resolve(path: &Path) -> Result<(PathBuf, Vec<std::ffi::OsString>), Refusal> {
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    push_front(&mut todo, path);
    let mut at = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = todo.pop() {
        match part.to_str() {
            Some(".") => continue,
            Some("..") => {
                at.pop();
                continue;
            }
            _ => {}
        }
        let next = at.join(&part);
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut missing = vec![part];
                while let Some(rest) = todo.pop() {
                    if rest == ".." {
                        return Err(format!(
                            "{} goes through '..' after a directory that does not exist",
                            path.display()
                        ));
                    }
                    if rest != "." {
                        missing.push(rest);
                    }
                }
                return Ok((at, missing));
            }
            Err(e) => return Err(format!("cannot look at {}: {e}", next.display())),
        };
        if meta.file_type().is_symlink() {
            let me = euid();
            if meta.uid() != 0 && meta.uid() != me {
                return Err(format!(
                    "{} is a symbolic link of uid {}, neither root nor this process's user \
                     (uid {me}), who could point it elsewhere",
                    next.display(),
                    meta.uid()
                ));
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(format!("{}: too many symbolic links", path.display()));
            }
            let target = std::fs::read_link(&next)
                .map_err(|e| format!("cannot read the link {}: {e}", next.display()))?;
            if target.is_absolute() {
                at = PathBuf::from("/");
            }
            push_front(&mut todo, &target);
        } else if meta.is_dir() {
            if let Some(why) = untrusted_dir(&next, meta.uid(), meta.mode()) {
                return Err(why);
            }
            at = next;
        } else {
            return Err(format!("{} is not a directory", next.display()));
        }
    }
    Ok((at, Vec::new()))
}

/// Puts the components of `path` on the stack so that the first pops first.
fn push_front(todo: &mut Vec<std::ffi::OsString>, path: &Path) {
    for part in path.components().rev() {
        match part {
            Component::Normal(name) => todo.push(name.to_os_string()),
            Component::ParentDir => todo.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

pub(crate) fn c_name(name: &Path) -> Result<CString, Refusal> {
    CString::new(name.as_os_str().as_bytes())
        .map_err(|_| format!("{} contains a NUL byte", name.display()))
}

/// Opens a directory without following a symbolic link in its last component.
fn open_dir_at(dir: Option<RawFd>, name: &Path) -> Result<OwnedFd, Refusal> {
    let c = c_name(name)?;
    #[cfg(target_os = "linux")]
    let access = libc::O_PATH;
    #[cfg(not(target_os = "linux"))]
    let access = libc::O_RDONLY;
    let flags = access | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid descriptor (or AT_FDCWD with an absolute name) and a C string.
    let fd = unsafe { libc::openat(dir.unwrap_or(libc::AT_FDCWD), c.as_ptr(), flags) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(format!(
            "cannot open the directory {} ({err}); it may have been replaced meanwhile",
            name.display()
        ));
    }
    // SAFETY: a descriptor just opened and owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Checks the directory actually opened, not only the one looked at by name.
#[allow(clippy::unnecessary_cast)] // mode_t is not u32 everywhere
fn check_fd(fd: &OwnedFd, path: &Path) -> Result<(), Refusal> {
    let stat = fstat(fd.as_raw_fd()).map_err(|e| format!("{}: {e}", path.display()))?;
    match untrusted_dir(path, stat.st_uid, stat.st_mode as u32) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

pub(crate) fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: a zeroed stat is a valid value to be overwritten.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a writable stat.
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stat)
}

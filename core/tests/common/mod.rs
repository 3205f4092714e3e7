//! Plumbing shared by the tests that need real processes: the test binary runs itself again
//! as a child (FLAKERY_TEST_ROLE says what the child does), and forks.

use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

pub const ROLE: &str = "FLAKERY_TEST_ROLE";

/// This test binary again, running only `child_entry_point`, as `role`, with no FLAKERY_*
/// variable of ours set: the caller adds the ones it wants.
pub fn rerun_as(role: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child_entry_point",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role);
    for name in [
        "FLAKERY_WORKER_ID",
        "FLAKERY_DATACENTER_ID",
        "FLAKERY_LAYOUT",
        "FLAKERY_ZOOKEEPER",
        "FLAKERY_NAMESPACE",
        "FLAKERY_LEASE_DIR",
        "FLAKERY_SESSION_TIMEOUT_MS",
    ] {
        command.env_remove(name);
    }
    command
}

/// A child being spawned holds a copy of every descriptor of ours, host-lease locks included,
/// until it execs; a lease closed in that window is not free yet. Tests that assert a closed
/// lease is free at once hold this lock, and spawns take it, so the two never overlap.
static SPAWNING: Mutex<()> = Mutex::new(());

#[allow(dead_code)]
pub fn no_spawns() -> MutexGuard<'static, ()> {
    SPAWNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// `command.spawn()`, never while a test holds `no_spawns`.
#[allow(dead_code)] // not every test binary spawns
pub fn spawn(command: &mut Command) -> Child {
    let _guard = no_spawns();
    command.spawn().unwrap()
}

/// `command.output()`, but only the spawn waits for `no_spawns`.
#[allow(dead_code)] // not every test binary runs children to completion
pub fn output(command: &mut Command) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    spawn(command).wait_with_output().unwrap()
}

/// Forks; the child runs `child` and its text comes back through a pipe. Call it only from a
/// process with one thread (a re-run child), so the child may allocate safely.
pub fn in_forked_child(child: impl FnOnce() -> String) -> String {
    let mut fds = [0; 2];
    // SAFETY: a pipe and fork in a single-threaded process; the child leaves by _exit.
    unsafe { libc::pipe(fds.as_mut_ptr()) };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let report = child();
        unsafe {
            libc::write(fds[1], report.as_ptr().cast(), report.len());
            libc::_exit(0);
        }
    }
    let mut buf = vec![0u8; 4096];
    unsafe { libc::close(fds[1]) };
    let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
    unsafe {
        libc::close(fds[0]);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
}

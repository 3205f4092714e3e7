//! Plumbing shared by the tests that need real processes: the test binary runs itself again
//! as a child (FLAKERY_TEST_ROLE says what the child does), and forks.

use std::process::Command;

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

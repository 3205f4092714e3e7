//! The mark's write holds no fork section and no state lock: a grant that waits for another
//! thread's write leaves `fork()` free to go on (docs/spec.md, "No lock across I/O").

use std::sync::{mpsc, Arc};

use super::HostLease;
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::NodeLease;

fn temporary_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flakery-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}

/// The thread's state letter in /proc: 'S' once it sleeps on a lock.
fn thread_state(tid: libc::pid_t) -> char {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.chars().next().unwrap()
}

#[test]
fn a_grant_waiting_for_a_write_in_progress_holds_no_fork_section() {
    fork::install();
    let dir = temporary_dir("host-writing");
    let lease = Arc::new(HostLease::acquire(&dir, &Layout::twitter()).unwrap());
    let now_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    let covered = lease.grant(now_ms, now_ms).unwrap().until_ms;

    // Another thread's write in progress.
    let in_progress = lease.writing.lock().unwrap();
    let (tid_sender, tid) = mpsc::channel();
    let waiter = std::thread::spawn({
        let lease = Arc::clone(&lease);
        move || {
            tid_sender.send(unsafe { libc::gettid() }).unwrap();
            lease.grant(covered + 1_000, now_ms)
        }
    });
    let tid = tid.recv().unwrap();
    while thread_state(tid) != 'S' {
        std::thread::yield_now();
    }

    // What is covered is answered without waiting for the write.
    assert_eq!(lease.grant(covered, now_ms).unwrap().until_ms, covered);
    // What a fork would wait for: nothing, though a grant waits for the mark's I/O.
    assert_eq!(fork::sections_active(), 0);
    let child = unsafe { libc::fork() };
    if child == 0 {
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);

    drop(in_progress);
    let grant = waiter.join().unwrap().unwrap();
    assert!(grant.until_ms >= covered + 1_000, "{grant:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

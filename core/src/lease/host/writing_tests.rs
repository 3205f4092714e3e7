//! The host lease's I/O holds no fork section: a grant that waits for another thread's
//! write, or a scan of the lease directory, leaves `fork()` free to go on (docs/spec.md,
//! "The generator's slow path").

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

/// Runs `scenario` in a forked child, where no other test's thread can be inside a section.
fn alone_in_a_child(scenario: fn()) {
    let child = unsafe { libc::fork() };
    if child == 0 {
        let passed = std::panic::catch_unwind(scenario).is_ok();
        unsafe { libc::_exit(if passed { 0 } else { 1 }) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the scenario failed in the child (its message is above)"
    );
}

#[test]
fn a_grant_waiting_for_a_write_in_progress_holds_no_fork_section() {
    alone_in_a_child(a_grant_waits_for_a_write);
}

fn a_grant_waits_for_a_write() {
    fork::install();
    let dir = temporary_dir("host-writing");
    let lease = Arc::new(HostLease::acquire(&dir, &Layout::twitter()).unwrap());
    let now_ms = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    let covered = lease.grant(now_ms, now_ms).unwrap().until_ms;

    // Another thread's write in progress.
    let in_progress = lease.file.lock().unwrap();
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

#[test]
fn a_scan_of_the_lease_directory_holds_no_fork_section() {
    alone_in_a_child(a_scan_of_held_indexes);
}

fn a_scan_of_held_indexes() {
    use std::os::fd::AsRawFd;
    let dir = temporary_dir("host-scan");
    let layout = Layout::twitter();
    // Every index held by another open file, so a scan opens, locks and reads each in turn.
    let held: Vec<std::fs::File> = (0..layout.capacity().node_ids)
        .map(|index| {
            let file =
                std::fs::File::create(dir.join(super::Scope::default().file_name(index))).unwrap();
            assert_eq!(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) }, 0);
            file
        })
        .collect();
    let scan = std::thread::spawn({
        let dir = dir.clone();
        move || HostLease::acquire(&dir, &Layout::twitter()).map(|_| ())
    });
    let mut most_active = 0;
    while !scan.is_finished() {
        most_active = most_active.max(fork::sections_active());
    }
    let refusal = scan.join().unwrap().unwrap_err();
    assert_eq!(refusal.code(), crate::error::ErrorCode::WorkerIdsExhausted);
    assert_eq!(most_active, 0, "a fork would have waited for the scan");
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

//! The thread that keeps the system clock's cheap reading (core/src/clock/ticker.rs): absent
//! until the first ID, parked with no wake-ups once IDs stop, woken by the next ID, absent in a
//! fork's child until the child makes an ID, and never ahead of the precise clock.
//!
//! One test, in phases: the thread is per process, so the phases must not run in parallel.

#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use flakery::clock::ticker;
use flakery::{Clock, Generator, SystemClock};

const THREAD_NAME: &str = "flakery-clock";

/// The task IDs of this process's threads named `name`.
fn threads_named(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim() == name {
            found.push(task.file_name().to_string_lossy().into_owned());
        }
    }
    found
}

/// How many times the thread went to sleep and was woken (voluntary context switches).
fn wake_ups(tid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits for `what`; the bound only keeps a broken build from hanging (the event takes
/// `PARK_AFTER_MS` milliseconds of an idle process).
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_clock_thread_runs_only_while_ids_are_made() {
    // Built, not used: no thread.
    let generator = Generator::builder().worker_id(1).build().unwrap();
    assert!(threads_named(THREAD_NAME).is_empty());
    assert!(!ticker::publishing());

    // The first ID starts it; it publishes, and the reading is never ahead of the clock.
    let mut last = generator.next_id().unwrap();
    // (The thread names itself once it runs.)
    eventually("the thread starts", || {
        threads_named(THREAD_NAME).len() == 1
    });
    eventually("the thread publishes", || {
        last = generator.next_id().unwrap();
        ticker::publishing()
    });
    for _ in 0..100_000 {
        let cheap = SystemClock.now_ms_coarse();
        let precise = SystemClock.now_ms();
        assert!(
            cheap <= precise,
            "the cheap reading {cheap} is ahead of {precise}"
        );
    }

    // No IDs: it parks, and a parked thread is not woken at all.
    eventually("the thread parks", || !ticker::publishing());
    let tid = threads_named(THREAD_NAME).pop().unwrap();
    let before = wake_ups(&tid);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(wake_ups(&tid), before, "a parked clock thread woke up");

    // The next ID wakes it: IDs keep increasing, one thread still.
    let id = generator.next_id().unwrap();
    assert!(id > last);
    eventually("the thread publishes again", || {
        generator.next_id().unwrap();
        ticker::publishing()
    });
    assert_eq!(threads_named(THREAD_NAME), vec![tid.clone()]);
    assert!(wake_ups(&tid) > before);

    // A fork's child has no clock thread and publishes nothing until it makes an ID; then it
    // has one of its own.
    let mut fds = [0; 2];
    // SAFETY: a pipe, then fork; the child writes and leaves by _exit, never returning.
    unsafe { libc::pipe(fds.as_mut_ptr()) };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let publishing_at_fork = ticker::publishing();
        let threads_at_fork = threads_named(THREAD_NAME).len();
        let own = Generator::builder().worker_id(2).build().unwrap();
        let made = own.next_id().is_ok();
        let started = Instant::now();
        while threads_named(THREAD_NAME).is_empty() && started.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let threads_after = threads_named(THREAD_NAME).len();
        let report = format!("{publishing_at_fork} {threads_at_fork} {made} {threads_after}");
        unsafe {
            libc::write(fds[1], report.as_ptr().cast(), report.len());
            libc::_exit(0);
        }
    }
    unsafe { libc::close(fds[1]) };
    let mut buf = [0u8; 256];
    let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
    let mut status = 0;
    unsafe {
        libc::close(fds[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    let report = String::from_utf8_lossy(&buf[..n.max(0) as usize]).to_string();
    assert_eq!(
        report, "false 0 true 1",
        "(publishing, threads) at fork, made, threads after"
    );
}

//! A fork's child never takes its parent's hot path: the generator's hot path has no fork
//! check of its own, because the fork handler closes every generator's limit in the child
//! (core/src/generator/fence.rs, `shut_all_after_fork`). Each generator here was issuing on
//! its hot path at the fork (the clock thread publishing, another thread calling), and in the
//! child its first call must go to the slow path, which notices the fork: a fixed node ID
//! refuses with `forked` rather than repeat the parent's IDs.

#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use flakery::clock::ticker;
use flakery::{ErrorCode, FakeClock, Generator};

/// Runs `work` in a forked child and returns the line it wrote back over a socket pair.
fn in_child(work: impl FnOnce() -> String) -> String {
    let (mut ours, mut theirs) = UnixStream::pair().unwrap();
    // SAFETY: the child runs `work`, writes, and leaves by _exit without returning.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(ours);
        let _ = theirs.write_all(work().as_bytes());
        drop(theirs);
        unsafe { libc::_exit(0) }
    }
    assert!(pid > 0);
    drop(theirs);
    let mut line = String::new();
    ours.read_to_string(&mut line).unwrap();
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    line
}

fn outcome<T>(result: flakery::Result<T>) -> &'static str {
    match result {
        Ok(_) => "issued",
        Err(e) if e.code() == ErrorCode::Forked => "forked",
        Err(_) => "other error",
    }
}

#[test]
fn a_forked_child_takes_the_slow_path_of_every_generator_first() {
    // Generators made and dropped before, so that the child's list holds dead entries too.
    for worker in 0..200 {
        let dropped = Generator::builder().worker_id(worker % 32).build().unwrap();
        dropped.next_id().unwrap();
    }
    let system = Arc::new(Generator::builder().worker_id(3).build().unwrap());
    let fake_clock = FakeClock::new(1_700_000_000_000);
    let fake = Generator::builder()
        .worker_id(4)
        .clock(fake_clock.clone())
        .build()
        .unwrap();
    // Both hot paths open: the clock thread publishes, and a fast call succeeds on each (on
    // the system clock, once the tick in hand is not used up; the fake clock never moves, so
    // its generator's hot path stays open, and is the deterministic half of the check).
    while !ticker::publishing() {
        system.next_id().unwrap();
    }
    while system.try_next_id_fast().is_none() {
        system.next_id().unwrap();
    }
    fake.next_id().unwrap();
    assert!(fake.try_next_id_fast().is_some());

    // Another thread keeps calling through the fork.
    let stop = Arc::new(AtomicBool::new(false));
    let caller = {
        let (system, stop) = (Arc::clone(&system), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                system.next_id().unwrap();
            }
        })
    };
    let line = in_child(|| {
        format!(
            "{} {} {} {}",
            system.try_next_id_fast().is_some(),
            fake.try_next_id_fast().is_some(),
            outcome(system.next_id()),
            outcome(fake.next_id()),
        )
    });
    stop.store(true, Ordering::Relaxed);
    caller.join().unwrap();
    assert_eq!(
        line, "false false forked forked",
        "in the child: a fast call on each generator, then a call on each"
    );
    // The parent goes on with its own.
    assert!(system.next_id().is_ok());
    assert!(fake.try_next_id_fast().is_some());
}

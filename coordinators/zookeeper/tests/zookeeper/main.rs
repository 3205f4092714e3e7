//! ZooKeeper leases against a real server: each test starts its own throw-away ZooKeeper with
//! tests/zookeeper/zkserver.py and stops it by PID when done. Child processes are this test
//! binary run again (FLAKERY_TEST_ROLE selects what a child does), as in host_lease.rs.
//!
//! Run by tests/zookeeper/run.sh (the `system-tests` feature), which installs ZooKeeper; a
//! missing ZooKeeper fails the test in CI (CI=true) and skips it loudly elsewhere. Within one
//! process the tests take turns (`serial`), so the counts and orders of events are not
//! disturbed by each other's processes and log events; tests/zookeeper/run.sh runs each in a
//! process of its own, side by side. No test asserts how long anything took: time is an order
//! of events here, and the keeper's deadlines are checked on the fake clock
//! (core/tests/keeper/).
//!
//! Only what needs a real server is here: the keeper's transitions are deterministic tests
//! (core/tests/keeper/), session expiry and a successor under a real cut are the partition test
//! (tests/partition), and the settings are unit tests.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakery::{decode, ErrorCode, FakeClock, Generator, Layout, LossReason, NodeSource, Options};
use flakery_zookeeper::ZooKeeperLease;

#[path = "../../../../core/tests/common/mod.rs"]
mod common;
use common::ROLE;
#[path = "../zk_harness/mod.rs"]
mod zk_harness;
use zk_harness::{log_lines, serial, zkserver, Server};

mod census;
mod leasing;
mod marks;
mod outages;

fn options(server: &Server, namespace: &str, timeout_ms: u64) -> Options {
    Options {
        zookeeper: Some(server.connect.clone()),
        namespace: Some(namespace.to_string()),
        session_timeout_ms: Some(timeout_ms),
        ..Options::default()
    }
}

fn time_of(id: i64, layout: &Layout) -> i64 {
    decode(id, layout).unwrap().timestamp_ms
}

/// How long a test waits for something that must happen before it gives up: a safety net
/// against a hang, never a measure (no test here asserts how long anything took).
const SAFETY_NET: Duration = Duration::from_secs(120);

/// What `found` gives once it gives something, looked for every 10 ms: waiting on state, not
/// on time; fails with `what` past the safety net after `since`.
fn wait_for<T>(
    since: Instant,
    what: impl Fn() -> String,
    mut found: impl FnMut() -> Option<T>,
) -> T {
    loop {
        if let Some(it) = found() {
            return it;
        }
        assert!(since.elapsed() < SAFETY_NET, "{}", what());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_distinct(ids: &[i64], what: &str) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let before = sorted.len();
    sorted.dedup();
    assert_eq!(sorted.len(), before, "duplicate IDs {what}");
}

// ------------------------------------------------------------------------------------------
// Child processes

fn child_command(role: &str, server: &Server, namespace: &str, timeout_ms: u64) -> Command {
    let mut command = common::rerun_as(role);
    command
        .env("FLAKERY_ZOOKEEPER", &server.connect)
        .env("FLAKERY_NAMESPACE", namespace)
        .env("FLAKERY_SESSION_TIMEOUT_MS", timeout_ms.to_string());
    command
}

/// Reads lines until one holds `tag`; returns what follows it (libtest may print its own
/// "test ... " on the same line first).
fn read_tagged(reader: &mut impl BufRead, tag: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "no {tag} line");
        if let Some((_, rest)) = line.split_once(tag) {
            return rest.trim().to_string();
        }
    }
}

#[test]
fn child_entry_point() {
    match std::env::var(ROLE).as_deref() {
        Ok("holder") => holder_role(),
        Ok("streamer") => streamer_role(),
        Ok("forker") => forker_role(),
        Ok("env") => env_role(),
        Ok("issuer") => common::issuer_role(),
        _ => {} // an ordinary test run: nothing to do
    }
}

/// Leases through the environment, prints its worker ID and 1000 IDs, then holds the lease
/// until its stdin closes.
fn holder_role() {
    // No retry: a start waits for its claim and first mark (however slow sixteen at once
    // make the server), and its first grant needs no write.
    let started = std::time::Instant::now();
    let generator = Generator::new(Options::default()).unwrap();
    eprintln!("STARTED in {} ms", started.elapsed().as_millis());
    assert_eq!(generator.source(), NodeSource::ZooKeeper);
    let ids: Vec<String> = generator
        .next_ids(1000)
        .unwrap()
        .iter()
        .map(i64::to_string)
        .collect();
    println!("HOLDER {} {}", generator.worker_id(), ids.join(" "));
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_line(&mut String::new());
}

/// Leases, then generates without end, printing the last ID of every batch.
fn streamer_role() {
    let generator = Generator::new(Options::default()).unwrap();
    println!("HOLDER {}", generator.worker_id());
    loop {
        let ids = generator.next_ids(100).unwrap();
        println!("LAST {}", ids.last().unwrap());
        std::io::stdout().flush().unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Leases, forks, and reports what the child and the parent got.
fn forker_role() {
    let leased = Generator::new(Options::default()).unwrap();
    let parent_ids = leased.next_ids(100).unwrap();
    let report = common::in_forked_child(|| {
        let report = match leased.next_ids(100) {
            Ok(ids) => format!("{} {} {}\n", leased.worker_id(), ids[0], ids[99]),
            Err(err) => format!("error {}\n", err.code()),
        };
        leased.close(); // gives the child's own lease back
        report
    });
    let after = leased.next_id().unwrap();
    // Past the session timeout: the parent's session lives on without the child.
    let timeout: u64 = std::env::var("FLAKERY_SESSION_TIMEOUT_MS")
        .unwrap()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(timeout + 500));
    let later = leased.next_id().unwrap();
    println!(
        "FORK parent_worker={} parent_last={} parent_after={} parent_later={} child={}",
        leased.worker_id(),
        parent_ids.last().unwrap(),
        after,
        later,
        report.trim(),
    );
}

/// Resolves its identity from the environment alone and reports it.
fn env_role() {
    let generator = Generator::new(Options::default()).unwrap();
    let id = generator.next_id().unwrap();
    println!(
        "ENV source={} worker={} id={}",
        generator.source(),
        generator.worker_id(),
        id
    );
    // Gives the node ID back before exiting (a drop only signals the release, which the
    // exit would cut short: docs/spec.md#the-generators-slow-path).
    generator.close();
}

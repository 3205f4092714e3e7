//! Database leases against real servers (see `db_harness`): claims under concurrency,
//! expiry, marks, a server paused, killed or down, Baidu mode, fork.
#![cfg(unix)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakery::lease::{Coordinator, Failure};
use flakery::{
    decode, Clock, ErrorCode, FakeClock, Generator, Layout, NodeSource, Options, SystemClock,
};
use flakery_sql::{BaiduWorkerNode, DatabaseUrl, SqlCoordinator};

#[path = "../../../../core/tests/common/mod.rs"]
mod common;
#[path = "../db_harness/mod.rs"]
mod db_harness;
use common::ROLE;
use db_harness::{
    coordinator, dbserver, each_kind, serial, servers_available, shared, soon, Kind, Server,
    SAFETY_NET,
};

mod census;
mod claims;
mod outages;
mod records;
mod uid_generator;

fn options(url: &str, namespace: &str, term_ms: u64) -> Options {
    Options {
        database_url: Some(DatabaseUrl::parse(url).unwrap()),
        namespace: Some(namespace.to_string()),
        session_timeout_ms: Some(term_ms),
        ..Options::default()
    }
}

#[test]
fn child_entry_point() {
    match std::env::var(ROLE).as_deref() {
        Ok("db-streamer") => streamer_role(),
        Ok("db-forker") => forker_role(),
        _ => {} // an ordinary test run: nothing to do
    }
}

/// Leases through FLAKERY_DATABASE_URL, then generates every 10 ms for
/// FLAKERY_TEST_SECONDS, printing each ID or error code.
/// Issues an ID (or prints the refusal) every 10 ms until its stdin is closed: the test
/// decides when it has seen enough, never a duration that a loaded machine can use up while
/// the test still waits on other things (the child stopped, a successor claiming).
fn streamer_role() {
    let generator = Generator::new(Options::default()).unwrap();
    assert_eq!(generator.source(), NodeSource::Database);
    println!("READY {}", generator.worker_id());
    let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let closed = Arc::clone(&closed);
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            closed.store(true, std::sync::atomic::Ordering::SeqCst);
        });
    }
    let mut out = std::io::stdout();
    while !closed.load(std::sync::atomic::Ordering::SeqCst) {
        match generator.next_id() {
            Ok(id) => writeln!(out, "ID {id}").unwrap(),
            Err(err) => writeln!(out, "ERR {}", err.code()).unwrap(),
        }
        out.flush().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Leases, forks, and reports the worker ID the parent and the child issue under.
fn forker_role() {
    let generator = Generator::new(Options::default()).unwrap();
    let parent_id = generator.next_id().unwrap();
    let report = common::in_forked_child(|| match generator.next_id() {
        Ok(id) => format!("{}", decode(id, generator.layout()).unwrap().worker_id),
        Err(err) => format!("error {}: {}", err.code(), err.message()),
    });
    let parent = decode(parent_id, generator.layout()).unwrap().worker_id;
    println!("FORK parent={parent} child={report}");
}

fn rerun(role: &str, url: &str, namespace: &str, term_ms: u64) -> Command {
    let mut command = common::rerun_as(role);
    command
        .env("FLAKERY_DATABASE_URL", url)
        .env("FLAKERY_NAMESPACE", namespace)
        .env("FLAKERY_SESSION_TIMEOUT_MS", term_ms.to_string());
    command
}

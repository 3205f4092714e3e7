//! ZooKeeper leases against a real server: each test starts its own throw-away ZooKeeper with
//! tests/zookeeper/zkserver.py and stops it by PID when done. Child processes are this test
//! binary run again (FLAKERY_TEST_ROLE selects what a child does), as in host_lease.rs.
//!
//! Run by tests/zookeeper/run.sh (the `system-tests` feature), which installs ZooKeeper; a
//! missing ZooKeeper fails the test in CI (CI=true) and skips it loudly elsewhere. The tests
//! run one at a time, so the counts and orders of events are not disturbed by each other's
//! processes. No test asserts how long anything took: time is an order of events here, and
//! the keeper's deadlines are checked on the fake clock (keeper.rs).
//!
//! Only what needs a real server is here: the keeper's transitions are deterministic tests
//! (keeper.rs), session expiry and a successor under a real cut are the partition test
//! (tests/partition), and the settings are unit tests.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakery::{decode, ErrorCode, FakeClock, Generator, Layout, LossReason, NodeSource, Options};
use flakery_zookeeper::ZooKeeperLease;

#[path = "../../../core/tests/common/mod.rs"]
mod common;
use common::ROLE;
mod zk_harness;
use zk_harness::{log_lines, serial, zkserver, Server};

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

// ------------------------------------------------------------------------------------------
// The tests

/// Issue 6: 16 processes leasing at once get 16 distinct node IDs, and no two of the IDs
/// they issue are equal.
#[test]
fn sixteen_processes_lease_sixteen_node_ids_at_once() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let started = Instant::now();
    let mut children: Vec<Child> = (0..16)
        .map(|_| {
            child_command("holder", &server, "sixteen", 10_000)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut workers = Vec::new();
    let mut ids = Vec::new();
    let mut readers = Vec::new();
    for child in &mut children {
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let line = read_tagged(&mut reader, "HOLDER ");
        let mut numbers = line.split_whitespace().map(|n| n.parse::<i64>().unwrap());
        workers.push(numbers.next().unwrap() as u64);
        ids.extend(numbers);
        readers.push(reader);
    }
    eprintln!("16 holders leased in {:?}", started.elapsed());
    workers.sort_unstable();
    assert_eq!(
        workers,
        (0..16).collect::<Vec<_>>(),
        "lowest free IDs, each once"
    );
    assert_eq!(ids.len(), 16_000);
    assert_distinct(&ids, "across 16 processes");
    for (mut child, mut reader) in children.into_iter().zip(readers) {
        drop(child.stdin.take());
        let _ = std::io::Read::read_to_end(&mut reader, &mut Vec::new());
        assert!(child.wait().unwrap().success());
    }
}

/// Issue 6: in a namespace whose layout has a 2-bit node space, the fifth holder gets
/// `worker_ids_exhausted`; a released ID is free at once.
#[test]
fn a_fifth_holder_of_a_two_bit_node_space_is_refused() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout = Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap();
    let options = Options {
        layout: Some(layout),
        ..options(&server, "twobits", 4000)
    };
    let held: Vec<Generator> = (0..4)
        .map(|_| Generator::new(options.clone()).unwrap())
        .collect();
    let mut workers: Vec<u64> = held.iter().map(Generator::worker_id).collect();
    workers.sort_unstable();
    assert_eq!(workers, [0, 1, 2, 3]);
    let err = Generator::new(options.clone()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    assert!(err.message().contains("all 4 node IDs"), "{err}");
    assert!(err.message().contains("'twobits'"), "{err}");

    held[2].close();
    let fifth = Generator::new(options).unwrap();
    assert_eq!(
        fifth.worker_id(),
        held[2].worker_id(),
        "a closed holder's ID is free at once"
    );
}

/// Closing gives the ID back at once and brings the high-water mark down to the time last
/// used; the next holder starts after it. The connect string's chroot is honoured.
#[test]
fn release_frees_the_id_at_once_and_records_the_time_last_used() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout = Layout::twitter();
    let connect = format!("{}/apps/ids", server.connect);
    let lease = ZooKeeperLease::acquire(&connect, "release", 4000, &layout).unwrap();
    assert_eq!(lease.index(), Some(0));
    assert_eq!(
        lease.node_path().as_deref(),
        Some("/apps/ids/flakery/release/nodes/0")
    );
    let offset = lease.clock_offset_ms().unwrap();
    assert!(
        offset.abs() < 1000,
        "same host, same clock: offset {offset} ms"
    );
    let generator = Generator::builder().lease(Box::new(lease)).build().unwrap();
    assert_eq!(generator.source(), NodeSource::ZooKeeper);

    let zk = server.client();
    let node = "/apps/ids/flakery/release/nodes/0";
    let hwm = "/apps/ids/flakery/release/hwm/0";
    let stat = zk.exists(node, false).unwrap().expect("the ephemeral node");
    assert_ne!(stat.ephemeral_owner, 0);
    let (data, _) = zk.get_data(node, false).unwrap();
    assert!(
        String::from_utf8_lossy(&data).ends_with(&std::process::id().to_string()),
        "host name and pid for operators"
    );

    let ids = generator.next_ids(20_000).unwrap();
    let last = time_of(*ids.last().unwrap(), &layout);
    let (ahead, _) = zk.get_data(hwm, false).unwrap();
    let ahead: i64 = String::from_utf8_lossy(&ahead).parse().unwrap();
    assert!(
        ahead >= last,
        "the mark {ahead} is written ahead of use ({last})"
    );
    generator.close();
    assert!(
        zk.exists(node, false).unwrap().is_none(),
        "released at once"
    );
    let (mark, _) = zk.get_data(hwm, false).unwrap();
    let mark: i64 = String::from_utf8_lossy(&mark).parse().unwrap();
    assert_eq!(mark, last, "the mark comes down to the time last used");

    let next = ZooKeeperLease::acquire(&connect, "release", 4000, &layout).unwrap();
    assert_eq!(next.index(), Some(0));
    assert_eq!(next.floor_ms(), Some(last));
    let next = Generator::builder().lease(Box::new(next)).build().unwrap();
    let id = next.next_id().unwrap();
    assert!(time_of(id, &layout) > last);
}

/// Issue 6: ZooKeeper paused (SIGSTOP) for longer than the session timeout while a generator
/// generates: it fails with `lease_lost` within the session timeout, holds a valid lease again
/// by itself after SIGCONT, and none of its IDs collides with a holder that takes the ID over.
/// The layout has a single node ID, so a second holder can only ever use that one.
#[test]
fn zookeeper_paused_past_the_session_timeout() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    const TIMEOUT: u64 = 3000;
    let layout = Layout::parse("time:41,sequence:12;epoch=1288834974657").unwrap();
    let options = Options {
        layout: Some(layout.clone()),
        ..options(&server, "pause", TIMEOUT)
    };
    let first = Arc::new(Generator::new(options.clone()).unwrap());

    #[derive(Default)]
    struct Log {
        ids: Vec<(Instant, i64)>,
        errors: Vec<(Instant, ErrorCode)>,
    }
    let log = Arc::new(Mutex::new(Log::default()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = {
        let (first, log, stop) = (first.clone(), log.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let result = first.next_id();
                let now = Instant::now();
                let mut log = log.lock().unwrap();
                match result {
                    Ok(id) => log.ids.push((now, id)),
                    Err(err) => {
                        if log.errors.last().map(|e| e.1) != Some(err.code()) {
                            eprintln!("first holder: {err}");
                        }
                        log.errors.push((now, err.code()));
                    }
                }
                drop(log);
                std::thread::sleep(Duration::from_micros(300));
            }
        })
    };
    std::thread::sleep(Duration::from_millis(1000));
    let paused_at = Instant::now();
    server.pause();
    std::thread::sleep(Duration::from_millis(TIMEOUT + 2000));
    let resumed_at = Instant::now();
    server.resume();

    // A second holder tries for the (single) node ID from the moment of the resume: it gets
    // it if the first holder's session expired and it is quicker than the first holder's own
    // new lease.
    let mut second: Option<(Generator, Vec<i64>, i64)> = None;
    while second.is_none() && resumed_at.elapsed() < Duration::from_millis(TIMEOUT + 3000) {
        match ZooKeeperLease::acquire(&server.connect, "pause", TIMEOUT, &layout) {
            Ok(lease) => {
                let floor = lease.floor_ms().unwrap();
                let generator = Generator::builder()
                    .lease(Box::new(lease))
                    .layout(layout.clone())
                    .build()
                    .unwrap();
                let ids = generator.next_ids(5000).unwrap();
                second = Some((generator, ids, floor));
            }
            Err(err) => {
                assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
                let log = log.lock().unwrap();
                if log
                    .ids
                    .last()
                    .is_some_and(|(at, _)| *at > resumed_at + Duration::from_millis(500))
                {
                    break; // the first holder has it and generates again
                }
                drop(log);
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let taken_over = second.is_some();
    if let Some((generator, _, _)) = &second {
        std::thread::sleep(Duration::from_millis(300));
        generator.close(); // lets the first holder lease it again
    }

    // The first holder generates again by itself.
    let recovered = loop {
        let found = log
            .lock()
            .unwrap()
            .ids
            .iter()
            .find(|(at, _)| *at > resumed_at)
            .map(|(at, _)| *at);
        if let Some(at) = found {
            break at;
        }
        assert!(
            resumed_at.elapsed() < SAFETY_NET,
            "the first holder did not lease again after the resume"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    worker.join().unwrap();
    let log = log.lock().unwrap();

    let first_lost = log
        .errors
        .iter()
        .find(|(at, code)| *at > paused_at && *code == ErrorCode::LeaseLost)
        .map(|(at, _)| *at)
        .expect("lease_lost while ZooKeeper was paused");
    let lost_after = first_lost - paused_at;
    eprintln!(
        "lease_lost {lost_after:?} after the pause; generating again {:?} after the resume; \
         taken over by a second holder: {taken_over}",
        recovered - resumed_at
    );
    // An order of events, not a time: the holder refused by itself while ZooKeeper was still
    // paused (which expires the session only once it runs again, so before any successor
    // could take the node ID). That it refuses at the session's deadline exactly is checked
    // on the fake clock (keeper.rs, a_missed_renewal_is_lease_lost_at_the_deadline_exactly).
    assert!(
        first_lost < resumed_at,
        "lease_lost only {lost_after:?} after the pause began, after the resume"
    );
    let issued_while_lost: Vec<_> = log
        .ids
        .iter()
        .filter(|(at, _)| *at > first_lost && *at < resumed_at)
        .collect();
    assert!(
        issued_while_lost.is_empty(),
        "IDs issued while the lease was lost"
    );
    for (_, code) in &log.errors {
        assert_eq!(*code, ErrorCode::LeaseLost, "only lease_lost while paused");
    }
    let first_ids: Vec<i64> = log.ids.iter().map(|(_, id)| *id).collect();
    assert!(
        first_ids.windows(2).all(|w| w[0] < w[1]),
        "one generator's IDs only grow"
    );
    let before_pause_max = log
        .ids
        .iter()
        .filter(|(at, _)| *at < paused_at)
        .map(|(_, id)| time_of(*id, &layout))
        .max()
        .unwrap();
    let mut all = first_ids.clone();
    if let Some((_, ids, floor)) = &second {
        assert!(
            *floor >= before_pause_max,
            "the successor's floor {floor} is below the first holder's time {before_pause_max}"
        );
        assert!(time_of(ids[0], &layout) > before_pause_max);
        all.extend(ids);
    }
    assert_distinct(&all, "between the first holder and its successor");
}

/// Issue 6: ZooKeeper down at start: `coordinator_unavailable` within the session timeout,
/// naming the address.
#[test]
fn zookeeper_down_at_start_is_coordinator_unavailable() {
    let _serial = serial();
    let output = zkserver().arg("closed-port").output().unwrap();
    let connect = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(connect.starts_with("127.0.0.1:"), "{connect}");
    for timeout in [1000, 2000] {
        let started = Instant::now();
        let err =
            ZooKeeperLease::acquire(&connect, "down", timeout, &Layout::twitter()).unwrap_err();
        let took = started.elapsed();
        assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
        assert!(err.message().contains(&connect), "{err}");
        assert!(err.message().contains(&format!("{timeout} ms")), "{err}");
        assert!(
            took <= Duration::from_millis(timeout + 300),
            "took {took:?} for a {timeout} ms timeout"
        );
    }
    // The same through the options, as every binding builds it.
    let err = Generator::new(Options {
        zookeeper: Some(connect.clone()),
        session_timeout_ms: Some(1000),
        ..Options::default()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
}

/// Issue 6: a restart with the clock set back reuses no time: the high-water mark in
/// ZooKeeper is the floor of the next holder of the same ID.
#[test]
fn a_restart_with_the_clock_set_back_reuses_no_time() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout = Layout::twitter();
    // The clocks here stand still: a node ID used before (its mark long past), since one
    // with no mark would make the first start wait 3.5 s of clock time.
    let t0 = flakery::Clock::now_ms(&flakery::SystemClock);
    let zk = server.client();
    for path in [
        "/flakery",
        "/flakery/clock",
        "/flakery/clock/hwm",
        "/flakery/clock/hwm/0",
    ] {
        let data = if path.ends_with("/0") {
            (t0 - 120_000).to_string().into_bytes()
        } else {
            Vec::new()
        };
        zk.create(
            path,
            data,
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        )
        .unwrap();
    }
    let start = |clock: &FakeClock| {
        let lease = ZooKeeperLease::acquire(&server.connect, "clock", 4000, &layout).unwrap();
        assert_eq!(
            lease.index(),
            Some(0),
            "the same node ID, so only time protects it"
        );
        Generator::builder()
            .lease(Box::new(lease))
            .clock(clock.clone())
            .build()
            .unwrap()
    };
    let clock = FakeClock::new(t0);
    let first = start(&clock);
    let mut ids = first.next_ids(10_000).unwrap();
    clock.advance(3000); // well past the look-ahead: the mark is written again
    ids.extend(first.next_ids(10_000).unwrap());
    let last = *ids.last().unwrap();
    // close() waits for the release (a drop only signals it): the next start finds the index
    // free with the time last used recorded.
    first.close();

    // Set back by 10 s, more than the tolerance: it refuses rather than reuse.
    let clock = FakeClock::new(t0 - 10_000);
    let second = start(&clock);
    let err = second.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockMovedBackwards, "{err}");
    second.close();

    // Set back by 300 ms only: it waits past the recorded time.
    let clock = FakeClock::new(time_of(last, &layout) - 300);
    let third = start(&clock);
    let id = third.next_id().unwrap();
    assert!(id > last, "{id} reuses time up to {last}");
    assert!(time_of(id, &layout) > time_of(last, &layout));
    assert!(!clock.waits().is_empty(), "it waited");
}

/// Issue 6: a forked child of a process holding a ZooKeeper lease leases a node ID of its own,
/// and the parent's lease is unaffected.
#[test]
fn a_forked_child_leases_a_new_node_id() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let output = child_command("forker", &server, "fork", 2000)
        .output()
        .unwrap();
    let line = common::report(&output, "FORK");
    let field = |key: &str| -> i64 { common::field(&line, key).parse().unwrap() };
    let child = common::child_words(&line);
    assert_ne!(child[0], "error", "{line}");
    let layout = Layout::twitter();
    let parent_worker = field("parent_worker") as u64;
    let child_worker: u64 = child[0].parse().unwrap();
    assert_ne!(child_worker, parent_worker, "{line}");
    let child_first: i64 = child[1].parse().unwrap();
    let child_last: i64 = child[2].parse().unwrap();
    assert_eq!(
        decode(child_first, &layout).unwrap().worker_id,
        child_worker
    );
    for key in ["parent_last", "parent_after", "parent_later"] {
        let id = field(key);
        assert_eq!(
            decode(id, &layout).unwrap().worker_id,
            parent_worker,
            "{key}"
        );
        assert!(id != child_first && id != child_last);
    }
    assert!(field("parent_after") > field("parent_last"));
    assert!(field("parent_later") > field("parent_after"));
}

/// FLAKERY_ZOOKEEPER comes before FLAKERY_WORKER_ID, and the chroot of the connect string,
/// the namespace and the session timeout are taken from the environment.
#[test]
fn the_environment_selects_zookeeper() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let output = child_command("env", &server, "envns", 3000)
        .env("FLAKERY_ZOOKEEPER", format!("{}/env/root", server.connect))
        .env("FLAKERY_WORKER_ID", "7")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("ENV source=zookeeper worker=0 "),
        "{stdout} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The child closed its lease before it exited; its mark stays, under the chroot.
    let zk = server.client();
    assert!(zk
        .exists("/env/root/flakery/envns/hwm/0", false)
        .unwrap()
        .is_some());
    assert!(zk
        .exists("/env/root/flakery/envns/nodes/0", false)
        .unwrap()
        .is_none());
}

/// Killing ZooKeeper closes the connection: the generator refuses at once (the fence), and
/// once a server is back on the same port with the same data it leases again by itself.
#[test]
fn a_lost_connection_fences_at_once_and_the_lease_comes_back() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    const TIMEOUT: u64 = 4000;
    let data = std::env::temp_dir().join(format!("flakery-zkdata-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data).unwrap();
    let port = server.port;
    drop(server);
    let server = Server::start_with(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--port",
        &port.to_string(),
    ]);
    let lines = log_lines();
    let generator = Generator::new(options(&server, "fence", TIMEOUT)).unwrap();
    let before = generator.next_ids(100).unwrap();
    // SIGKILL: the kernel closes the server's connections at once. (A server stopped with
    // SIGTERM may stop answering before it closes them; its clients' claims then go
    // unconfirmed first, which is another test's story.)
    // SAFETY: a signal to the server this test started, by its PID.
    unsafe { libc::kill(server.pid as i32, libc::SIGKILL) };
    drop(server); // waits until it is gone and removes its directory
    let stopped_at = Instant::now();
    let broke = || {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("connection broke"))
    };
    let mut issued_after_the_break = 0;
    let err = loop {
        let seen_broken = broke();
        match generator.next_id() {
            Ok(_) => {
                assert!(
                    stopped_at.elapsed() < SAFETY_NET,
                    "still issuing IDs {:?} after the server stopped",
                    stopped_at.elapsed()
                );
                issued_after_the_break += usize::from(seen_broken);
            }
            Err(err) => break err,
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    // At once, as a cause rather than a time: the lease stopped because the client raised its
    // alarm on the broken connection (a loss counted as `disconnected`), not because its
    // claim went unconfirmed for half the session (`unconfirmed`, 2 s on). That an alarm
    // fences with no wait is an order of events on the fake clock (keeper.rs,
    // an_alarm_fences_at_once_and_a_confirmed_renewal_lifts_it). The IDs that raced the reader
    // thread between its log line and its alarm are only counted.
    assert!(
        broke(),
        "lease_lost with no broken connection logged: {err}"
    );
    let status = generator.lease_status();
    assert_eq!(
        (
            status.losses(LossReason::Disconnected),
            status.losses(LossReason::Unconfirmed)
        ),
        (1, 0),
        "the lease was not fenced by the broken connection"
    );
    eprintln!("{issued_after_the_break} IDs issued after the break was logged");
    eprintln!(
        "lease_lost {:?} after the server stopped: {err}",
        stopped_at.elapsed()
    );

    let server = Server::start_with(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--port",
        &port.to_string(),
    ]);
    let restarted_at = Instant::now();
    let after = loop {
        match generator.next_id() {
            Ok(id) => break id,
            Err(err) => {
                assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
                assert!(
                    restarted_at.elapsed() < SAFETY_NET,
                    "no lease {:?} after the server came back: {err}",
                    restarted_at.elapsed()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    eprintln!(
        "generating again {:?} after the restart",
        restarted_at.elapsed()
    );
    assert!(after > *before.last().unwrap());
    drop(generator);
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}

/// A garbled, too long or non-numeric `hwm` znode is never read as "no mark": that node ID is
/// skipped, and when none is left the error names the unreadable znodes.
#[test]
fn an_unreadable_mark_skips_its_node_id_and_is_named_when_none_is_left() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    // Two node IDs: both marks garbled, then one repaired.
    let layout = Layout::parse("time:41,worker:1,sequence:12;epoch=0").unwrap();
    let zk = server.client();
    for path in ["/flakery", "/flakery/garbled", "/flakery/garbled/hwm"] {
        let _ = zk.create(
            path,
            Vec::new(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        );
    }
    let garbage: [&[u8]; 2] = [b"not a time", &[b'7'; 100]];
    for (index, data) in garbage.iter().enumerate() {
        zk.create(
            &format!("/flakery/garbled/hwm/{index}"),
            data.to_vec(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        )
        .unwrap();
    }
    let err = ZooKeeperLease::acquire(&server.connect, "garbled", 4000, &layout).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    for index in 0..2 {
        let path = format!("/flakery/garbled/hwm/{index}");
        assert!(err.message().contains(&path), "{path} not named: {err}");
    }
    // The failed attempt left no ephemeral node behind.
    assert!(zk
        .get_children("/flakery/garbled/nodes", false)
        .unwrap()
        .is_empty());
    zk.set_data("/flakery/garbled/hwm/1", b"1700000000000".to_vec(), None)
        .unwrap();
    let lease = ZooKeeperLease::acquire(&server.connect, "garbled", 4000, &layout).unwrap();
    assert_eq!(lease.index(), Some(1), "index 0's mark is still unreadable");
    assert_eq!(lease.floor_ms(), Some(1_700_000_000_000));
}

/// A mark left far ahead (a run under faketime) does not block the namespace: that node ID
/// is skipped, the next one leased, and the skipped one named when none is left.
#[test]
fn a_mark_far_ahead_skips_its_node_id_and_is_named_when_none_is_left() {
    use flakery::lease::keeper::MAX_MARK_AHEAD_MS;
    use flakery::{Clock, SystemClock};
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout = Layout::parse("time:41,worker:1,sequence:12;epoch=0").unwrap();
    let zk = server.client();
    for path in ["/flakery", "/flakery/ahead", "/flakery/ahead/hwm"] {
        let _ = zk.create(
            path,
            Vec::new(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        );
    }
    let now = SystemClock.now_ms();
    let ahead = now + 120_000;
    let within = now + MAX_MARK_AHEAD_MS - 2000;
    for (index, mark) in [(0, ahead), (1, within)] {
        zk.create(
            &format!("/flakery/ahead/hwm/{index}"),
            mark.to_string().into_bytes(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        )
        .unwrap();
    }
    let lease = ZooKeeperLease::acquire(&server.connect, "ahead", 4000, &layout).unwrap();
    assert_eq!(
        lease.index(),
        Some(1),
        "index 0's mark is two minutes ahead"
    );
    assert_eq!(lease.floor_ms(), Some(within));
    let err = ZooKeeperLease::acquire(&server.connect, "ahead", 4000, &layout).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted, "{err}");
    assert!(
        err.message().contains("/flakery/ahead/hwm/0")
            && err.message().contains(&ahead.to_string()),
        "{err}"
    );
}

/// An issuing child, the lines it printed (read on a thread), and whether it said READY.
type Issuer = (
    Child,
    std::thread::JoinHandle<Vec<String>>,
    Arc<Mutex<bool>>,
);

/// The hold-up: four processes issue from ZooKeeper leases while their records are edited
/// by a plain client: a mark deleted, a mark lowered, an ephemeral node deleted (as a reset
/// session leaves it), and both deleted (the record made anew by the next holder). Counted:
/// no ID twice, none decreasing per generator.
#[test]
fn many_processes_issuing_while_znodes_are_deleted_and_lowered_issue_no_duplicate() {
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout_text = "time:41,worker:3,sequence:12;epoch=0";
    let layout = Layout::parse(layout_text).unwrap();
    let readers: Vec<Issuer> = (0..4)
        .map(|_| {
            let mut child = child_command("issuer", &server, "hold-up", 4000)
                .env("FLAKERY_LAYOUT", layout_text)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let stdout = child.stdout.take().unwrap();
            let ready = Arc::new(Mutex::new(false));
            let seen = Arc::clone(&ready);
            let lines = std::thread::spawn(move || {
                let mut lines = Vec::new();
                for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                    if line.contains("READY ") {
                        *seen.lock().unwrap() = true;
                    }
                    lines.push(line);
                }
                lines
            });
            (child, lines, ready)
        })
        .collect();
    let began = Instant::now();
    while !readers.iter().all(|(_, _, ready)| *ready.lock().unwrap()) {
        assert!(began.elapsed() < SAFETY_NET, "issuers never ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    let zk = server.client();
    let base = "/flakery/hold-up";
    let mut actions = Vec::new();
    // Each round edits one index; an index is edited again only four rounds on.
    for round in 0..16u64 {
        std::thread::sleep(Duration::from_millis(300));
        let index = round % 4;
        let (hwm, node) = (
            format!("{base}/hwm/{index}"),
            format!("{base}/nodes/{index}"),
        );
        let what = match (round / 4) % 4 {
            0 => {
                let _ = zk.delete(&hwm, None);
                "mark deleted"
            }
            1 => {
                let _ = zk.set_data(&hwm, b"1".to_vec(), None);
                "mark lowered"
            }
            2 => {
                let _ = zk.delete(&node, None);
                "node deleted"
            }
            _ => {
                let _ = zk.delete(&node, None);
                let _ = zk.delete(&hwm, None);
                "node and mark deleted"
            }
        };
        actions.push(format!("{what} {index}"));
    }
    std::thread::sleep(Duration::from_millis(1000));
    let mut outputs = Vec::new();
    for (mut child, lines, _) in readers {
        drop(child.stdin.take());
        child.wait().unwrap();
        outputs.push(lines.join().unwrap());
    }
    let (ids, refusals) = common::count_issued(&outputs, &layout);
    eprintln!(
        "ZooKeeper: {ids} IDs from {} generators while {} records were edited ({actions:?}); \
         0 duplicates, 0 decreases; refusals: {refusals:?}",
        outputs.len(),
        actions.len()
    );
    assert!(ids > 1000, "only {ids} IDs were issued");
}

//! ZooKeeper paused, down at start, or killed: fail closed, then lease again by itself.

use super::*;

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
    let recovered = wait_for(
        resumed_at,
        || "the first holder did not lease again after the resume".into(),
        || {
            let ids = &log.lock().unwrap().ids;
            ids.iter()
                .find(|(at, _)| *at > resumed_at)
                .map(|(at, _)| *at)
        },
    );
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

/// Issue 6: ZooKeeper down at start: `coordinator_unavailable`, naming the address and the
/// session timeout, through `ZooKeeperLease::acquire` and through the options as every binding
/// builds a generator. When it gives up (at the session timeout, never before its attempts
/// are spent) is checked on a fake clock, to the millisecond: src/start_timeout_tests.rs.
#[test]
fn zookeeper_down_at_start_is_coordinator_unavailable() {
    let _serial = serial();
    let output = zkserver().arg("closed-port").output().unwrap();
    let connect = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(connect.starts_with("127.0.0.1:"), "{connect}");
    let err = ZooKeeperLease::acquire(&connect, "down", 1000, &Layout::twitter()).unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
    assert!(err.message().contains(&connect), "{err}");
    assert!(err.message().contains("within 1000 ms"), "{err}");
    // The same through the options, as every binding builds it.
    let err = Generator::new(Options {
        zookeeper: Some(connect.clone()),
        session_timeout_ms: Some(1000),
        ..Options::default()
    })
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::CoordinatorUnavailable, "{err}");
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
    // The lease's state as each line is logged, read by the logging thread at that instant.
    let status = generator.lease_status();
    zk_harness::note_each_line(Some(Box::new(move || {
        format!(" lease={:?}", status.state())
    })));
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
    // One loss, for any of its causes: the client's alarm on the broken connection
    // (`disconnected`); or, when the connection's threads are starved, the claim unconfirmed
    // for half the session (`unconfirmed`, 2 s on) or a renewal that found the connection
    // marked broken before the alarm (`lost`): correct losses, the fence first either way.
    // The alarm is raised right before the break is logged, on the same thread, and fences
    // at once (keeper.rs, an_alarm_fences_at_once_and_a_confirmed_renewal_lifts_it): the
    // lease's state read as the line is logged is after the fence, whichever of the alarm
    // and the half-session deadline fenced first, and nothing can make the lease held again
    // before a new session, which the killed server cannot give. So a line showing the lease
    // held means the alarm did not fence: no race with the deadline. The IDs issued between
    // the break and its line are only counted. A starved reader thread may log the break
    // after the deadline fenced: waited for.
    let break_line = wait_for(
        stopped_at,
        || format!("lease_lost with no broken connection logged: {err}"),
        || {
            let lines = lines.lock().unwrap();
            lines
                .iter()
                .find(|l| l.contains("connection broke"))
                .cloned()
        },
    );
    zk_harness::note_each_line(None);
    // The fence closes just before the loss is counted (the keeper's, then the status's):
    // waited for.
    let status = generator.lease_status();
    let count = |reason| status.losses(reason);
    let (disconnected, unconfirmed, lost) = wait_for(
        stopped_at,
        || format!("lease_lost with no loss counted: {err} ({break_line})"),
        || {
            let losses = (
                count(LossReason::Disconnected),
                count(LossReason::Unconfirmed),
                count(LossReason::Lost),
            );
            (losses.0 + losses.1 + losses.2 > 0).then_some(losses)
        },
    );
    // The first loss: a held lease turns suspect (disconnected or unconfirmed) once, or is
    // lost outright; a suspect lease may be counted lost later.
    assert!(
        disconnected + unconfirmed == 1 || disconnected + unconfirmed == 0 && lost > 0,
        "not one loss of the lease: {disconnected} disconnected, {unconfirmed} unconfirmed, \
         {lost} lost ({break_line})"
    );
    assert!(
        !break_line.contains(" lease=Held"),
        "still held after the broken connection's alarm: {break_line}"
    );
    eprintln!("{break_line}: {disconnected} disconnected, {unconfirmed} unconfirmed, {lost} lost");
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

//! The high-water marks in ZooKeeper: the floor after a restart with the clock set back, and
//! marks garbled, left far ahead, deleted or lowered by hand.

use super::*;

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
    write_marks(
        &zk,
        "garbled",
        &[(0, b"not a time".to_vec()), (1, [b'7'; 100].to_vec())],
    );
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
    let now = SystemClock.now_ms();
    let ahead = now + 120_000;
    let within = now + MAX_MARK_AHEAD_MS - 2000;
    let marks = [(0, ahead), (1, within)].map(|(i, mark)| (i, mark.to_string().into_bytes()));
    write_marks(&zk, "ahead", &marks);
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

/// Issue 37: a claim tries the free node ID a start waits least for first. Index 0's mark is
/// a year ahead (ahead of the clock on any machine when the claim orders the free IDs, and
/// past the keeper's bound: a claim that tried it would write it and give it back, skipped),
/// index 1's has passed, index 2's is ahead by less than the fresh-record wait, index 3 has
/// none. The first claim takes 1 without touching 0 (its version unchanged); the next takes
/// 2 (its wait, however late the claim comes, shorter than 3's) with that mark as its floor:
/// its first ID comes after it (an order of events: the ID's time against the mark), never
/// skipping it.
#[test]
fn a_claim_takes_the_free_node_id_whose_mark_has_passed_before_one_ahead() {
    use flakery::lease::keeper::FRESH_RECORD_WAIT_MS;
    use flakery::{Clock, SystemClock};
    const YEAR_MS: i64 = 365 * 24 * 3600 * 1000;
    let _serial = serial();
    let Some(server) = Server::start() else {
        return;
    };
    let layout = Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap();
    let zk = server.client();
    let now = SystemClock.now_ms();
    let (far, passed, near) = (
        now + YEAR_MS,
        now - 120_000,
        now + FRESH_RECORD_WAIT_MS - 500,
    );
    let marks = [(0, far), (1, passed), (2, near)].map(|(i, m)| (i, m.to_string().into_bytes()));
    write_marks(&zk, "oldest", &marks);
    let far_mark = "/flakery/oldest/hwm/0";
    let version = |path: &str| zk.exists(path, false).unwrap().expect(path).version;
    let untouched = version(far_mark);
    let first = ZooKeeperLease::acquire(&server.connect, "oldest", 4000, &layout).unwrap();
    assert_eq!(
        (first.index(), first.floor_ms()),
        (Some(1), Some(passed)),
        "took a node ID whose mark is still ahead"
    );
    assert_eq!(
        version(far_mark),
        untouched,
        "the claim tried index 0, whose mark is ahead, before index 1, whose mark has passed"
    );
    let second = ZooKeeperLease::acquire(&server.connect, "oldest", 4000, &layout).unwrap();
    assert_eq!(
        (second.index(), second.floor_ms()),
        (Some(2), Some(near)),
        "the mark ahead by less than the fresh-record wait, as the floor"
    );
    assert_eq!(version(far_mark), untouched, "index 0 tried before index 2");
    let generator = Generator::builder()
        .lease(Box::new(second))
        .layout(layout.clone())
        .build()
        .unwrap();
    let id = generator.next_id().unwrap();
    assert!(
        time_of(id, &layout) > near,
        "an ID at {} ms, not past the mark {near}",
        time_of(id, &layout)
    );
    generator.close();
    drop(first);
}

/// Writes the `hwm` znodes of `namespace` by hand, `(index, data)` each, with their parents.
fn write_marks(zk: &zookeeper::ZooKeeper, namespace: &str, marks: &[(u64, Vec<u8>)]) {
    let root = format!("/flakery/{namespace}");
    for path in ["/flakery".to_string(), root.clone(), format!("{root}/hwm")] {
        let _ = zk.create(
            &path,
            Vec::new(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        );
    }
    for (index, data) in marks {
        zk.create(
            &format!("{root}/hwm/{index}"),
            data.clone(),
            zookeeper::Acl::open_unsafe().clone(),
            zookeeper::CreateMode::Persistent,
        )
        .unwrap();
    }
}

//! Leasing, refusing and releasing node IDs; a forked child; the environment.

use super::*;

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

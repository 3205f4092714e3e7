//! Host-local leases across real processes. The test binary runs itself as the child
//! processes (FLAKERY_TEST_ROLE selects what a child does), so every process here is real.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};

use flakery::host_lease::HostLease;
use flakery::{decode, ErrorCode, FakeClock, Generator, Layout, NodeSource, Options};

mod common;
use common::ROLE;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("flakery-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The high-water mark in the lock file of node index `index` (default namespace).
fn high_water_mark(dir: &std::path::Path, index: u64) -> i64 {
    let path = dir.join(format!("flakery.default.node-{index}"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{}: {text:?}", path.display()))
}

/// A child that leases with no configuration but the directory, prints its worker ID and
/// some IDs on one line, then holds the lease until its stdin closes.
struct Holder {
    child: Child,
    /// Kept open (and drained at the end) so the child never writes into a closed pipe.
    stdout: BufReader<std::process::ChildStdout>,
    worker: u64,
    ids: Vec<i64>,
}

impl Holder {
    fn finish(mut self) {
        drop(self.child.stdin.take()); // lets it exit
        let _ = std::io::Read::read_to_end(&mut self.stdout, &mut Vec::new());
        assert!(self.child.wait().unwrap().success());
    }
}

// The child is waited for in Holder::finish (or killed and waited for by the test).
#[allow(clippy::zombie_processes)]
fn spawn_holder(dir: &std::path::Path, layout: &str) -> Holder {
    let mut child = common::spawn(
        common::rerun_as("holder")
            .env("FLAKERY_LEASE_DIR", dir)
            .env("FLAKERY_LAYOUT", layout)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    );
    let mut line = String::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "holder printed nothing"
        );
        // libtest may print its own "test ... " on the same line first.
        if let Some((_, rest)) = line.split_once("HOLDER ") {
            let mut numbers = rest.split_whitespace().map(|n| n.parse::<i64>().unwrap());
            let worker = numbers.next().unwrap() as u64;
            return Holder {
                child,
                stdout: reader,
                worker,
                ids: numbers.collect(),
            };
        }
    }
}

#[test]
fn child_entry_point() {
    match std::env::var(ROLE).as_deref() {
        Ok("holder") => {
            let generator = Generator::new(Options::default()).unwrap();
            assert_eq!(generator.source(), NodeSource::HostLease);
            let ids = generator.next_ids(1000).unwrap();
            let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
            println!("HOLDER {} {}", generator.worker_id(), ids.join(" "));
            std::io::stdout().flush().unwrap();
            let _ = std::io::stdin().read_line(&mut String::new());
        }
        Ok("forker") => fork_child_role(),
        Ok("recycler") => recycler_role(),
        Ok("default-user") => {
            let id = flakery::next_id().unwrap();
            assert_eq!(
                flakery::default_generator().unwrap().source(),
                NodeSource::HostLease
            );
            println!("DEFAULT {id}");
        }
        _ => {} // an ordinary test run: nothing to do
    }
}

/// A layout of 16 node IDs: with 16 holders, a dead one's index is the only free one.
const SIXTEEN: &str = "time:41,worker:4,sequence:12;epoch=1288834974657";

#[test]
fn sixteen_processes_get_sixteen_node_ids_and_a_killed_holders_id_is_reused() {
    let dir = temp_dir("sixteen");
    let layout = Layout::parse(SIXTEEN).unwrap();
    let mut holders: Vec<Holder> = (0..16).map(|_| spawn_holder(&dir, SIXTEEN)).collect();
    let mut workers: Vec<u64> = holders.iter().map(|h| h.worker).collect();
    workers.sort_unstable();
    assert_eq!(
        workers,
        (0..16).collect::<Vec<_>>(),
        "lowest free IDs, each once"
    );
    let mut ids: Vec<i64> = holders.iter().flat_map(|h| h.ids.clone()).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate IDs across processes");

    // kill -9 the holder of worker 5: the next process gets 5 (no other is free), and only
    // after its time.
    let at = holders.iter().position(|h| h.worker == 5).unwrap();
    let mut killed = holders.remove(at);
    killed.child.kill().unwrap(); // SIGKILL
    killed.child.wait().unwrap();
    // A crashed holder leaves its look-ahead mark, ahead of the time it used: the successor
    // must start after the mark, not merely after the IDs it saw.
    let mark = high_water_mark(&dir, 5);
    assert!(
        mark > decode(*killed.ids.last().unwrap(), &layout)
            .unwrap()
            .timestamp_ms
    );
    let next = spawn_holder(&dir, SIXTEEN);
    assert_eq!(next.worker, 5);
    assert!(next.ids[0] > *killed.ids.last().unwrap());
    assert!(decode(next.ids[0], &layout).unwrap().timestamp_ms > mark);
    holders.push(next);
    for holder in holders {
        holder.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_generators_in_one_process_hold_different_ids() {
    let dir = temp_dir("inprocess");
    let _no_spawns = common::no_spawns();
    let options = Options {
        lease_dir: Some(dir.clone()),
        ..Options::default()
    };
    let a = Generator::new(options.clone()).unwrap();
    let b = Generator::new(options.clone()).unwrap();
    assert_ne!(a.worker_id(), b.worker_id());
    let a_worker = a.worker_id();
    a.close();
    let c = Generator::new(options).unwrap();
    assert_eq!(
        c.worker_id(),
        a_worker,
        "a closed generator's ID is free at once"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn all_ids_held_is_worker_ids_exhausted() {
    let dir = temp_dir("exhausted");
    let layout = Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap();
    let options = Options {
        lease_dir: Some(dir.clone()),
        layout: Some(layout),
        ..Options::default()
    };
    let held: Vec<_> = (0..4)
        .map(|_| Generator::new(options.clone()).unwrap())
        .collect();
    let err = Generator::new(options).unwrap_err();
    assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
    assert!(err.message().contains("all 4 node IDs"), "{err}");
    assert!(err.message().contains("4 held by live processes"), "{err}");
    drop(held);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_restart_with_the_clock_set_back_reuses_no_time() {
    let dir = temp_dir("restart");
    // It takes the same node ID back after a release: no spawn may hold the lock meanwhile.
    let _no_spawns = common::no_spawns();
    let layout = Layout::twitter();
    // The host's own time, less 2 s: a mark far ahead of the host's clock would be skipped,
    // and one ahead at all would send the restart to another free index.
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 2_000;
    let start = |clock: &FakeClock| {
        Generator::builder()
            .lease(Box::new(HostLease::acquire(&dir, &layout).unwrap()))
            .clock(clock.clone())
            .build()
            .unwrap()
    };
    let clock = FakeClock::new(t0);
    let first = start(&clock);
    let first_ids = first.next_ids(10_000).unwrap();
    let last = *first_ids.last().unwrap();
    drop(first); // releases the lease, recording the time last used

    // Set back by 10 s: more than the tolerance, so the successor refuses rather than reuse.
    let clock = FakeClock::new(t0 - 10_000);
    let second = start(&clock);
    assert_eq!(
        second.worker_id(),
        0,
        "the same node ID, so only time protects it"
    );
    let err = second.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockMovedBackwards, "{err}");
    drop(second);

    // Set back by 300 ms: within the tolerance, so it waits past the recorded time.
    let clock = FakeClock::new(t0 - 300);
    let third = start(&clock);
    let id = third.next_id().unwrap();
    assert!(id > last, "{id} reuses time up to {last}");
    assert!(
        decode(id, &layout).unwrap().timestamp_ms > decode(last, &layout).unwrap().timestamp_ms
    );
    drop(third);

    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs in a single-threaded child process, so fork() is safe: leases, forks, and reports.
fn fork_child_role() {
    let dir = std::path::PathBuf::from(std::env::var("FLAKERY_LEASE_DIR").unwrap());
    let leased = Generator::new(Options::default()).unwrap();
    let fixed = Generator::builder().worker_id(3).build().unwrap();
    let parent_ids = leased.next_ids(100).unwrap();
    let report = common::in_forked_child(|| {
        let child_ids = leased.next_ids(100);
        let fixed_result = fixed.next_id();
        let report = format!(
            "{} {} {} {}\n",
            leased.worker_id(),
            child_ids.as_ref().map_or(-1, |ids| ids[0]),
            fixed_result
                .as_ref()
                .map_or("error".into(), |id| id.to_string()),
            fixed_result
                .err()
                .map_or("none".into(), |e| e.code().to_string()),
        );
        report
    });
    let after = leased.next_id().unwrap();
    println!(
        "FORK parent_worker={} parent_last={} parent_after={} child={} dir={}",
        leased.worker_id(),
        parent_ids.last().unwrap(),
        after,
        report.trim(),
        dir.display()
    );
}

#[test]
fn a_forked_child_leases_a_new_id_and_a_fixed_one_refuses() {
    let dir = temp_dir("fork");
    let output = common::output(common::rerun_as("forker").env("FLAKERY_LEASE_DIR", &dir));
    let line = common::report(&output, "FORK");
    let field = |key: &str| common::field(&line, key);
    let parent_worker: u64 = field("parent_worker").parse().unwrap();
    let child = common::child_words(&line);
    let child_worker: u64 = child[0].parse().unwrap();
    assert_ne!(child_worker, parent_worker, "{line}");
    let child_first: i64 = child[1].parse().unwrap();
    assert!(child_first > 0, "child failed to generate: {line}");
    let layout = Layout::twitter();
    assert_eq!(
        decode(child_first, &layout).unwrap().worker_id,
        child_worker
    );
    assert_eq!(child[2], "error", "{line}");
    assert_eq!(child[3], "forked", "{line}");
    let parent_after: i64 = field("parent_after").parse().unwrap();
    assert_eq!(
        decode(parent_after, &layout).unwrap().worker_id,
        parent_worker
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_default_generator_gives_its_lease_back_at_exit() {
    let dir = temp_dir("atexit");
    let output = common::output(common::rerun_as("default-user").env("FLAKERY_LEASE_DIR", &dir));
    assert!(output.status.success());
    let id: i64 = common::report(&output, "DEFAULT").trim().parse().unwrap();
    let used_ms = decode(id, &Layout::twitter()).unwrap().timestamp_ms;
    // Released with the time really used, not the look-ahead: the next process need not wait.
    assert_eq!(high_water_mark(&dir, 0), used_ms);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two node IDs: with one held, a recycled worker has no other index to take.
const TWO: &str = "time:41,worker:1,sequence:12;epoch=1288834974657";

/// A pre-fork server recycling a worker, in a single-threaded child process: a first worker
/// (a fork) leases, issues an ID and exits without releasing (`_exit`, as a worker recycled by
/// `os._exit` does), leaving its mark ahead; the parent reads that mark, then forks the next
/// worker, which leases and issues. With RECYCLER_HOLD set, the parent holds a lease of its
/// own first, so that the first worker's index is the only free one.
fn recycler_role() {
    let dir = std::path::PathBuf::from(std::env::var("FLAKERY_LEASE_DIR").unwrap());
    let layout = Layout::parse(TWO).unwrap();
    let options = Options {
        layout: Some(layout.clone()),
        ..Options::default()
    };
    let held = std::env::var_os("RECYCLER_HOLD").map(|_| Generator::new(options.clone()).unwrap());
    let worker = || {
        common::in_forked_child(|| {
            // Printed, not asserted: how long the start took (issue 37's figure).
            let started = std::time::Instant::now();
            let generator = Generator::new(options.clone()).unwrap();
            // Read after the lease was taken: a mark later than this was ahead when it was.
            let leased_ms = flakery::Clock::now_ms(&flakery::SystemClock);
            let id = generator.next_id().unwrap();
            let took_us = started.elapsed().as_micros();
            let report = format!("{} {id} {took_us} {leased_ms}", generator.worker_id());
            // Never released: the worker ends by _exit, its mark left ahead.
            std::mem::forget(generator);
            report
        })
    };
    let first = worker();
    let first_worker: u64 = first.split_whitespace().next().unwrap().parse().unwrap();
    let mark = high_water_mark(&dir, first_worker);
    let second = worker();
    println!(
        "RECYCLE held={} mark={mark} child={first} {second}",
        held.map_or(-1, |g| g.worker_id() as i64)
    );
}

/// The recycler's report: the mark the first worker left, and each worker's index, ID's
/// timestamp and the time once its lease was taken (each start's duration printed).
fn recycle(dir: &std::path::Path, hold: bool) -> (i64, [(u64, i64, i64); 2]) {
    let mut command = common::rerun_as("recycler");
    command.env("FLAKERY_LEASE_DIR", dir);
    if hold {
        command.env("RECYCLER_HOLD", "1");
    }
    let output = common::output(&mut command);
    let line = common::report(&output, "RECYCLE");
    let layout = Layout::parse(TWO).unwrap();
    let words = common::child_words(&line);
    let worker = |at: usize| {
        let id: i64 = words[at + 1].parse().unwrap();
        let decoded = decode(id, &layout).unwrap();
        assert_eq!(decoded.worker_id.to_string(), words[at], "{line}");
        println!("worker {}: first ID after {} us", words[at], words[at + 2]);
        let leased_ms = words[at + 3].parse().unwrap();
        (decoded.worker_id, decoded.timestamp_ms, leased_ms)
    };
    let mark = common::field(&line, "mark").parse().unwrap();
    (mark, [worker(0), worker(4)])
}

/// Issue 37, end to end: a recycled worker (a fork of a single-threaded process, after its
/// predecessor exited without releasing) issues at once, and never before the mark of the
/// index it took. Which index it takes depends on whether the predecessor's mark had passed
/// when it looked, which a slow machine decides: that choice is checked on a fixed clock
/// (`a_claim_takes_a_free_index_whose_mark_has_passed_on_a_fixed_clock`); how long the start
/// took is printed, not bounded.
#[test]
fn a_recycled_worker_takes_an_index_whose_mark_has_passed() {
    let dir = temp_dir("recycle");
    let (mark, [first, second]) = recycle(&dir, false);
    assert!(first.1 < mark, "the first worker left its mark ahead");
    if second.0 == first.0 {
        assert!(
            second.1 > mark,
            "the second worker took its predecessor's index and issued at {} ms, not past \
             its mark {mark}",
            second.1
        );
    }
    println!(
        "the second worker (index {}, leased {} ms before its predecessor's mark) issued {} ms \
         before it",
        second.0,
        mark - second.2,
        mark - second.1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 37, the claim's choice on a fixed clock (`HostLease::acquire_at`, feature
/// `test-hooks`): at `now`, index 0 is free with a predecessor's look-ahead still ahead and
/// index 1 free with its mark passed: the lease takes index 1. With index
/// 1 held, the next takes index 0, its mark the floor (waited for, never skipped).
#[test]
fn a_claim_takes_a_free_index_whose_mark_has_passed_on_a_fixed_clock() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir("recycle-fixed");
    std::fs::create_dir_all(&dir).unwrap();
    let now = 1_800_000_000_000;
    let (ahead, passed) = (now + 400, now - 1000);
    for (index, mark) in [(0, ahead), (1, passed)] {
        let path = dir.join(format!("flakery.default.node-{index}"));
        std::fs::write(&path, mark.to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let layout = Layout::parse(TWO).unwrap();
    let scope = flakery::host_lease::Scope::default();
    let take = || HostLease::acquire_at(&dir, &scope, &layout, now).unwrap();
    let recycled = take();
    let grant = flakery::NodeLease::grant(&recycled, now, now).unwrap();
    assert_eq!(
        (grant.node.worker_id, grant.floor_ms),
        (1, passed),
        "took the index whose mark is still ahead"
    );
    let next = take();
    let grant = flakery::NodeLease::grant(&next, now, now).unwrap();
    assert_eq!(
        (grant.node.worker_id, grant.floor_ms),
        (0, ahead),
        "the only free index, with its mark as the floor"
    );
    drop((recycled, next));
    let _ = std::fs::remove_dir_all(&dir);
}

/// With no other index free, the recycled worker takes its predecessor's and, as ever, issues
/// only past its mark.
#[test]
fn a_recycled_worker_with_no_other_index_waits_for_the_mark() {
    let dir = temp_dir("recycle-held");
    let (mark, [first, second]) = recycle(&dir, true);
    assert_eq!(second.0, first.0, "the only free index");
    assert!(
        second.1 > mark,
        "the second worker issued at {} ms, not past its predecessor's mark {mark}",
        second.1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

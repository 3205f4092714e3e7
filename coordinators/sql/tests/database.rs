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

#[path = "../../../core/tests/common/mod.rs"]
mod common;
mod db_harness;
use common::ROLE;
use db_harness::{
    coordinator, dbserver, each_kind, serial, servers_available, shared, soon, Kind, Server,
};

/// Forks 16 children that each lease anew from `parent` (a new holder and connection,
/// nothing inherited from the parent's connection thread) and claim at once, all together;
/// returns the indexes they got.
fn claims_of_sixteen_forked_children(parent: &SqlCoordinator, kind: Kind) -> Vec<u64> {
    let mut children = Vec::new();
    for _ in 0..16 {
        let mut fds = [0; 2];
        // SAFETY: a pipe, then fork; the child only claims, writes and leaves by _exit.
        unsafe { libc::pipe(fds.as_mut_ptr()) };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let report = match parent
                .reopen()
                .and_then(|mut c| c.claim(1024, soon(20_000)))
            {
                Ok(claim) => format!("{}", claim.index),
                Err(err) => format!("error {}: {}", err.code(), err.message()),
            };
            unsafe {
                libc::write(fds[1], report.as_ptr().cast(), report.len());
                libc::_exit(0);
            }
        }
        unsafe { libc::close(fds[1]) };
        children.push((pid, fds[0]));
    }
    let mut indexes = Vec::new();
    for (pid, fd) in children {
        let mut buf = [0u8; 512];
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        unsafe {
            libc::close(fd);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        let report = String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned();
        indexes.push(
            report
                .parse()
                .unwrap_or_else(|_| panic!("{kind:?} child: {report}")),
        );
    }
    indexes
}

fn assert_lowest_distinct(kind: Kind, indexes: &[u64]) {
    let mut distinct = indexes.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        indexes.len(),
        "{kind:?}: duplicates among {indexes:?}"
    );
    let lowest: Vec<u64> = (0..indexes.len() as u64).collect();
    assert_eq!(distinct, lowest, "{kind:?}: not the lowest");
}

#[test]
fn sixteen_forked_processes_get_sixteen_distinct_node_ids() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        // New rows: the primary key decides between inserting holders.
        let namespace = format!("sixteen-{}", kind.arg());
        let mut parent = coordinator(&url, &namespace, 10_000);
        let held = parent.claim(1024, soon(5000)).unwrap();
        let mut indexes = claims_of_sixteen_forked_children(&parent, kind);
        indexes.push(held.index);
        assert_lowest_distinct(kind, &indexes);
        // Existing free rows: row locks (SKIP LOCKED) decide.
        let namespace = format!("sixteen-free-rows-{}", kind.arg());
        let mut holders: Vec<SqlCoordinator> = (0..24)
            .map(|_| coordinator(&url, &namespace, 10_000))
            .collect();
        let claims: Vec<_> = holders
            .iter_mut()
            .map(|h| h.claim(1024, soon(5000)).unwrap())
            .collect();
        for (holder, claim) in holders.iter_mut().zip(claims) {
            holder.release(claim, None, soon(5000));
        }
        let parent = coordinator(&url, &namespace, 10_000);
        assert_lowest_distinct(kind, &claims_of_sixteen_forked_children(&parent, kind));
    });
}

#[test]
fn a_two_bit_namespace_has_four_node_ids_and_the_fifth_holder_is_refused() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("two-bits-{}", kind.arg());
        let mut holders: Vec<SqlCoordinator> = Vec::new();
        let mut claims = Vec::new();
        for _ in 0..4 {
            let mut holder = coordinator(&url, &namespace, 10_000);
            claims.push(holder.claim(4, soon(5000)).unwrap().index);
            holders.push(holder);
        }
        assert_eq!(claims, vec![0, 1, 2, 3]);
        let mut fifth = coordinator(&url, &namespace, 10_000);
        let err = fifth.claim(4, soon(5000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{kind:?}: {}",
            err.message()
        );
        assert!(
            err.message().contains("all 4 node IDs"),
            "{}",
            err.message()
        );
        // A holder that gives its index back makes room at once.
        let mut second = holders.remove(1);
        let claim = second.claim(4, soon(5000)).unwrap(); // its own row again
        assert_eq!(claim.index, 1);
        second.release(claim, Some(1_000), soon(5000));
        assert_eq!(fifth.claim(4, soon(5000)).unwrap().index, 1);
    });
}

#[test]
fn an_expired_holder_loses_its_row_to_a_successor_that_starts_after_its_mark() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("expiry-{}", kind.arg());
        let term = 1200;
        let mut first = coordinator(&url, &namespace, term);
        let mut claim = first.claim(4, soon(5000)).unwrap();
        let mark = SystemClock.now_ms() + 500;
        first
            .write_mark(&mut claim, None, mark, soon(5000))
            .unwrap();
        // Before the expiry, the row is not another's to take.
        let mut second = coordinator(&url, &namespace, term);
        let other = second.claim(4, soon(5000)).unwrap();
        assert_ne!(other.index, claim.index);
        second.release(other, None, soon(5000));
        // The first holder stops renewing (a paused process) past its expiry.
        std::thread::sleep(Duration::from_millis(term as u64 + 200));
        let taken = second.claim(4, soon(5000)).unwrap();
        assert_eq!(taken.index, claim.index, "{kind:?}");
        assert_eq!(
            taken.floor_ms,
            Some(mark),
            "{kind:?}: the successor must start after it"
        );
        // The first holder, resuming, learns it lost the row; its writes change nothing.
        assert!(matches!(
            first.renew(&mut claim, soon(5000)),
            Err(Failure::Lost(_))
        ));
        assert!(matches!(
            first.write_mark(&mut claim, Some(mark), mark + 10_000, soon(5000)),
            Err(Failure::Lost(_))
        ));
        let stored = shared(kind).sql(&format!(
            "SELECT mark FROM flakery_node_leases WHERE namespace = '{namespace}' \
             AND node_index = {}",
            claim.index
        ));
        assert_eq!(stored.trim(), mark.to_string());
    });
}

#[test]
fn marks_are_written_with_compare_and_set_and_kept_for_the_next_holder() {
    each_kind(|kind| {
        let url = shared(kind).database_url();
        let namespace = format!("marks-{}", kind.arg());
        let mut holder = coordinator(&url, &namespace, 10_000);
        let mut claim = holder.claim(4, soon(5000)).unwrap();
        assert_eq!(claim.floor_ms, None);
        let t = SystemClock.now_ms();
        holder
            .write_mark(&mut claim, None, t + 500, soon(5000))
            .unwrap();
        // A retry of an applied write is fine; a write expecting a mark that is not there is not.
        holder
            .write_mark(&mut claim, None, t + 500, soon(5000))
            .unwrap();
        assert!(matches!(
            holder.write_mark(&mut claim, Some(t), t + 900, soon(5000)),
            Err(Failure::Lost(_))
        ));
        holder
            .write_mark(&mut claim, Some(t + 500), t + 1000, soon(5000))
            .unwrap();
        holder.renew(&mut claim, soon(5000)).unwrap();
        holder.release(claim, Some(t + 700), soon(5000));
        let mut next = coordinator(&url, &namespace, 10_000);
        let claim = next.claim(4, soon(5000)).unwrap();
        assert_eq!(
            (claim.index, claim.floor_ms),
            (0, Some(t + 700)),
            "{kind:?}"
        );
    });
}

#[test]
fn a_garbled_mark_fails_closed_for_that_node_id() {
    each_kind(|kind| {
        let server = shared(kind);
        let url = server.database_url();
        let namespace = format!("garbled-{}", kind.arg());
        coordinator(&url, &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap(); // creates the table
        server.sql(&format!(
            "UPDATE flakery_node_leases SET holder = NULL, expires_ms = 0, mark = '12x45' \
             WHERE namespace = '{namespace}' AND node_index = 0"
        ));
        let mut holder = coordinator(&url, &namespace, 10_000);
        assert_eq!(holder.claim(4, soon(5000)).unwrap().index, 1, "{kind:?}");
        let err = coordinator(&url, &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
        assert!(
            err.message().contains("node index 0") && err.message().contains("12x45"),
            "{kind:?}: {}",
            err.message()
        );
    });
}

#[test]
fn a_database_down_at_start_is_coordinator_unavailable_naming_the_host_not_the_password() {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    let port = dbserver(&["closed-port"]).trim().to_string();
    for scheme in ["postgres", "mysql"] {
        let url = DatabaseUrl::parse(&format!(
            "{scheme}://app:pw-never-shown@127.0.0.1:{port}/ids"
        ))
        .unwrap();
        let mut holder = coordinator(&url, "down", 10_000);
        let err = holder.claim(1024, soon(3000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::CoordinatorUnavailable,
            "{}",
            err.message()
        );
        assert!(
            err.message().contains(&format!("127.0.0.1:{port}")),
            "{}",
            err.message()
        );
        for shown in [
            err.message().to_string(),
            format!("{holder:?}"),
            holder.describe(),
        ] {
            assert!(!shown.contains("pw-never-shown"), "{shown}");
        }
    }
    // A wrong password: refused by the server, and not shown either.
    for kind in [Kind::Postgres, Kind::MariaDb] {
        let server = shared(kind);
        let wrong = server.url.replace(&server.password, "wrong-secret-pw");
        let mut holder = coordinator(&DatabaseUrl::parse(&wrong).unwrap(), "down", 10_000);
        let err = holder.claim(1024, soon(5000)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::CoordinatorUnavailable,
            "{}",
            err.message()
        );
        assert!(
            !err.message().contains("wrong-secret-pw"),
            "{}",
            err.message()
        );
        assert!(!format!("{holder:?}").contains(&server.password));
    }
}

/// How long a test waits for something that must happen before it gives up: a safety net
/// against a hang, never a measure (no test here asserts how long anything took).
const SAFETY_NET: Duration = Duration::from_secs(120);

/// What `call` returns, called on a thread of its own while the test's database is paused (the
/// test resumes it only after this returns). The wait is a safety net against a call that
/// waits on the paused server, not a measure.
fn answered_while_paused<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> T {
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || answer.send(call()));
    answered
        .recv_timeout(SAFETY_NET)
        .expect("no answer while the database was paused: the call waits on the server")
}

#[test]
fn a_paused_database_is_answered_by_the_deadline_and_a_killed_one_recovers() {
    each_kind(|kind| {
        let server = Server::start(kind);
        let url = server.database_url();
        let mut holder = coordinator(&url, "restart", 10_000);
        let mut claim = holder.claim(1024, soon(5000)).unwrap();
        server.control("pause");
        // The server stays paused until every renewal below has returned: each is answered
        // by its own deadline, never by the server (an order of events; the deadline itself
        // is kept on the fake clock in keeper.rs).
        let (mut holder, mut claim, paused) = answered_while_paused(move || {
            let paused = holder.renew(&mut claim, soon(1500));
            (holder, claim, paused)
        });
        assert!(
            matches!(paused, Err(Failure::Unanswered(_))),
            "{kind:?}: {paused:?}"
        );
        // Requests given up on do not pile up threads: past a few, none is even sent.
        for _ in 0..6 {
            let renewed;
            (holder, claim, renewed) = answered_while_paused(move || {
                let renewed = holder.renew(&mut claim, soon(300));
                (holder, claim, renewed)
            });
            assert!(
                matches!(renewed, Err(Failure::Unanswered(_))),
                "{kind:?}: {renewed:?}"
            );
        }
        let stuck = holder.renew(&mut claim, soon(300));
        assert!(
            matches!(&stuck, Err(Failure::Unanswered(why)) if why.contains("still wait")),
            "{kind:?}: {stuck:?}"
        );
        server.control("resume");
        let until = Instant::now() + SAFETY_NET;
        while let Err(failure) = holder.renew(&mut claim, soon(3000)) {
            assert!(
                Instant::now() < until,
                "{kind:?}: no renewal after resume: {failure:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server.control("kill");
        assert!(matches!(
            holder.renew(&mut claim, soon(3000)),
            Err(Failure::Unanswered(_))
        ));
        server.control("restart");
        // The row (committed before the kill) is still this holder's, in the database's clock.
        holder.renew(&mut claim, soon(10_000)).unwrap();
        assert_eq!(holder.claim(1024, soon(5000)).unwrap().index, claim.index);
        assert_eq!(server.kind, kind);
    });
}

/// uid-generator's parseUID, as its Java does it (sign 1, time 28, worker 22, sequence 13).
fn uid_generator_parse(uid: i64, epoch_seconds: i64) -> (i64, i64, i64) {
    let (total, sign, time_bits, worker_bits, seq_bits) = (64u32, 1u32, 28u32, 22u32, 13u32);
    let sequence = ((uid << (total - seq_bits)) as u64 >> (total - seq_bits)) as i64;
    let worker = ((uid << (time_bits + sign)) as u64 >> (total - worker_bits)) as i64;
    let delta_seconds = (uid as u64 >> (worker_bits + seq_bits)) as i64;
    ((epoch_seconds + delta_seconds) * 1000, worker, sequence)
}

#[test]
fn baidu_mode_takes_consecutive_worker_ids_from_baidus_own_table() {
    each_kind(|kind| {
        let server = shared(kind);
        // uid-generator's WORKER_NODE.sql (MySQL), and the same table in PostgreSQL's types.
        server.sql(match kind {
            Kind::MariaDb => {
                "DROP TABLE IF EXISTS WORKER_NODE;
                 CREATE TABLE WORKER_NODE
                 (
                 ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id',
                 HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name',
                 PORT VARCHAR(64) NOT NULL COMMENT 'port',
                 TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER',
                 LAUNCH_DATE DATE NOT NULL COMMENT 'launch date',
                 MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time',
                 CREATED TIMESTAMP NOT NULL COMMENT 'created time',
                 PRIMARY KEY(ID)
                 )
                  COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB;"
            }
            Kind::Postgres => {
                "DROP TABLE IF EXISTS WORKER_NODE;
                 CREATE TABLE WORKER_NODE (ID BIGSERIAL NOT NULL, HOST_NAME VARCHAR(64) NOT NULL,
                   PORT VARCHAR(64) NOT NULL, TYPE INT NOT NULL, LAUNCH_DATE DATE NOT NULL,
                   MODIFIED TIMESTAMP NOT NULL, CREATED TIMESTAMP NOT NULL, PRIMARY KEY(ID));
                 GRANT ALL ON WORKER_NODE TO flakery;
                 GRANT ALL ON SEQUENCE worker_node_id_seq TO flakery;"
            }
        });
        // uid-generator's layout with its epoch moved (its 28 bits of 2016 ran out in 2024).
        let layout = Layout::parse("baidu;epoch=2025-01-01T00:00:00+08:00").unwrap();
        let epoch_seconds = layout.epoch_ms() / 1000;
        let url = server.database_url();
        let starts: Vec<BaiduWorkerNode> = (0..3)
            .map(|_| {
                BaiduWorkerNode::acquire(url.clone(), &layout, Duration::from_secs(5)).unwrap()
            })
            .collect();
        let rows: Vec<i64> = starts.iter().map(BaiduWorkerNode::row_id).collect();
        assert_eq!(rows, vec![1, 2, 3], "{kind:?}: one new row per start");
        for start in starts {
            let row = start.row_id();
            let generator = Generator::builder()
                .layout(layout.clone())
                .lease(Box::new(start))
                .build()
                .unwrap();
            let before = SystemClock.now_ms() / 1000 * 1000;
            let id = generator.next_id().unwrap();
            let (ms, worker, sequence) = uid_generator_parse(id, epoch_seconds);
            let ours = decode(id, &layout).unwrap();
            assert_eq!(worker, row, "{kind:?}: the row's ID is the worker ID");
            assert_eq!(
                (ours.worker_id as i64, ours.sequence as i64),
                (worker, sequence)
            );
            assert_eq!(ours.timestamp_ms, ms);
            assert!((before..before + 2000).contains(&ms), "{ms} vs {before}");
        }
        // Past the layout's 2^22 worker IDs, as uid-generator refuses.
        server.sql(match kind {
            Kind::MariaDb => "ALTER TABLE WORKER_NODE AUTO_INCREMENT = 4194304",
            Kind::Postgres => "SELECT setval('worker_node_id_seq', 4194303)",
        });
        let err =
            BaiduWorkerNode::acquire(url.clone(), &layout, Duration::from_secs(5)).unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::WorkerIdsExhausted,
            "{}",
            err.message()
        );
        assert!(err.message().contains("4194304"), "{}", err.message());
        assert!(!err.message().contains(&server.password));
    });
}

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
fn streamer_role() {
    let generator = Generator::new(Options::default()).unwrap();
    assert_eq!(generator.source(), NodeSource::Database);
    println!("READY {}", generator.worker_id());
    let seconds: u64 = std::env::var("FLAKERY_TEST_SECONDS")
        .unwrap()
        .parse()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut out = std::io::stdout();
    while Instant::now() < until {
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

#[test]
fn a_paused_holder_is_lease_lost_before_its_row_passes_on_and_issues_no_duplicate() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("paused-holder-{}", kind.arg());
        let term: u64 = 2000;
        let mut child = common::spawn(
            rerun("db-streamer", &server.url, &namespace, term)
                .env("FLAKERY_TEST_SECONDS", "7")
                .stdout(Stdio::piped()),
        );
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let lines = Arc::clone(&lines);
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
                    lines.lock().unwrap().push(line.unwrap());
                }
            })
        };
        let wait_for = |what: &str| {
            let until = Instant::now() + SAFETY_NET;
            while !lines.lock().unwrap().iter().any(|l| l.starts_with(what)) {
                assert!(Instant::now() < until, "{kind:?}: no {what} from the child");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for("ID ");
        std::thread::sleep(Duration::from_millis(500));
        let pid = child.id() as i32;
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        // What the child wrote before it stopped is read from the pipe first.
        std::thread::sleep(Duration::from_millis(300));
        let stopped_at = lines.lock().unwrap().len();
        // Past the holder's expiry in the database's clock, a successor takes its row.
        std::thread::sleep(Duration::from_millis(term + 500));
        let successor = Generator::new(options(&server.url, &namespace, term)).unwrap();
        assert_eq!(
            successor.worker_id(),
            0,
            "{kind:?}: the successor takes the row"
        );
        let mut theirs = successor.next_ids(200).unwrap();
        unsafe { libc::kill(pid, libc::SIGCONT) };
        std::thread::sleep(Duration::from_millis(1500));
        theirs.extend(successor.next_ids(200).unwrap());
        let status = child.wait().unwrap();
        reader.join().unwrap();
        assert!(status.success(), "{kind:?}: the child failed");
        let lines = lines.lock().unwrap().clone();
        let layout = Layout::twitter();
        let worker = |id: i64| decode(id, &layout).unwrap().worker_id;
        let ids = |part: &[String]| -> Vec<i64> {
            part.iter()
                .filter_map(|l| l.strip_prefix("ID ")?.parse().ok())
                .collect()
        };
        let after = &lines[stopped_at..];
        // Resumed, it refuses (lease_lost) before issuing under anything but a new lease; the
        // one thing it may still do first is finish IDs below the fence it held before the
        // stop (the clock thread was stopped too, so a first call can read the time published
        // before SIGSTOP: docs/spec.md#the-clock-thread). Those are below the mark the
        // successor starts after, which the checks below hold it to.
        let first_refusal = after.iter().position(|l| l.starts_with("ERR "));
        assert!(
            first_refusal.is_some(),
            "{kind:?}: never refused: {after:?}"
        );
        let mine = ids(&lines);
        let floor = theirs.iter().min().copied().unwrap();
        let refused_at = first_refusal.unwrap();
        for id in ids(&after[refused_at..]) {
            assert_ne!(
                worker(id),
                0,
                "{kind:?}: issued under the row that passed on after refusing"
            );
        }
        for &id in mine.iter().filter(|&&id| worker(id) == 0) {
            assert!(
                id < floor,
                "{kind:?}: {id} not below the successor's {floor}"
            );
        }
        assert!(
            ids(after).iter().any(|&id| worker(id) == 1),
            "{kind:?}: never re-leased"
        );
        let mut all: Vec<i64> = mine.into_iter().chain(theirs).collect();
        let total = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), total, "{kind:?}: duplicate IDs");
    });
}

#[test]
fn a_restart_with_the_clock_set_back_reuses_no_time() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("clock-back-{}", kind.arg());
        let now = SystemClock.now_ms();
        // A row used before (its mark long past): the generators' clocks here stand still,
        // and a row with no mark would make the first wait 3.5 s of clock time.
        coordinator(&server.database_url(), &namespace, 10_000)
            .claim(1, soon(5000))
            .unwrap();
        server.sql(&format!(
            "UPDATE flakery_node_leases SET holder = NULL, expires_ms = 0, mark = '{}' \
             WHERE namespace = '{namespace}'",
            now - 120_000
        ));
        let first = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(FakeClock::new(now))
            .build()
            .unwrap();
        let used = first.next_ids(100).unwrap();
        let last = *used.last().unwrap();
        first.close(); // gives the row back with its mark at the time used
                       // A restart whose clock is 300 ms behind: it waits past the mark.
        let clock = FakeClock::new(now - 300);
        let second = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(clock.clone())
            .build()
            .unwrap();
        assert_eq!(
            second.worker_id(),
            first.worker_id(),
            "{kind:?}: the same row"
        );
        let next = second.next_id().unwrap();
        assert!(next > last, "{kind:?}: {next} reuses time up to {last}");
        second.close();
        // A minute behind: refused, never an ID at reused time.
        let third = Generator::builder()
            .options(options(&server.url, &namespace, 10_000))
            .clock(FakeClock::new(now - 60_000))
            .build();
        match third.map(|g| g.next_id()) {
            Err(err) | Ok(Err(err)) => {
                assert_eq!(
                    err.code(),
                    ErrorCode::ClockMovedBackwards,
                    "{}",
                    err.message()
                )
            }
            Ok(Ok(id)) => panic!("{kind:?}: {id} issued a minute back"),
        }
    });
}

#[test]
fn a_forked_child_leases_anew() {
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("fork-{}", kind.arg());
        let output = common::output(&mut rerun("db-forker", &server.url, &namespace, 10_000));
        let report = common::report(&output, "FORK");
        assert_eq!(common::field(&report, "parent"), "0", "{kind:?}: {report}");
        assert_eq!(
            common::child_words(&report),
            vec!["1"],
            "{kind:?}: {report}"
        );
    });
}

#[test]
fn options_and_messages_never_show_the_password() {
    let url = "postgres://app:pw-in-options@127.0.0.1:1/ids";
    let shown = format!("{:?}", options(url, "x", 1000));
    assert!(
        !shown.contains("pw-in-options") && shown.contains("app:***@"),
        "{shown}"
    );
    let err = Generator::new(options(url, "x", 1000)).unwrap_err();
    assert_eq!(
        err.code(),
        ErrorCode::CoordinatorUnavailable,
        "{}",
        err.message()
    );
    assert!(err.message().contains("127.0.0.1:1"), "{}", err.message());
    assert!(
        !err.message().contains("pw-in-options"),
        "{}",
        err.message()
    );
}

/// A lease table made by hand with other column types (here `mark` as a number): MariaDB's
/// rows are converted with the client's checked reads, so the start fails with a message
/// instead of a panic in the client crate's conversion. A private server: the shared ones'
/// tables stay as flakery makes them.
#[test]
fn a_lease_table_of_other_column_types_is_an_error_not_a_panic() {
    let _guard = serial();
    if !servers_available() {
        return;
    }
    let server = Server::start(Kind::MariaDb);
    server.sql(
        "CREATE TABLE flakery_node_leases (
             namespace VARCHAR(64) NOT NULL, node_index BIGINT NOT NULL, holder BIGINT NULL,
             holder_name VARCHAR(255) NOT NULL DEFAULT '', expires_ms BIGINT NOT NULL DEFAULT 0,
             mark BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (namespace, node_index));
         INSERT INTO flakery_node_leases (namespace, node_index, mark) VALUES ('typed', 0, 5);",
    );
    let result = std::panic::catch_unwind(|| {
        Generator::new(options(&server.url, "typed", 3000)).map(|_| ())
    });
    let err = result
        .expect("no panic on a row of other column types")
        .unwrap_err();
    assert!(err.message().contains("column types"), "{}", err.message());
}

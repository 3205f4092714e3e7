//! Database leases under contention and under an operator's hand (see `db_harness`): many
//! processes starting at once lease as many node IDs as there are and refuse the rest with
//! `worker_ids_exhausted` (never `lease_lost`); many processes issuing while rows are
//! deleted, marks lowered and holders and expiries edited by hand issue no duplicate and no
//! decreasing ID. Timings are printed for the report, never asserted.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakery::{ErrorCode, Generator, Layout, Options};

#[path = "../../../core/tests/common/mod.rs"]
mod common;
mod db_harness;
use common::ROLE;
use db_harness::{each_kind, shared, Kind};

const FOUR_NODE_IDS: &str = "time:41,worker:2,sequence:12;epoch=0";

#[test]
fn child_entry_point() {
    match std::env::var(ROLE).as_deref() {
        Ok("db-starter") => starter_role(),
        Ok("db-issuer") => common::issuer_role(),
        _ => {} // an ordinary test run: nothing to do
    }
}

/// Waits for a line on stdin (so that every starter begins at once), then makes a
/// generator and issues one ID: prints `STARTED <worker> <ms to the first ID>` or
/// `REFUSED <code> <message>`; then holds its lease until stdin closes.
fn starter_role() {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let started = Instant::now();
    let made = Generator::new(Options::default()).and_then(|g| g.next_id().map(|id| (g, id)));
    let mut out = std::io::stdout();
    match made {
        Ok((generator, _)) => {
            let ms = started.elapsed().as_millis();
            writeln!(out, "STARTED {} {ms}", generator.worker_id()).unwrap();
            out.flush().unwrap();
            let _ = std::io::stdin().read_line(&mut line);
        }
        Err(err) => {
            writeln!(out, "REFUSED {} {}", err.code(), err.message()).unwrap();
        }
    }
}

fn rerun(role: &str, url: &str, namespace: &str, layout: &str) -> std::process::Command {
    let mut command = common::rerun_as(role);
    command
        .env("FLAKERY_DATABASE_URL", url)
        .env("FLAKERY_NAMESPACE", namespace)
        .env("FLAKERY_LAYOUT", layout)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    command
}

/// Starts `count` starters, lets them all begin at once, and returns each one's line.
fn start_at_once(kind: Kind, namespace: &str, layout: &str, count: usize) -> Vec<String> {
    let server = shared(kind);
    let mut children: Vec<Child> = (0..count)
        .map(|_| common::spawn(&mut rerun("db-starter", &server.url, namespace, layout)))
        .collect();
    // Every child is running (its binary loaded) before any begins.
    std::thread::sleep(Duration::from_millis(500));
    for child in &mut children {
        writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
    }
    let lines: Vec<String> = children
        .iter_mut()
        .map(|child| {
            // libtest prints lines of its own first (and "test ..." before ours on a line).
            let reader = BufReader::new(child.stdout.as_mut().unwrap());
            for line in reader.lines().map_while(Result::ok) {
                for tag in ["STARTED ", "REFUSED "] {
                    if let Some((_, rest)) = line.split_once(tag) {
                        return format!("{tag}{rest}");
                    }
                }
            }
            "no answer".to_string()
        })
        .collect();
    for mut child in children {
        drop(child.stdin.take());
        child.wait().unwrap();
    }
    lines
}

fn started_workers(lines: &[String]) -> (Vec<u64>, Vec<u64>) {
    let mut workers = Vec::new();
    let mut times = Vec::new();
    for line in lines.iter().filter(|l| l.starts_with("STARTED ")) {
        let words: Vec<&str> = line.split(' ').collect();
        workers.push(words[1].parse().unwrap());
        times.push(words[2].parse().unwrap());
    }
    workers.sort_unstable();
    times.sort_unstable();
    (workers, times)
}

#[test]
fn five_processes_starting_at_once_on_four_node_ids_lease_four_and_refuse_the_fifth() {
    each_kind(|kind| {
        for run in 0..3 {
            let namespace = format!("five-at-once-{}-{run}", kind.arg());
            let lines = start_at_once(kind, &namespace, FOUR_NODE_IDS, 5);
            let (workers, times) = started_workers(&lines);
            eprintln!("{kind:?} run {run}: claim to first ID, ms: {times:?}");
            assert_eq!(workers, vec![0, 1, 2, 3], "{lines:#?}");
            let refused: Vec<&String> = lines.iter().filter(|l| l.starts_with("REFUSED")).collect();
            assert_eq!(refused.len(), 1, "{lines:#?}");
            assert!(
                refused[0].starts_with(&format!("REFUSED {}", ErrorCode::WorkerIdsExhausted)),
                "{lines:#?}"
            );
        }
    });
}

#[test]
fn sixteen_processes_starting_at_once_lease_sixteen_node_ids() {
    each_kind(|kind| {
        let namespace = format!("sixteen-at-once-{}", kind.arg());
        let lines = start_at_once(kind, &namespace, "twitter", 16);
        let (workers, times) = started_workers(&lines);
        eprintln!("{kind:?}: claim to first ID, ms: {times:?}");
        assert_eq!(workers, (0..16).collect::<Vec<u64>>(), "{lines:#?}");
    });
}

/// One issuer: its stdin (closing it stops it) and the lines it printed, read on a thread.
struct Issuer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<String>>>,
    reader: std::thread::JoinHandle<()>,
}

impl Issuer {
    fn ready(&self) -> bool {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("READY "))
    }

    fn stop(mut self) -> Vec<String> {
        drop(self.stdin.take());
        self.child.wait().unwrap();
        self.reader.join().unwrap();
        std::mem::take(&mut *self.lines.lock().unwrap())
    }
}

fn spawn_issuer(url: &str, namespace: &str, layout: &str) -> Issuer {
    let mut child = common::spawn(&mut rerun("db-issuer", url, namespace, layout));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let collected = Arc::clone(&lines);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            collected.lock().unwrap().push(line);
        }
    });
    Issuer {
        child,
        stdin,
        lines,
        reader,
    }
}

#[test]
fn many_processes_issuing_while_rows_are_deleted_lowered_and_edited_issue_no_duplicate() {
    let layout_text = "time:41,worker:3,sequence:12;epoch=0";
    let layout = Layout::parse(layout_text).unwrap();
    each_kind(|kind| {
        let server = shared(kind);
        let namespace = format!("hold-up-{}", kind.arg());
        let mut issuers: Vec<Issuer> = (0..4)
            .map(|_| spawn_issuer(&server.url, &namespace, layout_text))
            .collect();
        // Every issuer holds a node ID before the records are touched.
        let began = Instant::now();
        while !issuers.iter().all(Issuer::ready) {
            assert!(
                issuers
                    .iter_mut()
                    .all(|i| i.child.try_wait().unwrap().is_none()),
                "an issuer ended before it was ready"
            );
            assert!(
                began.elapsed() < Duration::from_secs(60),
                "issuers never ready"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let table = "flakery_node_leases";
        let row = |index: u64| format!("namespace = '{namespace}' AND node_index = {index}");
        let mut actions = Vec::new();
        // Each round edits one of the held rows; a row is edited again only four rounds on.
        for round in 0..20u64 {
            std::thread::sleep(Duration::from_millis(300));
            let index = round % 4;
            let (what, statement) = match (round / 4) % 4 {
                0 => (
                    "deleted",
                    format!("DELETE FROM {table} WHERE {}", row(index)),
                ),
                1 => (
                    "mark lowered",
                    format!("UPDATE {table} SET mark = '1' WHERE {}", row(index)),
                ),
                2 => (
                    "holder edited",
                    format!("UPDATE {table} SET holder = 12345 WHERE {}", row(index)),
                ),
                _ => (
                    "expiry edited",
                    format!("UPDATE {table} SET expires_ms = 0 WHERE {}", row(index)),
                ),
            };
            server.sql(&statement);
            actions.push(format!("{what} {index}"));
        }
        std::thread::sleep(Duration::from_millis(1000));
        let outputs: Vec<Vec<String>> = issuers.into_iter().map(Issuer::stop).collect();
        let (ids, refusals) = common::count_issued(&outputs, &layout);
        eprintln!(
            "{kind:?}: {ids} IDs from {} generators while {} rows were edited ({actions:?}); \
             0 duplicates, 0 decreases; refusals: {refusals:?}",
            outputs.len(),
            actions.len()
        );
        assert!(ids > 1000, "only {ids} IDs were issued");
    });
}

/// A mark left far ahead (a run under faketime) does not block the namespace: the index is
/// skipped, the next one taken, and the skipped one named when none is left. A mark within
/// the claim's bound is used. The bound is the claim's argument (the keeper gives its clock
/// plus `MAX_MARK_AHEAD_MS`); a year ahead here, so that the mark just within it waits longer
/// than a fresh record however late the claims come (it made the order depend on the
/// machine's speed when it was 5 s).
#[test]
fn a_mark_far_ahead_is_skipped_and_named_when_no_node_id_is_left() {
    use flakery::lease::Coordinator;
    use flakery::{Clock, SystemClock};
    const YEAR_MS: i64 = 365 * 24 * 3600 * 1000;
    each_kind(|kind| {
        let server = shared(kind);
        let url = server.database_url();
        let namespace = format!("far-ahead-{}", kind.arg());
        let now = SystemClock.now_ms();
        let limit = now + YEAR_MS;
        let within = limit - 1000;
        let ahead = limit + 120_000;
        let mut first = db_harness::coordinator(&url, &namespace, 10_000);
        let mut second = db_harness::coordinator(&url, &namespace, 10_000);
        // Two rows, free, one with a mark two minutes past the bound, one just within it.
        assert_eq!(first.claim(4, db_harness::soon(5000)).unwrap().index, 0);
        assert_eq!(second.claim(4, db_harness::soon(5000)).unwrap().index, 1);
        server.sql(&format!(
            "UPDATE flakery_node_leases SET holder = NULL, expires_ms = 0, mark = CASE \
             node_index WHEN 0 THEN '{ahead}' ELSE '{within}' END WHERE namespace = '{namespace}'"
        ));
        // Rows 2 and 3 have no record yet: a fresh record's wait (FRESH_RECORD_WAIT_MS) is
        // shorter than row 1's mark ahead, so they are taken first (a claim takes the free
        // index whose start waits least); row 1 next; row 0's mark past the bound never.
        let mut others = Vec::new(); // hold their rows to the end of the test
        for expected in [2, 3] {
            let mut other = db_harness::coordinator(&url, &namespace, 10_000);
            let claim = other
                .claim_within(4, limit, db_harness::soon(5000))
                .unwrap();
            assert_eq!(claim.index, expected, "{kind:?}: the shortest wait first");
            others.push(other);
        }
        let mut holder = db_harness::coordinator(&url, &namespace, 10_000);
        let claim = holder
            .claim_within(4, limit, db_harness::soon(5000))
            .unwrap();
        assert_eq!(claim.index, 1, "{kind:?}: the mark far ahead is skipped");
        assert_eq!(claim.floor_ms, Some(within));
        let err = db_harness::coordinator(&url, &namespace, 10_000)
            .claim_within(4, limit, db_harness::soon(5000))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::WorkerIdsExhausted);
        assert!(
            err.message().contains("node index 0") && err.message().contains(&ahead.to_string()),
            "{kind:?}: {}",
            err.message()
        );
    });
}

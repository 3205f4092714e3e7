//! A fork at any moment never leaves the child blocked: 1,000 forks from processes whose other
//! threads are making the default generator, refreshing a host lease (a write and an fsync
//! under the generator's and the lease's locks) on every call, taking and giving back host
//! leases, and generating. Every child must use the default generator and the refreshing one
//! and exit within a timeout; no ID may appear twice across all the processes.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flakery::{FakeClock, Generator, Layout, Options};

mod common;
use common::ROLE;

const PROCESSES: usize = 4;
const FORKS_PER_PROCESS: usize = 250;
const CHILD_TIMEOUT: Duration = Duration::from_secs(10);

#[test]
fn child_entry_point() {
    if std::env::var(ROLE).as_deref() == Ok("storm") {
        storm();
    }
}

/// The IDs a thread issued, shared with the reporting thread.
type Ids = Arc<Mutex<Vec<i64>>>;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn storm() {
    let dir = std::path::PathBuf::from(std::env::var("FLAKERY_LEASE_DIR").unwrap());
    let out = std::path::PathBuf::from(std::env::var("STORM_OUT").unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let ids: Ids = Arc::default();
    // Many node IDs: every refresh below writes a mark ahead of the host's clock, which
    // makes its node ID unusable to later leases (as it should).
    // One namespace per process, so each scans only the node IDs its own children spent; a
    // namespace is an ID space of its own, so each process also fixes its own datacenter
    // (leasing the worker under it).
    let index: u64 = std::env::var("STORM_INDEX").unwrap().parse().unwrap();
    let refresh_options = Options {
        lease_dir: Some(dir.clone()),
        namespace: Some(format!("storm-refresh-{index}")),
        layout: Some(
            Layout::parse("time:41,datacenter:2,worker:14,sequence:6;epoch=1288834974657").unwrap(),
        ),
        datacenter_id: Some(index),
        ..Options::default()
    };
    // A day ahead: its IDs never meet those of the real clock.
    let clock = FakeClock::new(now_ms() + 86_400_000);
    let refreshing = Arc::new(
        Generator::builder()
            .options(refresh_options)
            .clock(clock.clone())
            .build()
            .unwrap(),
    );
    let leased = Arc::new(Generator::new(Options::default()).unwrap());

    let mut threads = Vec::new();
    {
        // Makes the default generator while the first forks happen, then uses it.
        let (stop, ids) = (stop.clone(), ids.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                let batch = flakery::next_ids(20).unwrap();
                ids.lock().unwrap().extend(batch);
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
    }
    {
        // Every call past the granted time refreshes: a write and an fsync under the locks.
        let (stop, ids, refreshing, clock) =
            (stop.clone(), ids.clone(), refreshing.clone(), clock.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                clock.advance(600);
                let id = refreshing.next_id().unwrap();
                ids.lock().unwrap().push(id);
            }
        }));
    }
    {
        // Takes and gives back host leases: the directory, the files, the lease state.
        let (stop, ids, dir) = (stop.clone(), ids.clone(), dir.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                let generator = Generator::new(Options {
                    lease_dir: Some(dir.clone()),
                    ..Options::default()
                })
                .unwrap();
                let id = generator.next_id().unwrap();
                ids.lock().unwrap().push(id);
                generator.close();
            }
        }));
    }
    {
        let (stop, ids, leased) = (stop.clone(), ids.clone(), leased.clone());
        threads.push(std::thread::spawn(move || {
            while !stop.load(SeqCst) {
                let batch = leased.next_ids(20).unwrap();
                ids.lock().unwrap().extend(batch);
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
    }

    let (mut blocked, mut failed) = (0, Vec::new());
    let mut child_ids = Vec::new();
    for _ in 0..FORKS_PER_PROCESS {
        match fork_and_wait(&refreshing, &leased) {
            Outcome::Ids(found) => child_ids.extend(found),
            Outcome::Failed(why) => failed.push(why),
            Outcome::Blocked => blocked += 1,
        }
    }
    stop.store(true, SeqCst);
    for thread in threads {
        thread.join().unwrap();
    }
    let mut all = ids.lock().unwrap().clone();
    all.extend(child_ids);
    let text: Vec<String> = all.iter().map(i64::to_string).collect();
    std::fs::write(&out, text.join("\n")).unwrap();
    println!(
        "STORM forks={FORKS_PER_PROCESS} blocked={blocked} failed={} first_failure={:?}",
        failed.len(),
        failed.first()
    );
    std::io::stdout().flush().unwrap();
}

enum Outcome {
    Ids(Vec<i64>),
    Failed(String),
    Blocked,
}

/// Forks; the child uses the default, the refreshing and the leased generator, writes what
/// it got into a pipe and leaves by `_exit`. A child not gone within the timeout is blocked:
/// it is killed.
fn fork_and_wait(refreshing: &Generator<FakeClock>, leased: &Generator) -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: a pipe, then fork; the child writes and leaves by _exit, never returning.
    unsafe { libc::pipe(fds.as_mut_ptr()) };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let report = (|| -> flakery::Result<String> {
            let mut ids = flakery::next_ids(5)?;
            ids.extend(leased.next_ids(5)?);
            ids.push(refreshing.next_id()?);
            Ok(ids.iter().map(i64::to_string).collect::<Vec<_>>().join(" "))
        })()
        .unwrap_or_else(|e| format!("error {}: {}", e.code(), e.message()));
        unsafe {
            libc::write(fds[1], report.as_ptr().cast(), report.len());
            libc::_exit(0);
        }
    }
    unsafe { libc::close(fds[1]) };
    let deadline = Instant::now() + CHILD_TIMEOUT;
    let mut status = 0;
    let exited = loop {
        // SAFETY: our own child.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    if !exited {
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
        }
        return Outcome::Blocked;
    }
    let mut buf = vec![0u8; 1 << 16];
    let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
    unsafe { libc::close(fds[0]) };
    let text = String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned();
    if text.starts_with("error") || text.is_empty() {
        return Outcome::Failed(text);
    }
    match text.split_whitespace().map(str::parse).collect() {
        Ok(ids) => Outcome::Ids(ids),
        Err(_) => Outcome::Failed(text),
    }
}

#[test]
fn a_thousand_forks_under_load_leave_no_child_blocked_and_no_duplicate() {
    let dir = std::env::temp_dir().join(format!("flakery-storm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            let out = dir.join(format!("ids-{i}"));
            let mut command = common::rerun_as("storm");
            command
                .env("FLAKERY_LEASE_DIR", dir.join("leases"))
                .env("STORM_OUT", &out)
                .env("STORM_INDEX", i.to_string());
            command
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            (common::spawn(&mut command), out)
        })
        .collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for (child, out) in children {
        let output = child.wait_with_output().unwrap();
        let report = common::report(&output, "STORM");
        assert_eq!(common::field(&report, "blocked"), "0", "{report}");
        assert_eq!(common::field(&report, "failed"), "0", "{report}");
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let id: i64 = line.parse().unwrap();
            total += 1;
            assert!(seen.insert(id), "ID {id} issued twice");
        }
    }
    assert!(
        total > PROCESSES * FORKS_PER_PROCESS * 11,
        "only {total} IDs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

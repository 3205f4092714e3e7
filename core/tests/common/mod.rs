//! Plumbing shared by the tests that need real processes: the test binary runs itself again
//! as a child (FLAKERY_TEST_ROLE says what the child does), and forks.

use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

pub const ROLE: &str = "FLAKERY_TEST_ROLE";

/// This test binary again, running only `child_entry_point`, as `role`, with no FLAKERY_*
/// variable of ours set: the caller adds the ones it wants.
pub fn rerun_as(role: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child_entry_point",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role);
    for name in [
        "FLAKERY_WORKER_ID",
        "FLAKERY_DATACENTER_ID",
        "FLAKERY_LAYOUT",
        "FLAKERY_ZOOKEEPER",
        "FLAKERY_DATABASE_URL",
        "FLAKERY_DATABASE_MODE",
        "FLAKERY_NAMESPACE",
        "FLAKERY_LEASE_DIR",
        "FLAKERY_SESSION_TIMEOUT_MS",
    ] {
        command.env_remove(name);
    }
    command
}

/// A child being spawned holds a copy of every descriptor of ours, host-lease locks included,
/// until it execs; a lease closed in that window is not free yet. Tests that assert a closed
/// lease is free at once hold this lock, and spawns take it, so the two never overlap.
static SPAWNING: Mutex<()> = Mutex::new(());

#[allow(dead_code)]
pub fn no_spawns() -> MutexGuard<'static, ()> {
    SPAWNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// `command.spawn()`, never while a test holds `no_spawns`.
#[allow(dead_code)] // not every test binary spawns
pub fn spawn(command: &mut Command) -> Child {
    let _guard = no_spawns();
    command.spawn().unwrap()
}

/// `command.output()`, but only the spawn waits for `no_spawns`.
#[allow(dead_code)] // not every test binary runs children to completion
pub fn output(command: &mut Command) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    spawn(command).wait_with_output().unwrap()
}

/// Forks; the child runs `child` and its text comes back through a pipe. Call it only from a
/// process with one thread (a re-run child), so the child may allocate safely.
#[allow(dead_code)] // not every test binary forks
pub fn in_forked_child(child: impl FnOnce() -> String) -> String {
    let mut fds = [0; 2];
    // SAFETY: a pipe and fork in a single-threaded process; the child leaves by _exit.
    unsafe { libc::pipe(fds.as_mut_ptr()) };
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let report = child();
        unsafe {
            libc::write(fds[1], report.as_ptr().cast(), report.len());
            libc::_exit(0);
        }
    }
    let mut buf = vec![0u8; 4096];
    unsafe { libc::close(fds[1]) };
    let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
    unsafe {
        libc::close(fds[0]);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
    String::from_utf8_lossy(&buf[..n.max(0) as usize]).into_owned()
}

/// The rest of the line after `tag ` in a child's output: its report. Panics with all the
/// child printed when there is none.
#[allow(dead_code)]
pub fn report(output: &Output, tag: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let prefix = format!("{tag} ");
    stdout
        .lines()
        .find_map(|line| line.split_once(&prefix).map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| {
            panic!(
                "no {tag} report: {stdout} {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

/// The value of `key=value` in a report.
#[allow(dead_code)]
pub fn field<'a>(report: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}=");
    report
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {key} in the report: {report}"))
}

/// The words after `child=` in a fork report: what the forked child saw.
#[allow(dead_code)]
pub fn child_words(report: &str) -> Vec<&str> {
    report
        .split_once("child=")
        .unwrap_or_else(|| panic!("no child= in the report: {report}"))
        .1
        .split_whitespace()
        .collect()
}

/// Issues IDs in small batches until stdin closes, printing each batch as `IDS a b c ...`
/// and each refusal as `ERR <code>`.
#[allow(dead_code)] // not every test binary issues
pub fn issuer_role() {
    use std::io::Write;
    let generator = flakery::Generator::new(flakery::Options::default()).unwrap();
    println!("READY {}", generator.worker_id());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = std::sync::Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_line(&mut String::new());
        watcher.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let mut out = std::io::BufWriter::new(std::io::stdout());
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        match generator.next_ids(16) {
            Ok(ids) => {
                let text: Vec<String> = ids.iter().map(i64::to_string).collect();
                writeln!(out, "IDS {}", text.join(" ")).unwrap();
            }
            Err(err) => writeln!(out, "ERR {}", err.code()).unwrap(),
        }
        out.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    println!("DONE");
}

/// What the issuers issued: IDs per generator, refusals by code; panics on a duplicate or a
/// decrease.
#[allow(dead_code)]
pub fn count_issued(
    outputs: &[Vec<String>],
    layout: &flakery::Layout,
) -> (usize, std::collections::HashMap<String, usize>) {
    let mut seen: std::collections::HashMap<i64, usize> = std::collections::HashMap::new();
    let mut refusals: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (generator, lines) in outputs.iter().enumerate() {
        let mut last = i64::MIN;
        for line in lines {
            if let Some((_, code)) = line.split_once("ERR ") {
                *refusals.entry(code.to_string()).or_default() += 1;
                continue;
            }
            let Some((_, ids)) = line.split_once("IDS ") else {
                continue;
            };
            for id in ids.split(' ').map(|w| w.parse::<i64>().unwrap()) {
                assert!(
                    id > last,
                    "generator {generator} went from {last} to {id} ({:?} to {:?})",
                    flakery::decode(last.max(0), layout).unwrap(),
                    flakery::decode(id, layout).unwrap()
                );
                last = id;
                if let Some(other) = seen.insert(id, generator) {
                    panic!(
                        "ID {id} ({:?}) issued by generators {other} and {generator}",
                        flakery::decode(id, layout).unwrap()
                    );
                }
            }
        }
    }
    (seen.len(), refusals)
}

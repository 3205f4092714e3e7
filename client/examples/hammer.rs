//! Takes IDs from servers through one client on many threads, optionally in forked children,
//! and records every ID it was handed (tests/client counts duplicates over all of them).
//!
//! hammer --servers URL[,URL] --calls N [--threads T] [--forks K] [--out PREFIX]
//!        [--timeout-ms MS] [--request-timeout-ms MS] [--max-age-ms MS] [--batch N]
//!        [--seconds S] [--pause-us US] [--prefer-first 1]
//!        [--fallback-node DC:WORKER | --fallback-lease-dir DIR]
//!
//! Each thread makes N calls, or as many as it can in S seconds, sleeping US between calls.
//! Each process writes its IDs to PREFIX.PID (8 bytes each, little-endian) and one JSON line
//! to stdout: {"pid", "ok", "failed": {code: count}, "errors": [first few messages],
//! "longest_ms": the longest call}.
//! With --forks K, the parent takes two IDs first (so it holds a block, and its thread holds
//! it for lock-free calls), forks K children that each take one ID on that thread and make N
//! calls, then makes its own N calls.
//! A fallback generator: on a node ID given, or leasing one in a lease directory (the servers'
//! own, so that the lease keeps it apart from theirs: tests/partition/client_fallback.py).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flakery_client::Client;

struct Args {
    servers: String,
    calls: usize,
    threads: usize,
    forks: usize,
    out: String,
    timeout_ms: u64,
    request_timeout_ms: u64,
    max_age_ms: u64,
    batch: usize,
    seconds: u64,
    pause_us: u64,
    prefer_first: bool,
    fallback: Option<flakery::Options>,
}

fn args() -> Args {
    let mut args = Args {
        servers: String::new(),
        calls: 1000,
        threads: 1,
        forks: 0,
        out: "hammer".into(),
        timeout_ms: 5000,
        request_timeout_ms: 1000,
        max_age_ms: 10_000,
        batch: 1,
        seconds: 0,
        pause_us: 0,
        prefer_first: false,
        fallback: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || {
            value
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{flag} {value}"))
        };
        match flag.as_str() {
            "--servers" => args.servers = value.clone(),
            "--calls" => args.calls = number() as usize,
            "--threads" => args.threads = number() as usize,
            "--forks" => args.forks = number() as usize,
            "--out" => args.out = value.clone(),
            "--timeout-ms" => args.timeout_ms = number(),
            "--request-timeout-ms" => args.request_timeout_ms = number(),
            "--max-age-ms" => args.max_age_ms = number(),
            "--batch" => args.batch = number() as usize,
            "--seconds" => args.seconds = number(),
            "--pause-us" => args.pause_us = number(),
            "--prefer-first" => args.prefer_first = number() == 1,
            "--fallback-node" => {
                let (datacenter, worker) = value.split_once(':').expect("DC:WORKER");
                args.fallback = Some(flakery::Options {
                    datacenter_id: Some(datacenter.parse().expect("a datacenter ID")),
                    worker_id: Some(worker.parse().expect("a worker ID")),
                    ..flakery::Options::default()
                });
            }
            "--fallback-lease-dir" => {
                args.fallback = Some(flakery::Options {
                    lease_dir: Some(value.clone().into()),
                    ..flakery::Options::default()
                });
            }
            _ => panic!("unknown flag {flag}"),
        }
    }
    args
}

#[derive(Default)]
struct Tally {
    ids: Vec<i64>,
    ok: usize,
    failed: BTreeMap<String, usize>,
    errors: Vec<String>,
    longest_ms: u64,
}

fn hammer(client: &Arc<Client>, args: &Args) -> Tally {
    let tally = Arc::new(Mutex::new(Tally::default()));
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            let tally = Arc::clone(&tally);
            scope.spawn(move || {
                let mut mine = Tally::default();
                let began = std::time::Instant::now();
                for _ in 0..args.calls {
                    if args.seconds > 0 && began.elapsed().as_secs() >= args.seconds {
                        break;
                    }
                    if args.pause_us > 0 {
                        std::thread::sleep(Duration::from_micros(args.pause_us));
                    }
                    let called = std::time::Instant::now();
                    let result = if args.batch == 1 {
                        client.next_id().map(|id| vec![id])
                    } else {
                        client.next_ids(args.batch)
                    };
                    mine.longest_ms = mine.longest_ms.max(called.elapsed().as_millis() as u64);
                    match result {
                        Ok(ids) => {
                            mine.ok += 1;
                            mine.ids.extend(ids);
                        }
                        Err(e) => {
                            *mine.failed.entry(e.code().to_string()).or_default() += 1;
                            if mine.errors.len() < 3 {
                                mine.errors.push(format!("{}: {}", e.code(), e.message()));
                            }
                        }
                    }
                }
                let mut tally = tally.lock().unwrap();
                tally.ok += mine.ok;
                tally.longest_ms = tally.longest_ms.max(mine.longest_ms);
                tally.ids.extend(mine.ids);
                for (code, n) in mine.failed {
                    *tally.failed.entry(code).or_default() += n;
                }
                tally.errors.extend(mine.errors);
            });
        }
    });
    Arc::try_unwrap(tally)
        .ok()
        .expect("threads ended")
        .into_inner()
        .unwrap()
}

fn report(args: &Args, tally: &Tally) {
    let pid = std::process::id();
    let mut file = std::fs::File::create(format!("{}.{pid}", args.out)).unwrap();
    let bytes: Vec<u8> = tally.ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    file.write_all(&bytes).unwrap();
    let line = serde_json::json!({
        "pid": pid,
        "ok": tally.ok,
        "ids": tally.ids.len(),
        "failed": tally.failed,
        "errors": tally.errors,
        "longest_ms": tally.longest_ms,
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}

fn main() {
    let args = args();
    let exit = |e: flakery_client::Error| -> ! {
        eprintln!("hammer: {}: {}", e.code(), e);
        std::process::exit(2)
    };
    let mut builder = Client::builder()
        .server(&args.servers)
        .timeout(Duration::from_millis(args.timeout_ms))
        .request_timeout(Duration::from_millis(args.request_timeout_ms))
        .max_age(Duration::from_millis(args.max_age_ms))
        .prefer_first(args.prefer_first);
    if let Some(options) = args.fallback.clone() {
        builder = builder.fallback(flakery::Generator::new(options).unwrap_or_else(|e| exit(e)));
    }
    let client = Arc::new(builder.build().unwrap_or_else(|e| exit(e)));
    if args.forks == 0 {
        report(&args, &hammer(&client, &args));
        return;
    }
    // The parent holds a block before it forks: a child must never hand out one of its IDs.
    let first = client.next_id().expect("the parent's first ID");
    let held = client
        .next_id()
        .expect("the parent's second ID, from its thread's block");
    let mut children = Vec::new();
    for _ in 0..args.forks {
        // SAFETY: the child only uses the client (which is fork-aware) and exits.
        match unsafe { libc::fork() } {
            0 => {
                // This thread's block is the parent's: the child's engine must not take it.
                let own = client.next_id().expect("the child's first ID");
                let mut tally = hammer(&client, &args);
                tally.ids.push(own);
                report(&args, &tally);
                std::process::exit(0);
            }
            -1 => panic!("fork failed"),
            pid => children.push(pid),
        }
    }
    let mut tally = hammer(&client, &args);
    tally.ids.extend([first, held]);
    for pid in children {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child {pid} failed"
        );
    }
    report(&args, &tally);
}

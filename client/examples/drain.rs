//! Takes IDs as fast as one thread can through one client, for bench/client/run.py: how many
//! IDs a second N such processes sustain against local servers.
//!
//! drain --servers URL[,URL] --start-at-ms UNIX_MS --seconds S [--max-block N]
//!
//! It builds its client and takes IDs until the start time (so that its connection is open
//! and its block grown when the measured window begins), then counts the IDs it takes for S
//! seconds and prints one JSON line: {"ids", "failed", "seconds"} (bench/client/run.py reads
//! the CPU time of every process from /proc).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use flakery_client::Client;

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn main() {
    let mut servers = String::new();
    let mut start_at_ms = 0;
    let mut seconds = 5.0;
    let mut max_block = 10_000;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--servers" => servers = value,
            "--start-at-ms" => start_at_ms = value.parse().expect("--start-at-ms"),
            "--seconds" => seconds = value.parse().expect("--seconds"),
            "--max-block" => max_block = value.parse().expect("--max-block"),
            _ => panic!("unknown flag {flag}"),
        }
    }
    // The servers in the order given: bench/client/run.py gives each process its own, so the
    // processes spread evenly: 3, 3 and 2 of 8 over 3 servers (by process ID, as the default
    // does, only on average: the IDs of processes started together on a busy machine are not
    // consecutive).
    let client = Client::builder()
        .server(&servers)
        .prefer_first(true)
        .block_sizes(16, max_block)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("drain: {}: {}", e.code(), e);
            std::process::exit(2)
        });
    while unix_ms() < start_at_ms {
        client.next_id().expect("an ID before the measured window");
    }
    let window = Duration::from_secs_f64(seconds);
    let began = Instant::now();
    let (mut ids, mut failed) = (0u64, 0u64);
    loop {
        // The clock is read once every 1024 calls: its cost stays out of the count.
        for _ in 0..1024 {
            match client.next_id() {
                Ok(id) => {
                    std::hint::black_box(id);
                    ids += 1;
                }
                Err(_) => failed += 1,
            }
        }
        if began.elapsed() >= window {
            break;
        }
    }
    let elapsed = began.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({"ids": ids, "failed": failed, "seconds": elapsed})
    );
}

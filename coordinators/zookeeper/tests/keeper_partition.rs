//! The generator process of the network partition test (tests/partition/run.sh), which runs
//! this test binary inside a network namespace of its own with FLAKERY_PARTITION_STREAM_S set.
//! Without that variable there is nothing to do: the partition test is the script.
//!
//! It makes a generator from the environment (FLAKERY_ZOOKEEPER and friends), retrying while
//! that fails, and then asks for an ID every millisecond for the given number of seconds,
//! printing one line per answer: `ok <id> <unix ms>` or `err <code> <unix ms>` (then
//! `why <message> <unix ms>`, spaces as underscores). At the end it
//! closes the generator (giving its node ID back) and prints `closed`.

use std::io::Write;
use std::time::{Duration, Instant};

use flakery::{Clock, Generator, Options, SystemClock};

#[test]
fn partition_streamer() {
    let Ok(seconds) = std::env::var("FLAKERY_PARTITION_STREAM_S") else {
        return;
    };
    // The core opens a ZooKeeper lease only through a connector a program installs.
    flakery_zookeeper::install();
    let seconds: u64 = seconds
        .parse()
        .expect("FLAKERY_PARTITION_STREAM_S: seconds");
    let end = Instant::now() + Duration::from_secs(seconds);
    let out = std::io::stdout();
    let mut out = out.lock();
    let mut say = |line: String| {
        writeln!(out, "{line} {}", SystemClock.now_ms()).unwrap();
        out.flush().unwrap();
    };
    let generator = loop {
        match Generator::new(Options::default()) {
            Ok(generator) => break Some(generator),
            Err(err) => say(format!("err {}", err.code())),
        }
        if Instant::now() >= end {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let Some(generator) = generator else { return };
    let mut last = None;
    while Instant::now() < end {
        match generator.next_id() {
            Ok(id) => say(format!("ok {id}")),
            Err(err) => {
                // One line per change of error, not one per millisecond.
                if last != Some(err.code()) {
                    say(format!("err {}", err.code()));
                    say(format!("why {}", err.message().replace(' ', "_")));
                }
                last = Some(err.code());
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        }
        last = None;
        std::thread::sleep(Duration::from_millis(1));
    }
    generator.close();
    say("closed".into());
}

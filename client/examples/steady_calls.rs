//! N calls of one kind, for callgrind: run it with two counts and divide the difference of
//! the instructions by the difference of the counts (the start-up, the fake server and the
//! first block cancel out). bench/client/profile.sh does that for each kind, counting only
//! inside the kind's function for `stock` and `embedded` (never inlined, for callgrind's
//! `--toggle-collect`: the refill's reads vary from run to run).
//!
//! - `stock`: a client's `next_id` served from its stock (prefetch off, N within one block);
//! - `embedded`: an embedded generator's `next_id` (borrow policy, as client/benches/steady.rs);
//! - `sustained`: a client's `next_id` with prefetch on, its refills included (the fake
//!   server's own instructions are counted apart by function name: `fake::`).
//!
//! Valgrind gives a process no vDSO: the clock read it counts is the C library's system call
//! (its wrapper's instructions), not the vDSO's (about 35 more) that a real run makes.
//!
//! `compare` is not for callgrind: 15 rounds of N calls of the embedded generator and of the
//! stock in turn, timed by the thread's CPU time (less disturbed by a loaded machine than the
//! wall clock), then 5 rounds of 20 N sustained calls by the wall clock; prints the best round
//! of each in ns a call.
//!
//! steady_calls N [stock|embedded|sustained|compare]

use std::hint::black_box;

#[path = "../tests/fake/mod.rs"]
mod fake;

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .expect("usage: steady_calls N [stock|embedded|sustained]");
    match args.next().as_deref().unwrap_or("stock") {
        "stock" => stock(calls),
        "embedded" => embedded(calls),
        "sustained" => sustained(calls),
        "compare" => compare(calls),
        other => panic!("unknown kind {other}"),
    }
}

#[inline(never)]
fn stock(calls: u64) {
    let (url, _fake) = fake::fake_server();
    let client = fake::client_of_stock(&url);
    let mut left = calls;
    while left > 0 {
        // Refills (untimed in the benchmark) are the same for both counts when N fits a block.
        black_box(client.next_id().unwrap());
        let n = (client.stats().held as u64).min(left);
        for _ in 0..n {
            black_box(client.next_id().unwrap());
        }
        left -= n;
    }
}

#[inline(never)]
fn embedded(calls: u64) {
    let generator = fake::embedded_generator();
    for _ in 0..calls {
        black_box(generator.next_id().unwrap());
    }
}

#[inline(never)]
fn sustained(calls: u64) {
    let (url, _fake) = fake::fake_server();
    let client = fake::sustained_client(&url);
    for _ in 0..calls {
        black_box(client.next_id().unwrap());
    }
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn compare(calls: u64) {
    let generator = fake::embedded_generator();
    let (url, _fake) = fake::fake_server();
    let client = fake::client_of_stock(&url);
    let (mut embedded, mut stock) = (f64::MAX, f64::MAX);
    for _ in 0..15 {
        let began = thread_cpu_ns();
        for _ in 0..calls {
            black_box(generator.next_id().unwrap());
        }
        embedded = embedded.min((thread_cpu_ns() - began) as f64 / calls as f64);
        // A block of at least N, taken up outside the timed calls.
        while (client.stats().held as u64) < calls {
            black_box(client.next_id().unwrap());
        }
        black_box(client.next_id().unwrap());
        let began = thread_cpu_ns();
        for _ in 0..calls {
            black_box(client.next_id().unwrap());
        }
        stock = stock.min((thread_cpu_ns() - began) as f64 / calls as f64);
    }
    // Sustained: by the wall clock (the refills run on other threads).
    let client = fake::sustained_client(&url);
    let mut sustained = f64::MAX;
    for _ in 0..5 {
        let began = std::time::Instant::now();
        for _ in 0..calls * 20 {
            black_box(client.next_id().unwrap());
        }
        sustained = sustained.min(began.elapsed().as_nanos() as f64 / (calls * 20) as f64);
    }
    println!(
        "embedded {embedded:.2} ns, from the stock {stock:.2} ns: {:.2}x; sustained {sustained:.2} \
         ns: {:.2}x",
        stock / embedded,
        sustained / embedded
    );
}

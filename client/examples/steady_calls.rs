//! `next_id` served from the stock, N times, for callgrind: run it with two counts and divide
//! the difference of the instructions by the difference of the counts (the start-up, the fake
//! server and the refills cancel out). Prefetch is off: only the calls the stock serves.
//! Valgrind gives a process no vDSO: the clock read it counts is the C library's system call
//! (its wrapper's instructions), not the vDSO's (about 35 more) that a real run makes.
//!
//! steady_calls N

use std::hint::black_box;

#[path = "../tests/fake/mod.rs"]
mod fake;

fn main() {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("usage: steady_calls N");
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

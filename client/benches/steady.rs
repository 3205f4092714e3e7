//! A client's `next_id` beside an embedded generator's, on one thread, against a fake
//! loopback server: served from the stock (the call's own cost), and sustained with prefetch
//! (bounded by the refills: the server's words and the client's reading of them, on the
//! other threads of the same machine). `cargo bench -p flakery-client --bench steady`. Issue
//! 37's goals: from the stock within 1.5x of the embedded call, sustained within 3x.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../tests/fake/mod.rs"]
mod fake;

fn steady(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id, one thread");
    let embedded = fake::embedded_generator();
    group.bench_function("flakery::Generator::next_id (embedded, borrow)", |b| {
        b.iter(|| embedded.next_id().unwrap())
    });
    let (url, _fake) = fake::fake_server();
    // The local call: the stock is filled (untimed), then only calls it serves are timed; no
    // refill runs meanwhile (prefetch off), so this is next_id's own cost.
    let local = fake::client_of_stock(&url);
    group.bench_function("flakery_client::Client::next_id (from the stock)", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                local.next_id().unwrap();
                let n = (local.stats().held as u64).min(left);
                let began = Instant::now();
                for _ in 0..n {
                    black_box(local.next_id().unwrap());
                }
                timed += began.elapsed();
                left -= n;
            }
            timed
        })
    });
    // Sustained: prefetch on, the refills (the server's words, the client's reading of them)
    // running on the other threads of the same machine.
    let client = fake::sustained_client(&url);
    group.bench_function(
        "flakery_client::Client::next_id (sustained, prefetch)",
        |b| b.iter(|| client.next_id().unwrap()),
    );
    group.finish();
}

criterion_group!(benches, steady);
criterion_main!(benches);

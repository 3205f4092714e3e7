//! A client's `next_id` beside an embedded generator's, on one thread, against a fake
//! loopback server: served from the stock (the call's own cost), and sustained with prefetch
//! (bounded by the refills: the server's text and the client's reading of it, on the other
//! threads of the same machine). `cargo bench -p flakery-client --bench steady`. The
//! issue's goal for the first: within 2x of the embedded call.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use flakery::SequencePolicy;

#[path = "../tests/fake/mod.rs"]
mod fake;

fn steady(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id, one thread");
    // The embedded call below its layout's ceiling, as bench/rust measures it (borrow policy,
    // a day ahead allowed): the code's cost, not the layout's 4,096 IDs a millisecond.
    let embedded = flakery::Generator::builder()
        .worker_id(1)
        .sequence_policy(SequencePolicy::Borrow)
        .max_borrow_ms(86_400_000)
        .build()
        .expect("an embedded generator");
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
    // Sustained: prefetch on, the refills (the server's text, the client's reading of it)
    // running on the other threads of the same machine.
    let client = flakery_client::Client::builder()
        .server(&url)
        .block_sizes(1000, flakery_client::MAX_BLOCK)
        .max_age(Duration::from_secs(60))
        .build()
        .expect("a client");
    // Grown to its largest block before it is measured.
    for _ in 0..1_000_000 {
        client.next_id().unwrap();
    }
    group.bench_function(
        "flakery_client::Client::next_id (sustained, prefetch)",
        |b| b.iter(|| client.next_id().unwrap()),
    );
    group.finish();
}

criterion_group!(benches, steady);
criterion_main!(benches);

//! `cargo bench -p flakery`: the core's cost per call. The bars (issue 2): `next_id()` in
//! borrow mode at most 15 ns; wait mode on `twitter` at least 99% of 4,096,000 IDs/s.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use flakery::{decode, Generator, Layout, SequencePolicy};

fn generator(policy: SequencePolicy) -> Generator {
    Generator::builder()
        .worker_id(1)
        .sequence_policy(policy)
        // So that borrow mode measures the generator, not the layout's sequence ceiling.
        .max_borrow_ms(24 * 3_600_000)
        .build()
        .expect("generator")
}

fn next_id(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_id");
    group.throughput(Throughput::Elements(1));
    let borrow = generator(SequencePolicy::Borrow);
    group.bench_function("borrow", |b| {
        b.iter(|| black_box(borrow.next_id().unwrap()))
    });
    // Sustained: long runs, so the figure is IDs per second against the 4,096,000 ceiling.
    let wait = generator(SequencePolicy::Wait);
    group.bench_function("wait (twitter ceiling 4,096,000/s)", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(wait.next_id().unwrap());
            }
            start.elapsed()
        })
    });
    group.finish();
}

fn next_ids(c: &mut Criterion) {
    let mut group = c.benchmark_group("next_ids");
    group.throughput(Throughput::Elements(1_000_000));
    group.sample_size(20);
    let borrow = generator(SequencePolicy::Borrow);
    let mut out = vec![0i64; 1_000_000];
    group.bench_function("fill 1,000,000 borrow", |b| {
        b.iter(|| borrow.fill(black_box(&mut out)).unwrap())
    });
    group.finish();
}

fn decoding(c: &mut Criterion) {
    let layout = Layout::twitter();
    c.bench_function("decode twitter", |b| {
        b.iter(|| black_box(decode(black_box(1541815603606036480), &layout).unwrap()))
    });
}

fn text_forms(c: &mut Criterion) {
    let mut group = c.benchmark_group("text");
    group.throughput(Throughput::Elements(1));
    let id = 1541815603606036480;
    group.bench_function("encode_base32", |b| {
        b.iter(|| black_box(flakery::text::encode_base32(black_box(id)).unwrap()))
    });
    group.bench_function("encode_base62", |b| {
        b.iter(|| black_box(flakery::text::encode_base62(black_box(id)).unwrap()))
    });
    let base32 = flakery::text::to_base32(id).unwrap();
    group.bench_function("from_base32", |b| {
        b.iter(|| black_box(flakery::text::from_base32(black_box(&base32)).unwrap()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = next_id, next_ids, decoding, text_forms
}
criterion_main!(benches);

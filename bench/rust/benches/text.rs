//! `cargo bench -p flakery-bench --bench text`: flakery's base32 text form beside ferroid's, the
//! fastest Crockford base32 of a 64-bit Snowflake ID among the Rust peers. Both write into a
//! stack buffer without allocating.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferroid::base32::Base32SnowExt;
use ferroid::id::SnowflakeTwitterId;

const ID: i64 = 1_541_815_603_606_036_480;

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("base32 encode");
    group.throughput(Throughput::Elements(1));
    group.bench_function("flakery::text::encode_base32", |b| {
        b.iter(|| black_box(flakery::text::encode_base32(black_box(ID)).unwrap()))
    });
    group.bench_function("ferroid encode_to_buf", |b| {
        let mut buf = SnowflakeTwitterId::base32_array();
        b.iter(|| {
            let id = SnowflakeTwitterId::from_raw(black_box(ID as u64));
            black_box(id.encode_to_buf(&mut buf).as_str().len())
        })
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("base32 decode");
    group.throughput(Throughput::Elements(1));
    let text = flakery::text::to_base32(ID).unwrap();
    group.bench_function("flakery::text::from_base32", |b| {
        b.iter(|| black_box(flakery::text::from_base32(black_box(&text)).unwrap()))
    });
    group.bench_function("ferroid decode", |b| {
        b.iter(|| black_box(SnowflakeTwitterId::decode(black_box(&text)).unwrap()))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = encode, decode
}
criterion_main!(benches);

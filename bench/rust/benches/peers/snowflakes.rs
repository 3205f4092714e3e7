//! The 64-bit Snowflake crates a Rust user would otherwise pick.

use std::sync::Mutex;

use crate::peer::{
    loop_batch, ms_meta, sonyflake_ms, twitter_epoch, twitter_ms, Meta, Peer, TWITTER_LAYOUT,
};

pub struct Snowflaked;
impl Peer for Snowflaked {
    const META: Meta = ms_meta(
        "snowflaked",
            "snowflaked (sync)",
            "snowflaked",
            "snowflaked::sync::Generator::builder().instance(1).epoch(Twitter's).build(); generate::<u64>()",
            "time 41 | instance 10 | sequence 12, 1 ms",
            "spins to the next millisecond when the sequence runs out",
    );
    type Gen = snowflaked::sync::Generator;
    type Shared = snowflaked::sync::Generator;
    fn make() -> Self::Gen {
        snowflaked::sync::Generator::builder()
            .instance(1)
            .epoch(twitter_epoch())
            .build()
    }
    #[inline(always)]
    fn next(g: &mut Self::Gen) -> u128 {
        g.generate::<u64>() as u128
    }
    type Batch = Vec<u64>;
    fn batch(g: &mut Self::Gen, n: usize) -> Vec<u64> {
        loop_batch(n, || g.generate::<u64>())
    }
    fn ids(batch: Vec<u64>) -> Vec<u128> {
        batch.into_iter().map(u128::from).collect()
    }
    fn make_shared() -> Option<Self::Gen> {
        Some(Self::make())
    }
    fn next_shared(g: &Self::Gen) -> u128 {
        g.generate::<u64>() as u128
    }
    fn ts(id: u128) -> i64 {
        twitter_ms(id)
    }
}

pub struct RsSnowflake;
impl Peer for RsSnowflake {
    const META: Meta = Meta {
        threads_note: Some("not thread-safe (&mut self): shared in a std Mutex"),
        ..ms_meta(
            "rs-snowflake",
            "rs-snowflake",
            "rs-snowflake",
            "SnowflakeIdGenerator::with_epoch(0, 1, Twitter's); real_time_generate() (&mut self; two threads share it in a Mutex)",
            "time 42 | machine 5 | node 5 | sequence 12, 1 ms",
            "real_time_generate reads the clock on every call and spins when the sequence runs out",
        )
    };
    type Gen = snowflake::SnowflakeIdGenerator;
    type Shared = Mutex<snowflake::SnowflakeIdGenerator>;
    fn make() -> Self::Gen {
        snowflake::SnowflakeIdGenerator::with_epoch(0, 1, twitter_epoch())
    }
    #[inline(always)]
    fn next(g: &mut Self::Gen) -> u128 {
        g.real_time_generate() as u128
    }
    type Batch = Vec<i64>;
    fn batch(g: &mut Self::Gen, n: usize) -> Vec<i64> {
        loop_batch(n, || g.real_time_generate())
    }
    fn ids(batch: Vec<i64>) -> Vec<u128> {
        batch.into_iter().map(|id| id as u128).collect()
    }
    fn make_shared() -> Option<Self::Shared> {
        Some(Mutex::new(Self::make()))
    }
    fn next_shared(s: &Self::Shared) -> u128 {
        s.lock().expect("lock").real_time_generate() as u128
    }
    fn ts(id: u128) -> i64 {
        twitter_ms(id)
    }
}

type FerroidGen = ferroid::generator::AtomicSnowflakeGenerator<
    ferroid::id::SnowflakeTwitterId,
    ferroid::time::MonotonicClock<1>,
>;

pub struct Ferroid;
impl Peer for Ferroid {
    const META: Meta = ms_meta(
        "ferroid",
            "ferroid (atomic)",
            "ferroid",
            "AtomicSnowflakeGenerator<SnowflakeTwitterId, _>::new(1, MonotonicClock::<1>::with_epoch(TWITTER_EPOCH)); next_id(|_| spin_loop())",
            TWITTER_LAYOUT,
            "its clock is a background thread that stores the time in an atomic every millisecond, so a call reads no clock",
    );
    type Gen = FerroidGen;
    type Shared = FerroidGen;
    fn make() -> FerroidGen {
        let clock = ferroid::time::MonotonicClock::<1>::with_epoch(ferroid::time::TWITTER_EPOCH);
        FerroidGen::new(1, clock)
    }
    #[inline(always)]
    fn next(g: &mut FerroidGen) -> u128 {
        Self::next_shared(g)
    }
    type Batch = Vec<u64>;
    fn batch(g: &mut FerroidGen, n: usize) -> Vec<u64> {
        loop_batch(n, || g.next_id(|_| std::hint::spin_loop()).to_raw())
    }
    fn ids(batch: Vec<u64>) -> Vec<u128> {
        batch.into_iter().map(u128::from).collect()
    }
    fn make_shared() -> Option<FerroidGen> {
        Some(Self::make())
    }
    #[inline(always)]
    fn next_shared(g: &FerroidGen) -> u128 {
        g.next_id(|_| std::hint::spin_loop()).to_raw() as u128
    }
    fn ts(id: u128) -> i64 {
        twitter_ms(id)
    }
}

pub struct Sonyflake;
impl Peer for Sonyflake {
    const META: Meta = Meta {
        key: "sonyflake",
        name: "sonyflake",
        library: "sonyflake",
        config: "Sonyflake::builder().machine_id(&|| Ok(1)).finalize(); next_id()",
        layout: "time 39 | sequence 8 | machine 16, 10 ms",
        ceiling_per_s: Some(25_600.0),
        tick_ms: 10,
        burst: 200,
        batch_cap: Some(25_600),
        threads_note: Some("thread-safe (an internal Mutex); 12,800 IDs per thread: its layout makes 25,600 a second"),
        note: Some("10 ms ticks and an 8-bit sequence: at most 25,600 IDs a second; bursts of 200 after a 10 ms boundary; the batch is 25,600 IDs (one second's worth), not 1,000,000 (39 s)"),
        flakery: false,
    };
    type Gen = sonyflake::Sonyflake;
    type Shared = sonyflake::Sonyflake;
    fn make() -> Self::Gen {
        sonyflake::Sonyflake::builder()
            .machine_id(&|| Ok(1))
            .finalize()
            .expect("sonyflake")
    }
    #[inline(always)]
    fn next(g: &mut Self::Gen) -> u128 {
        Self::next_shared(g)
    }
    type Batch = Vec<u64>;
    fn batch(g: &mut Self::Gen, n: usize) -> Vec<u64> {
        loop_batch(n, || g.next_id().expect("next_id").to_u64())
    }
    fn ids(batch: Vec<u64>) -> Vec<u128> {
        batch.into_iter().map(u128::from).collect()
    }
    fn make_shared() -> Option<Self::Gen> {
        Some(Self::make())
    }
    #[inline(always)]
    fn next_shared(g: &Self::Gen) -> u128 {
        g.next_id().expect("next_id").to_u64() as u128
    }
    fn ts(id: u128) -> i64 {
        sonyflake_ms(id)
    }
}

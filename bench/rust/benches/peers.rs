//! flakery beside the Rust crates a user would otherwise pick, in one run:
//! `bash bench/run.sh` (all languages), or just this part:
//! `BENCH_OUT=/tmp/rust.json cargo bench -p flakery-bench --bench peers`.
//!
//! Per call: criterion, with `iter_custom` timing bursts of at most 1,000 calls that start right
//! after a millisecond boundary (200 calls after a 10 ms boundary for sonyflake), so no layout
//! runs out of sequence numbers inside a timed burst; the figure is the median over criterion's
//! samples. The other figures (sustained, batch, two threads) are taken by `flakery_bench`'s
//! harness; each batch runs in a fresh child process (this binary again) for its peak RSS.
//! `BENCH_SMOKE=1` makes every count tiny (CI runs that, and asserts no timing).

use std::cell::RefCell;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::Criterion;
use flakery::{Generator, SequencePolicy};
use flakery_bench::{
    check, load_average, max_rss_bytes, median, now_ms, sustained, time_in_bursts, two_threads,
    TWITTER_EPOCH_MS,
};
use serde_json::{json, Value};

/// How much of everything to do.
#[derive(Clone, Copy)]
struct Plan {
    smoke: bool,
    warm_up: Duration,
    measurement: Duration,
    samples: usize,
    sustained: Duration,
    batch: usize,
    batch_repeat: usize,
    per_thread: usize,
    tight_calls: u64,
}

impl Plan {
    fn new(smoke: bool) -> Plan {
        if smoke {
            Plan {
                smoke,
                warm_up: Duration::from_millis(5),
                measurement: Duration::from_millis(30),
                samples: 10,
                sustained: Duration::from_millis(30),
                batch: 10_000,
                batch_repeat: 1,
                per_thread: 5_000,
                tight_calls: 100_000,
            }
        } else {
            Plan {
                smoke,
                warm_up: Duration::from_millis(300),
                measurement: Duration::from_secs(2),
                samples: 20,
                sustained: Duration::from_secs(1),
                batch: 1_000_000,
                batch_repeat: 3,
                per_thread: 500_000,
                tight_calls: 10_000_000,
            }
        }
    }
}

/// What the JSON (and so the table) says about a generator.
struct Meta {
    key: &'static str,
    name: &'static str,
    /// The crate, as Cargo.lock names it.
    library: &'static str,
    config: &'static str,
    layout: &'static str,
    /// IDs per second one generator can make on its layout, where the layout has a cap.
    ceiling_per_s: Option<f64>,
    tick_ms: i64,
    burst: u64,
    /// The batch is at most this many IDs (sonyflake makes 25,600 a second).
    batch_cap: Option<usize>,
    threads_note: Option<&'static str>,
    note: Option<&'static str>,
    flakery: bool,
}

const TWITTER_CEILING: Option<f64> = Some(4_096_000.0);
const TWITTER_LAYOUT: &str = "time 41 | datacenter 5 | worker 5 | sequence 12, 1 ms";

/// A generator with 1 ms ticks: bursts of 1,000 after a 1 ms boundary, Twitter's ceiling of
/// 4,096,000 IDs a second unless the caller sets another.
const fn ms_meta(
    key: &'static str,
    name: &'static str,
    library: &'static str,
    config: &'static str,
    layout: &'static str,
    note: &'static str,
) -> Meta {
    Meta {
        key,
        name,
        library,
        config,
        layout,
        ceiling_per_s: TWITTER_CEILING,
        tick_ms: 1,
        burst: 1000,
        batch_cap: None,
        threads_note: None,
        note: Some(note),
        flakery: false,
    }
}

fn twitter_ms(id: u128) -> i64 {
    ((id as u64 >> 22) as i64) + TWITTER_EPOCH_MS
}

fn uuid_ms(id: u128) -> i64 {
    (id >> 80) as i64
}

/// Sonyflake's default start time, 2014-09-01T00:00:00Z, in Unix ms; its ticks are 10 ms.
const SONYFLAKE_START_MS: i64 = 1_409_529_600_000;

fn sonyflake_ms(id: u128) -> i64 {
    ((id as u64 >> 24) as i64) * 10 + SONYFLAKE_START_MS
}

/// One generator under test: how to make it, call it, make a batch, and share it.
trait Peer {
    const META: Meta;
    type Gen;
    type Shared: Sync;
    fn make() -> Self::Gen;
    fn next(g: &mut Self::Gen) -> u128;
    /// The library's own batch: its ID type in a Vec.
    type Batch;
    /// One batch of `n` IDs (the figure): the library's batch call, or a loop into a Vec.
    fn batch(g: &mut Self::Gen, n: usize) -> Self::Batch;
    /// The batch as u128, for the checks (after the clock and the memory reading).
    fn ids(batch: Self::Batch) -> Vec<u128>;
    fn make_shared() -> Option<Self::Shared>;
    fn next_shared(s: &Self::Shared) -> u128;
    fn ts(id: u128) -> i64;
}

/// Collects a batch with a loop, for libraries that have no batch call.
fn loop_batch<T>(n: usize, mut f: impl FnMut() -> T) -> Vec<T> {
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        ids.push(f());
    }
    ids
}

/// flakery on the `twitter` layout, worker 1: `Flakery<true>` in borrow mode (24 hours of
/// borrowing), `Flakery<false>` in wait mode (the default policy).
struct Flakery<const BORROW: bool>;
type FlakeryBorrow = Flakery<true>;
type FlakeryWait = Flakery<false>;

impl<const BORROW: bool> Peer for Flakery<BORROW> {
    const META: Meta = if BORROW {
        Meta {
            flakery: true,
            ..ms_meta(
                "flakery-borrow",
                "flakery (borrow)",
                "flakery",
                "Generator::builder().worker_id(1).sequence_policy(Borrow).max_borrow_ms(86_400_000); batch: next_ids(n)",
                TWITTER_LAYOUT,
                "borrow: when a millisecond's 4,096 sequence numbers are used up it takes the next millisecond's, up to max_borrow_ms ahead of the clock",
            )
        }
    } else {
        Meta {
            flakery: true,
            ..ms_meta(
                "flakery-wait",
                "flakery (wait)",
                "flakery",
                "Generator::builder().worker_id(1).build() (sequence_policy Wait, the default); batch: next_ids(n)",
                TWITTER_LAYOUT,
                "wait: when a millisecond's 4,096 sequence numbers are used up it waits for the next millisecond",
            )
        }
    };
    type Gen = Generator;
    type Shared = Generator;
    fn make() -> Generator {
        Generator::builder()
            .worker_id(1)
            .sequence_policy(if BORROW {
                SequencePolicy::Borrow
            } else {
                SequencePolicy::Wait
            })
            .max_borrow_ms(24 * 3_600_000)
            .build()
            .expect("flakery generator")
    }
    #[inline(always)]
    fn next(g: &mut Generator) -> u128 {
        Self::next_shared(g)
    }
    type Batch = Vec<i64>;
    fn batch(g: &mut Generator, n: usize) -> Vec<i64> {
        g.next_ids(n).expect("next_ids")
    }
    fn ids(batch: Vec<i64>) -> Vec<u128> {
        batch.into_iter().map(|id| id as u128).collect()
    }
    fn make_shared() -> Option<Generator> {
        Some(Self::make())
    }
    #[inline(always)]
    fn next_shared(g: &Generator) -> u128 {
        g.next_id().expect("next_id") as u128
    }
    fn ts(id: u128) -> i64 {
        twitter_ms(id)
    }
}

fn twitter_epoch() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + Duration::from_millis(TWITTER_EPOCH_MS as u64)
}

struct Snowflaked;
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

struct RsSnowflake;
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

struct Ferroid;
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

struct Sonyflake;
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

struct UuidV7;
impl Peer for UuidV7 {
    const META: Meta = Meta {
        ceiling_per_s: None,
        ..ms_meta(
            "uuid-v7",
            "uuid (v7)",
            "uuid",
            "Uuid::now_v7() (features [\"v7\"])",
            "UUIDv7, 128 bits: ms timestamp 48 | counter and random",
            "128-bit IDs, not 64",
        )
    };
    type Gen = ();
    type Shared = ();
    fn make() {}
    #[inline(always)]
    fn next(_: &mut ()) -> u128 {
        uuid::Uuid::now_v7().as_u128()
    }
    type Batch = Vec<uuid::Uuid>;
    fn batch(_: &mut (), n: usize) -> Vec<uuid::Uuid> {
        loop_batch(n, uuid::Uuid::now_v7)
    }
    fn ids(batch: Vec<uuid::Uuid>) -> Vec<u128> {
        batch.into_iter().map(|u| u.as_u128()).collect()
    }
    fn make_shared() -> Option<()> {
        Some(())
    }
    fn next_shared(_: &()) -> u128 {
        uuid::Uuid::now_v7().as_u128()
    }
    fn ts(id: u128) -> i64 {
        uuid_ms(id)
    }
}

struct Ulid;
impl Peer for Ulid {
    const META: Meta = Meta {
        ceiling_per_s: None,
        ..ms_meta(
            "ulid",
            "ulid",
            "ulid",
            "Ulid::generate()",
            "ULID, 128 bits: ms timestamp 48 | random 80",
            "128-bit IDs, random within a millisecond: not ordered within a millisecond",
        )
    };
    type Gen = ();
    type Shared = ();
    fn make() {}
    #[inline(always)]
    fn next(_: &mut ()) -> u128 {
        ulid::Ulid::generate().0
    }
    type Batch = Vec<ulid::Ulid>;
    fn batch(_: &mut (), n: usize) -> Vec<ulid::Ulid> {
        loop_batch(n, ulid::Ulid::generate)
    }
    fn ids(batch: Vec<ulid::Ulid>) -> Vec<u128> {
        batch.into_iter().map(|u| u.0).collect()
    }
    fn make_shared() -> Option<()> {
        Some(())
    }
    fn next_shared(_: &()) -> u128 {
        ulid::Ulid::generate().0
    }
    fn ts(id: u128) -> i64 {
        uuid_ms(id)
    }
}

/// Everything measured in the parent process for one generator.
fn measure<P: Peer>(c: &mut Criterion, plan: Plan) -> Value {
    let meta = P::META;
    eprintln!("--- {}", meta.name);

    // Per call: criterion drives iter_custom; each sample is timed in bursts.
    let samples: RefCell<Vec<(u64, Duration)>> = RefCell::default();
    let mut g = P::make();
    {
        let mut group = c.benchmark_group("per_call");
        group.bench_function(meta.key, |b| {
            b.iter_custom(|iters| {
                let t = time_in_bursts(iters, meta.burst, meta.tick_ms, &mut || P::next(&mut g));
                samples.borrow_mut().push((iters, t));
                t
            })
        });
        group.finish();
    }
    let samples = samples.into_inner();
    // Criterion warms up first (iteration counts 1, 2, 4, ...), then takes `samples` samples.
    let measured = &samples[samples.len().saturating_sub(plan.samples)..];
    let per_sample: Vec<f64> = measured
        .iter()
        .map(|(iters, t)| t.as_nanos() as f64 / *iters as f64)
        .collect();
    let calls: u64 = measured.iter().map(|(i, _)| i).sum();
    let total: Duration = measured.iter().map(|(_, t)| *t).sum();
    let per_call = json!({
        "ns": median(&per_sample),
        "ns_min": per_sample.iter().copied().fold(f64::INFINITY, f64::min),
        "ns_mean": total.as_nanos() as f64 / calls as f64,
        "calls": calls,
        "burst": meta.burst,
        "tick_ms": meta.tick_ms,
        "method": format!("criterion iter_custom, {} samples; each sample timed in bursts of at most {} calls started right after a {} ms boundary; median of the samples' ns per call", plan.samples, meta.burst, meta.tick_ms),
    });

    // Sustained: a fresh generator, one thread, in a loop.
    let mut g = P::make();
    let s = sustained(plan.sustained, P::ts, &mut || P::next(&mut g));
    let sustained = json!({
        "seconds": s.seconds,
        "ids": s.ids,
        "ids_per_s": s.ids_per_second(),
        "ceiling_per_s": meta.ceiling_per_s,
        "ceiling_ratio": meta.ceiling_per_s.map(|c| s.ids_per_second() / c),
        "not_increasing": s.not_increasing,
        "ahead_ms": s.ahead_ms,
    });
    drop(g);

    let batch = batch_in_child(meta.key, plan);

    let threads = match P::make_shared() {
        Some(shared) => {
            let per_thread = match meta.batch_cap {
                Some(cap) => plan.per_thread.min(cap / 2),
                None => plan.per_thread,
            };
            let t = two_threads(per_thread, P::ts, &|| P::next_shared(&shared));
            let n = 2 * per_thread;
            json!({
                "threads": 2,
                "per_thread": per_thread,
                "seconds": t.seconds,
                "ns_per_id": t.seconds * 1e9 / n as f64,
                "ids_per_s": n as f64 / t.seconds,
                "duplicates": t.checked.duplicates,
                "not_increasing": t.checked.not_increasing,
                "ahead_ms": t.checked.max_ahead_ms,
                "note": meta.threads_note,
            })
        }
        None => Value::Null,
    };

    json!({
        "key": meta.key,
        "name": meta.name,
        "library": meta.library,
        "flakery": meta.flakery,
        "config": meta.config,
        "layout": meta.layout,
        "ceiling_per_s": meta.ceiling_per_s,
        "note": meta.note,
        "per_call": per_call,
        "sustained": sustained,
        "batch": batch,
        "threads": threads,
    })
}

/// Runs this binary again to make one batch in a fresh process, so that its peak RSS is the
/// batch's.
fn batch_in_child(key: &str, plan: Plan) -> Value {
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(exe)
        .env("BENCH_CHILD", key)
        .env("BENCH_SMOKE", if plan.smoke { "1" } else { "0" })
        .output()
        .expect("child");
    if !out.status.success() {
        return json!({ "error": String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| json!({ "error": e.to_string() }))
}

/// In the child: one batch of the generator `key`, best of `batch_repeat`, and its checks.
fn child<P: Peer>(plan: Plan) -> Value {
    let meta = P::META;
    let n = meta.batch_cap.map_or(plan.batch, |cap| cap.min(plan.batch));
    let mut g = P::make();
    // Warm the code path (and for the clock threads, start them) with a few IDs first.
    for _ in 0..10 {
        P::next(&mut g);
    }
    // The first batch gives the memory figure (one batch alive); the others only time.
    let rss_before = max_rss_bytes();
    let start = Instant::now();
    let first = std::hint::black_box(P::batch(&mut g, n));
    let mut best = start.elapsed().as_secs_f64();
    let clock_after = now_ms();
    let growth = max_rss_bytes().saturating_sub(rss_before);
    for _ in 1..plan.batch_repeat {
        let start = Instant::now();
        let again = std::hint::black_box(P::batch(&mut g, n));
        best = best.min(start.elapsed().as_secs_f64());
        drop(again);
    }
    let ids = P::ids(first);
    let checked = check(&ids, P::ts, clock_after);
    let api = if meta.flakery {
        "next_ids(n)"
    } else {
        "a loop into a Vec"
    };
    json!({
        "n": n,
        "api": api,
        "repeat": plan.batch_repeat,
        "ms": best * 1e3,
        "ns_per_id": best * 1e9 / n as f64,
        "rss_growth_bytes": growth,
        "rss_note": "growth of a fresh process's peak RSS over its first batch (the library's own ID type in a Vec; the checks run on that batch)",
        "bytes_per_id": growth as f64 / n as f64,
        "duplicates": checked.duplicates,
        "not_increasing": checked.not_increasing,
        "ahead_ms": checked.max_ahead_ms,
    })
}

/// flakery borrow in a plain loop, no bursts: the figure that the C ABI's loop is set beside.
fn tight_borrow(plan: Plan) -> Value {
    let g = FlakeryBorrow::make();
    let mut best = f64::INFINITY;
    let rounds = if plan.smoke { 1 } else { 5 };
    let mut sink = 0i64;
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..plan.tight_calls {
            sink ^= std::hint::black_box(g.next_id().expect("next_id"));
        }
        best = best.min(start.elapsed().as_nanos() as f64 / plan.tight_calls as f64);
    }
    std::hint::black_box(sink);
    json!({
        "ns": best,
        "calls": plan.tight_calls,
        "rounds": rounds,
        "method": "flakery borrow (max_borrow_ms 86,400,000) next_id in a plain loop, best of the rounds; borrow never waits, so no bursts are needed",
    })
}

macro_rules! peers {
    ($m:ident, $($p:ty),+ $(,)?) => { $m!($($p),+) };
}

macro_rules! all_peers {
    ($m:ident) => {
        peers!(
            $m,
            FlakeryBorrow,
            FlakeryWait,
            Snowflaked,
            RsSnowflake,
            Ferroid,
            Sonyflake,
            UuidV7,
            Ulid
        )
    };
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs this without it: then smoke.
    // A child process takes its parent's word (BENCH_SMOKE) alone.
    let child_key = std::env::var("BENCH_CHILD").ok();
    let smoke = std::env::var("BENCH_SMOKE").is_ok_and(|v| v == "1")
        || (child_key.is_none() && !std::env::args().any(|a| a == "--bench"));
    let plan = Plan::new(smoke);

    if let Some(key) = child_key {
        macro_rules! dispatch {
            ($($p:ty),+) => {
                $(if key == <$p as Peer>::META.key {
                    println!("{}", child::<$p>(plan));
                    return;
                })+
            };
        }
        all_peers!(dispatch);
        eprintln!("no generator {key}");
        std::process::exit(2);
    }

    let load_before = load_average();
    let started = now_ms();
    let mut c = Criterion::default()
        .warm_up_time(plan.warm_up)
        .measurement_time(plan.measurement)
        .sample_size(plan.samples)
        .nresamples(10_000)
        .without_plots();
    let mut generators = Vec::new();
    macro_rules! run {
        ($($p:ty),+) => {
            $(generators.push(measure::<$p>(&mut c, plan));)+
        };
    }
    all_peers!(run);
    let tight = tight_borrow(plan);
    let doc = json!({
        "language": "rust",
        "mode": if smoke { "smoke" } else { "full" },
        "started_unix_ms": started,
        "seconds": (now_ms() - started) as f64 / 1e3,
        "load_before": load_before,
        "load_after": load_average(),
        "generators": generators,
        "core_tight_borrow": tight,
    });
    let text = serde_json::to_string_pretty(&doc).expect("json");
    match std::env::var("BENCH_OUT") {
        Ok(path) => std::fs::write(&path, text + "\n").expect("write BENCH_OUT"),
        Err(_) => println!("{text}"),
    }
}

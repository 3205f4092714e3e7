//! flakery beside the Rust crates a user would otherwise pick, in one run:
//! `bash bench/run.sh` (all languages), or just this part:
//! `BENCH_OUT=/tmp/rust.json cargo bench -p flakery-bench --bench peers`.
//!
//! Per call: criterion, with `iter_custom` timing bursts of at most 1,000 calls that start right
//! after a millisecond boundary (200 calls after a 10 ms boundary for sonyflake), so no layout
//! runs out of sequence numbers inside a timed burst; the figure is the median over criterion's
//! samples. The other figures (sustained, batch, two threads) are taken by `flakery_bench`'s
//! harness; each batch runs in a fresh child process (this binary again) for its peak RSS.
//! `BENCH_SMOKE=1` makes every count tiny (CI runs that, and asserts no timing);
//! `BENCH_ONLY=flakery-borrow,ferroid` measures only the generators of those keys (to compare
//! a few, run after run, on a busy machine; the table wants them all).

mod flakery;
mod measure;
mod peer;
mod plan;
mod snowflakes;
mod wide;

use criterion::Criterion;
use flakery_bench::{load_average, now_ms};
use serde_json::json;

use crate::flakery::{FlakeryBorrow, FlakeryWait};
use crate::measure::{child, measure, tight_borrow};
use crate::peer::Peer;
use crate::plan::Plan;
use crate::snowflakes::{Ferroid, RsSnowflake, Snowflaked, Sonyflake};
use crate::wide::{Ulid, UuidV7};

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
    let only = std::env::var("BENCH_ONLY").ok();
    let wanted = |key: &str| {
        only.as_deref()
            .is_none_or(|keys| keys.split(',').any(|k| k == key))
    };
    let mut generators = Vec::new();
    macro_rules! run {
        ($($p:ty),+) => {
            $(if wanted(<$p as Peer>::META.key) {
                generators.push(measure::<$p>(&mut c, plan));
            })+
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

//! The measurements of one generator: per call (criterion), sustained, a batch in a child
//! process (for its peak RSS), two threads; and flakery's tight loop.

use std::cell::RefCell;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use flakery_bench::{check, max_rss_bytes, median, now_ms, sustained, time_in_bursts, two_threads};
use serde_json::{json, Value};

use crate::flakery::FlakeryBorrow;
use crate::peer::Peer;
use crate::plan::Plan;

/// Everything measured in the parent process for one generator.
pub fn measure<P: Peer>(c: &mut Criterion, plan: Plan) -> Value {
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
        // Below the ceiling no tick is used up, so no policy comes into play: 0 and 0 say
        // that flakery's `wait` and `borrow` rows timed the same hot path.
        "slow_path": P::slow_path(&g),
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
pub fn child<P: Peer>(plan: Plan) -> Value {
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
pub fn tight_borrow(plan: Plan) -> Value {
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

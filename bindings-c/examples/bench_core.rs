//! ns per `Generator::next_id` in Rust, the baseline for tests/c/bench.c (which makes the same
//! generator through the C ABI). Run both with `bash tests/c/bench.sh`.

use std::hint::black_box;
use std::time::Instant;

fn main() -> Result<(), flakery_core::Error> {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000_000);
    let generator = flakery_core::Generator::builder()
        .layout_spec("time:41,sequence:22;epoch=1288834974657")?
        .worker_id(0)
        .build()?;
    let mut best = f64::MAX;
    let mut sum = 0i64;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..calls {
            sum ^= black_box(generator.next_id()?);
        }
        best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    println!(
        "rust core next_id:     {best:.2} ns/call (best of 5 x {calls}) [{}]",
        sum & 1
    );
    Ok(())
}

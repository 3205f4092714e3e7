//! A fixed number of calls of one generator on one thread, for instruction counts under
//! callgrind (docs/benchmarks.md, "Instructions per call"):
//! `cargo build --release -p flakery-bench --example calls`, then
//! `valgrind --tool=callgrind target/release/examples/calls flakery 1000000` and again with
//! 2000000; the difference over 1,000,000 is the instructions per call, start-up excluded.
//! Generators: `flakery` (wait, the default), `flakery-borrow`, `ferroid` (atomic), as
//! configured in benches/peers.

use std::hint::black_box;

type Ferroid = ferroid::generator::AtomicSnowflakeGenerator<
    ferroid::id::SnowflakeTwitterId,
    ferroid::time::MonotonicClock<1>,
>;

fn flakery(policy: flakery::SequencePolicy) -> flakery::Generator {
    flakery::Generator::builder()
        .worker_id(1)
        .sequence_policy(policy)
        .max_borrow_ms(24 * 3_600_000)
        .build()
        .expect("flakery generator")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "flakery".into());
    let calls: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let last = match which.as_str() {
        "flakery" | "flakery-borrow" => {
            let policy = if which == "flakery" {
                flakery::SequencePolicy::Wait
            } else {
                flakery::SequencePolicy::Borrow
            };
            let g = flakery(policy);
            let mut last = 0;
            for _ in 0..calls {
                last = black_box(g.next_id().expect("next_id")) as u64;
            }
            last
        }
        "ferroid" => {
            let clock =
                ferroid::time::MonotonicClock::<1>::with_epoch(ferroid::time::TWITTER_EPOCH);
            let g = Ferroid::new(1, clock);
            let mut last = 0;
            for _ in 0..calls {
                last = black_box(g.next_id(|_| std::hint::spin_loop()).to_raw());
            }
            last
        }
        other => {
            eprintln!("no generator {other}: flakery, flakery-borrow or ferroid");
            std::process::exit(2);
        }
    };
    println!("{last}");
}

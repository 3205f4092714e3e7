//! A fixed number of `next_id` calls on one thread, for instruction counts under callgrind:
//! `cargo build --release -p flakery --example calls`, then
//! `valgrind --tool=callgrind target/release/examples/calls 1000000` and again with 2000000;
//! the difference over 1,000,000 is the instructions per call, start-up excluded.

use flakery::Generator;

fn main() -> Result<(), flakery::Error> {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let generator = Generator::builder().worker_id(1).build()?;
    let mut last = 0;
    for _ in 0..calls {
        last = std::hint::black_box(generator.next_id()?);
    }
    println!("{last}");
    Ok(())
}

//! IDs per second from one thread for one second, against the layout's ceiling:
//! `cargo run --release -p flakery --example sustained [wait|borrow]`.

use std::time::{Duration, Instant};

use flakery::{Generator, SequencePolicy};

fn main() -> Result<(), flakery::Error> {
    let policy = match std::env::args().nth(1).as_deref() {
        Some("borrow") => SequencePolicy::Borrow,
        _ => SequencePolicy::Wait,
    };
    let generator = Generator::builder()
        .worker_id(1)
        .sequence_policy(policy)
        .build()?;
    let ceiling = generator.layout().capacity().ids_per_second;
    let start = Instant::now();
    let mut count = 0u64;
    let mut last = 0;
    while start.elapsed() < Duration::from_secs(1) {
        for _ in 0..1024 {
            let id = generator.next_id()?;
            assert!(id > last);
            last = id;
        }
        count += 1024;
    }
    let rate = count as f64 / start.elapsed().as_secs_f64();
    println!(
        "{} IDs/s, {:.2}% of the ceiling of {ceiling}",
        rate as u64,
        100.0 * rate / ceiling as f64
    );
    Ok(())
}

//! The generator under real threads and under a fake clock stepped backwards and forwards.

mod clock_steps;
mod closing;
mod layout_limits;
mod state_word;

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use flakery::{decode, ErrorCode, FakeClock, Generator, Layout, SequencePolicy, SlowPathCounts};

const T0: i64 = 1_700_000_000_000;

fn fake(clock: &FakeClock) -> flakery::Builder<FakeClock> {
    Generator::builder().worker_id(1).clock(clock.clone())
}

fn assert_increasing(ids: &[i64]) {
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "{} then {}", pair[0], pair[1]);
    }
}

#[test]
fn eight_threads_share_one_generator_without_duplicates() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 500_000;
    let generator = Arc::new(
        Generator::builder()
            .worker_id(7)
            .datacenter_id(3)
            .build()
            .unwrap(),
    );
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let generator = Arc::clone(&generator);
            std::thread::spawn(move || {
                let mut ids = Vec::with_capacity(PER_THREAD);
                for _ in 0..PER_THREAD {
                    ids.push(generator.next_id().unwrap());
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::with_capacity(THREADS * PER_THREAD);
    for handle in handles {
        let ids = handle.join().unwrap();
        assert_increasing(&ids);
        all.extend(ids);
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(
        all.len(),
        THREADS * PER_THREAD,
        "duplicate IDs across threads"
    );
    let d = decode(all[0], generator.layout()).unwrap();
    assert_eq!((d.datacenter_id, d.worker_id), (3, 7));
}

#[test]
fn batches_from_threads_interleave_without_duplicates() {
    let generator = Arc::new(
        Generator::builder()
            .worker_id(1)
            .sequence_policy(SequencePolicy::Borrow)
            .build()
            .unwrap(),
    );
    // Each thread runs long (a few hundred ms) and all start together, so their batches
    // really contend for the generator's state.
    let start = Arc::new(std::sync::Barrier::new(4));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let generator = Arc::clone(&generator);
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                let mut ids = Vec::new();
                for _ in 0..40 {
                    for n in [1, 7, 4096, 5000, 20_000] {
                        let batch = generator.next_ids(n).unwrap();
                        assert_eq!(batch.len(), n);
                        ids.extend(batch);
                        ids.push(generator.next_id().unwrap());
                    }
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for handle in handles {
        let ids = handle.join().unwrap();
        assert_increasing(&ids);
        all.extend(ids);
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
}

#[test]
fn ids_carry_the_clock_time_and_node() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).datacenter_id(2).build().unwrap();
    let id = generator.next_id().unwrap();
    let d = decode(id, &Layout::twitter()).unwrap();
    assert_eq!(d.timestamp_ms, T0);
    assert_eq!((d.datacenter_id, d.worker_id, d.sequence), (2, 1, 0));
    assert_eq!(
        decode(generator.next_id().unwrap(), &Layout::twitter())
            .unwrap()
            .sequence,
        1
    );
}

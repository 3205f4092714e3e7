//! The generator under real threads and under a fake clock stepped backwards and forwards.

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

#[test]
fn wait_policy_waits_for_the_next_tick() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).build().unwrap();
    let ids = generator.next_ids(4096 * 3).unwrap();
    assert_increasing(&ids);
    // The fake clock only moves when the generator waits on it: two waits of 1 ms.
    assert_eq!(clock.waits(), vec![1, 1]);
    let last = decode(*ids.last().unwrap(), generator.layout()).unwrap();
    assert_eq!((last.timestamp_ms, last.sequence), (T0 + 2, 4095));
    assert_eq!(
        generator.slow_path_counts(),
        SlowPathCounts {
            sequence_waits: 2,
            ticks_borrowed: 0
        }
    );
    // One call that waits is one wait, however long; one that need not wait is none.
    generator.next_id().unwrap();
    clock.advance(1);
    generator.next_id().unwrap();
    assert_eq!(generator.slow_path_counts().sequence_waits, 3);
}

#[test]
fn borrow_policy_uses_future_ticks_up_to_its_bound() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock)
        .sequence_policy(SequencePolicy::Borrow)
        .max_borrow_ms(5)
        .build()
        .unwrap();
    // 6 ticks' worth: the clock's own tick and 5 borrowed, without waiting.
    let ids = generator.next_ids(4096 * 6).unwrap();
    assert!(clock.waits().is_empty(), "waited: {:?}", clock.waits());
    let last = decode(*ids.last().unwrap(), generator.layout()).unwrap();
    assert_eq!(last.timestamp_ms, T0 + 5);
    assert_eq!(
        generator.slow_path_counts(),
        SlowPathCounts {
            sequence_waits: 0,
            ticks_borrowed: 5
        }
    );
    // The next one is past the bound: it waits for the clock, then borrows again.
    generator.next_id().unwrap();
    assert_eq!(clock.waits(), vec![1]);
    assert_eq!(
        generator.slow_path_counts(),
        SlowPathCounts {
            sequence_waits: 1,
            ticks_borrowed: 6
        }
    );
}

#[test]
fn small_step_back_continues_without_duplicates() {
    for step_ms in [1, 500] {
        let clock = FakeClock::new(T0);
        let generator = fake(&clock).build().unwrap();
        let before = generator.next_ids(10).unwrap();
        clock.set(T0 - step_ms);
        // Within the 1 s tolerance: IDs go on from the last tick, never below it...
        let after = generator.next_ids(4096).unwrap();
        let mut all = before.clone();
        all.extend(&after);
        assert_increasing(&all);
        // ...and once that tick is used up the generator waits for the clock to return.
        let first_past = decode(after[4096 - 10], generator.layout()).unwrap();
        assert_eq!(first_past.timestamp_ms, T0 + 1);
        assert_eq!(clock.waits(), vec![step_ms + 1], "step {step_ms}");
    }
}

#[test]
fn large_step_back_is_refused_with_its_size() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).build().unwrap();
    let before = generator.next_id().unwrap();
    clock.set(T0 - 10_000);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockMovedBackwards);
    assert!(err.message().contains("10000 ms"), "{err}");
    assert!(clock.waits().is_empty());
    // Once the clock is back, generation resumes above the last ID.
    clock.set(T0 + 1);
    assert!(generator.next_id().unwrap() > before);
}

#[test]
fn tolerance_is_configurable() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).backwards_tolerance_ms(0).build().unwrap();
    generator.next_id().unwrap();
    clock.set(T0 - 1);
    assert_eq!(
        generator.next_id().unwrap_err().code(),
        ErrorCode::ClockMovedBackwards
    );
}

#[test]
fn step_forward_jumps_ahead() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).build().unwrap();
    let before = generator.next_id().unwrap();
    clock.set(T0 + 3_600_000);
    let after = generator.next_id().unwrap();
    assert!(after > before);
    assert_eq!(
        decode(after, generator.layout()).unwrap().timestamp_ms,
        T0 + 3_600_000
    );
}

#[test]
fn random_sequence_start_stays_in_the_lower_half_and_increases() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).random_sequence_start(true).build().unwrap();
    let mut starts = std::collections::HashSet::new();
    let mut previous = 0;
    for i in 0..64 {
        clock.set(T0 + i);
        let id = generator.next_id().unwrap();
        assert!(id > previous);
        previous = id;
        let seq = decode(id, generator.layout()).unwrap().sequence;
        assert!(seq < 2048);
        starts.insert(seq);
    }
    assert!(starts.len() > 32, "starts barely vary: {starts:?}");
}

#[test]
fn baidu_preset_is_exhausted_today() {
    let generator = Generator::builder()
        .layout(Layout::preset("baidu").unwrap())
        .worker_id(1)
        .build()
        .unwrap();
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::TimeExhausted);
    assert!(err.message().contains("2024-11-20"), "{err}");
    assert_eq!(
        generator.next_ids(3).unwrap_err().code(),
        ErrorCode::TimeExhausted
    );
}

#[test]
fn time_exhaustion_never_wraps() {
    let layout = Layout::parse("time:4,sequence:2;epoch=0;unit=s").unwrap();
    let clock = FakeClock::new(0);
    let generator = Generator::builder()
        .layout(layout.clone())
        .lease(Box::new(flakery::FixedNode::new(
            Default::default(),
            flakery::NodeSource::Explicit,
        )))
        .clock(clock.clone())
        .build()
        .unwrap();
    let ids = generator.next_ids(64).unwrap();
    assert_increasing(&ids);
    assert_eq!(*ids.last().unwrap(), 63);
    assert_eq!(
        generator.next_id().unwrap_err().code(),
        ErrorCode::TimeExhausted
    );
    clock.set(16_000);
    assert_eq!(
        generator.next_id().unwrap_err().code(),
        ErrorCode::TimeExhausted
    );
}

/// A wide sequence leaves few bits for the tick in the generator's state: a clock far past
/// the layout's end must still be refused, not shifted out of the state and wrapped.
#[test]
fn a_clock_far_past_the_end_of_a_wide_sequence_layout_is_refused() {
    for spec in [
        "time:20,sequence:43;epoch=0",
        "time:10,worker:10,sequence:43;epoch=0",
    ] {
        let generator = Generator::builder()
            .layout(Layout::parse(spec).unwrap())
            .worker_id(0)
            .sequence_policy(SequencePolicy::Borrow)
            .build()
            .unwrap();
        for _ in 0..1000 {
            let err = generator.next_id().unwrap_err();
            assert_eq!(err.code(), ErrorCode::TimeExhausted, "{spec}: {err}");
        }
        assert_eq!(
            generator.next_ids(100).unwrap_err().code(),
            ErrorCode::TimeExhausted,
            "{spec}"
        );
        let clock = FakeClock::new(i64::MAX / 2);
        let generator = Generator::builder()
            .layout(Layout::parse(spec).unwrap())
            .worker_id(0)
            .clock(clock)
            .build()
            .unwrap();
        assert_eq!(
            generator.next_id().unwrap_err().code(),
            ErrorCode::TimeExhausted,
            "{spec}"
        );
    }
    // Running when the time runs out: the hot path, with a limit granted, must refuse a tick
    // that would wrap in the state (2^21 ticks << 43 bits is 2^64).
    let layout = Layout::parse("time:20,sequence:43;epoch=0").unwrap();
    let clock = FakeClock::new((1 << 20) - 100);
    let generator = Generator::builder()
        .layout(layout)
        .worker_id(0)
        .clock(clock.clone())
        .build()
        .unwrap();
    let last = generator.next_id().unwrap();
    clock.set((1 << 21) + 5);
    match generator.next_id() {
        Err(err) => assert_eq!(err.code(), ErrorCode::TimeExhausted),
        Ok(id) => panic!("{id} after {last}"),
    }
}

#[test]
fn a_time_field_at_bit_63_stops_before_the_sign_bit() {
    let layout = Layout::parse("time:2,worker:30,sequence:32;epoch=0;unit=s").unwrap();
    assert_eq!(layout.max_tick(), 1);
    let clock = FakeClock::new(1_000);
    let generator = Generator::builder()
        .layout(layout)
        .clock(clock.clone())
        .worker_id(0)
        .build()
        .unwrap();
    assert!(generator.next_id().unwrap() > 0);
    clock.set(2_000);
    assert_eq!(
        generator.next_id().unwrap_err().code(),
        ErrorCode::TimeExhausted
    );
}

#[test]
fn constant_fields_are_stamped_and_checked() {
    let layout = Layout::preset("vesta-min-granularity").unwrap();
    let generator = Generator::builder()
        .layout(layout.clone())
        .worker_id(9)
        .field("method", 2)
        .build()
        .unwrap();
    let d = decode(generator.next_id().unwrap(), &layout).unwrap();
    assert_eq!(d.field("type"), Some(1)); // the preset's default
    assert_eq!(d.field("method"), Some(2));
    assert_eq!(d.field("version"), Some(0));
    assert_eq!(d.worker_id, 9);
    let bad = Generator::builder()
        .layout(layout.clone())
        .field("method", 4)
        .build();
    assert_eq!(bad.unwrap_err().code(), ErrorCode::InvalidArgument);
    let unknown = Generator::builder()
        .layout(layout.clone())
        .field("color", 1)
        .build();
    assert_eq!(unknown.unwrap_err().code(), ErrorCode::InvalidArgument);
    let negative = Generator::builder()
        .layout(layout)
        .field("version", 1)
        .worker_id(1)
        .build()
        .unwrap();
    assert_eq!(
        negative.next_id().unwrap_err().code(),
        ErrorCode::TimeExhausted
    );
}

/// A constant's default may set bit 63 as long as the generator's own value does not: only
/// the values the generator stamps are checked, whatever the node source.
#[test]
fn a_constant_set_to_zero_clears_a_default_at_bit_63() {
    let layout = Layout::parse("v:1=1,time:40,worker:10,sequence:13;epoch=1577836800000").unwrap();
    let generator = Generator::builder()
        .layout(layout.clone())
        .field("v", 0)
        .worker_id(3)
        .build()
        .unwrap();
    let d = decode(generator.next_id().unwrap(), &layout).unwrap();
    assert_eq!((d.field("v"), d.worker_id), (Some(0), 3));
}

#[test]
fn node_ids_must_fit_their_fields() {
    let err = Generator::builder().worker_id(32).build().unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(err.message().contains("worker_id 32"), "{err}");
    let err = Generator::builder()
        .layout(Layout::preset("instagram").unwrap())
        .datacenter_id(1)
        .build()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

#[test]
fn a_closed_generator_refuses() {
    let generator = Generator::builder().worker_id(1).build().unwrap();
    generator.next_id().unwrap();
    generator.close();
    assert_eq!(
        generator.next_id().unwrap_err().code(),
        ErrorCode::LeaseLost
    );
}

#[test]
fn try_next_id_does_not_block() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).build().unwrap();
    for _ in 0..4096 {
        assert!(generator.try_next_id().unwrap().is_some());
    }
    assert_eq!(generator.try_next_id().unwrap(), None);
    assert!(clock.waits().is_empty());
    assert_eq!(generator.slow_path_counts(), SlowPathCounts::default());
    clock.advance(1);
    assert!(generator.try_next_id().unwrap().is_some());
}

#[test]
fn try_next_id_fast_never_takes_the_slow_path() {
    let clock = FakeClock::new(T0);
    let generator = fake(&clock).build().unwrap();
    // Nothing granted yet: only the slow path asks the lease.
    assert_eq!(generator.try_next_id_fast(), None);
    let first = generator.next_id().unwrap();
    let mut ids = vec![first];
    while let Some(id) = generator.try_next_id_fast() {
        ids.push(id);
    }
    assert_eq!(ids.len(), 4096, "the rest of the tick, then None");
    assert_increasing(&ids);
    assert!(clock.waits().is_empty());
    clock.advance(1);
    let next = generator
        .try_next_id_fast()
        .expect("a new tick is the hot path");
    assert!(next > *ids.last().unwrap());
}

/// A lease that, on its second grant, closes the generator's fence while answering: as a
/// ZooKeeper lease does when it learns of a disconnect while a refresh is under way.
#[derive(Debug, Default)]
struct LostDuringGrant {
    fence: std::sync::Mutex<Option<flakery::Fence>>,
    grants: Arc<AtomicU64>,
}

impl flakery::NodeLease for LostDuringGrant {
    fn source(&self) -> flakery::NodeSource {
        flakery::NodeSource::ZooKeeper
    }

    fn grant(&self, want_ms: i64, _now_ms: i64) -> flakery::Result<flakery::Grant> {
        if self.grants.fetch_add(1, SeqCst) == 1 {
            self.fence.lock().unwrap().as_ref().unwrap().close();
        }
        Ok(flakery::Grant {
            node: Default::default(),
            floor_ms: i64::MIN,
            until_ms: want_ms + 1000,
        })
    }

    fn after_fork(&self) -> flakery::Result<Box<dyn flakery::NodeLease>> {
        unreachable!("the test does not fork")
    }

    fn attach(&self, fence: flakery::Fence) {
        *self.fence.lock().unwrap() = Some(fence);
    }
}

/// A fence closed while a grant is being answered stays closed: the generator asks again
/// before it issues an ID, instead of trusting the answer of a lease being lost.
#[test]
fn a_fence_closed_during_a_grant_is_not_reopened_by_it() {
    let lease = LostDuringGrant::default();
    let grants = Arc::clone(&lease.grants);
    let generator = Generator::builder()
        .lease(Box::new(lease))
        .clock(FakeClock::new(1_700_000_000_000))
        .build()
        .unwrap();
    // Grant 1 was made at build time; the first ID asks for grant 2, which closes the fence
    // as it answers, so the generator must ask for grant 3 before issuing.
    generator.next_id().unwrap();
    assert_eq!(grants.load(SeqCst), 3);
    generator.next_id().unwrap();
    assert_eq!(grants.load(SeqCst), 3);
}

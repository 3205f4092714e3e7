//! The generator under a fake clock: waiting and borrowing at the end of a tick, steps back
//! within and past the tolerance, steps forward.

use super::*;

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
            ticks_borrowed: 0,
            ..SlowPathCounts::default()
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
            ticks_borrowed: 5,
            ..SlowPathCounts::default()
        }
    );
    // The next one is past the bound: it waits for the clock, then borrows again.
    generator.next_id().unwrap();
    assert_eq!(clock.waits(), vec![1]);
    assert_eq!(
        generator.slow_path_counts(),
        SlowPathCounts {
            sequence_waits: 1,
            ticks_borrowed: 6,
            ..SlowPathCounts::default()
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

//! The layout's limits: sequence starts, time exhausted, bit 63, constant fields, node IDs
//! that must fit their fields.

use super::*;

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

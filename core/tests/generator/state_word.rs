//! The state word is the last ID issued, node and constant bits included, so the hot path
//! makes the next ID by adding one sequence step to it: what it carries must always be this
//! generator's own bits and the clock's tick.

use super::*;
use flakery::node::{FixedNode, NodeId, NodeSource};
use flakery::SharedWord;

fn fixed(worker_id: u64) -> Box<FixedNode> {
    Box::new(FixedNode::new(
        NodeId {
            datacenter_id: 0,
            worker_id,
        },
        NodeSource::Explicit,
    ))
}

/// Two generators of different node IDs on one shared word: each builds on the state the
/// other left, and must still stamp its own node ID (and never repeat or lower an ID).
#[test]
fn two_node_ids_on_one_shared_word_each_stamp_their_own() {
    let word: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    let clock = FakeClock::new(T0);
    let build = |worker_id| {
        Generator::builder()
            .clock(clock.clone())
            .lease(fixed(worker_id))
            .build_on(SharedWord::new(word))
            .unwrap()
    };
    let (one, two) = (build(1), build(2));
    let mut ids = Vec::new();
    for round in 0..200 {
        for (generator, worker_id) in [(&one, 1), (&two, 2)] {
            // Two calls each: the second builds on the generator's own state (the hot path).
            for _ in 0..2 {
                let id = generator.next_id().unwrap();
                let d = decode(id, &Layout::twitter()).unwrap();
                assert_eq!(d.worker_id, worker_id, "round {round}: {d:?}");
                ids.push(id);
            }
        }
    }
    assert_increasing(&ids);
}

/// Constants and a fixed node ID above the time field sit in every ID the hot path makes,
/// and its time is the clock's.
#[test]
fn fields_above_time_are_stamped_on_the_hot_path() {
    let layout =
        Layout::parse("kind:2=2,worker:4,time:41,sequence:12;epoch=1288834974657").unwrap();
    let clock = FakeClock::new(T0);
    let generator = Generator::builder()
        .layout(layout.clone())
        .worker_id(5)
        .clock(clock.clone())
        .build()
        .unwrap();
    generator.next_id().unwrap(); // the first asks the lease: the slow path
    for step in 0..50 {
        for _ in 0..3 {
            let id = generator
                .try_next_id_fast()
                .expect("the hot path takes the clock's tick");
            let d = decode(id, &layout).unwrap();
            assert_eq!(d.timestamp_ms, T0 + step, "{d:?}");
            assert_eq!((d.field("kind"), d.worker_id), (Some(2), 5), "{d:?}");
        }
        clock.advance(1);
    }
}

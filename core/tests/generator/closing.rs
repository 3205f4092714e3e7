//! A closed generator, the non-blocking calls, and a fence closed during a grant.

use super::*;

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

//! A lease that publishes its grants into the generator's fence
//! (docs/spec.md#the-generators-slow-path): the generator takes the published grant, asks
//! only when none covers the tick it wants, waits for the next publication on the fence's
//! condition variable and is woken by it, and a forked child never takes a grant published
//! for its parent. The keeper's own publication is checked on the fake clock in `keeper/`.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use flakery::{
    decode, Asked, ErrorCode, FakeClock, Fence, Generator, Grant, Layout, NodeId, NodeLease,
    NodeSource,
};

const T0: i64 = 1_700_000_000_000;

/// Long enough that only a generator that was never woken reaches it.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// A lease that publishes only what the test tells it to (or, with `answer_asks`, a grant for
/// its node at each ask), into the fence it was attached with, and records every ask.
#[derive(Debug, Clone)]
struct Publishing {
    worker_id: u64,
    answer_asks: bool,
    fence: Arc<Mutex<Option<Fence>>>,
    asks: Arc<Mutex<Vec<i64>>>,
    /// What each ask answers at once, when set (as a keeper does for a tick past its deadline).
    answer_now: Arc<Mutex<Option<Grant>>>,
}

impl Publishing {
    fn new(worker_id: u64, answer_asks: bool) -> Publishing {
        Publishing {
            worker_id,
            answer_asks,
            fence: Arc::default(),
            asks: Arc::default(),
            answer_now: Arc::default(),
        }
    }

    fn fence(&self) -> Option<Fence> {
        self.fence.lock().unwrap().clone()
    }

    fn grant(&self) -> Grant {
        Grant {
            node: NodeId {
                datacenter_id: 0,
                worker_id: self.worker_id,
            },
            floor_ms: i64::MIN,
            until_ms: i64::MAX,
        }
    }

    fn publish(&self) {
        self.fence().unwrap().publish(self.grant());
    }
}

impl NodeLease for Publishing {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn grant(&self, _want_ms: i64, _now_ms: i64) -> flakery::Result<Grant> {
        panic!("a lease that publishes is never asked for a grant directly");
    }

    fn publishes(&self) -> bool {
        true
    }

    fn ask(&self, want_ms: i64, _now_ms: i64) -> Asked {
        self.asks.lock().unwrap().push(want_ms);
        if let Some(grant) = *self.answer_now.lock().unwrap() {
            return Asked::Granted(grant);
        }
        if self.answer_asks {
            self.publish();
        }
        Asked::Within(ANSWER_WITHIN)
    }

    fn after_fork(&self) -> flakery::Result<Box<dyn NodeLease>> {
        // The child's own lease: another node ID, published only when the child asks.
        Ok(Box::new(Publishing::new(self.worker_id + 1, true)))
    }

    fn attach(&self, fence: Fence) {
        *self.fence.lock().unwrap() = Some(fence);
    }
}

/// A generator with nothing published waits in its constructor, holding no lock, and each
/// publication wakes it: one that does not cover the tick it wants sends it back to wait (a
/// second wait, counted before it begins), one that does lets it go on, with the published
/// node ID. Not woken, its wait would end only at its lease's bound (30 s), with
/// `coordinator_unavailable`. It asked once, and took the grant without asking again.
#[test]
fn a_waiting_generator_is_woken_by_each_publication() {
    let lease = Publishing::new(5, false);
    let building = {
        let lease = lease.clone();
        std::thread::spawn(move || {
            let generator = Generator::builder()
                .clock(FakeClock::new(T0))
                .lease(Box::new(lease))
                .build()?;
            let id = generator.next_id()?;
            Ok::<_, flakery::Error>((generator.slow_path_counts(), id))
        })
    };
    let waits = |count: u64| loop {
        if let Some(fence) = lease.fence() {
            if fence.grant_waits() == count {
                return fence;
            }
        }
        assert!(
            !building.is_finished(),
            "the generator stopped waiting before a publication that would wake it"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    let fence = waits(1);
    assert_eq!(lease.asks.lock().unwrap().as_slice(), &[T0]);
    fence.publish(Grant {
        until_ms: T0 - 1,
        ..lease.grant()
    });
    waits(2);
    lease.publish();
    let (counts, id) = building.join().unwrap().expect("woken by the publication");
    assert_eq!(decode(id, &Layout::twitter()).unwrap().worker_id, 5);
    assert_eq!((counts.grant_asks, counts.grant_waits), (1, 2));
}

/// A grant published before the fork is the parent's: the forked child's first ID is under the
/// node ID its own lease publishes, never the one published for its parent (which covers
/// every time there is).
#[test]
fn a_forked_child_never_takes_its_parents_published_grant() {
    let output = common::output(&mut common::rerun_as("forker"));
    assert_eq!(
        common::report(&output, "WORKERS"),
        "parent 5 child 6 parent 5"
    );
}

#[test]
fn child_entry_point() {
    if std::env::var(common::ROLE).as_deref() != Ok("forker") {
        return;
    }
    let layout = Layout::twitter();
    let worker = |id: flakery::Result<i64>| decode(id.unwrap(), &layout).unwrap().worker_id;
    let generator = Generator::builder()
        .clock(FakeClock::new(T0))
        .lease(Box::new(Publishing::new(5, true)))
        .build()
        .unwrap();
    let parent = worker(generator.next_id());
    let child = common::in_forked_child(|| worker(generator.next_id()).to_string());
    let after = worker(generator.next_id());
    println!("WORKERS parent {parent} child {child} parent {after}");
}

/// A lease that answers an ask at once with a grant that does not cover the tick (a tick past
/// its deadline, within its mark) has the generator refuse at once with `lease_lost`, as the
/// grant of a lease that does not publish would, never wait for a publication (30 s here, then
/// `coordinator_unavailable`). Caught when the generator treated that answer as a wait.
#[test]
fn a_grant_answered_at_once_that_does_not_cover_the_tick_is_refused_at_once() {
    let lease = Publishing::new(5, true);
    let generator = Generator::builder()
        .clock(FakeClock::new(T0))
        .lease(Box::new(lease.clone()))
        .build()
        .unwrap();
    let first = generator.next_id().unwrap();
    // The published grant ends; what the lease answers now ends before the next tick.
    let short = Grant {
        until_ms: T0 - 1,
        ..lease.grant()
    };
    lease.fence().unwrap().close();
    *lease.answer_now.lock().unwrap() = Some(short);
    let err = generator.next_id().unwrap_err();
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    assert!(err.message().contains("covers IDs only up to"), "{err}");
    assert_eq!(generator.slow_path_counts().grant_waits, 0);
    assert!(first > 0);
}

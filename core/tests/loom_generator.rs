//! The generator's concurrency under loom: every interleaving (to a preemption bound) of
//! threads issuing IDs while a lease publishes, withdraws and replaces its grant, changes the
//! node ID, the clock word advances, or the generator is closed. The models drive the real
//! generator (core/src/generator/sync.rs swaps its atomics, lock and condition variable for
//! loom's); the clock and the lease are the model's. Built only with RUSTFLAGS="--cfg loom":
//! `bash tests/model/loom.sh` (docs/development.md#loom-models).
#![cfg(loom)]

use std::sync::{Arc as StdArc, Mutex as StdMutex, OnceLock};
use std::time::Duration;

use flakery::{
    decode, Asked, Clock, Error, ErrorCode, Fence, Generator, Grant, Layout, NodeId, NodeLease,
    NodeSource, Result,
};
use loom::sync::atomic::{AtomicBool, AtomicI64, Ordering::*};
use loom::sync::Arc;
use loom::thread;

/// The model's "now": any Unix millisecond well inside the layout.
const T0: i64 = 1_700_000_000_000;

/// Four sequence numbers a tick, so that two threads use a tick up and take the slow path.
const LAYOUT: &str = "time:41,worker:10,sequence:2;epoch=1288834974657";

fn layout() -> Layout {
    Layout::parse(LAYOUT).expect("the model's layout")
}

fn worker(id: u64) -> NodeId {
    NodeId {
        datacenter_id: 0,
        worker_id: id,
    }
}

/// The clock: the precise reading, and the word the clock thread publishes, which the hot
/// path reads (`now_ms_at_hand`) and which lags the precise one, never leads it. A wait moves
/// the precise reading to its target, as time would have.
#[derive(Clone, Debug)]
struct ModelClock {
    precise: Arc<AtomicI64>,
    word: Arc<AtomicI64>,
}

impl ModelClock {
    fn at(ms: i64) -> ModelClock {
        ModelClock {
            precise: Arc::new(AtomicI64::new(ms)),
            word: Arc::new(AtomicI64::new(ms)),
        }
    }

    /// One millisecond of the clock thread: the clock moves, then the word follows it.
    fn tick(&self) {
        let now = self.precise.fetch_add(1, SeqCst) + 1;
        self.word.fetch_max(now, SeqCst);
    }
}

impl Clock for ModelClock {
    fn now_ms(&self) -> i64 {
        self.precise.load(SeqCst)
    }

    fn now_ms_coarse(&self) -> i64 {
        self.word.load(SeqCst)
    }

    fn wait_until_ms(&self, target_ms: i64) {
        self.precise.fetch_max(target_ms, SeqCst);
    }
}

/// What the model's lease saw: the fence it publishes into, and the release.
#[derive(Debug, Default)]
struct LeaseSide {
    fence: OnceLock<Fence>,
    released_at: OnceLock<i64>,
}

/// A lease kept by a driver (the model's thread) that publishes into the fence, as a
/// coordinator's keeper does: its first grant is published as it is attached; asked for more,
/// it answers through the fence (loom's condition variable never times out: every model
/// publishes a grant that covers what its threads want).
#[derive(Debug)]
struct ModelLease {
    first: Grant,
    side: StdArc<LeaseSide>,
}

impl NodeLease for ModelLease {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn grant(&self, _want_ms: i64, _now_ms: i64) -> Result<Grant> {
        unreachable!("a lease that publishes is never asked for a grant")
    }

    fn publishes(&self) -> bool {
        true
    }

    fn ask(&self, _want_ms: i64, _now_ms: i64) -> Asked {
        Asked::Within(Duration::from_secs(3600))
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        Err(Error::new(ErrorCode::LeaseLost, "no fork in a model"))
    }

    fn attach(&self, fence: Fence) {
        fence.publish(self.first);
        let _ = self.side.fence.set(fence);
    }

    fn release(&self, last_used_ms: i64) {
        let _ = self.side.released_at.set(last_used_ms);
    }
}

/// A grant as a trace shows it.
fn show(grant: &Grant) -> String {
    let floor = match grant.floor_ms {
        i64::MIN => "no floor".to_string(),
        ms => format!("after T0{:+} ms", ms - T0),
    };
    format!(
        "worker {} ({floor}, up to T0{:+} ms)",
        grant.node.worker_id,
        grant.until_ms - T0
    )
}

/// A grant of `node` for IDs after `floor_ms` up to `until_ms`.
fn grant(node: u64, floor_ms: i64, until_ms: i64) -> Grant {
    Grant {
        node: worker(node),
        floor_ms,
        until_ms,
    }
}

/// One execution's events in the order they happened (a std lock: loom runs the model's
/// threads one at a time, and none is held across a step of the model).
#[derive(Clone, Default)]
struct Trace(StdArc<StdMutex<Vec<String>>>);

impl Trace {
    fn note(&self, event: String) {
        self.0.lock().unwrap().push(event);
    }

    fn text(&self) -> String {
        self.0.lock().unwrap().join("\n  ")
    }
}

fn describe(id: i64) -> String {
    let d = decode(id, &layout()).expect("an ID of the layout");
    format!(
        "{id} (worker {}, T0{:+} ms, sequence {})",
        d.worker_id,
        d.timestamp_ms - T0,
        d.sequence
    )
}

/// An ID as a thread got it: whether the thread had seen the lease's withdrawal (or the
/// generator's close) before it called.
#[derive(Clone, Copy, Debug)]
struct Issued {
    id: i64,
    after_withdrawal: bool,
}

/// A thread's calls: the IDs it got, and the errors, each with whether `Generator::close` had
/// begun when the thread looked after the error.
#[derive(Default)]
struct Calls {
    ids: Vec<Issued>,
    errors: Vec<(ErrorCode, bool)>,
}

struct Model {
    generator: Arc<Generator<ModelClock>>,
    clock: ModelClock,
    side: StdArc<LeaseSide>,
    trace: Trace,
    /// Set by the closer before `Generator::close` begins (only `close_races_calls` closes).
    disturbed: Arc<AtomicBool>,
    /// Set by a driver once its withdrawal (or close) has returned.
    withdrawn: Arc<AtomicBool>,
}

impl Model {
    fn new(first: Grant) -> Model {
        let side = StdArc::new(LeaseSide::default());
        let clock = ModelClock::at(T0);
        let generator = Generator::builder()
            .layout(layout())
            .lease(Box::new(ModelLease {
                first,
                side: StdArc::clone(&side),
            }))
            .clock(clock.clone())
            .build()
            .expect("the model's generator builds");
        Model {
            generator: Arc::new(generator),
            clock,
            side,
            trace: Trace::default(),
            disturbed: Arc::new(AtomicBool::new(false)),
            withdrawn: Arc::new(AtomicBool::new(false)),
        }
    }

    fn fence(&self) -> Fence {
        self.side.fence.get().expect("attached").clone()
    }

    /// A thread that asks for `n` IDs and notes each answer.
    fn issuer(&self, name: &'static str, n: usize) -> thread::JoinHandle<Calls> {
        let (generator, trace, disturbed, withdrawn) = (
            Arc::clone(&self.generator),
            self.trace.clone(),
            Arc::clone(&self.disturbed),
            Arc::clone(&self.withdrawn),
        );
        thread::spawn(move || {
            let mut calls = Calls::default();
            for _ in 0..n {
                let after_withdrawal = withdrawn.load(Acquire);
                if after_withdrawal {
                    trace.note(format!("{name}: calls next_id, the withdrawal seen"));
                }
                match generator.next_id() {
                    Ok(id) => {
                        trace.note(format!("{name}: next_id -> {}", describe(id)));
                        calls.ids.push(Issued {
                            id,
                            after_withdrawal,
                        });
                    }
                    Err(e) => {
                        trace.note(format!("{name}: next_id -> error {}", e.code()));
                        // Read after the error: a close that caused it was begun before.
                        calls.errors.push((e.code(), disturbed.load(Acquire)));
                    }
                }
            }
            calls
        })
    }

    /// Every call issued: a lease that withdraws its grant and publishes another makes a
    /// call wait for the new one, never fail, so a model of a lease (no `Generator::close`)
    /// guarantees every call an ID, whatever the schedule.
    fn check_every_call_issued(&self, calls: &[Calls], per_thread: usize) {
        for c in calls {
            self.check(c.errors.is_empty() && c.ids.len() == per_thread, || {
                format!(
                    "a thread got {} of its {per_thread} IDs and the errors {:?} from a lease \
                     that only withdrew and replaced its grant",
                    c.ids.len(),
                    c.errors
                )
            });
        }
    }

    /// Fails the model with the execution's trace unless `ok`.
    fn check(&self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            panic!(
                "counterexample: {}\n  trace of this interleaving:\n  {}",
                what(),
                self.trace.text()
            );
        }
    }

    /// No ID twice; each thread's IDs increasing; every ID of a node within that node's
    /// grant; every ID of a later node in a later tick than every ID of an earlier one (no
    /// ID with one node's bits and another's state); and, when `replaced` names the node of
    /// the withdrawn grant, none of its IDs to a thread that saw the withdrawal.
    fn check_ids(&self, calls: &[Calls], grants: &[Grant], withdrawn_node: Option<u64>) {
        let layout = layout();
        let per_thread: Vec<&Vec<Issued>> = calls.iter().map(|c| &c.ids).collect();
        let all: Vec<Issued> = per_thread.iter().copied().flatten().copied().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                self.check(a.id != b.id, || {
                    format!("ID {} issued twice", describe(a.id))
                });
            }
        }
        for ids in &per_thread {
            for pair in ids.windows(2) {
                self.check(pair[0].id < pair[1].id, || {
                    format!(
                        "a thread's IDs decrease: {} then {}",
                        describe(pair[0].id),
                        describe(pair[1].id)
                    )
                });
            }
        }
        let mut last_tick_of: Vec<(u64, i64, i64)> = Vec::new(); // (worker, min ms, max ms)
        for issued in &all {
            let d = decode(issued.id, &layout).unwrap();
            let mut under = grants.iter().filter(|g| g.node.worker_id == d.worker_id);
            self.check(
                under.any(|g| g.floor_ms < d.timestamp_ms && d.timestamp_ms <= g.until_ms),
                || {
                    let shown: Vec<String> = grants.iter().map(show).collect();
                    format!(
                        "{} is outside every grant of its node: {}",
                        describe(issued.id),
                        shown.join(", ")
                    )
                },
            );
            if let Some(old) = withdrawn_node {
                self.check(!(issued.after_withdrawal && d.worker_id == old), || {
                    format!(
                        "{} was issued under the withdrawn grant to a thread that had seen \
                         the withdrawal",
                        describe(issued.id)
                    )
                });
            }
            match last_tick_of.iter_mut().find(|(w, ..)| *w == d.worker_id) {
                Some((_, lo, hi)) => {
                    *lo = (*lo).min(d.timestamp_ms);
                    *hi = (*hi).max(d.timestamp_ms);
                }
                None => last_tick_of.push((d.worker_id, d.timestamp_ms, d.timestamp_ms)),
            }
        }
        // Grants are listed in the order the lease published them.
        let order = |w: u64| grants.iter().position(|g| g.node.worker_id == w);
        for (w1, _, hi1) in &last_tick_of {
            for (w2, lo2, _) in &last_tick_of {
                if order(*w1) < order(*w2) {
                    self.check(hi1 < lo2, || {
                        format!(
                            "worker {w2} issued at T0{:+} ms, not after worker {w1}'s last \
                             tick (T0{:+} ms)",
                            lo2 - T0,
                            hi1 - T0
                        )
                    });
                }
            }
        }
    }
}

/// Runs `model` under every interleaving loom explores with at most `preemptions`
/// preemptions of a thread.
fn explore(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(model);
}

/// A grant published, withdrawn (the lease may be lost: `Fence::close`) and replaced by one
/// of the same node from a floor on, while two threads issue: the clock stays at T0, so the
/// threads use its tick up and wait, and want the next grant.
#[test]
fn grant_withdrawn_and_replaced() {
    explore(2, || {
        let first = grant(1, i64::MIN, T0);
        let next = grant(1, T0, T0 + 5);
        let m = Model::new(first);
        let a = m.issuer("A", 2);
        let b = m.issuer("B", 2);
        let (fence, trace, withdrawn) = (m.fence(), m.trace.clone(), Arc::clone(&m.withdrawn));
        let driver = thread::spawn(move || {
            fence.close();
            trace.note("lease: withdraws its grant (Fence::close)".into());
            withdrawn.store(true, Release);
            fence.publish(next);
            trace.note("lease: publishes worker 1 from T0+1 ms to T0+5 ms".into());
        });
        let ids = [a.join().unwrap(), b.join().unwrap()];
        driver.join().unwrap();
        // The replacement's floor is T0: an ID at T0 after the withdrawal was seen is the
        // withdrawn grant's.
        let late_at_t0 = ids
            .iter()
            .flat_map(|c| &c.ids)
            .find(|i| i.after_withdrawal && decode(i.id, &layout()).unwrap().timestamp_ms == T0);
        m.check(late_at_t0.is_none(), || {
            format!(
                "{} was issued under the withdrawn grant to a thread that had seen the \
                 withdrawal",
                describe(late_at_t0.unwrap().id)
            )
        });
        m.check_ids(&ids, &[first, next], None);
        m.check_every_call_issued(&ids, 2);
    });
}

/// The node ID changes (the lease closes the fence, then publishes `next`, a grant of
/// worker 2) while two threads issue under worker 1, and the clock moves on, after the change
/// or just before it: a call may take the new tick on the hot path, which loads the node
/// bits, while another applies the change.
fn node_change(next: Grant, tick_first: bool) {
    let first = grant(1, i64::MIN, T0 + 5);
    let m = Model::new(first);
    let a = m.issuer("A", 2);
    let b = m.issuer("B", 2);
    let (fence, trace, withdrawn) = (m.fence(), m.trace.clone(), Arc::clone(&m.withdrawn));
    let clock = m.clock.clone();
    let driver = thread::spawn(move || {
        let tick = || {
            clock.tick();
            trace.note("clock: T0+1 ms".into());
        };
        if tick_first {
            tick();
        }
        fence.close();
        trace.note("lease: withdraws worker 1's grant (Fence::close)".into());
        withdrawn.store(true, Release);
        fence.publish(next);
        trace.note(format!("lease: publishes {}", show(&next)));
        if !tick_first {
            tick();
        }
    });
    let ids = [a.join().unwrap(), b.join().unwrap()];
    driver.join().unwrap();
    m.check_ids(&ids, &[first, next], Some(1));
    m.check_every_call_issued(&ids, 2);
}

/// Worker 2 comes with no floor: the next ID must still go to a tick after worker 1's last.
#[test]
fn node_change_races_calls() {
    explore(2, || node_change(grant(2, i64::MIN, T0 + 5), false));
}

/// Worker 2 comes with a floor (its last holder used T0+1 ms) that the clock reaches just
/// before the change: no ID of worker 2 at or before it.
#[test]
fn node_change_with_a_floor_races_calls() {
    explore(2, || node_change(grant(2, T0 + 1, T0 + 5), true));
}

/// The clock word advances (the clock thread's millisecond) past the end of the first grant,
/// and the lease publishes the next one after it (one thread: a keeper that renews as time
/// passes), while two threads issue.
#[test]
fn clock_word_advances() {
    explore(2, || {
        let first = grant(1, i64::MIN, T0);
        let next = grant(1, i64::MIN, T0 + 5);
        let m = Model::new(first);
        let a = m.issuer("A", 2);
        let b = m.issuer("B", 2);
        let (clock, fence, trace) = (m.clock.clone(), m.fence(), m.trace.clone());
        let time = thread::spawn(move || {
            clock.tick();
            trace.note("clock: T0+1 ms".into());
            fence.publish(next);
            trace.note("lease: publishes worker 1 up to T0+5 ms".into());
        });
        let ids = [a.join().unwrap(), b.join().unwrap()];
        time.join().unwrap();
        m.check_ids(&ids, &[first, next], None);
        m.check_every_call_issued(&ids, 2);
    });
}

/// `Generator::close` races two threads: every ID issued is at or before the time the
/// release was given (a persisted mark may be lowered to it), and a thread that saw the close
/// returned gets no ID.
#[test]
fn close_races_calls() {
    explore(2, || {
        let first = grant(1, i64::MIN, T0 + 5);
        let m = Model::new(first);
        let a = m.issuer("A", 3);
        let b = m.issuer("B", 2);
        let (generator, trace, disturbed, withdrawn) = (
            Arc::clone(&m.generator),
            m.trace.clone(),
            Arc::clone(&m.disturbed),
            Arc::clone(&m.withdrawn),
        );
        let closer = thread::spawn(move || {
            disturbed.store(true, Release);
            generator.close();
            trace.note("closer: Generator::close returned".into());
            withdrawn.store(true, Release);
        });
        let ids = [a.join().unwrap(), b.join().unwrap()];
        closer.join().unwrap();
        let released_at = *m.side.released_at.get().expect("released");
        for issued in ids.iter().flat_map(|c| &c.ids) {
            let ms = decode(issued.id, &layout()).unwrap().timestamp_ms;
            m.check(ms <= released_at, || {
                format!(
                    "{} is later than the time given with the release (T0{:+} ms)",
                    describe(issued.id),
                    released_at - T0
                )
            });
        }
        m.check_ids(&ids, &[first], Some(1));
        // Up to the close, every call issues (the grant covers them all); from its start a
        // call may get an ID or `lease_lost`, whichever the schedule gives: only that is
        // left open.
        for (code, after_close_began) in ids.iter().flat_map(|c| &c.errors) {
            m.check(*after_close_began && *code == ErrorCode::LeaseLost, || {
                format!(
                    "a call failed with {code} {} the close began",
                    if *after_close_began {
                        "after"
                    } else {
                        "before"
                    }
                )
            });
        }
    });
}

//! The generator's node identity: which lease it asks, the node bits it stamps, and how a
//! grant from the lease becomes a limit on the hot path (docs/spec.md#the-generators-slow-path).
//!
//! A lease kept by a coordinator publishes its grants into the fence (`Fence::publish`): the
//! slow path takes the published grant, and only when it does not cover the tick wanted does
//! it record the need (`NodeLease::ask`) and wait on the fence's condition variable for the
//! next publication. A lease that answers at once (a fixed node ID, the host lease's file) is
//! asked directly. Either way no lock is held and no fork section is open while it waits or
//! asks: a `fork()` or a reader (`node()`, `source()`) never waits with it. What the grant
//! changes is applied afterwards under a short lock, and only if nothing happened meanwhile
//! (the fence closed, the lease replaced after a fork, the generator closed); else the caller
//! looks again.

use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::sync::{self, AtomicBool, Mutex};
use super::ticks::above_time_mask;
use super::{Generator, StateWord};
use crate::clock::Clock;
use crate::codec::node_bits;
use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::{Asked, Fence, Grant, NodeId, NodeLease, NodeSource};
use crate::timestamp::format_rfc3339_ms;

pub(super) struct Identity {
    /// Taken only inside a fork section and never across a wait or I/O.
    current: Mutex<Current>,
    /// Fixed at construction: a lease made after a fork comes from the same source.
    source: NodeSource,
    closed: AtomicBool,
}

struct Current {
    lease: Arc<dyn NodeLease>,
    /// The fence handle `lease` was attached with: its publication is this lease's alone.
    fence: Fence,
    /// A lease made after a fork: its first grant is a change of identity whatever node ID
    /// it names (the parent keeps issuing under its own).
    fresh: bool,
}

impl Identity {
    pub(super) fn new(lease: Box<dyn NodeLease>) -> Identity {
        Identity {
            source: lease.source(),
            current: Mutex::new(Current {
                lease: Arc::from(lease),
                fence: Fence::default(),
                fresh: false,
            }),
            closed: AtomicBool::new(false),
        }
    }

    fn current(&self) -> sync::Locked<'_, Current> {
        sync::lock(&self.current)
    }

    fn lease(&self) -> (Arc<dyn NodeLease>, Fence) {
        let current = self.current();
        (Arc::clone(&current.lease), current.fence.clone())
    }

    pub(super) fn source(&self) -> NodeSource {
        self.source
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(SeqCst)
    }
}

/// A need recorded with a lease that publishes: the publication's epoch when it was first
/// asked (a refusal published after it answers it), the epoch it was last asked at, and how
/// long the lease said it answers within.
#[derive(Clone, Copy)]
struct Need {
    first_epoch: u64,
    last_epoch: u64,
    within: Duration,
    give_up: Instant,
}

fn closed_error() -> Error {
    Error::new(
        ErrorCode::LeaseLost,
        "this generator was closed and its node ID released; make a new one",
    )
}

impl<C: Clock, W: StateWord> Generator<C, W> {
    /// The node ID in the node bits: published by every change of identity, read without a
    /// lock (0, 0 before the first grant).
    pub(super) fn node_of_bits(&self, bits: u64) -> NodeId {
        let field = |slot: Option<crate::layout::Slot>| slot.map_or(0, |slot| slot.get(bits));
        NodeId {
            datacenter_id: field(self.layout.datacenter()),
            worker_id: field(self.layout.worker()),
        }
    }

    /// Attaches the lease to the fence and takes the node ID and floor of its first grant.
    /// Nothing else holds the generator yet, so this waits, if it must, without any lock.
    pub(super) fn adopt_first_grant(&mut self) -> Result<()> {
        let fence = self.limit.for_new_lease();
        let lease = {
            let mut current = self.identity.current();
            current.fence = fence.clone();
            Arc::clone(&current.lease)
        };
        // Attached first: a lease that publishes answers through the fence.
        lease.attach(fence.clone());
        let now_ms = self.clock.now_ms();
        let (grant, _) = self.obtain_grant(lease.as_ref(), &fence, now_ms, now_ms)?;
        let bits = self.constant_bits | node_bits(&self.layout, grant.node)?;
        self.node_bits.store(bits, SeqCst);
        self.ticks.set_node_bits(bits, &self.layout);
        if !W::SHARED {
            // A word others share is zeroed before its first ID (docs: `SharedWord`), and
            // taken as ID 0 issued: the next is sequence 1 of tick 0, or a later tick.
            self.state.word().store(self.ticks.empty(), SeqCst);
        }
        self.raise_floor(grant.floor_ms, false);
        // The limit stays 0: the first call asks for a tick, so that a layout that has run
        // out (baidu) still builds and only fails to generate.
        Ok(())
    }

    /// A grant that covers `want_ms`, and the fence's close count it was read at (opening
    /// with it fails after a close). From a lease that publishes: the published grant, or,
    /// when it does not cover `want_ms`, the need recorded and the next publication awaited on
    /// the fence's condition variable, for as long as the lease says it answers within. From
    /// any other lease: its answer. Called with no lock held.
    fn obtain_grant(
        &self,
        lease: &dyn NodeLease,
        fence: &Fence,
        want_ms: i64,
        now_ms: i64,
    ) -> Result<(Grant, u64)> {
        if !lease.publishes() {
            // Read before asking: a close of the fence after this voids the answer.
            let closes = fence.closes();
            return Ok((lease.grant(want_ms, now_ms)?, closes));
        }
        // Set once the need is recorded: the lease answers through the fence from then on.
        let mut need: Option<Need> = None;
        loop {
            if self.identity.is_closed() {
                return Err(closed_error());
            }
            let seen = fence.published();
            if let Some(grant) = seen.grant.filter(|g| want_ms <= g.until_ms) {
                if need.is_none() {
                    // Taken without a wait: the lease learns that the generator is busy, and
                    // publishes the next grant before this one runs out.
                    let _ = lease.ask(want_ms, now_ms);
                }
                return Ok((grant, seen.closes));
            }
            // Checked before asking again: an ask may itself publish a refusal.
            if let (Some(need), Some((at, error))) = (&need, &seen.refusal) {
                if *at > need.first_epoch {
                    return Err(error.clone());
                }
            }
            // Asked again at each change of the publication: a want the lease kept may since
            // have an answer it gives at once (a grant that will not cover it).
            if need.as_ref().map(|need| need.last_epoch) != Some(seen.epoch) {
                if need.is_none() {
                    fence.count_grant_ask();
                }
                match lease.ask(want_ms, self.clock.now_ms()) {
                    // `seen.closes` was read before the ask: a close since voids the grant.
                    Asked::Granted(grant) => return Ok((grant, seen.closes)),
                    Asked::Within(within) => match &mut need {
                        Some(need) => need.last_epoch = seen.epoch,
                        None => {
                            need = Some(Need {
                                first_epoch: seen.epoch,
                                last_epoch: seen.epoch,
                                within,
                                give_up: Instant::now() + within,
                            })
                        }
                    },
                }
            }
            let Need {
                within, give_up, ..
            } = *need
                .as_ref()
                .expect("recorded above, or returned its grant");
            let now = Instant::now();
            if now >= give_up {
                return Err(Error::new(
                    ErrorCode::CoordinatorUnavailable,
                    format!(
                        "the {} lease published no grant for {} within {} ms of being asked",
                        self.identity.source(),
                        format_rfc3339_ms(want_ms),
                        within.as_millis()
                    ),
                ));
            }
            fence.wait_for_publication(seen.epoch, give_up - now);
        }
    }

    /// Asks the lease for more time once the generator reaches the end of what it holds. The
    /// caller (`reserve`) loops: `Ok` means "look again", not "granted".
    pub(super) fn refresh_grant(&self, tick: u64, now_ms: i64) -> Result<()> {
        if tick >= self.ticks.past_end {
            return Err(Error::new(
                ErrorCode::TimeExhausted,
                format!(
                    "layout '{}' ran out of time at {}: its time field cannot hold a later \
                     instant without wrapping or going negative; choose a layout with a later \
                     epoch or more time bits",
                    self.layout,
                    format_rfc3339_ms(self.layout.capacity().exhausted_at_ms)
                ),
            ));
        }
        if self.constant_bits >> 63 != 0 {
            return Err(Error::new(
                ErrorCode::TimeExhausted,
                "a constant field set at bit 63 would make every ID negative",
            ));
        }
        if self.identity.is_closed() {
            return Err(closed_error());
        }
        if tick < self.limit_tick() {
            return Ok(()); // another thread's grant already covers it: no need to ask
        }
        let (lease, fence) = self.identity.lease();
        let want_ms = self.ms_of_t(tick);
        // The wait, if any, happens here: no lock, no fork section.
        let (grant, closes_before) = self.obtain_grant(lease.as_ref(), &fence, want_ms, now_ms)?;

        let mut current = self.identity.current();
        if self.identity.is_closed() {
            return Err(closed_error());
        }
        if !Arc::ptr_eq(&current.lease, &lease) || self.limit.closes() != closes_before {
            // A fork replaced the lease, or the lease may have been lost since it answered.
            return Ok(());
        }
        if tick < self.limit_tick() {
            return Ok(()); // another thread applied a grant meanwhile
        }
        let old = self.node_of_bits(self.node_bits.load(SeqCst));
        if grant.node != old || current.fresh {
            self.change_identity(old, grant.node, grant.floor_ms)?;
            current.fresh = false;
        } else {
            self.raise_floor(grant.floor_ms, false);
        }
        let limit = match self.t_of_ms(grant.until_ms) {
            Some(t) => (t + 1).min(self.ticks.past_end),
            None => 0,
        };
        if limit <= tick {
            return Err(Error::new(
                ErrorCode::LeaseLost,
                format!(
                    "the {} lease covers IDs only up to {}, not {}",
                    self.identity.source(),
                    format_rfc3339_ms(grant.until_ms),
                    format_rfc3339_ms(want_ms)
                ),
            ));
        }
        // The first ID of the limit's tick: every ID of an earlier tick is below it. Opened
        // through the lease's own handle, whose lock its `close` takes.
        fence.open(limit << self.ticks.time_shift, closes_before);
        Ok(())
    }

    /// The first tick the limit does not cover.
    fn limit_tick(&self) -> u64 {
        self.ticks.of_id(self.limit.limit())
    }

    /// Switches to another node ID (docs/spec.md#node-changes). The next ID must be larger
    /// than every ID issued under the old one, whatever the new node ID is: the node fields
    /// sit above the sequence in most layouts (a smaller node ID in the same tick makes a
    /// smaller ID), so the next ID goes to a later tick than any issued, and a layout with a
    /// node field above the time field is refused.
    ///
    /// A call on another thread may have loaded the old node bits (or a state that carries
    /// them) and be about to commit an ID with them. The stores go limit (closed), node bits,
    /// state (raised, with the new node bits: the word changes), and every call loads state,
    /// node bits and limit in that order: one that loaded the new node bits finds the limit
    /// closed, and one that loaded the old state fails its compare-and-swap. So an ID is
    /// returned with the old node bits only if it was committed before the state was raised,
    /// and then the next ID is in a later tick. Called with the identity locked.
    fn change_identity(&self, old: NodeId, node: NodeId, floor_ms: i64) -> Result<()> {
        let bits = self.constant_bits | node_bits(&self.layout, node)?;
        let old_bits = self.node_bits.load(SeqCst);
        if (bits ^ old_bits) & above_time_mask(&self.layout) != 0 {
            self.limit.shut();
            return Err(Error::invalid_layout(format!(
                "the node ID changed (from datacenter {} worker {} to datacenter {} worker {}) \
                 and layout '{}' has a node field above the time field: IDs could decrease. \
                 Put the node fields below time to lease node IDs",
                old.datacenter_id, old.worker_id, node.datacenter_id, node.worker_id, self.layout
            )));
        }
        self.limit.shut();
        self.node_bits.store(bits, SeqCst);
        self.raise_floor(floor_ms, true);
        Ok(())
    }

    /// Moves the state past `floor_ms`; with `whole_tick`, also past every sequence number
    /// of the last tick issued, with the node bits now stamped, so that the next ID lands in
    /// a later tick.
    fn raise_floor(&self, floor_ms: i64, whole_tick: bool) {
        let ticks = &self.ticks;
        let node = self.node_bits.load(SeqCst);
        // The last ID of the floor's tick: the next ID lands in a later tick.
        let floor_state = self
            .t_of_ms(floor_ms)
            .map_or(0, |t| ticks.id(t, ticks.seq_mask, node));
        let _ = self.state.word().fetch_update(SeqCst, SeqCst, |cur| {
            if ticks.nothing_issued(cur) {
                // Nothing to move past but the floor. A change of node ID changes even an
                // empty state (to another empty one), so that a call that read it with the old
                // node bits fails its compare-and-swap (the loom model
                // `node_change_races_calls` found the call that did not).
                return if floor_state != 0 {
                    Some(floor_state)
                } else {
                    whole_tick.then(|| cur.wrapping_add(ticks.unit))
                };
            }
            let tick_end = if whole_tick {
                ticks.id(ticks.of_id(cur), ticks.seq_mask, node)
            } else {
                cur
            };
            let raised = tick_end.max(floor_state);
            (raised != cur).then_some(raised)
        });
    }

    /// In a forked child: replaces the parent's lease with one of the child's own (which may
    /// claim a node ID: asked with no lock held). The next grant, from the new lease, changes
    /// the identity.
    #[cold]
    pub(super) fn lease_after_fork(&self) -> Result<()> {
        let generation = fork::generation();
        let parents = {
            let current = self.identity.current();
            if self.fork_generation.load(SeqCst) == generation {
                return Ok(());
            }
            Arc::clone(&current.lease)
        };
        let lease: Arc<dyn NodeLease> = Arc::from(parents.after_fork()?);
        let mut current = self.identity.current();
        if self.fork_generation.load(SeqCst) == generation {
            // Another thread of the child got there first; this lease is dropped, and gives
            // its node ID back in the background.
            return Ok(());
        }
        self.limit.shut();
        // A publication of the new lease's own: the parent's grant, published into the old
        // one, is never read here.
        let fence = self.limit.for_new_lease();
        lease.attach(fence.clone());
        current.lease = lease;
        current.fence = fence;
        current.fresh = true;
        self.fork_generation.store(generation, SeqCst);
        Ok(())
    }

    /// Marks the generator closed and hands its lease to `release` with the time of the last
    /// ID issued, outside any lock. Only the first call releases.
    pub(super) fn close_with(&self, release: impl FnOnce(&dyn NodeLease, i64)) {
        let (lease, last_used_ms) = {
            let current = self.identity.current();
            if self.identity.closed.swap(true, SeqCst) {
                return;
            }
            self.limit.shut();
            // Change the state, so a call that passed the limit before it was closed fails its
            // compare-and-swap instead of issuing an ID later than `last_used_ms`: one
            // sequence number on, or the next tick's first (a word others share stays theirs);
            // an empty state stays empty.
            let ticks = &self.ticks;
            let previous = match self.state.word().fetch_update(SeqCst, SeqCst, |cur| {
                Some(if ticks.nothing_issued(cur) {
                    cur.wrapping_add(ticks.unit)
                } else if cur & ticks.seq_field != ticks.seq_field {
                    cur + ticks.seq_unit
                } else {
                    ticks.id(ticks.of_id(cur) + 1, 0, cur)
                })
            }) {
                Ok(previous) | Err(previous) => previous,
            };
            let last_used_ms = if ticks.nothing_issued(previous) {
                i64::MIN
            } else {
                self.ms_of_t(ticks.of_id(previous))
            };
            (Arc::clone(&current.lease), last_used_ms)
        };
        // Its limit is 0 for good: a fork's child has nothing to close here.
        self.limit.unregister();
        release(lease.as_ref(), last_used_ms);
        // A fixed node ID's lease has no keeper to say so: closed, it issues nothing more
        // (a health check reads this).
        self.limit
            .status()
            .set_state(crate::lease::status::LeaseState::Released, false);
    }
}

/// Refuses a layout with a node field above the time field for a node ID that may change
/// (a lease): a change to a smaller node ID would make every later ID smaller
/// (docs/spec.md#node-changes). A fixed node ID never changes, so it may sit anywhere.
pub(super) fn check_node_may_change(layout: &Layout, source: NodeSource) -> Result<()> {
    let fixed = matches!(
        source,
        NodeSource::Explicit | NodeSource::Environment | NodeSource::Hostname
    );
    let above = [layout.datacenter(), layout.worker()]
        .into_iter()
        .flatten()
        .any(|slot| (slot.max() << slot.shift) & above_time_mask(layout) != 0);
    if above && !fixed {
        return Err(Error::invalid_layout(format!(
            "layout '{layout}' puts a node field above the time field, and the node ID is \
             leased ({source}): a lease may change the node ID, and a smaller one would make \
             the generator's IDs decrease. Put the node fields below time, or fix the node ID \
             (worker_id, datacenter_id)"
        )));
    }
    Ok(())
}

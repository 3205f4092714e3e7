//! The generator: one atomic word of packed state (tick and sequence), advanced by
//! compare-and-swap, as Vesta's atomic populator does; no mutex on the hot path.
//!
//! The hot path reads the cheap clock and does one CAS. Everything else (a new tick when the
//! cheap clock lags, waiting or borrowing when a tick is used up, a clock step backwards, the
//! end of what the node lease granted, a fork) is the slow path, which reads the precise
//! clock and may ask the lease for more.

use std::sync::atomic::{AtomicU64, Ordering::*};
use std::sync::Mutex;

use crate::clock::{Clock, SystemClock};
use crate::codec::{constant_bits, node_bits};
use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::layout::Layout;
use crate::lease::node::{Fence, NodeId, NodeLease, NodeSource};
use crate::lease::status::LeaseState;
use crate::options::{Options, SequencePolicy};
use crate::timestamp::format_rfc3339_ms;

/// Keeps the contended word on a cache line of its own.
#[repr(align(64))]
#[derive(Debug, Default)]
struct Padded(AtomicU64);

pub struct Generator<C: Clock = SystemClock> {
    /// `(state tick << seq_bits) | sequence` of the last ID handed out. State ticks are the
    /// layout's ticks plus one, so that 0 means "nothing issued yet" even at the epoch's tick.
    state: Padded,
    /// Datacenter, worker and constant fields, already in place.
    node_bits: AtomicU64,
    /// Ticks below this may be issued under the current identity; 0 sends every call to the
    /// slow path (nothing granted yet, lease lost, layout run out). Shared with the lease.
    limit: Fence,
    /// The fork generation this generator's identity belongs to.
    fork_generation: AtomicU64,
    layout: Layout,
    seq_bits: u32,
    seq_mask: u64,
    time_shift: u32,
    seq_shift: u32,
    constant_bits: u64,
    policy: SequencePolicy,
    max_borrow_ticks: u64,
    tolerance_ticks: u64,
    /// How far the last tick may be ahead of the clock before a call takes the slow path.
    ahead_allowance: u64,
    /// The first state tick past the layout's end: the limit never passes it, and the slow
    /// path caps clock readings to it, so that a tick too large for the state's bits is never
    /// shifted into it (the hot path checks a new tick against the limit before shifting).
    past_end_state_tick: u64,
    random_key: u64,
    clock: C,
    identity: Mutex<Identity>,
    /// Slow-path events, counted where they happen (never on the hot path).
    sequence_waits: AtomicU64,
    ticks_borrowed: AtomicU64,
}

/// How often a generator ran out of a tick's sequence numbers since it was built: how close
/// its callers come to the layout's ceiling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlowPathCounts {
    /// Calls that found the tick used up and waited for the clock's next one (`wait`
    /// policy, or `borrow` at its bound).
    pub sequence_waits: u64,
    /// Ticks taken ahead of the clock (`borrow` policy).
    pub ticks_borrowed: u64,
}

#[derive(Debug)]
struct Identity {
    lease: Box<dyn NodeLease>,
    node: NodeId,
    closed: bool,
}

impl<C: Clock> std::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let node = self.node();
        f.debug_struct("Generator")
            .field("layout", &self.layout.to_string())
            .field("datacenter_id", &node.datacenter_id)
            .field("worker_id", &node.worker_id)
            .field("source", &self.source())
            .finish()
    }
}

impl Generator<SystemClock> {
    pub fn builder() -> Builder<SystemClock> {
        Builder {
            options: Options::default(),
            clock: SystemClock,
            lease: None,
        }
    }

    /// A generator configured as docs/spec.md#generator-options says: explicit options first,
    /// then the environment (`FLAKERY_*`).
    pub fn new(options: Options) -> Result<Self> {
        Builder {
            options,
            clock: SystemClock,
            lease: None,
        }
        .build()
    }
}

/// Builds a generator; every option of docs/spec.md#generator-options has a method.
pub struct Builder<C: Clock> {
    options: Options,
    clock: C,
    lease: Option<Box<dyn NodeLease>>,
}

impl<C: Clock> Builder<C> {
    pub fn layout(mut self, layout: Layout) -> Self {
        self.options.layout = Some(layout);
        self
    }

    /// Parses and sets the layout.
    pub fn layout_spec(mut self, spec: &str) -> Result<Self> {
        self.options.layout = Some(Layout::parse(spec)?);
        Ok(self)
    }

    pub fn datacenter_id(mut self, id: u64) -> Self {
        self.options.datacenter_id = Some(id);
        self
    }

    pub fn worker_id(mut self, id: u64) -> Self {
        self.options.worker_id = Some(id);
        self
    }

    pub fn sequence_policy(mut self, policy: SequencePolicy) -> Self {
        self.options.sequence_policy = policy;
        self
    }

    pub fn max_borrow_ms(mut self, ms: u64) -> Self {
        self.options.max_borrow_ms = ms;
        self
    }

    pub fn backwards_tolerance_ms(mut self, ms: u64) -> Self {
        self.options.backwards_tolerance_ms = ms;
        self
    }

    pub fn random_sequence_start(mut self, on: bool) -> Self {
        self.options.random_sequence_start = on;
        self
    }

    /// The value of a constant field (Vesta's `version`, `type`, `method`).
    pub fn field(mut self, name: &str, value: u64) -> Self {
        self.options.fields.push((name.to_string(), value));
        self
    }

    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Uses this node identity instead of resolving one from the options and environment.
    pub fn lease(mut self, lease: Box<dyn NodeLease>) -> Self {
        self.lease = Some(lease);
        self
    }

    pub fn clock<K: Clock>(self, clock: K) -> Builder<K> {
        Builder {
            options: self.options,
            clock,
            lease: self.lease,
        }
    }

    pub fn build(self) -> Result<Generator<C>> {
        let Builder {
            options,
            clock,
            lease,
        } = self;
        let layout = options.resolved_layout()?;
        layout.check_generatable()?;
        let constant_bits = constant_bits(&layout, &options.fields)?;
        let lease = match lease {
            Some(lease) => lease,
            None => crate::lease::resolve::resolve_node(&options, &layout)?,
        };
        check_node_may_change(&layout, lease.source())?;
        fork::install();
        let unit = layout.unit().millis() as u64;
        let ticks_up = |ms: u64| ms.div_ceil(unit);
        let max_borrow_ticks = match options.sequence_policy {
            SequencePolicy::Wait => 0,
            SequencePolicy::Borrow => ticks_up(options.max_borrow_ms),
        };
        let tolerance_ticks = ticks_up(options.backwards_tolerance_ms);
        let seq = layout.sequence();
        let generator = Generator {
            state: Padded::default(),
            node_bits: AtomicU64::new(constant_bits),
            limit: Fence::default(),
            fork_generation: AtomicU64::new(fork::generation()),
            seq_bits: seq.bits,
            seq_mask: seq.max(),
            time_shift: layout.time().shift,
            seq_shift: seq.shift,
            constant_bits,
            policy: options.sequence_policy,
            max_borrow_ticks,
            tolerance_ticks,
            ahead_allowance: tolerance_ticks.saturating_add(max_borrow_ticks),
            past_end_state_tick: layout.max_tick() + 2,
            random_key: if options.random_sequence_start {
                random_u64() | 1
            } else {
                0
            },
            layout,
            clock,
            identity: Mutex::new(Identity {
                lease,
                node: NodeId::default(),
                closed: false,
            }),
            sequence_waits: AtomicU64::new(0),
            ticks_borrowed: AtomicU64::new(0),
        };
        generator.adopt_first_grant()?;
        generator
            .lock_identity()
            .lease
            .attach(generator.limit.clone());
        Ok(generator)
    }
}

impl<C: Clock> Generator<C> {
    /// One new ID: larger than every ID this generator returned before, on any thread.
    #[inline]
    pub fn next_id(&self) -> Result<i64> {
        match self.next_id_fast() {
            Some(id) => Ok(id),
            None => self.next_id_slow(true).map(|id| id.unwrap_or_default()),
        }
    }

    /// Like `next_id`, but answers `Ok(None)` instead of blocking, so that a binding can
    /// release its interpreter lock before it waits.
    #[inline]
    pub fn try_next_id(&self) -> Result<Option<i64>> {
        match self.next_id_fast() {
            Some(id) => Ok(Some(id)),
            None => self.next_id_slow(false),
        }
    }

    /// The hot path alone: an ID if one can be had with the cheap clock and one
    /// compare-and-swap, else `None` (a new grant from the lease, a used-up tick, a fork). It
    /// never blocks, waits or calls the lease, so an async runtime can call it on its own
    /// threads and send only a `None` to a thread that may block (`next_id`).
    #[inline]
    pub fn try_next_id_fast(&self) -> Option<i64> {
        self.next_id_fast()
    }

    #[inline(always)]
    fn next_id_fast(&self) -> Option<i64> {
        if fork::generation() != self.fork_generation.load(Relaxed) {
            return None;
        }
        // Not capped to the layout's end, as `state_tick_of_ms` is: the new-tick branch checks
        // it against the limit (which never passes the end) before shifting it.
        let now = self
            .layout
            .tick_of_ms(self.clock.now_ms_coarse())?
            .saturating_add(1);
        let mut cur = self.state.0.load(SeqCst);
        loop {
            // The order of these loads (state, node, limit), against the order in which a
            // change of identity stores them, is what keeps an old node ID from pairing with
            // a new tick: see `change_identity`.
            let node = self.node_bits.load(SeqCst);
            let limit = self.limit.limit();
            let cur_tick = cur >> self.seq_bits;
            // The tick of the next ID must be below the limit (checked before a new tick is
            // shifted into place).
            let next = if now > cur_tick {
                if now >= limit {
                    return None;
                }
                (now << self.seq_bits) | self.start_sequence(now)
            } else if cur & self.seq_mask != self.seq_mask
                && now.saturating_add(self.ahead_allowance) >= cur_tick
                && cur_tick < limit
            {
                cur + 1
            } else {
                return None;
            };
            match self
                .state
                .0
                .compare_exchange_weak(cur, next, SeqCst, SeqCst)
            {
                // The node bits loaded above may be a previous node's: see `change_identity`.
                Ok(_) if self.node_bits.load(SeqCst) == node => {
                    return Some(self.compose(next, node))
                }
                Ok(_) => return None,
                Err(actual) => cur = actual,
            }
        }
    }

    #[cold]
    fn next_id_slow(&self, may_wait: bool) -> Result<Option<i64>> {
        Ok(self
            .reserve(1, may_wait)?
            .map(|(first, _, node)| self.compose(first, node)))
    }

    /// `n` new IDs, in increasing order. Whole runs of a tick's sequence numbers are reserved
    /// with one CAS each, so the cost per ID is little more than writing it.
    pub fn next_ids(&self, n: usize) -> Result<Vec<i64>> {
        let mut ids = vec![0; n];
        self.fill(&mut ids)?;
        Ok(ids)
    }

    /// Fills `out` with new IDs, in increasing order.
    pub fn fill(&self, out: &mut [i64]) -> Result<()> {
        let mut done = 0;
        while done < out.len() {
            let want = (out.len() - done) as u64;
            let Some((first, count, node)) = self.reserve(want, true)? else {
                continue;
            };
            for (slot, state) in out[done..].iter_mut().zip(first..first + count) {
                *slot = self.compose(state, node);
            }
            done += count as usize;
        }
        Ok(())
    }

    #[inline(always)]
    fn state_tick_of_ms(&self, ms: i64) -> Option<u64> {
        self.layout
            .tick_of_ms(ms)
            .map(|tick| tick.saturating_add(1).min(self.past_end_state_tick))
    }

    fn ms_of_state_tick(&self, tick: u64) -> i64 {
        self.layout.ms_of_tick(tick.saturating_sub(1))
    }

    #[inline(always)]
    fn compose(&self, state: u64, node: u64) -> i64 {
        let tick = (state >> self.seq_bits) - 1;
        let seq = state & self.seq_mask;
        ((tick << self.time_shift) | (seq << self.seq_shift) | node) as i64
    }

    #[inline(always)]
    fn start_sequence(&self, tick: u64) -> u64 {
        if self.random_key == 0 {
            0
        } else {
            // Half the range at most, so a tick always keeps half its capacity.
            splitmix64(tick ^ self.random_key) & (self.seq_mask >> 1)
        }
    }

    /// Reserves up to `want` consecutive sequence numbers of one tick: the first state, how
    /// many, and the node bits to pair them with. `None` when it would have to wait and
    /// `may_wait` is false.
    fn reserve(&self, want: u64, may_wait: bool) -> Result<Option<(u64, u64, u64)>> {
        let mut waited = false;
        loop {
            if fork::generation() != self.fork_generation.load(SeqCst) {
                self.lease_after_fork()?;
            }
            let now_ms = self.clock.now_ms();
            let now = self.state_tick_of_ms(now_ms).ok_or_else(|| {
                Error::new(
                    ErrorCode::TimeExhausted,
                    format!(
                        "the clock ({}) is before the epoch of layout '{}' ({})",
                        format_rfc3339_ms(now_ms),
                        self.layout,
                        format_rfc3339_ms(self.layout.epoch_ms())
                    ),
                )
            })?;
            let cur = self.state.0.load(SeqCst);
            let node = self.node_bits.load(SeqCst);
            let limit = self.limit.limit();
            let cur_tick = cur >> self.seq_bits;
            let mut borrows = false;
            let first = if now > cur_tick {
                (now << self.seq_bits) | self.start_sequence(now)
            } else {
                let ahead = cur_tick - now;
                if ahead > self.ahead_allowance {
                    return Err(self.moved_backwards(ahead, cur_tick));
                }
                if cur & self.seq_mask != self.seq_mask {
                    cur + 1
                } else if self.policy == SequencePolicy::Borrow && ahead < self.max_borrow_ticks {
                    borrows = true;
                    ((cur_tick + 1) << self.seq_bits) | self.start_sequence(cur_tick + 1)
                } else if may_wait {
                    if !waited {
                        waited = true;
                        self.sequence_waits.fetch_add(1, Relaxed);
                    }
                    // Wait only as long as the bound demands: in borrow mode, until taking the
                    // next tick keeps the generator within max_borrow of the clock.
                    let target = (cur_tick + 1).saturating_sub(self.max_borrow_ticks);
                    self.clock.wait_until_ms(self.ms_of_state_tick(target));
                    continue;
                } else {
                    return Ok(None);
                }
            };
            let tick = first >> self.seq_bits;
            if tick >= limit {
                self.refresh_grant(tick, now_ms)?;
                continue;
            }
            let count = want.min(self.seq_mask - (first & self.seq_mask) + 1);
            let last = first + count - 1;
            if self
                .state
                .0
                .compare_exchange(cur, last, SeqCst, SeqCst)
                .is_ok()
                // Else the node changed since `node` was loaded: give these up and start over.
                && self.node_bits.load(SeqCst) == node
            {
                if borrows {
                    self.ticks_borrowed.fetch_add(1, Relaxed);
                }
                return Ok(Some((first, count, node)));
            }
        }
    }

    fn moved_backwards(&self, ahead_ticks: u64, last_tick: u64) -> Error {
        let unit = self.layout.unit().millis() as u64;
        let borrowed = ahead_ticks.min(self.max_borrow_ticks);
        Error::new(
            ErrorCode::ClockMovedBackwards,
            format!(
                "the clock moved backwards by at least {} ms, more than the tolerance of {} ms; \
                 no IDs until it reaches {} again (the time of the last ID issued)",
                (ahead_ticks - borrowed) * unit,
                self.tolerance_ticks * unit,
                format_rfc3339_ms(self.ms_of_state_tick(last_tick))
            ),
        )
    }

    fn lock_identity(&self) -> fork::Locked<'_, Identity> {
        fork::lock(&self.identity)
    }

    fn adopt_first_grant(&self) -> Result<()> {
        let mut identity = self.lock_identity();
        let now_ms = self.clock.now_ms();
        let grant = identity.lease.grant(now_ms, now_ms)?;
        self.node_bits.store(
            self.constant_bits | node_bits(&self.layout, grant.node)?,
            SeqCst,
        );
        self.raise_floor(grant.floor_ms, false);
        identity.node = grant.node;
        // The limit stays 0: the first call asks for a tick, so that a layout that has run
        // out (baidu) still builds and only fails to generate.
        Ok(())
    }

    /// Asks the lease for more time once the generator reaches the end of what it holds.
    fn refresh_grant(&self, tick: u64, now_ms: i64) -> Result<()> {
        if tick >= self.past_end_state_tick {
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
        let mut identity = self.lock_identity();
        if identity.closed {
            return Err(Error::new(
                ErrorCode::LeaseLost,
                "this generator was closed and its node ID released; make a new one",
            ));
        }
        if tick < self.limit.limit() {
            return Ok(()); // another thread got here first
        }
        let closes_before = self.limit.closes();
        let want_ms = self.ms_of_state_tick(tick);
        let grant = identity.lease.grant(want_ms, now_ms)?;
        if grant.node != identity.node {
            self.change_identity(&mut identity, grant.node, grant.floor_ms)?;
        } else {
            self.raise_floor(grant.floor_ms, false);
        }
        let limit = match self.state_tick_of_ms(grant.until_ms) {
            Some(t) => t.saturating_add(1).min(self.past_end_state_tick),
            None => 0,
        };
        if limit <= tick {
            return Err(Error::new(
                ErrorCode::LeaseLost,
                format!(
                    "the {} lease covers IDs only up to {}, not {}",
                    identity.lease.source(),
                    format_rfc3339_ms(grant.until_ms),
                    format_rfc3339_ms(want_ms)
                ),
            ));
        }
        self.limit.open(limit, closes_before);
        Ok(())
    }

    /// Switches to another node ID (docs/spec.md#node-changes). The next ID must be larger
    /// than every ID issued under the old one, whatever the new node ID is: the node fields
    /// sit above the sequence in most layouts (a smaller node ID in the same tick makes a
    /// smaller ID), so the next ID goes to a later tick than any issued, and a layout with a
    /// node field above the time field is refused.
    ///
    /// A call on another thread may have loaded the old node bits and be about to commit a
    /// state with them. The stores go limit (closed), node bits, state (raised), and every
    /// call loads the node bits again after its compare-and-swap succeeds and gives its
    /// state up if they changed: so an ID is returned with the old node bits only if its
    /// state was committed before the node bits changed, and then it is below the raised state.
    fn change_identity(&self, identity: &mut Identity, node: NodeId, floor_ms: i64) -> Result<()> {
        let bits = self.constant_bits | node_bits(&self.layout, node)?;
        let old = self.node_bits.load(SeqCst);
        if (bits ^ old) & above_time_mask(&self.layout) != 0 {
            self.limit.shut();
            return Err(Error::invalid_layout(format!(
                "the node ID changed (from datacenter {} worker {} to datacenter {} worker {}) \
                 and layout '{}' has a node field above the time field: IDs could decrease. \
                 Put the node fields below time to lease node IDs",
                identity.node.datacenter_id,
                identity.node.worker_id,
                node.datacenter_id,
                node.worker_id,
                self.layout
            )));
        }
        self.limit.shut();
        self.node_bits.store(bits, SeqCst);
        self.raise_floor(floor_ms, true);
        identity.node = node;
        Ok(())
    }

    /// Moves the state past `floor_ms`; with `whole_tick`, also past every sequence number
    /// of the last tick issued, so that the next ID lands in a later tick.
    fn raise_floor(&self, floor_ms: i64, whole_tick: bool) {
        let floor_state = match self.state_tick_of_ms(floor_ms) {
            // The last state of the floor's tick: the next ID lands in a later tick.
            Some(tick) => (tick << self.seq_bits) | self.seq_mask,
            None => 0,
        };
        let _ = self.state.0.fetch_update(SeqCst, SeqCst, |cur| {
            let tick_end = if whole_tick { cur | self.seq_mask } else { cur };
            let raised = tick_end.max(floor_state);
            (raised != cur).then_some(raised)
        });
    }

    #[cold]
    fn lease_after_fork(&self) -> Result<()> {
        let mut identity = self.lock_identity();
        let generation = fork::generation();
        if self.fork_generation.load(SeqCst) == generation {
            return Ok(());
        }
        let lease = identity.lease.after_fork()?;
        identity.lease = lease;
        self.limit.shut();
        self.fork_generation.store(generation, SeqCst);
        let now_ms = self.clock.now_ms();
        let grant = identity.lease.grant(now_ms, now_ms)?;
        identity.lease.attach(self.limit.clone());
        self.change_identity(&mut identity, grant.node, grant.floor_ms)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn node(&self) -> NodeId {
        self.lock_identity().node
    }

    pub fn datacenter_id(&self) -> u64 {
        self.node().datacenter_id
    }

    pub fn worker_id(&self) -> u64 {
        self.node().worker_id
    }

    /// Where the node ID came from.
    pub fn source(&self) -> NodeSource {
        self.lock_identity().lease.source()
    }

    /// The lease's own report of itself (state, losses, round trip), readable without a lock:
    /// take it once and read it as often as wanted.
    pub fn lease_status(&self) -> crate::lease::status::LeaseStatus {
        self.limit.status()
    }

    pub fn sequence_policy(&self) -> SequencePolicy {
        self.policy
    }

    /// The slow path's counts so far (relaxed reads: each is exact, the pair is not a
    /// snapshot).
    pub fn slow_path_counts(&self) -> SlowPathCounts {
        SlowPathCounts {
            sequence_waits: self.sequence_waits.load(Relaxed),
            ticks_borrowed: self.ticks_borrowed.load(Relaxed),
        }
    }

    /// Releases the node ID lease now; every later call fails with `lease_lost`.
    pub fn close(&self) {
        let mut identity = self.lock_identity();
        if !identity.closed {
            identity.closed = true;
            self.limit.shut();
            // Change the state, so a call that passed the limit before it was closed fails its
            // compare-and-swap instead of issuing an ID later than `last_used_ms`.
            let previous = match self
                .state
                .0
                .fetch_update(SeqCst, SeqCst, |cur| Some(cur + 1))
            {
                Ok(previous) | Err(previous) => previous,
            };
            let last_used_ms = if previous == 0 {
                i64::MIN // nothing issued
            } else {
                self.ms_of_state_tick((previous + 1) >> self.seq_bits)
            };
            identity.lease.release(last_used_ms);
            // A fixed node ID's lease has no keeper to say so: closed, it issues nothing more
            // (a health check reads this).
            self.limit.status().set_state(LeaseState::Released, false);
        }
    }

    pub fn is_closed(&self) -> bool {
        self.lock_identity().closed
    }
}

impl<C: Clock> Drop for Generator<C> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The bits of an ID above its time field.
fn above_time_mask(layout: &Layout) -> u64 {
    let top = layout.time().shift + layout.time().bits;
    if top >= 64 {
        0
    } else {
        !0 << top
    }
}

/// Refuses a layout with a node field above the time field for a node ID that may change
/// (a lease): a change to a smaller node ID would make every later ID smaller
/// (docs/spec.md#node-changes). A fixed node ID never changes, so it may sit anywhere.
fn check_node_may_change(layout: &Layout, source: NodeSource) -> Result<()> {
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

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(std::process::id() as u64);
    hasher.finish()
}

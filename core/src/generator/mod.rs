//! The generator: one atomic word of packed state (tick and sequence), advanced by
//! compare-and-swap, as Vesta's atomic populator does; no mutex on the hot path.
//!
//! The hot path reads the cheap clock and does one CAS. Everything else (a new tick when the
//! cheap clock lags, waiting or borrowing when a tick is used up, a clock step backwards, the
//! end of what the node lease granted, a fork) is the slow path, which reads the precise
//! clock and may ask the lease for more.
//!
//! Here: the state and the hot path. `reserve.rs`: the sequence's slow path. `identity.rs`:
//! the lease, asked with no lock held, and what its grants change. `fence.rs`: the types a
//! generator shares with its lease. `builder.rs`: options to a generator.

use std::sync::atomic::{AtomicU64, Ordering::*};

use crate::clock::{Clock, SystemClock};
use crate::error::Result;
use crate::layout::Layout;

mod builder;
pub mod fence;
mod identity;
mod reserve;

use crate::options::SequencePolicy;
pub use builder::Builder;
use fence::{Fence, NodeId, NodeSource};
use identity::Identity;

/// Where a generator keeps its state word. Monomorphized, so an ordinary generator's hot path
/// reads its own word directly, with no indirection.
pub trait StateWord: Send + Sync {
    fn word(&self) -> &AtomicU64;
}

/// The generator's own word, on a cache line of its own (the contended word). A `fork()`
/// copies it: the child's generator follows the fork rules of its lease (`after_fork`).
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct OwnWord(AtomicU64);

impl StateWord for OwnWord {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        &self.0
    }
}

/// A word the generator does not own: in memory shared by processes (PostgreSQL's shared
/// memory, mapped before its backends are forked), so that the generators of several
/// processes advance one state and none repeats another's IDs. A `fork()` shares it rather
/// than copying it, so a child and its parent never issue the same state; their node IDs
/// still follow their lease's fork rules. Zeroed memory means "nothing issued yet".
#[derive(Debug, Clone, Copy)]
pub struct SharedWord(&'static AtomicU64);

impl SharedWord {
    /// `word` must be the one state of every generator that may issue under the same node
    /// ID, and only generators with the same layout may share it.
    pub fn new(word: &'static AtomicU64) -> SharedWord {
        SharedWord(word)
    }
}

impl StateWord for SharedWord {
    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        self.0
    }
}

pub struct Generator<C: Clock = SystemClock, W: StateWord = OwnWord> {
    /// `(state tick << seq_bits) | sequence` of the last ID handed out. State ticks are the
    /// layout's ticks plus one, so that 0 means "nothing issued yet" even at the epoch's tick.
    state: W,
    /// Datacenter, worker and constant fields, already in place.
    node_bits: AtomicU64,
    /// Ticks below this may be issued under the current identity; 0 sends every call to the
    /// slow path (nothing granted yet, lease lost, layout run out). Shared with the lease.
    limit: Fence,
    /// The fork generation this generator's identity belongs to (checked on the slow path:
    /// a fork's child finds `limit` closed).
    fork_generation: AtomicU64,
    layout: Layout,
    tick_origin_ms: i64,
    /// For a layout whose ticks are milliseconds: one more than the largest `ms -
    /// tick_origin_ms` of a reading, `i64::MAX - tick_origin_ms + 1` as u64, so that the hot
    /// path turns a reading into a tick with one subtraction and one comparison. 0 for any
    /// other unit. A reading not at hand (an i64 of `1 << 63 | ms`, ms below 2^62:
    /// `clock::ticker`) fails the comparison for any origin from -2^61 on (epochs start in
    /// 1970: origins are never negative; the builder checks it all the same).
    ms_since_end: u64,
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
    /// The lease and what is published of it; asked on the slow path with no lock held.
    identity: Identity,
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
    /// Times the generator reached the end of its grant and found no later one published by
    /// its lease, so that it asked (a lease kept by a coordinator publishes ahead of a busy
    /// generator: docs/spec.md#the-generators-slow-path).
    pub grant_asks: u64,
    /// Times it then waited for the lease to publish.
    pub grant_waits: u64,
}

impl<C: Clock, W: StateWord> std::fmt::Debug for Generator<C, W> {
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

impl<C: Clock, W: StateWord> Generator<C, W> {
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
        // No fork check here: a fork's child closes every generator's limit before it runs
        // anything else (`fence::shut_all_after_fork`), so its first call takes the slow
        // path, which notices the fork.
        let now = self.state_tick_now()?;
        let mut cur = self.state.word().load(SeqCst);
        loop {
            // The order of these loads (state, node, limit), against the order in which a
            // change of identity stores them, is what keeps an old node ID from pairing with
            // a new tick: see `change_identity`.
            let node = self.node_bits.load(SeqCst);
            let limit = self.limit.limit();
            let cur_tick = cur.wrapping_shr(self.seq_bits);
            // The tick of the next ID must be below the limit (checked before a new tick is
            // shifted into place).
            let next = if now > cur_tick {
                if now >= limit {
                    return None;
                }
                (now << self.seq_bits) | self.start_sequence(now)
            } else if (cur + 1) & self.seq_mask != 0
                // Not ahead of the clock by more than allowed (`now <= cur_tick` here).
                && cur_tick - now <= self.ahead_allowance
                && cur_tick < limit
            {
                cur + 1
            } else {
                return None;
            };
            match self
                .state
                .word()
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

    /// The state tick of the cheap clock's reading, `None` before the layout's first tick.
    /// Not capped to the layout's end, as `state_tick_of_ms` is: the new-tick branch checks it
    /// against the limit (which never passes the end) before shifting it.
    #[inline(always)]
    fn state_tick_now(&self) -> Option<u64> {
        // `ms - origin` as u64 is below `ms_since_end` exactly when the layout counts
        // milliseconds and `ms >= origin`: one comparison covers the negative and the wrapped
        // case, a reading not at hand (negative, far below any origin the field allows), and
        // the unit (0 for any other unit): each of these goes the long way.
        let since = self
            .clock
            .now_ms_at_hand()
            .wrapping_sub(self.tick_origin_ms) as u64;
        if since < self.ms_since_end {
            return Some(since + 1);
        }
        self.state_tick_the_long_way()
    }

    #[inline(never)]
    fn state_tick_the_long_way(&self) -> Option<u64> {
        let ms = self.clock.now_ms_coarse();
        if self.ms_since_end != 0 {
            let since = ms.wrapping_sub(self.tick_origin_ms) as u64;
            return (since < self.ms_since_end).then_some(since + 1);
        }
        Some(self.layout.tick_of_ms(ms)?.saturating_add(1))
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
        // Shift amounts are below 64 by construction: `wrapping_` spares the masking.
        let tick = state.wrapping_shr(self.seq_bits) - 1;
        let seq = state & self.seq_mask;
        (tick.wrapping_shl(self.time_shift) | seq.wrapping_shl(self.seq_shift) | node) as i64
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

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The node ID the generator stamps now, read without a lock (a claim in progress
    /// never makes this wait).
    pub fn node(&self) -> NodeId {
        self.node_of_bits(self.node_bits.load(SeqCst))
    }

    pub fn datacenter_id(&self) -> u64 {
        self.node().datacenter_id
    }

    pub fn worker_id(&self) -> u64 {
        self.node().worker_id
    }

    /// Where the node ID came from.
    pub fn source(&self) -> NodeSource {
        self.identity.source()
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
            grant_asks: self.limit.grant_asks(),
            grant_waits: self.limit.grant_waits(),
        }
    }

    /// Releases the node ID lease now and waits (bounded: a coordinator's release waits at
    /// most 2 s) until the coordinator confirms; every later call fails with `lease_lost`.
    /// It holds no lock while it waits, so other threads and `fork()` go on.
    pub fn close(&self) {
        self.close_with(|lease, last_used_ms| lease.release(last_used_ms));
    }

    pub fn is_closed(&self) -> bool {
        self.identity.is_closed()
    }
}

/// Signals the release and returns at once: the lease's own threads give the node ID back in
/// the background, or it expires by itself (docs/spec.md#the-generators-slow-path).
impl<C: Clock, W: StateWord> Drop for Generator<C, W> {
    fn drop(&mut self) {
        self.close_with(|lease, last_used_ms| lease.signal_release(last_used_ms));
    }
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

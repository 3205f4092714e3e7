//! The generator: one atomic word of state, the last ID issued, advanced by compare-and-swap,
//! as Vesta's atomic populator does; no mutex on the hot path.
//!
//! The hot path reads the cheap clock and does one CAS: in the state's tick, the next ID is
//! the state plus one sequence step. Everything else (a new tick when the cheap clock lags,
//! waiting or borrowing when a tick is used up, a clock step backwards, the end of what the
//! node lease granted, a fork) is the slow path, which reads the precise clock and may ask the
//! lease for more.
//!
//! Here: the state and the hot path. `ticks.rs`: ticks and where they sit in an ID.
//! `reserve.rs`: the sequence's slow path. `identity.rs`: the lease, asked with no lock held,
//! and what its grants change. `fence.rs`: the types a generator shares with its lease.
//! `builder.rs`: options to a generator.

use std::sync::atomic::Ordering::*;

use crate::clock::{Clock, SystemClock};
use crate::error::Result;
use crate::layout::Layout;

mod builder;
pub mod fence;
mod identity;
mod reserve;
pub(crate) mod sync;
mod ticks;

use crate::options::SequencePolicy;
pub use builder::Builder;
use fence::{Fence, NodeId, NodeSource};
use identity::Identity;
use sync::AtomicU64;
use ticks::Ticks;

/// Where a generator keeps its state word. Monomorphized, so an ordinary generator's hot path
/// reads its own word directly, with no indirection.
pub trait StateWord: Send + Sync {
    /// Whether generators of other node IDs may advance the word too: the hot path then
    /// checks that the state it builds on carries this generator's node bits.
    const SHARED: bool = false;

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
    const SHARED: bool = true;

    #[inline(always)]
    fn word(&self) -> &AtomicU64 {
        self.0
    }
}

pub struct Generator<C: Clock = SystemClock, W: StateWord = OwnWord> {
    /// The last ID handed out, node and constant bits included (`ticks.rs`); before the
    /// first, an empty state (`Ticks::empty`; a shared word starts zeroed).
    state: W,
    /// Datacenter, worker and constant fields, already in place.
    node_bits: AtomicU64,
    /// IDs below this may be issued under the current identity: the first ID of the first
    /// tick the lease did not grant. 0 sends every call to the slow path (nothing granted
    /// yet, lease lost, layout run out). Shared with the lease.
    limit: Fence,
    /// The fork generation this generator's identity belongs to (checked on the slow path:
    /// a fork's child finds `limit` closed).
    fork_generation: AtomicU64,
    layout: Layout,
    ticks: Ticks,
    constant_bits: u64,
    policy: SequencePolicy,
    max_borrow_ticks: u64,
    tolerance_ticks: u64,
    /// How far the last tick may be ahead of the clock before a call takes the slow path.
    ahead_allowance: u64,
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
        let t = self.t_now()?;
        // The first ID of the clock's tick (no node bits, no sequence): `t_now` is never past
        // the layout's last tick, so this does not wrap.
        let tick_start = t.wrapping_mul(self.ticks.unit);
        let cur = self.state.word().load(SeqCst);
        let next = self.successor(cur, tick_start)?;
        // A change of node ID or a close changes the state word, so a swap from a state read
        // before it fails: an ID is returned only if it was issued before.
        match self
            .state
            .word()
            .compare_exchange(cur, next, SeqCst, SeqCst)
        {
            Ok(_) => Some(next as i64),
            Err(actual) => self.next_id_fast_contended(actual, tick_start),
        }
    }

    /// The hot path after another thread's swap came first: the same steps on the state it
    /// left, until one swap succeeds.
    #[cold]
    #[inline(never)]
    fn next_id_fast_contended(&self, mut cur: u64, tick_start: u64) -> Option<i64> {
        loop {
            let next = self.successor(cur, tick_start)?;
            match self
                .state
                .word()
                .compare_exchange_weak(cur, next, SeqCst, SeqCst)
            {
                Ok(_) => return Some(next as i64),
                Err(actual) => cur = actual,
            }
        }
    }

    /// The ID to issue after state `cur` when the clock's tick starts at `tick_start`, if the
    /// hot path may issue it.
    #[inline(always)]
    fn successor(&self, cur: u64, tick_start: u64) -> Option<u64> {
        if cur.wrapping_sub(tick_start) < self.ticks.same_tick_span {
            // The state's tick is the clock's, or ahead of it within the allowance: the next
            // ID is the state's next sequence number, node bits and all, unless the tick is
            // used up (the step carries out of the sequence field), the lease did not grant
            // it (the limit, closed or short), or (a word other node IDs share) the state is
            // another node's.
            let next = cur.wrapping_add(self.ticks.seq_unit);
            if next & self.ticks.seq_field == 0
                || cur >= self.limit.limit()
                || (W::SHARED && (cur ^ self.node_bits.load(SeqCst)) & self.ticks.node_field != 0)
            {
                return None;
            }
            Some(next)
        } else if tick_start > cur {
            // A new tick (an empty state, negative, is not below it: the slow path takes it).
            // The node bits are loaded before the limit: see `change_identity`, which closes
            // the limit before it changes them.
            let node = self.node_bits.load(SeqCst);
            if tick_start >= self.limit.limit() {
                return None;
            }
            Some(
                self.ticks
                    .id_in(tick_start, self.start_sequence(tick_start), node),
            )
        } else {
            None // ahead of the clock by more than the hot path takes
        }
    }

    /// The cheap clock's `t` (`ticks.rs`), `None` before the layout's first tick or past its
    /// last.
    #[inline(always)]
    fn t_now(&self) -> Option<u64> {
        // `ms - origin` as u64 is below `hot_bound` exactly when the layout counts
        // milliseconds and the reading is within the layout: one comparison covers the
        // negative and the wrapped case, a reading not at hand (negative, far below any
        // origin the field allows), the layout's end, and the unit (0 for any other unit):
        // each of these goes the long way.
        let t = self
            .clock
            .now_ms_at_hand()
            .wrapping_sub(self.ticks.hot_origin_ms) as u64;
        if t < self.ticks.hot_bound {
            return Some(t);
        }
        self.t_the_long_way()
    }

    #[inline(never)]
    fn t_the_long_way(&self) -> Option<u64> {
        self.ticks
            .of_ms_uncapped(&self.layout, self.clock.now_ms_coarse())
    }

    #[cold]
    fn next_id_slow(&self, may_wait: bool) -> Result<Option<i64>> {
        Ok(self.reserve(1, may_wait)?.map(|(first, _)| first as i64))
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
            let Some((first, count)) = self.reserve(want, true)? else {
                continue;
            };
            let mut id = first;
            for slot in &mut out[done..done + count as usize] {
                *slot = id as i64;
                id += self.ticks.seq_unit;
            }
            done += count as usize;
        }
        Ok(())
    }

    /// The `t` of a Unix millisecond (`ticks.rs`), capped to the layout's end.
    #[inline(always)]
    fn t_of_ms(&self, ms: i64) -> Option<u64> {
        self.ticks.of_ms(&self.layout, ms)
    }

    fn ms_of_t(&self, t: u64) -> i64 {
        self.ticks.ms_of(&self.layout, t)
    }

    /// The first sequence number of the tick that starts at ID `tick_start`.
    #[inline(always)]
    fn start_sequence(&self, tick_start: u64) -> u64 {
        start_sequence(self.random_key, tick_start, self.ticks.seq_mask)
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

/// The first sequence number of the tick that starts at ID `tick_start`, for a generator whose
/// random key is `key` (0: random_sequence_start off); the doctor's shard simulation uses it.
#[inline(always)]
pub(crate) fn start_sequence(key: u64, tick_start: u64, seq_mask: u64) -> u64 {
    if key == 0 {
        0
    } else {
        // Half the range at most, so a tick always keeps half its capacity.
        splitmix64(tick_start ^ key) & (seq_mask >> 1)
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

//! What a lease says of itself now, readable without a lock from any thread: whether IDs can
//! be issued, why the lease was last suspended or lost, the coordinator's round trip and the
//! confirmed high-water mark. A server reads it for readiness and metrics, and to refuse a
//! request at once instead of queueing it behind a lease that cannot be confirmed. It is a
//! report, never a permission: the fence and `NodeLease::grant` alone decide what is issued.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};

/// A lease's state as an operator sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// No node ID yet, or leasing one anew.
    Acquiring,
    /// A node ID confirmed within its deadline: IDs are issued.
    Held,
    /// Held, but not confirmed in time (a deadline passed, the connection broke, or the mark
    /// the generator needs is not confirmed): no IDs until it is.
    Suspect,
    /// The node ID is gone; a new one is leased after a pause.
    Lost,
    /// Given back (the generator was closed).
    Released,
}

impl LeaseState {
    pub const ALL: [LeaseState; 5] = [
        LeaseState::Acquiring,
        LeaseState::Held,
        LeaseState::Suspect,
        LeaseState::Lost,
        LeaseState::Released,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            LeaseState::Acquiring => "acquiring",
            LeaseState::Held => "held",
            LeaseState::Suspect => "suspect",
            LeaseState::Lost => "lost",
            LeaseState::Released => "released",
        }
    }

    /// Whether IDs can be issued in this state.
    pub const fn can_issue(self) -> bool {
        matches!(self, LeaseState::Held)
    }

    fn from_u8(value: u8) -> LeaseState {
        LeaseState::ALL
            .get(value as usize)
            .copied()
            .unwrap_or(LeaseState::Lost)
    }
}

/// Why a held lease stopped issuing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossReason {
    /// The backend reported its connection broken.
    Disconnected,
    /// No answer confirmed the claim within half the coordinator's term.
    Unconfirmed,
    /// The generator waited `MARK_STALL_MS` for a high-water mark the coordinator did not
    /// confirm.
    MarkStalled,
    /// The claim is gone: its term passed unconfirmed, or the coordinator gave it to another.
    Lost,
}

impl LossReason {
    pub const ALL: [LossReason; 4] = [
        LossReason::Disconnected,
        LossReason::Unconfirmed,
        LossReason::MarkStalled,
        LossReason::Lost,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            LossReason::Disconnected => "disconnected",
            LossReason::Unconfirmed => "unconfirmed",
            LossReason::MarkStalled => "mark_stalled",
            LossReason::Lost => "lost",
        }
    }
}

/// How long a generator waits for a mark before the status says IDs cannot be issued: a timing
/// policy, so it is the keeper's (`keeper::MARK_STALL_MS`).
pub use crate::lease::keeper::MARK_STALL_MS;

/// A shared, lock-free view of one lease. Cloning shares it.
#[derive(Debug, Clone)]
pub struct LeaseStatus(Arc<Cell>);

#[derive(Debug)]
struct Cell {
    state: AtomicU8,
    /// A generator is waiting for a mark past `MARK_STALL_MS`.
    stalled: AtomicBool,
    /// The confirmed high-water mark (Unix ms); `i64::MIN` for none.
    mark_ms: AtomicI64,
    /// The latest answered round trip to the coordinator, in µs; -1 for none yet.
    round_trip_us: AtomicI64,
    losses: [AtomicU64; LossReason::ALL.len()],
    /// Sources that keep no mark and are never lost (fixed IDs, the host lease).
    fixed: bool,
    /// The coordinator as its errors name it (no credentials), and its term in ms.
    coordinator: OnceLock<(String, i64)>,
}

impl LeaseStatus {
    /// The status of a lease kept by a coordinator, starting in `Acquiring`.
    pub fn new() -> LeaseStatus {
        LeaseStatus::with(LeaseState::Acquiring, false)
    }

    /// The status of a node ID that cannot be lost (explicit, environment, host lease): held
    /// until released.
    pub fn fixed() -> LeaseStatus {
        LeaseStatus::with(LeaseState::Held, true)
    }

    fn with(state: LeaseState, fixed: bool) -> LeaseStatus {
        LeaseStatus(Arc::new(Cell {
            state: AtomicU8::new(state as u8),
            stalled: AtomicBool::new(false),
            mark_ms: AtomicI64::new(i64::MIN),
            round_trip_us: AtomicI64::new(-1),
            losses: Default::default(),
            fixed,
            coordinator: OnceLock::new(),
        }))
    }

    /// The state now: `Suspect` while held but stalled on the mark.
    pub fn state(&self) -> LeaseState {
        let state = LeaseState::from_u8(self.0.state.load(Relaxed));
        if state == LeaseState::Held && self.0.stalled.load(Relaxed) {
            LeaseState::Suspect
        } else {
            state
        }
    }

    pub fn can_issue(&self) -> bool {
        self.state().can_issue()
    }

    /// Whether this lease is kept by a coordinator (it has a mark, a round trip, losses).
    pub fn is_coordinated(&self) -> bool {
        !self.0.fixed
    }

    /// The coordinator, as its errors name it (address and namespace, never credentials).
    pub fn coordinator(&self) -> Option<&str> {
        self.0
            .coordinator
            .get()
            .map(|(describe, _)| describe.as_str())
    }

    /// The coordinator's term in ms (ZooKeeper's session timeout, a database lease's term).
    pub fn term_ms(&self) -> Option<i64> {
        self.0.coordinator.get().map(|(_, term)| *term)
    }

    pub(crate) fn set_coordinator(&self, describe: String, term_ms: i64) {
        let _ = self.0.coordinator.set((describe, term_ms));
    }

    /// Times the lease stopped issuing for `reason` since it started.
    pub fn losses(&self, reason: LossReason) -> u64 {
        self.0.losses[reason as usize].load(Relaxed)
    }

    /// The high-water mark the coordinator confirmed (Unix ms), if any.
    pub fn mark_ms(&self) -> Option<i64> {
        Some(self.0.mark_ms.load(Relaxed)).filter(|m| *m != i64::MIN)
    }

    /// The latest answered round trip to the coordinator, in seconds.
    pub fn round_trip_s(&self) -> Option<f64> {
        let us = self.0.round_trip_us.load(Relaxed);
        (us >= 0).then(|| us as f64 / 1e6)
    }

    /// Records the keeper's state. A held lease that turns suspect or lost counts a loss:
    /// `Disconnected` when `alarm` says the backend raised it, else `Unconfirmed` / `Lost`.
    pub(crate) fn set_state(&self, state: LeaseState, alarm: bool) {
        let before = LeaseState::from_u8(self.0.state.swap(state as u8, Relaxed));
        let reason = match (before, state) {
            (LeaseState::Held, LeaseState::Suspect) if alarm => Some(LossReason::Disconnected),
            (LeaseState::Held, LeaseState::Suspect) => Some(LossReason::Unconfirmed),
            (LeaseState::Held | LeaseState::Suspect, LeaseState::Lost | LeaseState::Acquiring) => {
                Some(LossReason::Lost)
            }
            _ => None,
        };
        if let Some(reason) = reason {
            self.count(reason);
        }
        if state != LeaseState::Held {
            self.0.stalled.store(false, Relaxed);
        }
    }

    /// A generator has waited `MARK_STALL_MS` for a mark that was not confirmed.
    pub(crate) fn stall(&self) {
        if !self.0.stalled.swap(true, Relaxed)
            && LeaseState::from_u8(self.0.state.load(Relaxed)) == LeaseState::Held
        {
            self.count(LossReason::MarkStalled);
        }
    }

    /// The coordinator confirmed a mark, or a grant succeeded: no longer stalled.
    pub(crate) fn unstall(&self) {
        self.0.stalled.store(false, Relaxed);
    }

    pub(crate) fn set_mark(&self, mark_ms: Option<i64>, raise_only: bool) {
        let value = mark_ms.unwrap_or(i64::MIN);
        if raise_only {
            self.0.mark_ms.fetch_max(value, Relaxed);
        } else {
            self.0.mark_ms.store(value, Relaxed);
        }
    }

    pub(crate) fn set_round_trip(&self, elapsed: std::time::Duration) {
        let us = i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX);
        self.0.round_trip_us.store(us, Relaxed);
    }

    fn count(&self, reason: LossReason) {
        self.0.losses[reason as usize].fetch_add(1, Relaxed);
    }
}

impl Default for LeaseStatus {
    fn default() -> Self {
        LeaseStatus::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_counts_each_way_it_stops_issuing() {
        let status = LeaseStatus::new();
        assert_eq!(status.state(), LeaseState::Acquiring);
        status.set_state(LeaseState::Held, false);
        assert!(status.can_issue());
        status.stall();
        assert_eq!(status.state(), LeaseState::Suspect);
        status.stall();
        assert_eq!(status.losses(LossReason::MarkStalled), 1);
        status.unstall();
        assert!(status.can_issue());
        status.set_state(LeaseState::Suspect, true);
        assert_eq!(status.losses(LossReason::Disconnected), 1);
        status.set_state(LeaseState::Lost, false);
        assert_eq!(status.losses(LossReason::Lost), 1);
        status.set_state(LeaseState::Held, false);
        status.set_state(LeaseState::Suspect, false);
        assert_eq!(status.losses(LossReason::Unconfirmed), 1);
        assert!(!status.can_issue());
    }

    #[test]
    fn a_fixed_node_is_held_until_released() {
        let status = LeaseStatus::fixed();
        assert!(status.can_issue() && !status.is_coordinated());
        status.set_state(LeaseState::Released, false);
        assert_eq!(status.state(), LeaseState::Released);
    }
}

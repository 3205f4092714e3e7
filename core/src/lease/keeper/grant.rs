//! What a generator may issue now, what it makes the keeper write next, and how both reach
//! the generator: published into its fence.

use super::state::{Holding, KeeperState, Phase};
use super::{Keeper, Refusal, BUSY_FOR_MS, MARK_STALL_MS, MAX_MARK_AHEAD_MS};
use crate::error::{Error, ErrorCode};
use crate::layout::Layout;
use crate::lease::node::{Grant, NodeId};

impl Keeper {
    /// What a generator may issue now: `want_ms` is the tick it wants (generator time),
    /// `gen_now_ms` its clock now (not as read before a wait: the keeper learns from it where
    /// the generator is), `now` the keeper's clock.
    ///
    /// A generator refused with `NeedMark` waits and asks again; once the mark has been
    /// awaited for `grant_wait_ms` the keeper refuses with `lease_lost` (a slow coordinator
    /// makes the generator wait, never issue past its mark), and the next ask waits anew.
    ///
    /// The answer is published into the attached fence too: a grant (`Fence::publish`), or a
    /// refusal (`Fence::refuse`). A want that cannot be granted yet (a mark to write, a floor
    /// to reach, a deadline to move) is kept and served again at every step until it is.
    pub fn grant(&mut self, want_ms: i64, gen_now_ms: i64, now: i64) -> Result<Grant, Refusal> {
        let granted = self.grant_or_refuse(want_ms, gen_now_ms, now);
        if !matches!(granted, Err(Refusal::NeedMark)) {
            if let Some(held) = self.state.holding_mut() {
                held.mark_awaited_since = None;
            }
        }
        let kept = self.wanted_ms;
        let wanted = kept.max(Some(want_ms));
        self.wanted_ms = match &granted {
            Ok(grant) => {
                if let Some(held) = self.state.holding_mut() {
                    held.phase = Phase::Started;
                }
                self.publish(*grant);
                // A want within the mark but past the deadline is answered now, with this
                // grant that does not cover it (the generator refuses it), never kept for a
                // renewal: one moves the deadline by at most half a term, which a far
                // borrowed tick may never be within.
                let mark = self.state.holding().and_then(|h| h.mark_ms);
                let still = wanted.filter(|w| *w > grant.until_ms && Some(*w) > mark);
                if still.is_none() && kept.is_some_and(|w| w > grant.until_ms) {
                    // A generator waits on the want dropped: it asks again, and is answered.
                    if let Some(fence) = &self.fence {
                        fence.wake();
                    }
                }
                still
            }
            Err(Refusal::Lost(error)) => {
                if let Some(fence) = &self.fence {
                    fence.refuse(error.clone());
                }
                None
            }
            Err(Refusal::NeedMark | Refusal::Wait(_) | Refusal::Unconfirmed) => wanted,
        };
        granted
    }

    /// Serves the want a generator is waiting on, if any, as the keeper stands at `now`.
    pub(super) fn serve_want(&mut self, now: i64) {
        if let Some(want_ms) = self.wanted_ms {
            let gen_now_ms = now.saturating_add(self.gen_offset_ms);
            let _ = self.grant(want_ms, gen_now_ms, now);
        }
    }

    /// Whether a generator is waiting on a want the keeper has not granted yet.
    pub fn is_wanted(&self) -> bool {
        self.wanted_ms.is_some()
    }

    /// Publishes what a held claim allows now, without a generator asking: after a mark is
    /// confirmed or the claim renewed, so that a busy generator finds its next grant
    /// published before the one it holds runs out.
    pub fn publish_held(&self, now: i64) {
        if self.release.is_some() {
            return;
        }
        let KeeperState::Held(held) = &self.state else {
            return; // suspect, lost, released: the fence was closed
        };
        let gen_now_ms = now.saturating_add(self.gen_offset_ms);
        if let Some(grant) = issuable(&self.layout, held, self.term_ms, gen_now_ms, now) {
            self.publish(grant);
        }
    }

    fn publish(&self, grant: Grant) {
        if let Some(fence) = &self.fence {
            fence.publish(grant);
        }
    }

    /// When the keeper must step again for a waiting want, after `now`: the floor reached,
    /// the mark awaited long enough that the status says so, or that a grant is refused.
    pub(super) fn want_wake(&self, now: i64) -> Option<i64> {
        self.wanted_ms?;
        let held = self.state.holding()?;
        let floor = held
            .floor_ms
            .saturating_sub(self.gen_offset_ms)
            .saturating_add(1);
        let awaited = held.mark_awaited_since.map(|since| {
            [MARK_STALL_MS, self.grant_wait_ms()].map(|wait| since.saturating_add(wait))
        });
        std::iter::once(floor)
            .chain(awaited.into_iter().flatten())
            .filter(|at| *at > now)
            .min()
    }

    /// How long a generator has awaited the mark at `now` (0 when it does not).
    pub fn mark_awaited_ms(&self, now: i64) -> i64 {
        self.state
            .holding()
            .and_then(|h| h.mark_awaited_since)
            .map_or(0, |since| now.saturating_sub(since).max(0))
    }

    /// What a want gets while no claim is held (acquiring, refusing a claim, lost).
    fn refusal_without_claim(&self, now: i64) -> Refusal {
        match (self.state.phase(), self.state.no_lease()) {
            // The start's claim was lost: it waits while the keeper leases again.
            (Phase::LeasingAgain, _) => Refusal::Unconfirmed,
            // A claim of the start failed, or its second was lost: that error is the start's,
            // as the first claim's failure is.
            (Phase::Starting | Phase::StartingAgain, Some(no_lease)) => {
                Refusal::Lost(no_lease.error.clone())
            }
            (_, Some(no_lease)) => {
                let why = format!("leasing a node ID again ({})", no_lease.error.message());
                Refusal::Lost(self.lost_error(now, &why))
            }
            (_, None) => Refusal::Lost(self.lost_error(now, "leasing a node ID")),
        }
    }

    fn grant_or_refuse(
        &mut self,
        want_ms: i64,
        gen_now_ms: i64,
        now: i64,
    ) -> Result<Grant, Refusal> {
        self.gen_offset_ms = gen_now_ms.saturating_sub(now);
        self.busy_until = now.saturating_add(BUSY_FOR_MS);
        self.advance(now);
        if matches!(self.state, KeeperState::Released) || self.release.is_some() {
            return Err(Refusal::Lost(Error::new(
                ErrorCode::LeaseLost,
                format!("the lease from {} was released", self.describe),
            )));
        }
        let ahead = self.ahead_ms();
        let term_ms = self.term_ms;
        let grant_wait = self.grant_wait_ms();
        let held = match &mut self.state {
            KeeperState::Held(held) => held,
            KeeperState::Suspect(held) if held.phase != Phase::Started => {
                return Err(Refusal::Unconfirmed)
            }
            KeeperState::Suspect(held) => {
                let why = format!(
                    "node index {} may be lost (not confirmed since {} ms ago); issuing no IDs \
                     until the coordinator confirms it or a new one is leased",
                    held.claim.index,
                    now - held.confirmed_ms
                );
                return Err(Refusal::Lost(self.lost_error(now, &why)));
            }
            _ => return Err(self.refusal_without_claim(now)),
        };
        let deadline = held.deadline(term_ms);
        let mark = held.mark_ms.unwrap_or(i64::MIN);
        if gen_now_ms < held.floor_ms && held.floor_ms - gen_now_ms <= MAX_MARK_AHEAD_MS {
            // Nothing to issue before the floor: wait for it, and write the mark meanwhile.
            // (Further ahead, the generator's clock was set back since the claim: it refuses
            // with clock_moved_backwards itself.)
            let target = held.floor_ms.saturating_add(1).saturating_add(ahead);
            if target > mark {
                held.want_mark_ms = held.want_mark_ms.max(target);
            }
            return Err(Refusal::Wait(held.floor_ms));
        }
        if want_ms <= mark {
            return Ok(grant_of(&self.layout, held, deadline, gen_now_ms, now));
        }
        let target = want_ms.max(gen_now_ms).saturating_add(ahead);
        held.want_mark_ms = held.want_mark_ms.max(target);
        let waited = now.saturating_sub(*held.mark_awaited_since.get_or_insert(now));
        if waited >= grant_wait {
            return Err(Refusal::Lost(Error::new(
                ErrorCode::LeaseLost,
                format!(
                    "{} did not confirm the high-water mark within {waited} ms",
                    self.describe
                ),
            )));
        }
        Err(Refusal::NeedMark)
    }
}

/// What a held claim allows a generator whose clock reads `gen_now_ms` at the keeper's `now`:
/// up to the confirmed mark, and never past the deadline.
fn grant_of(layout: &Layout, held: &Holding, deadline: i64, gen_now_ms: i64, now: i64) -> Grant {
    let (datacenter_id, worker_id) = layout.node_of_index(held.claim.index);
    let mark = held.mark_ms.unwrap_or(i64::MIN);
    Grant {
        node: NodeId {
            datacenter_id,
            worker_id,
        },
        floor_ms: held.floor_ms,
        until_ms: mark.min(gen_now_ms.saturating_add(deadline - now)),
    }
}

/// The grant to publish for a held claim, as `Keeper::grant` would make it: none before the
/// floor (the generator waits for it, and asks) or before a mark past the floor is confirmed.
fn issuable(
    layout: &Layout,
    held: &Holding,
    term_ms: i64,
    gen_now_ms: i64,
    now: i64,
) -> Option<Grant> {
    if gen_now_ms < held.floor_ms && held.floor_ms - gen_now_ms <= MAX_MARK_AHEAD_MS {
        return None;
    }
    if held.mark_ms.is_none_or(|mark| mark <= held.floor_ms) {
        return None;
    }
    Some(grant_of(
        layout,
        held,
        held.deadline(term_ms),
        gen_now_ms,
        now,
    ))
}

//! What a generator may issue now, and what it makes the keeper write next.

use super::state::KeeperState;
use super::{Keeper, Refusal, BUSY_FOR_MS, MAX_MARK_AHEAD_MS};
use crate::error::{Error, ErrorCode};
use crate::lease::node::{Grant, NodeId};

impl Keeper {
    /// What a generator may issue now: `want_ms` is the tick it wants (generator time),
    /// `gen_now_ms` its clock now (not as read before a wait: the keeper learns from it where
    /// the generator is), `now` the keeper's clock.
    ///
    /// A generator refused with `NeedMark` waits and asks again; once the mark has been
    /// awaited for `grant_wait_ms` the keeper refuses with `lease_lost` (a slow coordinator
    /// makes the generator wait, never issue past its mark), and the next ask waits anew.
    pub fn grant(&mut self, want_ms: i64, gen_now_ms: i64, now: i64) -> Result<Grant, Refusal> {
        let granted = self.grant_or_refuse(want_ms, gen_now_ms, now);
        if !matches!(granted, Err(Refusal::NeedMark)) {
            if let Some(held) = self.state.holding_mut() {
                held.mark_awaited_since = None;
            }
        }
        granted
    }

    /// How long a generator has awaited the mark at `now` (0 when it does not).
    pub fn mark_awaited_ms(&self, now: i64) -> i64 {
        self.state
            .holding()
            .and_then(|h| h.mark_awaited_since)
            .map_or(0, |since| now.saturating_sub(since).max(0))
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
            KeeperState::Suspect(held) => {
                let why = format!(
                    "node index {} may be lost (not confirmed since {} ms ago); issuing no IDs \
                     until the coordinator confirms it or a new one is leased",
                    held.claim.index,
                    now - held.confirmed_ms
                );
                return Err(Refusal::Lost(self.lost_error(now, &why)));
            }
            _ => {
                let why = match self.state.no_lease() {
                    Some(n) => format!("leasing a node ID again ({})", n.error.message()),
                    None => "leasing a node ID".into(),
                };
                return Err(Refusal::Lost(self.lost_error(now, &why)));
            }
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
            let (datacenter_id, worker_id) = self.layout.node_of_index(held.claim.index);
            return Ok(Grant {
                node: NodeId {
                    datacenter_id,
                    worker_id,
                },
                floor_ms: held.floor_ms,
                until_ms: mark.min(gen_now_ms.saturating_add(deadline - now)),
            });
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

//! A coordinator in memory, for tests of the keeper and of whatever sits on it: the same
//! contract as ZooKeeper's or a database's (see `lease::coordinator`), with the coordinator's
//! clock injected, and faults (a partition, answers lost after the request was applied, a
//! garbled mark) that a test turns on and off.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::clock::Clock;
use crate::error::{Error, ErrorCode};
use crate::lease::coordinator::{Claim, Coordinator, Failure, Token};
use crate::lease::node::{read_mark, NodeSource};

/// The coordinator's records, shared by every holder made on it.
#[derive(Clone)]
pub struct Board {
    inner: Arc<Mutex<Records>>,
    clock: Arc<dyn Clock>,
    term_ms: i64,
}

#[derive(Debug, Default)]
struct Records {
    slots: Vec<Slot>,
    next_holder: i64,
    /// Requests fail unanswered and are not applied.
    partitioned: bool,
    /// This many requests are applied, and then answered as unanswered.
    lose_answers: u32,
    requests: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slot {
    /// The holder and the coordinator-clock instant its claim expires.
    pub holder: Option<(i64, i64)>,
    /// The stored mark as text, as a real coordinator stores it.
    pub mark: Vec<u8>,
    pub version: i64,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("term_ms", &self.term_ms)
            .finish()
    }
}

impl Board {
    /// A coordinator whose claims expire `term_ms` after each request, in `clock`'s time.
    pub fn new(clock: Arc<dyn Clock>, term_ms: i64) -> Board {
        Board {
            inner: Arc::default(),
            clock,
            term_ms,
        }
    }

    fn records(&self) -> MutexGuard<'_, Records> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new holder's connection.
    pub fn connect(&self) -> MemoryCoordinator {
        let mut records = self.records();
        records.next_holder += 1;
        MemoryCoordinator {
            board: self.clone(),
            holder: records.next_holder,
        }
    }

    /// Cuts (or heals) every holder off the coordinator: requests wait for their deadline
    /// and answer `Unanswered`, unapplied.
    pub fn set_partitioned(&self, on: bool) {
        self.records().partitioned = on;
    }

    /// The next `count` requests are applied, but their answers are lost.
    pub fn lose_answers(&self, count: u32) {
        self.records().lose_answers = count;
    }

    /// The record of `index` now (an empty slot if it was never used).
    pub fn slot(&self, index: u64) -> Slot {
        self.records()
            .slots
            .get(index as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// The live holder of `index` at the coordinator's present instant, if any.
    pub fn holder(&self, index: u64) -> Option<(i64, i64)> {
        let now = self.clock.now_ms();
        self.slot(index)
            .holder
            .filter(|(_, expires)| *expires > now)
    }

    /// Overwrites the stored mark of `index` (as an operator or a bug could).
    pub fn store_mark(&self, index: u64, text: &[u8]) {
        let mut records = self.records();
        let slot = records.slot_mut(index);
        slot.mark = text.to_vec();
        slot.version += 1;
    }

    /// Deletes the record of `index`, holder and mark (as `DELETE FROM flakery_node_leases`
    /// or deleting the znodes by hand does): the next claim finds a record with no mark.
    pub fn delete_record(&self, index: u64) {
        *self.records().slot_mut(index) = Slot::default();
    }

    /// How many requests reached the coordinator.
    pub fn requests(&self) -> u64 {
        self.records().requests
    }
}

impl Records {
    fn slot_mut(&mut self, index: u64) -> &mut Slot {
        let at = index as usize;
        if self.slots.len() <= at {
            self.slots.resize(at + 1, Slot::default());
        }
        &mut self.slots[at]
    }
}

/// One holder's connection to a `Board`.
#[derive(Debug)]
pub struct MemoryCoordinator {
    board: Board,
    holder: i64,
}

enum Delivery {
    Apply,
    ApplyAndLose,
}

impl MemoryCoordinator {
    pub fn holder(&self) -> i64 {
        self.holder
    }

    /// Whether the request gets through, waiting out the deadline when it does not.
    fn deliver(&self, deadline_ms: i64) -> Result<Delivery, Failure> {
        let mut records = self.board.records();
        if records.partitioned {
            drop(records);
            self.board.clock.wait_until_ms(deadline_ms);
            return Err(Failure::Unanswered("the coordinator is cut off".into()));
        }
        records.requests += 1;
        if records.lose_answers > 0 {
            records.lose_answers -= 1;
            return Ok(Delivery::ApplyAndLose);
        }
        Ok(Delivery::Apply)
    }

    fn answer(delivery: Delivery) -> Result<(), Failure> {
        match delivery {
            Delivery::Apply => Ok(()),
            Delivery::ApplyAndLose => Err(Failure::Unanswered("the answer was lost".into())),
        }
    }

    /// The slot of `claim` if it is still this holder's, with its claim extended.
    fn renewed<'a>(
        &self,
        records: &'a mut Records,
        claim: &Claim,
        now: i64,
    ) -> Result<&'a mut Slot, Failure> {
        let term = self.board.term_ms;
        let slot = records.slot_mut(claim.index);
        match slot.holder {
            Some((holder, expires)) if holder == self.holder && expires > now => {
                slot.holder = Some((holder, now + term));
                Ok(slot)
            }
            _ => Err(Failure::Lost(format!(
                "node index {} is no longer held by holder {}",
                claim.index, self.holder
            ))),
        }
    }
}

impl Coordinator for MemoryCoordinator {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn describe(&self) -> String {
        "the in-memory coordinator".into()
    }

    fn term_ms(&self) -> i64 {
        self.board.term_ms
    }

    fn claim_within(
        &mut self,
        count: u64,
        mark_limit_ms: i64,
        deadline_ms: i64,
    ) -> Result<Claim, Error> {
        let delivery = self.deliver(deadline_ms).map_err(|why| {
            Error::new(
                ErrorCode::CoordinatorUnavailable,
                format!("{}: {why}", self.describe()),
            )
        })?;
        let now = self.board.clock.now_ms();
        let mut records = self.board.records();
        let mut unreadable = Vec::new();
        let mut found = None;
        for index in 0..count {
            let slot = records.slot_mut(index);
            // As in a SQL table, a claim this holder gave up on is its own to take again.
            let free = slot
                .holder
                .is_none_or(|(holder, expires)| expires <= now || holder == self.holder);
            if !free {
                continue;
            }
            match read_mark(&slot.mark) {
                Ok(Some(mark)) if mark > mark_limit_ms => unreadable.push(format!(
                    "mark of node index {index}: {}",
                    crate::lease::node::mark_ahead(mark, mark_limit_ms)
                )),
                Ok(floor_ms) => {
                    found = Some((index, floor_ms));
                    break;
                }
                Err(why) => unreadable.push(format!("mark of node index {index}: {why}")),
            }
        }
        let Some((index, floor_ms)) = found else {
            let mut message = format!("all {count} node IDs are held in {}", self.describe());
            if !unreadable.is_empty() {
                message.push_str(&format!(
                    "; these are free but their high-water marks cannot be read or are too far \
                     ahead, so they are not used: {}",
                    unreadable.join("; ")
                ));
            }
            return Err(Error::new(ErrorCode::WorkerIdsExhausted, message));
        };
        let slot = records.slot_mut(index);
        slot.holder = Some((self.holder, now + self.board.term_ms));
        let token = Token {
            holder: self.holder,
            version: slot.version,
        };
        drop(records);
        Self::answer(delivery).map_err(|why| {
            Error::new(
                ErrorCode::CoordinatorUnavailable,
                format!("{}: {why}", self.describe()),
            )
        })?;
        Ok(Claim {
            index,
            floor_ms,
            server_ms: Some(now),
            token,
        })
    }

    fn renew(&mut self, claim: &mut Claim, deadline_ms: i64) -> Result<(), Failure> {
        let delivery = self.deliver(deadline_ms)?;
        let now = self.board.clock.now_ms();
        let mut records = self.board.records();
        self.renewed(&mut records, claim, now)?;
        drop(records);
        Self::answer(delivery)
    }

    fn write_mark(
        &mut self,
        claim: &mut Claim,
        expected_ms: Option<i64>,
        new_ms: i64,
        deadline_ms: i64,
    ) -> Result<(), Failure> {
        let delivery = self.deliver(deadline_ms)?;
        let now = self.board.clock.now_ms();
        let mut records = self.board.records();
        let slot = self.renewed(&mut records, claim, now)?;
        let stored = read_mark(&slot.mark);
        if stored == Ok(Some(new_ms)) {
            // A retry of a write that was applied.
        } else if stored == Ok(expected_ms) {
            slot.mark = new_ms.to_string().into_bytes();
            slot.version += 1;
        } else {
            return Err(Failure::Lost(format!(
                "the high-water mark of node index {} was written by another holder",
                claim.index
            )));
        }
        claim.token.version = slot.version;
        drop(records);
        Self::answer(delivery)
    }

    fn release(&mut self, claim: Claim, mark_ms: Option<i64>, deadline_ms: i64) {
        if self.deliver(deadline_ms).is_err() {
            return;
        }
        let now = self.board.clock.now_ms();
        let mut records = self.board.records();
        let Ok(slot) = self.renewed(&mut records, &claim, now) else {
            return;
        };
        if let Some(mark) = mark_ms {
            slot.mark = mark.to_string().into_bytes();
            slot.version += 1;
        }
        slot.holder = None;
    }

    fn reopen(&self) -> Result<Box<dyn Coordinator>, Error> {
        Ok(Box::new(self.board.connect()))
    }
}

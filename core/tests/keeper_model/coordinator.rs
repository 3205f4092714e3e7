//! The model coordinator: the records of two node indexes, and one holder's connection to
//! them with the contract of `lease::coordinator` (the in-memory `Board`'s, without its
//! locks and shared handles, so that a world is copied by `Clone` for every branch).

use flakery::lease::keeper::{carry, Outcome, Ticket};
use flakery::{Claim, Coordinator, Error, ErrorCode, Failure, FakeClock, NodeSource, Token};

/// The coordinator's term (ms). Shorter than the mark's look-ahead, so that the deadline, not
/// the mark, is what bounds a grant (as in keeper_properties.rs).
pub const TERM: i64 = 600;
/// Node indexes: two, so that holders contend, hand over and are refused.
pub const INDEXES: usize = 2;
/// The coordinator's clock for expiry runs this much faster than the keepers' (in tenths):
/// the keeper keeps half the term as its margin, so anything below 2 must be safe.
const SERVER_RATE_TENTHS: i64 = 19;
/// The keepers' clock reads 0 at this Unix ms (the coordinator's wall clock, for the check
/// at claim, runs with it; the holders' wall clocks step away from it).
pub const WALL0: i64 = 1_700_000_000_000;

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Record {
    /// The holder and the coordinator-clock instant its claim expires.
    pub holder: Option<(i64, i64)>,
    pub mark: Option<i64>,
    pub version: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Records {
    pub slots: [Record; INDEXES],
    /// The expiry clock, and the Unix clock a claim's answer reports (`Claim::server_ms`).
    pub expiry_ms: i64,
    pub wall_ms: i64,
}

impl Records {
    /// A namespace used before: marks of holders long gone, so that a first claim does not
    /// wait for a fresh record (deleted records do).
    pub fn new() -> Records {
        let old = Record {
            mark: Some(WALL0 - 60_000),
            ..Record::default()
        };
        Records {
            slots: [old.clone(), old],
            expiry_ms: 0,
            wall_ms: WALL0,
        }
    }

    pub fn set_time(&mut self, now: i64) {
        self.expiry_ms = now * SERVER_RATE_TENTHS / 10;
        self.wall_ms = WALL0 + now;
    }

    /// The live holder of `index`, if any.
    pub fn live_holder(&self, index: usize) -> Option<i64> {
        let now = self.expiry_ms;
        self.slots[index]
            .holder
            .filter(|(_, expires)| *expires > now)
            .map(|(holder, _)| holder)
    }

    /// Carries `ticket` of `holder` (whose wall clock reads `wall`) and returns the answer.
    pub fn carry(&mut self, holder: i64, ticket: &Ticket, wall: i64) -> Option<Outcome> {
        let mut conn = Conn {
            records: self.clone(),
            holder,
        };
        let outcome = carry(&mut conn, ticket, &FakeClock::new(wall));
        *self = conn.records;
        outcome
    }
}

/// One holder's connection, owning a copy of the records for the length of one request.
#[derive(Debug)]
struct Conn {
    records: Records,
    holder: i64,
}

impl Conn {
    /// The slot of `index` if it is still this holder's, with its claim extended.
    fn renewed(&mut self, index: u64) -> Result<&mut Record, Failure> {
        let now = self.records.expiry_ms;
        let slot = &mut self.records.slots[index as usize];
        match slot.holder {
            Some((holder, expires)) if holder == self.holder && expires > now => {
                slot.holder = Some((holder, now + TERM));
                Ok(slot)
            }
            _ => Err(Failure::Lost(format!("node index {index} is not held"))),
        }
    }
}

impl Coordinator for Conn {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn describe(&self) -> String {
        "the model coordinator".into()
    }

    fn term_ms(&self) -> i64 {
        TERM
    }

    fn claim_within(&mut self, count: u64, mark_limit_ms: i64, _: i64) -> Result<Claim, Error> {
        let now = self.records.expiry_ms;
        let wall = self.records.wall_ms;
        let count = (count as usize).min(INDEXES);
        for (index, slot) in self.records.slots[..count].iter_mut().enumerate() {
            // As in a SQL table, a claim this holder gave up on is its own to take again.
            let free = slot
                .holder
                .is_none_or(|(holder, expires)| expires <= now || holder == self.holder);
            if !free || slot.mark.is_some_and(|mark| mark > mark_limit_ms) {
                continue;
            }
            slot.holder = Some((self.holder, now + TERM));
            return Ok(Claim {
                index: index as u64,
                floor_ms: slot.mark,
                server_ms: Some(wall),
                token: Token {
                    holder: self.holder,
                    version: slot.version,
                },
            });
        }
        Err(Error::new(
            ErrorCode::WorkerIdsExhausted,
            "every node ID is held or its mark too far ahead",
        ))
    }

    fn renew(&mut self, claim: &mut Claim, _: i64) -> Result<(), Failure> {
        self.renewed(claim.index).map(|_| ())
    }

    fn write_mark(
        &mut self,
        claim: &mut Claim,
        expected_ms: Option<i64>,
        new_ms: i64,
        _: i64,
    ) -> Result<(), Failure> {
        let slot = self.renewed(claim.index)?;
        if slot.mark == Some(new_ms) {
            // A retry of a write that was applied.
        } else if slot.mark == expected_ms {
            slot.mark = Some(new_ms);
            slot.version += 1;
        } else {
            return Err(Failure::Lost("the mark was written by another".into()));
        }
        claim.token.version = slot.version;
        Ok(())
    }

    fn release(&mut self, claim: Claim, mark_ms: Option<i64>, _: i64) {
        if let Ok(slot) = self.renewed(claim.index) {
            if let Some(mark) = mark_ms {
                slot.mark = Some(mark);
                slot.version += 1;
            }
            slot.holder = None;
        }
    }

    fn reopen(&self) -> Result<Box<dyn Coordinator>, Error> {
        Ok(Box::new(Conn {
            records: self.records.clone(),
            holder: self.holder,
        }))
    }
}

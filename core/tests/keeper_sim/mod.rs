//! A keeper driven by hand against the in-memory coordinator, on fake clocks: the keeper's
//! (and the coordinator's) monotonic clock, and the generator's wall clock, which may step.

#![allow(dead_code)]

use std::sync::Arc;

use flakery::lease::keeper::{carry, Keeper, Next, Outcome, Refusal, State, Ticket};
use flakery::lease::{Board, Coordinator, MemoryCoordinator};
use flakery::{Clock, FakeClock, Grant, Layout};

pub const TERM: i64 = 10_000;
pub const WALL0: i64 = 1_700_000_000_000;
/// The marks `Sim::new` finds: holders long gone (a namespace used before).
pub const OLD_MARK: i64 = WALL0 - 60_000;

pub struct Sim {
    pub clock: FakeClock,
    pub board: Board,
    pub layout: Layout,
}

pub struct Holder {
    pub keeper: Keeper,
    pub coordinator: Box<dyn Coordinator>,
    /// The generator's wall clock minus the keeper's clock.
    pub wall_offset: i64,
    /// The keeper's clock (the simulation's).
    pub clock: FakeClock,
}

impl Sim {
    /// A namespace used before: indexes 0 to 7 have marks of holders long gone
    /// (`OLD_MARK`), so that a claim starts at once.
    pub fn new(layout: Layout) -> Sim {
        let sim = Sim::fresh(layout);
        for index in 0..8 {
            sim.board.store_mark(index, OLD_MARK.to_string().as_bytes());
        }
        sim
    }

    /// A namespace never used: no record has a mark.
    pub fn fresh(layout: Layout) -> Sim {
        let clock = FakeClock::new(0);
        let board = Board::new(Arc::new(clock.clone()), TERM);
        Sim {
            clock,
            board,
            layout,
        }
    }

    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn holder(&self) -> Holder {
        self.holder_with_wall_offset(WALL0)
    }

    /// A holder whose generator's wall clock is the keeper's plus `wall_offset`. The in-memory
    /// coordinator answers a claim with its own clock (the keeper's) as the server time, so
    /// with the keeper's clock set to `WALL0` an offset of `-behind` is a generator `behind`
    /// ms behind the coordinator.
    pub fn holder_with_wall_offset(&self, wall_offset: i64) -> Holder {
        let coordinator: MemoryCoordinator = self.board.connect();
        let mut keeper = Keeper::new(&self.layout, "test coordinator".into(), TERM);
        keeper.set_gen_offset(wall_offset);
        Holder {
            keeper,
            coordinator: Box::new(coordinator),
            wall_offset,
            clock: self.clock.clone(),
        }
    }
}

impl Holder {
    /// One poll, and its request carried at once (answered now). Returns what poll said.
    pub fn step(&mut self, sim: &Sim) -> Next {
        let next = self.keeper.poll(sim.now());
        if let Next::Send(ticket) = &next {
            if let Some(outcome) = self.deliver(ticket) {
                self.keeper.answer(ticket.seq, outcome, sim.now());
            }
        }
        next
    }

    /// Steps until the keeper only sleeps.
    pub fn settle(&mut self, sim: &Sim) {
        for _ in 0..16 {
            if !matches!(self.step(sim), Next::Send(_)) {
                return;
            }
        }
        panic!("the keeper kept sending requests");
    }

    /// The request poll hands out now, not yet carried.
    pub fn take(&mut self, sim: &Sim) -> Ticket {
        match self.keeper.poll(sim.now()) {
            Next::Send(ticket) => ticket,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    /// Carries `ticket` to the coordinator, the generator's wall clock read as its answer
    /// arrives (`wall_offset` past the keeper's).
    pub fn deliver(&mut self, ticket: &Ticket) -> Option<Outcome> {
        let wall = FakeClock::new(self.clock.now_ms() + self.wall_offset);
        carry(self.coordinator.as_mut(), ticket, &wall)
    }

    pub fn wall(&self, sim: &Sim) -> i64 {
        sim.now() + self.wall_offset
    }

    /// A grant for the present wall tick, writing the mark first when needed.
    pub fn grant_now(&mut self, sim: &Sim) -> Result<Grant, Refusal> {
        let wall = self.wall(sim);
        match self.keeper.grant(wall, wall, sim.now()) {
            Err(Refusal::NeedMark) => {
                self.settle(sim);
                self.keeper.grant(wall, wall, sim.now())
            }
            other => other,
        }
    }

    pub fn state(&self) -> State {
        self.keeper.state()
    }
}

/// The keeper's thread, and a coordinator that answers each request a round trip after it was
/// sent, stepped by a test one instant at a time.
pub struct Link {
    in_flight: Option<(Ticket, i64)>,
    wake_at: i64,
    /// Requests the keeper sent.
    pub sent: usize,
}

impl Link {
    pub fn new(sim: &Sim) -> Link {
        Link {
            in_flight: None,
            wake_at: sim.now(),
            sent: 0,
        }
    }

    /// Hands the keeper the answer due by `now`, if any; whether the keeper is then due to
    /// step (as its thread would after an answer, or at the instant it named).
    pub fn answer_due(&mut self, a: &mut Holder, now: i64) -> bool {
        if let Some((ticket, _)) = self.in_flight.take_if(|(_, due)| now >= *due) {
            let outcome = a.deliver(&ticket).expect("an answer");
            a.keeper.answer(ticket.seq, outcome, now);
            return true;
        }
        now >= self.wake_at
    }

    /// Steps the keeper until it sleeps, sending its request with the round trip `rtt_ms`.
    pub fn poll(&mut self, a: &mut Holder, now: i64, rtt_ms: i64) {
        loop {
            match a.keeper.poll(now) {
                Next::Send(ticket) => {
                    self.sent += 1;
                    self.in_flight = Some((ticket, now + rtt_ms));
                }
                Next::Sleep(at) => {
                    self.wake_at = at;
                    return;
                }
                Next::Finished => panic!("finished"),
            }
        }
    }
}

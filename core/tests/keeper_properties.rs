//! Random sequences of events against keepers sharing one in-memory coordinator: requests
//! delivered late, lost, or answered out of order; clocks stepping; forks, releases, alarms.
//! Each holder is driven as the background thread drives it (polled again after every answer
//! and at every instant it asked to wake), and its generator is modelled as the real one
//! works: it issues under its last grant, without asking, until its fence is closed or it
//! passes the grant's limit, and it borrows ticks ahead of its clock.
//!
//! Whatever happens, no ID is ever issued under an identity whose lease may have passed to
//! another holder: at each issue the coordinator still has the claim as this holder's and
//! unexpired, the tick is within the stored mark, and no two holders ever issue the same
//! tick under the same node index. Records are also deleted and marks lowered by hand while
//! held (while the holders' clocks agree within the keeper's tolerance, the assumption of
//! the fresh-record wait): then the holder may still issue up to the mark it had confirmed
//! (the first two checks do not apply to that index), and still no tick is issued twice.

mod keeper_sim;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use flakery::lease::keeper::{
    carry, Keeper, Next, Outcome, Phase, Refusal, State, Ticket, MAX_CLOCK_TOLERANCE_MS,
    RETRY_PAUSE_MS,
};
use flakery::lease::{Board, Coordinator};
use flakery::{Clock, ErrorCode, FakeClock, Fence, Grant, Layout};
use proptest::prelude::*;

// Shorter than the mark's look-ahead, so that the deadline, not the mark, is what bounds a grant.
const TERM: i64 = 600;
const WALL0: i64 = 1_700_000_000_000;

#[derive(Debug, Clone)]
enum Event {
    Poll(usize),
    /// The oldest request delivered and its answer returned at once.
    Exchange(usize),
    Deliver(usize),
    DropRequest(usize),
    Answer(usize),
    /// Answers the newest pending answer first (out of order).
    AnswerNewest(usize),
    Advance(i64),
    WallStep(usize, i64),
    Issue(usize),
    Fork(usize),
    Release(usize),
    Alarm(usize),
    /// The record of an index deleted by hand (holder and mark), as `DELETE FROM ...`.
    DeleteRecord(u64),
    /// The mark of an index lowered by hand to this far behind the first holder's clock.
    LowerMark(u64, i64),
}

fn event() -> impl Strategy<Value = Event> {
    let h = 0..4usize;
    prop_oneof![
        2 => h.clone().prop_map(Event::Poll),
        10 => h.clone().prop_map(Event::Exchange),
        2 => h.clone().prop_map(Event::Deliver),
        1 => h.clone().prop_map(Event::DropRequest),
        2 => h.clone().prop_map(Event::Answer),
        1 => h.clone().prop_map(Event::AnswerNewest),
        5 => (1..250i64).prop_map(Event::Advance),
        2 => (h.clone(), -3_000..500i64).prop_map(|(h, d)| Event::WallStep(h, d)),
        10 => h.clone().prop_map(Event::Issue),
        1 => h.clone().prop_map(Event::Fork),
        1 => h.clone().prop_map(Event::Release),
        1 => h.prop_map(Event::Alarm),
        1 => (0..4u64).prop_map(Event::DeleteRecord),
        1 => (0..4u64, 0..20_000i64).prop_map(|(i, back)| Event::LowerMark(i, back)),
    ]
}

struct Holder {
    keeper: Keeper,
    coordinator: Box<dyn Coordinator>,
    id: i64,
    wall_offset: i64,
    /// Requests handed out, not yet at the coordinator.
    outbox: VecDeque<Ticket>,
    /// Answers computed by the coordinator, not yet back at the keeper.
    inbox: VecDeque<(u64, Outcome)>,
    /// The last tick issued under each index (the generator never goes back).
    last_tick: HashMap<u64, i64>,
    /// The generator's fence: the keeper publishes its grants into it.
    fence: Fence,
    /// When the driver wakes next (the keeper's last `Sleep`).
    wake_at: i64,
    /// A release was asked: every grant is refused from then on.
    released: bool,
}

/// The coordinator's clock runs this much faster than the keeper's (in tenths): the keeper
/// keeps half the term as its margin, so anything below 2 must be safe.
const SERVER_RATE_TENTHS: i64 = 19;

struct World {
    clock: FakeClock,
    /// The coordinator's clock.
    server: FakeClock,
    board: Board,
    layout: Layout,
    holders: Vec<Holder>,
    /// (index, tick) -> the holder that issued it.
    issued: HashMap<(u64, i64), i64>,
    issues: u64,
    /// Indexes whose record was deleted or lowered by hand: the holder's stored claim and
    /// mark no longer say what it may issue.
    tampered: std::collections::HashSet<u64>,
}

impl World {
    fn new() -> World {
        let clock = FakeClock::new(0);
        let server = FakeClock::new(0);
        let board = Board::new(Arc::new(server.clone()), TERM);
        // Four node IDs: contention, successors and exhaustion all happen.
        let layout = Layout::parse("time:41,worker:2,sequence:12;epoch=0").unwrap();
        let mut world = World {
            clock,
            server,
            board,
            layout,
            holders: Vec::new(),
            issued: HashMap::new(),
            issues: 0,
            tampered: Default::default(),
        };
        // A namespace used before (marks of holders long gone): a record with no mark makes
        // its first holder wait (`FRESH_RECORD_WAIT_MS`), which deleted records test.
        for index in 0..4 {
            world
                .board
                .store_mark(index, (WALL0 - 60_000).to_string().as_bytes());
        }
        for _ in 0..2 {
            let keeper = Keeper::new(&world.layout, "memory".into(), TERM);
            world.add(keeper, WALL0);
        }
        world
    }

    fn add(&mut self, mut keeper: Keeper, wall_offset: i64) {
        let coordinator = self.board.connect();
        keeper.set_gen_offset(wall_offset);
        let fence = Fence::default();
        keeper.attach(fence.clone());
        self.holders.push(Holder {
            fence,
            wake_at: self.clock.now_ms(),
            keeper,
            id: coordinator.holder(),
            coordinator: Box::new(coordinator),
            wall_offset,
            outbox: VecDeque::new(),
            inbox: VecDeque::new(),
            last_tick: HashMap::new(),
            released: false,
        });
    }

    fn apply(&mut self, event: Event) -> Result<(), TestCaseError> {
        let now = self.clock.now_ms();
        let count = self.holders.len();
        let pick = |h: usize| h % count;
        match event {
            Event::Poll(h) => self.drive(pick(h), now),
            Event::Deliver(h) => {
                let holder = &mut self.holders[pick(h)];
                if let Some(ticket) = holder.outbox.pop_front() {
                    // The generator's wall clock, read as the answer arrives.
                    let wall = FakeClock::new(now + holder.wall_offset);
                    if let Some(outcome) = carry(holder.coordinator.as_mut(), &ticket, &wall) {
                        holder.inbox.push_back((ticket.seq, outcome));
                    }
                }
            }
            Event::Exchange(h) => {
                self.apply(Event::Deliver(h))?;
                let holder = &mut self.holders[pick(h)];
                if let Some((seq, outcome)) = holder.inbox.pop_back() {
                    holder.keeper.answer(seq, outcome, now);
                    self.drive(pick(h), now);
                }
            }
            Event::DropRequest(h) => {
                self.holders[pick(h)].outbox.pop_front();
            }
            Event::Answer(h) | Event::AnswerNewest(h) => {
                let newest = matches!(event, Event::AnswerNewest(_));
                let holder = &mut self.holders[pick(h)];
                let answer = if newest {
                    holder.inbox.pop_back()
                } else {
                    holder.inbox.pop_front()
                };
                if let Some((seq, outcome)) = answer {
                    holder.keeper.answer(seq, outcome, now);
                    self.drive(pick(h), now);
                }
            }
            Event::Advance(ms) => self.advance(now + ms)?,
            Event::WallStep(h, delta) => {
                let before = self.holders[pick(h)].wall_offset;
                self.holders[pick(h)].wall_offset += delta;
                if !self.tampered.is_empty() && !self.clocks_agree() {
                    // Past the tolerance the fresh-record wait assumes: not modelled after
                    // records were tampered with.
                    self.holders[pick(h)].wall_offset = before;
                }
            }
            Event::Issue(h) => self.issue(pick(h), now)?,
            Event::Fork(h) => {
                if count < 6 {
                    let child = self.holders[pick(h)].keeper.after_fork();
                    let wall_offset = self.holders[pick(h)].wall_offset;
                    self.add(child, wall_offset);
                    self.drive(count, now);
                }
            }
            Event::Release(h) => {
                let holder = &mut self.holders[pick(h)];
                let last = holder.last_tick.values().copied().max();
                holder.keeper.release(last);
                holder.released = true;
                self.drive(pick(h), now);
            }
            Event::Alarm(h) => {
                self.holders[pick(h)].keeper.alarm();
                self.drive(pick(h), now);
            }
            Event::DeleteRecord(index) if self.clocks_agree() => {
                self.board.delete_record(index);
                self.tampered.insert(index);
            }
            // Lowered while held, as the module's note says. A mark lowered on a record whose
            // claim was deleted is trusted by the next claimant, as docs/guarantees.md says
            // (an operator must never lower a mark and delete its claim): the proptest found
            // that duplicate (its seed is in the regressions file) when it modelled it.
            Event::LowerMark(index, back)
                if self.clocks_agree() && self.board.holder(index).is_some() =>
            {
                let lowered = now + self.holders[0].wall_offset - back;
                self.board.store_mark(index, lowered.to_string().as_bytes());
                self.tampered.insert(index);
            }
            Event::DeleteRecord(_) | Event::LowerMark(..) => {}
        }
        Ok(())
    }

    /// Whether every holder's clock is within the keeper's clock tolerance of every other's
    /// (what the fresh-record wait assumes of holders that never see each other's marks).
    fn clocks_agree(&self) -> bool {
        let offsets = self.holders.iter().map(|h| h.wall_offset);
        let (low, high) = (offsets.clone().min(), offsets.max());
        high.zip(low)
            .is_some_and(|(high, low)| high - low <= MAX_CLOCK_TOLERANCE_MS)
    }

    /// Polls holder `h` as its background thread would, until it sleeps.
    fn drive(&mut self, h: usize, now: i64) {
        let holder = &mut self.holders[h];
        for _ in 0..8 {
            match holder.keeper.poll(now) {
                Next::Send(ticket) => holder.outbox.push_back(ticket),
                Next::Sleep(at) => {
                    holder.wake_at = at;
                    return;
                }
                Next::Finished => break,
            }
        }
        holder.wake_at = i64::MAX;
    }

    /// Moves the clock to `to`, waking each driver at the instants it asked for.
    fn advance(&mut self, to: i64) -> Result<(), TestCaseError> {
        let mut wakes = 0;
        loop {
            let next = (0..self.holders.len()).min_by_key(|h| self.holders[*h].wake_at);
            let Some(h) = next.filter(|h| self.holders[*h].wake_at <= to) else {
                break;
            };
            let at = self.holders[h].wake_at.max(self.clock.now_ms());
            self.set_time(at);
            self.drive(h, at);
            wakes += 1;
            prop_assert!(
                self.holders[h].wake_at > at || wakes < 1000,
                "the keeper asks to wake at {} again and again: a busy loop",
                at
            );
        }
        self.set_time(to);
        Ok(())
    }

    fn set_time(&self, at: i64) {
        self.clock.set(at);
        self.server.set(at * SERVER_RATE_TENTHS / 10);
    }

    /// The generator of holder `h` issues one ID, as the real one does with a lease that
    /// publishes: under the grant published into its fence (what the safety checks below
    /// hold to account), else after asking the keeper, whose answer is published too.
    fn issue(&mut self, h: usize, now: i64) -> Result<(), TestCaseError> {
        let holder = &mut self.holders[h];
        let wall = now + holder.wall_offset;
        let usable = |grant: &Grant, last: &HashMap<u64, i64>| {
            let index = grant.node.worker_id;
            let last = last.get(&index).copied().unwrap_or(i64::MIN);
            // Borrowing: the next tick after the last one, at least the present one.
            let tick = wall
                .max(last.saturating_add(1))
                .max(grant.floor_ms.saturating_add(1));
            (tick <= grant.until_ms).then_some((index, tick))
        };
        let published = holder.fence.published().grant;
        let (index, tick) = match published.and_then(|g| usable(&g, &holder.last_tick)) {
            Some(found) => found,
            None => {
                let want = wall.max(holder.last_tick.values().copied().max().unwrap_or(i64::MIN));
                // Before the first grant, a claim that was held never refuses a start with
                // lease_lost: suspect, it keeps the want until confirmed again; lost, it is
                // leased again (once). Only a claim that fails (its own error), the loss of
                // the claim leased again, or a release does.
                let (phase, state) = (holder.keeper.phase(), holder.keeper.state());
                let start_held_a_claim = phase == Phase::LeasingAgain
                    || (phase != Phase::Started && state == State::Suspect);
                let granted = holder.keeper.grant(want, wall, now);
                if let (true, Err(Refusal::Lost(error))) = (start_held_a_claim, &granted) {
                    let second_loss =
                        phase == Phase::StartingAgain && holder.keeper.state() == State::Lost;
                    prop_assert!(
                        holder.released || second_loss || error.code() != ErrorCode::LeaseLost,
                        "a start refused with {} in {:?}, {:?}",
                        error,
                        phase,
                        state
                    );
                }
                let grant = match granted {
                    Ok(grant) => grant,
                    Err(
                        Refusal::Lost(_)
                        | Refusal::NeedMark
                        | Refusal::Wait(_)
                        | Refusal::Unconfirmed,
                    ) => {
                        self.drive(h, now);
                        return Ok(());
                    }
                };
                let published = holder.fence.published().grant;
                prop_assert_eq!(published, Some(grant), "a grant made and not published");
                match usable(&grant, &holder.last_tick) {
                    Some(found) => found,
                    None => return Ok(()),
                }
            }
        };
        // The layout has no datacenter field: the node index is the worker ID.
        if self.tampered.contains(&index) {
            return self.record_issue(h, index, tick);
        }
        let (holder_id, expires) = self.board.slot(index).holder.unwrap_or((0, i64::MIN));
        prop_assert_eq!(
            holder_id,
            holder.id,
            "issued under index {} held by another",
            index
        );
        prop_assert!(
            now < expires,
            "issued at {} under a claim that expired at {}",
            now,
            expires
        );
        let stored = String::from_utf8(self.board.slot(index).mark).unwrap();
        let stored: i64 = stored.parse().unwrap_or(i64::MIN);
        prop_assert!(
            tick <= stored,
            "tick {} past the stored mark {}",
            tick,
            stored
        );
        self.record_issue(h, index, tick)
    }

    /// No two holders ever issue the same tick under one index.
    fn record_issue(&mut self, h: usize, index: u64, tick: i64) -> Result<(), TestCaseError> {
        let holder = &mut self.holders[h];
        if let Some(other) = self.issued.insert((index, tick), holder.id) {
            prop_assert_eq!(
                other,
                holder.id,
                "tick {} of index {} issued twice",
                tick,
                index
            );
        }
        holder.last_tick.insert(index, tick);
        self.issues += 1;
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_id_under_an_identity_that_may_have_passed_on(
        events in proptest::collection::vec(event(), 1..300)
    ) {
        let mut world = World::new();
        for event in events {
            world.apply(event)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The clock check at claim, decided by the keeper as it steps: a generator whose clock is
    /// more than the bound (1 s, docs/spec.md) behind the coordinator's is never held nor
    /// granted, its claim is given back at once, and every retry is refused the same way;
    /// within the bound the claim is held and grants follow.
    #[test]
    fn a_claim_is_held_only_within_the_clock_bound(
        behind in -3_000..3_000i64,
        retries in 0..4usize,
    ) {
        let sim = keeper_sim::Sim::new(Layout::twitter());
        // The in-memory coordinator answers with the keeper's clock as its own.
        sim.clock.set(keeper_sim::WALL0);
        let mut holder = sim.holder_with_wall_offset(-behind);
        for _ in 0..=retries {
            holder.settle(&sim);
            prop_assert_eq!(holder.keeper.clock_offset_ms(), Some(behind));
            let granted = holder.grant_now(&sim);
            if behind <= 1000 {
                prop_assert_eq!(holder.state(), State::Held);
                prop_assert!(granted.is_ok(), "{:?}", granted);
            } else {
                prop_assert_eq!(holder.state(), State::Lost);
                let code = holder.keeper.last_error().map(|e| e.code());
                prop_assert_eq!(code, Some(ErrorCode::ClockMovedBackwards));
                prop_assert!(matches!(granted, Err(Refusal::Lost(_))), "{:?}", granted);
                prop_assert_eq!(sim.board.holder(0), None, "given back at once");
            }
            sim.clock.advance(RETRY_PAUSE_MS);
        }
    }
}

/// The property test is only worth something if its worlds do issue IDs and hand node IDs
/// over: a fixed sequence shows both.
#[test]
fn the_world_issues_and_hands_over() {
    let mut world = World::new();
    let busy = |h: usize| {
        [
            Event::Deliver(h),
            Event::Answer(h),
            Event::Issue(h),
            Event::Deliver(h),
            Event::Answer(h),
            Event::Issue(h),
        ]
    };
    let mut script = Vec::new();
    for _ in 0..10 {
        script.extend(busy(0).into_iter().chain(busy(1)));
        script.push(Event::Advance(100));
    }
    // Holder 0 is cut off; holder 1 goes on and forks a child, which takes index 0.
    for _ in 0..20 {
        script.extend(busy(1));
        script.push(Event::DropRequest(0));
        script.push(Event::Advance(100));
    }
    script.push(Event::Fork(1));
    for _ in 0..10 {
        script.extend(busy(1).into_iter().chain(busy(2)));
        script.push(Event::Advance(100));
    }
    for event in script {
        world.apply(event).unwrap();
    }
    assert!(world.issues > 50, "only {} issues", world.issues);
    let mut holders_of_0: Vec<i64> = world
        .issued
        .iter()
        .filter(|((index, _), _)| *index == 0)
        .map(|(_, holder)| *holder)
        .collect();
    holders_of_0.sort_unstable();
    holders_of_0.dedup();
    assert_eq!(holders_of_0.len(), 2, "index 0 was not handed over");
}

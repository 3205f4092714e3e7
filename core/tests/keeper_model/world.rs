//! One state of the model: the real keepers of the holders, what is on the wire, each
//! holder's generator (modelled: it issues whole ticks under the grant published into its
//! fence, or asks), the coordinator's records, and every tick issued. `apply` takes one
//! event; the search (search.rs) tries every enabled event from every state.

use flakery::lease::keeper::{Keeper, Next, Outcome, Ticket};
use flakery::options::DEFAULT_MAX_BORROW_MS;
use flakery::{Fence, Grant, Layout};

use crate::coordinator::{Records, INDEXES, TERM, WALL0};

const MAX_BORROW_MS: i64 = DEFAULT_MAX_BORROW_MS as i64;
/// A mark raised by hand lands this far past the clocks: beyond `MAX_MARK_AHEAD_MS`.
const RAISED_AHEAD_MS: i64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// Holder h's requests delivered and answered in order until none is out.
    Settle(usize),
    /// The oldest request applied by the coordinator; its answer stays on the wire (late).
    Send(usize),
    /// The oldest answer on the wire handed to the keeper.
    Answer(usize),
    /// The newest answer handed over first (out of order).
    AnswerNewest(usize),
    /// The oldest answer lost (the request was applied), or with none, the oldest request.
    Lose(usize),
    /// The generator issues one tick.
    Issue(usize),
    Fork(usize),
    /// The process crashes and starts again: a new holder, nothing of the old one's state.
    Restart(usize),
    Release(usize),
    /// The holder's wall clock steps by this many ms.
    Step(usize, i64),
    /// Time passes, every driver woken when it asked.
    Advance(i64),
    /// The record deleted by hand (or recreated): no holder, no mark.
    Delete(usize),
    /// The mark lowered by hand to just behind holder 0's clock.
    Lower(usize),
    /// The mark raised by hand far ahead (a run under faketime).
    Raise(usize),
}

/// What the search may do, and how often.
#[derive(Debug, Clone)]
pub struct Config {
    pub name: &'static str,
    /// Events taken before the search starts from where they lead.
    pub prefix: Vec<Event>,
    /// Requests delivered late, lost, answers out of order (else only `Settle`).
    pub wire: bool,
    pub holders: usize,
    pub max_holders: usize,
    pub forks: u8,
    pub restarts: u8,
    pub releases: u8,
    pub steps: u8,
    pub tampers: u8,
    pub step_sizes: Vec<i64>,
    pub advances: Vec<i64>,
    /// Marks lowered on records nobody holds too (the known hole, docs/guarantees.md).
    pub lower_unheld: bool,
    /// Marks raised far ahead by hand too.
    pub raise: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Budget {
    forks: u8,
    restarts: u8,
    releases: u8,
    steps: u8,
    tampers: u8,
}

#[derive(Debug, Clone)]
pub struct Holder {
    pub keeper: Keeper,
    pub id: i64,
    pub wall_offset: i64,
    pub outbox: Vec<Ticket>,
    pub inbox: Vec<(u64, Outcome)>,
    /// What the keeper published into the generator's fence.
    pub published: Option<Grant>,
    /// The generator's last tick (the state word's: it never goes back, node change or not).
    pub last_tick: Option<i64>,
    pub wake_at: i64,
    pub released: bool,
}

#[derive(Debug, Clone)]
pub struct World {
    pub now: i64,
    pub records: Records,
    next_holder: i64,
    pub holders: Vec<Holder>,
    /// (index, tick, holder) of every tick issued, sorted.
    pub issued: Vec<(usize, i64, i64)>,
    budget: Budget,
    /// The records deleted or whose mark was lowered: clocks then stay within the tolerance
    /// that the fresh-record wait assumes (docs/guarantees.md), and their holders may issue
    /// up to the mark they confirmed, which the record no longer says.
    tampered: [bool; INDEXES],
}

impl World {
    pub fn new(cfg: &Config) -> World {
        let mut world = World {
            now: 0,
            records: Records::new(),
            next_holder: 0,
            holders: Vec::new(),
            issued: Vec::new(),
            budget: Budget {
                forks: cfg.forks,
                restarts: cfg.restarts,
                releases: cfg.releases,
                steps: cfg.steps,
                tampers: cfg.tampers,
            },
            tampered: [false; INDEXES],
        };
        for _ in 0..cfg.holders {
            let holder = world.holder(layout_keeper(), WALL0, None);
            world.holders.push(holder);
        }
        world.with_fences(|w| (0..w.holders.len()).for_each(|h| w.drive(h)));
        world
    }

    fn holder(&mut self, mut keeper: Keeper, wall_offset: i64, last_tick: Option<i64>) -> Holder {
        self.next_holder += 1;
        keeper.set_gen_offset(wall_offset);
        Holder {
            keeper,
            id: self.next_holder,
            wall_offset,
            outbox: Vec::new(),
            inbox: Vec::new(),
            published: None,
            last_tick,
            wake_at: self.now,
            released: false,
        }
    }

    /// Every event that changes something from here.
    pub fn enabled(&self, cfg: &Config) -> Vec<Event> {
        let mut events = Vec::new();
        let b = &self.budget;
        for (h, holder) in self.holders.iter().enumerate() {
            let (out, inb) = (holder.outbox.len(), holder.inbox.len());
            if out + inb > 0 {
                events.push(Event::Settle(h));
            }
            if cfg.wire {
                if out + inb > 0 {
                    events.push(Event::Lose(h));
                }
                if out > 0 {
                    events.push(Event::Send(h));
                }
                if inb > 0 {
                    events.push(Event::Answer(h));
                }
                if inb > 1 {
                    events.push(Event::AnswerNewest(h));
                }
            }
            if !holder.released {
                events.push(Event::Issue(h));
                if b.releases > 0 {
                    events.push(Event::Release(h));
                }
            }
            if b.forks > 0 && self.holders.len() < cfg.max_holders {
                events.push(Event::Fork(h));
            }
            if b.restarts > 0 {
                events.push(Event::Restart(h));
            }
            if b.steps > 0 {
                events.extend(cfg.step_sizes.iter().map(|d| Event::Step(h, *d)));
            }
        }
        events.extend(cfg.advances.iter().map(|d| Event::Advance(*d)));
        if b.tampers > 0 && self.clocks_agree() {
            for i in 0..INDEXES {
                events.push(Event::Delete(i));
                if cfg.raise {
                    events.push(Event::Raise(i));
                }
                if cfg.lower_unheld || self.records.live_holder(i).is_some() {
                    events.push(Event::Lower(i));
                }
            }
        }
        events
    }

    /// Takes `event`; an error names the property it broke.
    pub fn apply(&mut self, event: Event) -> Result<(), String> {
        self.with_fences(|w| w.step(event))
    }

    /// Gives each keeper a fence of its own for the length of one event, holding what it
    /// published before (a copied keeper would share its original's).
    fn with_fences<R>(&mut self, f: impl FnOnce(&mut World) -> R) -> R {
        for holder in self.holders.iter_mut() {
            let fence = Fence::default();
            if let Some(grant) = holder.published {
                fence.publish(grant);
            }
            holder.keeper.attach(fence);
        }
        let result = f(self);
        // Every keeper has one (a child or a restarted holder's is attached as it is made).
        for holder in self.holders.iter_mut() {
            if let Some(fence) = holder.keeper.detach() {
                holder.published = fence.published().grant;
            }
        }
        result
    }

    fn step(&mut self, event: Event) -> Result<(), String> {
        let now = self.now;
        match event {
            Event::Settle(h) => {
                for _ in 0..16 {
                    if !self.holders[h].outbox.is_empty() {
                        self.send(h);
                    } else if !self.holders[h].inbox.is_empty() {
                        self.answer(h, false);
                    } else {
                        break;
                    }
                }
            }
            Event::Send(h) => self.send(h),
            Event::Answer(h) => self.answer(h, false),
            Event::AnswerNewest(h) => self.answer(h, true),
            Event::Lose(h) => {
                let holder = &mut self.holders[h];
                if holder.inbox.is_empty() {
                    holder.outbox.remove(0);
                } else {
                    holder.inbox.remove(0);
                }
            }
            Event::Issue(h) => return self.issue(h),
            Event::Fork(h) => {
                self.budget.forks -= 1;
                let parent = &self.holders[h];
                let keeper = parent.keeper.after_fork();
                let (wall, last) = (parent.wall_offset, parent.last_tick);
                // The child's generator is the parent's, copied: its fence closed at the fork.
                let mut child = self.holder(keeper, wall, last);
                child.keeper.attach(Fence::default());
                self.holders.push(child);
                self.drive(self.holders.len() - 1);
            }
            Event::Restart(h) => {
                self.budget.restarts -= 1;
                let wall = self.holders[h].wall_offset;
                let mut fresh = self.holder(layout_keeper(), wall, None);
                fresh.keeper.attach(Fence::default());
                self.holders[h] = fresh;
                self.drive(h);
            }
            Event::Release(h) => {
                self.budget.releases -= 1;
                let holder = &mut self.holders[h];
                holder.keeper.release(holder.last_tick);
                holder.released = true;
                self.drive(h);
            }
            Event::Step(h, delta) => {
                self.budget.steps -= 1;
                self.holders[h].wall_offset += delta;
                if self.tampered.contains(&true) && !self.clocks_agree() {
                    // Past the tolerance the fresh-record wait assumes: not modelled.
                    self.holders[h].wall_offset -= delta;
                }
            }
            Event::Advance(ms) => self.advance(now + ms)?,
            Event::Delete(i) => {
                self.budget.tampers -= 1;
                self.records.slots[i] = Default::default();
                self.tampered[i] = true;
            }
            Event::Lower(i) => {
                self.budget.tampers -= 1;
                let slot = &mut self.records.slots[i];
                slot.mark = Some(now + self.holders[0].wall_offset - 1);
                slot.version += 1;
                self.tampered[i] = true;
            }
            Event::Raise(i) => {
                self.budget.tampers -= 1;
                let slot = &mut self.records.slots[i];
                slot.mark = Some(now + WALL0 + RAISED_AHEAD_MS);
                slot.version += 1;
            }
        }
        Ok(())
    }

    /// Whether every holder's clock is within the keeper's tolerance of every other's.
    fn clocks_agree(&self) -> bool {
        let offsets = self.holders.iter().map(|h| h.wall_offset);
        let (low, high) = (offsets.clone().min(), offsets.max());
        high.zip(low)
            .is_none_or(|(high, low)| high - low <= flakery::lease::keeper::MAX_CLOCK_TOLERANCE_MS)
    }

    fn send(&mut self, h: usize) {
        let wall = self.now + self.holders[h].wall_offset;
        let ticket = self.holders[h].outbox.remove(0);
        let id = self.holders[h].id;
        if let Some(outcome) = self.records.carry(id, &ticket, wall) {
            self.holders[h].inbox.push((ticket.seq, outcome));
        }
    }

    fn answer(&mut self, h: usize, newest: bool) {
        let holder = &mut self.holders[h];
        let at = if newest { holder.inbox.len() - 1 } else { 0 };
        let (seq, outcome) = holder.inbox.remove(at);
        holder.keeper.answer(seq, outcome, self.now);
        self.drive(h);
    }

    /// Polls holder `h` as its background thread would, until it sleeps.
    fn drive(&mut self, h: usize) {
        let now = self.now;
        let holder = &mut self.holders[h];
        for _ in 0..8 {
            match holder.keeper.poll(now) {
                Next::Send(ticket) => holder.outbox.push(ticket),
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
    fn advance(&mut self, to: i64) -> Result<(), String> {
        for _ in 0..1000 {
            let next = (0..self.holders.len()).min_by_key(|h| self.holders[*h].wake_at);
            let Some(h) = next.filter(|h| self.holders[*h].wake_at <= to) else {
                self.set_time(to);
                return Ok(());
            };
            let at = self.holders[h].wake_at.max(self.now);
            self.set_time(at);
            self.drive(h);
        }
        Err(format!(
            "a keeper asks to wake again and again before {to}: a busy loop"
        ))
    }

    fn set_time(&mut self, at: i64) {
        self.now = at;
        self.records.set_time(at);
    }

    /// The generator of holder `h` issues one tick: under the grant published into its fence,
    /// else after asking its keeper (whose answer is published too).
    fn issue(&mut self, h: usize) -> Result<(), String> {
        let now = self.now;
        let holder = &mut self.holders[h];
        let wall = now + holder.wall_offset;
        let last = holder.last_tick;
        let usable = |grant: &Grant| {
            // The next tick after the last, at least the present one, past the grant's floor,
            // borrowing at most the default.
            let tick = wall
                .max(last.map_or(i64::MIN, |l| l + 1))
                .max(grant.floor_ms.saturating_add(1));
            (tick <= grant.until_ms && tick <= wall + MAX_BORROW_MS)
                .then_some((grant.node.worker_id as usize, tick))
        };
        let (index, tick) = match holder.published.as_ref().and_then(usable) {
            Some(found) => found,
            None => {
                let want = wall.max(last.map_or(i64::MIN, |l| l + 1));
                let granted = holder.keeper.grant(want, wall, now);
                let found = granted.as_ref().ok().and_then(usable);
                if granted.is_err() {
                    // The ask woke the keeper's thread.
                    self.drive(h);
                }
                match found {
                    Some(found) => found,
                    None => return Ok(()),
                }
            }
        };
        let holder = &mut self.holders[h];
        let id = holder.id;
        // The first rule (keeper_properties.rs checks it too): an ID only under a claim the
        // coordinator still has as this holder's, within the mark it stores; for a record
        // edited by hand, only the ticks issued twice tell.
        let slot = &self.records.slots[index];
        if !self.tampered[index] {
            if self.records.live_holder(index) != Some(id) {
                return Err(format!(
                    "holder {id} issued under node index {index}, which it does not hold now"
                ));
            }
            if slot.mark.is_none_or(|mark| tick > mark) {
                return Err(format!("tick {tick} past the stored mark {:?}", slot.mark));
            }
        }
        if last.is_some_and(|l| tick <= l) {
            return Err(format!(
                "holder {id}'s IDs decrease: tick {tick} after {last:?}"
            ));
        }
        holder.last_tick = Some(tick);
        let at = self.issued.partition_point(|e| (e.0, e.1) < (index, tick));
        if let Some(other) = self.issued.get(at).filter(|e| (e.0, e.1) == (index, tick)) {
            return Err(format!(
                "tick {tick} of node index {index} issued twice: by holder {} and holder {id}",
                other.2
            ));
        }
        self.issued.insert(at, (index, tick, id));
        Ok(())
    }
}

fn layout_keeper() -> Keeper {
    Keeper::new(&layout(), "the model coordinator".into(), TERM)
}

/// Two node IDs (the worker field of one bit): the node index is the worker ID.
pub fn layout() -> Layout {
    Layout::parse("time:41,worker:1,sequence:12;epoch=0").unwrap()
}

//! One process's side of a client: the stock of IDs, the thread that refills it, and the
//! callers that take from it or wait (bounded by their deadline) for it to be refilled.
//!
//! One refiller thread asks the servers, so a block is asked for once and installed once; it
//! holds no lock while it waits on the network. A caller takes from the block it holds (each
//! thread keeps the stock's front block, `held`) without a lock: one `fetch_add` claims an ID
//! (`stock`); the engine is asked only when that fails or leaves the stock low. Taking a new
//! block, waiting and refilling are under a plain mutex: after `fork()` the child makes an
//! engine of its own and never touches this one (`current`), so a lock held by a thread the
//! child does not have cannot hang it, and a block it inherited is never claimed from (it is
//! held for another fork generation).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::deadline::Deadline;
use crate::failover::Failover;
use crate::failure;
use crate::held;
use crate::options::Settings;
use crate::shared::Shared;
use crate::sizing::Sizing;
use crate::stock::{Block, Stock};
use crate::ticks::{Monotonic, Ticks};
use crate::transport::Transport;
use flakery::{Error, Result};

/// How long the refiller sleeps when nothing is asked of it (it is woken when something is).
const IDLE: Duration = Duration::from_secs(1);

pub struct Engine {
    settings: Arc<Settings>,
    clock: Monotonic,
    pub generation: u64,
    /// The client's number (`held::next_owner`): with the generation, whose blocks a thread
    /// holds.
    owner: u64,
    transport: Transport,
    /// The client's, in every fork generation: closed, refused for its fallback.
    shared: Arc<Shared>,
    state: Mutex<State>,
    /// A block arrived or a round of asking failed: callers look again.
    arrived: Condvar,
    /// The refiller is wanted.
    wake: Condvar,
    /// Relaxed is enough: every load that decides a caller's answer is made under `state`'s
    /// lock, which `stop` takes after its store (the lock orders the two); the refiller's
    /// loads outside it only end a round early.
    stop: AtomicBool,
}

struct State {
    stock: Stock,
    failover: Failover,
    sizing: Sizing,
    /// Callers waiting for IDs, and the most IDs one of them still needs.
    waiting: usize,
    wanted: usize,
    /// An ID was taken since the last block arrived (an idle client asks for nothing).
    used: bool,
    /// The refiller was woken and has not started asking yet (wake it once, not per call).
    woken: bool,
    /// Times a caller woke the refiller (for `Stats`).
    wakes: u64,
    /// How long the last block took to come, from its request to its answer read.
    round_trip_ms: u64,
    /// The refiller thread, once started; taken by the `stop` that joins it.
    refiller: Option<JoinHandle<()>>,
    /// The refiller is asking the servers (without the lock): a `stop` then does not wait
    /// for it, as it may be in a request for up to `request_timeout`.
    asking: bool,
    /// A refiller was started (it is not started again once stopped and joined).
    started: bool,
    layout_checked: Vec<bool>,
}

impl Engine {
    pub fn new(
        settings: Arc<Settings>,
        shared: Arc<Shared>,
        owner: u64,
        generation: u64,
    ) -> Arc<Self> {
        let servers = settings.servers.len();
        // Processes on one host start on different servers, unless told which comes first.
        let start = match settings.given.prefer_first {
            true => 0,
            false => std::process::id() as usize,
        };
        let target_ms = (settings.max_age_ms / 4).max(1);
        Arc::new(Engine {
            transport: Transport::new(
                settings.authorization.clone(),
                settings.given.request_timeout,
                settings.tls.clone(),
            ),
            state: Mutex::new(State {
                stock: Stock::new(),
                failover: Failover::new(servers, start),
                sizing: Sizing::new(
                    settings.given.min_block,
                    settings.given.max_block,
                    target_ms,
                ),
                waiting: 0,
                wanted: 0,
                used: false,
                woken: false,
                wakes: 0,
                round_trip_ms: 0,
                refiller: None,
                asking: false,
                started: false,
                layout_checked: vec![false; servers],
            }),
            settings,
            shared,
            clock: Monotonic,
            generation,
            owner,
            arrived: Condvar::new(),
            wake: Condvar::new(),
            stop: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every field is whole between statements: a panic elsewhere leaves nothing half-done.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The deadline of a call of `count` IDs starting now.
    pub fn deadline(&self, count: usize) -> Deadline {
        Deadline::new(self.clock.now_ms(), count, &self.settings)
    }

    /// Fills `out` from the stock, waiting for the refiller until the call's `deadline` (of
    /// the whole call: `out` may be one chunk of it).
    pub fn fill(self: &Arc<Self>, out: &mut [i64], deadline: &Deadline) -> Result<()> {
        let mut state = self.lock();
        let mut filled = 0;
        loop {
            // Closed (here or in a parent before the fork) or refused: final, before anything
            // is taken (this engine's stock was cleared; a fork's fresh one never fills).
            if let Some(failure) = self.shared.failure() {
                return Err(failure);
            }
            let stamp = self.clock.stamp();
            let now = stamp.ms;
            let taken = state.stock.take_into(stamp, &mut out[filled..]);
            filled += taken;
            state.used |= taken > 0;
            state.stock.arm(self.low_watermark(&state));
            self.want_more(&mut state, out.len() - filled);
            if filled == out.len() {
                return Ok(());
            }
            if self.stop.load(Relaxed) {
                return Err(Error::invalid_argument("the client is closed"));
            }
            // Every server failed when last asked and none may be asked again yet: fail now
            // rather than wait for what cannot come.
            if state.failover.all_backing_off(now) {
                return Err(self.failed(&state, "now (each is backing off after a failure)"));
            }
            if now >= deadline.at_ms {
                return Err(self.failed(&state, &deadline.missed()));
            }
            state.waiting += 1;
            state.wanted = state.wanted.max(out.len() - filled);
            let wait = Duration::from_millis(deadline.at_ms - now);
            state = self
                .arrived
                .wait_timeout(state, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            state.waiting -= 1;
            if state.waiting == 0 {
                state.wanted = 0;
            }
        }
    }

    /// One ID, after `claimed`, the answer of this thread's held block (`held::claim`) for
    /// this engine: the steady state is that claim alone, and never comes here.
    pub fn next_id(self: &Arc<Self>, claimed: Option<(i64, bool)>) -> Result<i64> {
        if let Some(id) = self.try_next_id(claimed) {
            return Ok(id);
        }
        let mut id = [0];
        self.fill(&mut id, &self.deadline(1))?;
        Ok(id[0])
    }

    /// One ID from the stock if it holds one now (after `claimed`, as `next_id`); `None` when
    /// a call would have to wait for a block (or fail). Never waits on the network: it wakes
    /// the refiller at most.
    pub fn try_next_id(self: &Arc<Self>, claimed: Option<(i64, bool)>) -> Option<i64> {
        match claimed {
            Some((id, false)) => Some(id),
            Some((id, true)) => {
                self.low();
                Some(id)
            }
            None => self.take_locked(),
        }
    }

    /// The held block is used up, too old, another engine's or none: one ID from the stock,
    /// and its front block to hold.
    #[cold]
    fn take_locked(self: &Arc<Self>) -> Option<i64> {
        let mut state = self.lock();
        let id = state.stock.take(self.clock.stamp());
        if id.is_some() {
            state.used = true;
            let watermark = self.low_watermark(&state);
            state.stock.arm(watermark);
            if state.stock.left() <= watermark {
                self.want_more(&mut state, 0);
            }
        }
        let front = state.stock.front();
        drop(state);
        // The block let go of may be the last hold on it: freed outside the lock.
        held::hold(self.owner, self.generation, front);
        id
    }

    /// The claim just made left the stock at its low watermark.
    #[cold]
    fn low(self: &Arc<Self>) {
        let mut state = self.lock();
        state.used = true;
        self.want_more(&mut state, 0);
    }

    /// Below it, the next block is asked for (`Sizing::low_watermark`).
    fn low_watermark(&self, state: &State) -> usize {
        match self.settings.given.prefetch {
            true => state.sizing.low_watermark(state.round_trip_ms),
            false => 0,
        }
    }

    /// Wakes the refiller (starting it the first time) when the stock is low or a caller is
    /// short of `short` IDs.
    fn want_more(self: &Arc<Self>, state: &mut State, short: usize) {
        let low = state.stock.left() <= self.low_watermark(state) && self.settings.given.prefetch;
        if !(low || short > 0) || state.woken {
            return;
        }
        state.woken = true;
        state.wakes += 1;
        if !state.started && !self.stop.load(Relaxed) {
            let engine = Arc::clone(self);
            // Callers wait out their deadline if it fails; the next one tries again.
            if let Ok(refiller) = std::thread::Builder::new()
                .name("flakery-client".into())
                .spawn(move || engine.refill())
            {
                state.refiller = Some(refiller);
                state.started = true;
            }
        }
        self.wake.notify_one();
    }

    fn failed(&self, state: &State, why: &str) -> Error {
        failure::error(&self.settings.servers, state.failover.failures(), why)
    }

    /// IDs held now, IDs dropped unused for their age since the client was made, and the
    /// times a caller woke the refiller.
    pub fn stats(&self) -> (usize, u64, u64) {
        let state = self.lock();
        (state.stock.left(), state.stock.dropped(), state.wakes)
    }

    /// Stops the refiller after what it is doing; callers waiting fail now. Answers the
    /// refiller's thread when it is between requests: it ends at its next look at `stop`,
    /// without I/O, so joining it waits for no server (`Client::close` does; `Drop` does not).
    /// One in a request is left to end by itself after it.
    pub fn stop(&self) -> Option<JoinHandle<()>> {
        self.stop.store(true, Relaxed);
        // Held briefly by every holder (never across I/O): this does not wait on the network.
        let mut state = self.lock();
        state.stock.clear();
        let idle = match state.asking {
            true => None,
            false => state.refiller.take(),
        };
        drop(state);
        self.wake.notify_all();
        self.arrived.notify_all();
        idle
    }

    /// The refiller: asks for a block whenever the stock is low and IDs are being used, or a
    /// caller waits; each round tries the servers in the failover's order until one answers.
    fn refill(self: Arc<Self>) {
        let mut state = self.lock();
        loop {
            if self.stop.load(Relaxed) || self.shared.failure().is_some() {
                return;
            }
            let stamp = self.clock.stamp();
            let now = stamp.ms;
            state.stock.expire(stamp);
            let low = state.stock.left() <= self.low_watermark(&state);
            // Callers wait for more than is held (not yet woken by the last block), or the
            // stock in use is low.
            let short = state.waiting > 0 && state.stock.left() < state.wanted.max(1);
            let needed = short || (self.settings.given.prefetch && low && state.used);
            let order = state.failover.order(now);
            if !needed || order.is_empty() {
                state.woken = false;
                let sleep = if needed {
                    Duration::from_millis(state.failover.next_retry_ms().saturating_sub(now))
                } else {
                    IDLE
                };
                state = self
                    .wake
                    .wait_timeout(state, sleep.max(Duration::from_millis(1)))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
            let size = state
                .sizing
                .ask(now)
                .max(state.wanted.min(self.settings.given.max_block));
            let layout_checked = state.layout_checked.clone();
            state.woken = false;
            state.asking = true;
            drop(state);
            let mut got = None;
            let mut round_trip_ms = None;
            let mut failures = Vec::new();
            for server in order {
                if self.stop.load(Relaxed) {
                    return;
                }
                // Before the request is sent: every ID of the answer is younger than this.
                let mut made_after = self.clock.stamp();
                let sent_ms = made_after.ms;
                made_after.ms = made_after.ms.saturating_sub(self.clock.lag_ms());
                let url = &self.settings.servers[server];
                let result = match layout_checked[server] {
                    true => Ok(()),
                    false => self.transport.check_layout(url, &self.settings.layout),
                }
                .and_then(|()| self.transport.fetch(url, size));
                match result {
                    Ok(ids) => {
                        round_trip_ms = Some(self.clock.now_ms().saturating_sub(sent_ms));
                        let fallback = self.settings.given.fallback.as_deref();
                        if let Some(refusal) = self.shared.saw_block(&ids, url, fallback) {
                            got = Some((server, Err(refusal)));
                            break;
                        }
                        let block = Block::new(ids, made_after, self.settings.max_age_ms);
                        got = Some((server, Ok(block)));
                        break;
                    }
                    Err(failure) => failures.push((server, self.clock.now_ms(), failure)),
                }
            }
            state = self.lock();
            state.asking = false;
            if self.stop.load(Relaxed) {
                return;
            }
            for (server, at, failure) in failures {
                state.failover.failed(server, at, failure);
                // It may come back restarted with another layout: checked again first.
                state.layout_checked[server] = false;
            }
            match got {
                Some((server, Ok(block))) => {
                    state.failover.succeeded(server);
                    state.round_trip_ms = round_trip_ms.unwrap_or(0);
                    state.layout_checked[server] = true;
                    state.stock.add(block);
                    state.stock.arm(self.low_watermark(&state));
                    state.used = false;
                }
                // The fallback is on a server's node: nothing more is handed out, and the
                // callers waiting fail with the refusal.
                Some((_, Err(_))) => {
                    self.stop.store(true, Relaxed);
                    state.stock.clear();
                    self.arrived.notify_all();
                    return;
                }
                None => {}
            }
            self.arrived.notify_all();
        }
    }
}

//! The breadth-first search: every enabled event from every state, to a depth, each state
//! taken once (by a fingerprint of everything in it: the keepers, the wire, the generators,
//! the records, the clocks, the ticks issued). A broken property ends the search with the
//! shortest path to it, replayed as a readable trace.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hasher};

use crate::world::{Config, Event, World};

pub struct Stats {
    pub states: usize,
    pub depth: usize,
    /// Ticks issued in the state that issued most.
    pub most_issued: usize,
    /// Whether some state has a node index whose ticks were issued by two holders.
    pub handed_over: bool,
}

pub struct Counterexample {
    pub events: Vec<Event>,
    pub violation: String,
}

/// A fingerprint of the whole state. The keepers have no `Hash` (their errors carry
/// messages): their `Debug` text is their canonical snapshot, fence detached.
fn fingerprint(world: &World) -> u64 {
    struct Hashing(DefaultHasher);
    impl std::fmt::Write for Hashing {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut hashing = Hashing(DefaultHasher::new());
    let _ = write!(hashing, "{world:?}");
    hashing.0.finish()
}

pub fn explore(cfg: &Config, depth: usize) -> Result<Stats, Counterexample> {
    let started = std::time::Instant::now();
    let mut start = World::new(cfg);
    for event in &cfg.prefix {
        if let Err(violation) = start.apply(*event) {
            let events = cfg.prefix.clone();
            return Err(Counterexample { events, violation });
        }
    }
    let mut seen = HashSet::new();
    seen.insert(fingerprint(&start));
    // How each state was reached: its parent's entry and the event.
    let mut paths: Vec<(u32, Event)> = Vec::new();
    let mut layer: Vec<(World, Option<u32>)> = vec![(start, None)];
    let mut stats = Stats {
        states: 1,
        depth: 0,
        most_issued: 0,
        handed_over: false,
    };
    let path_of = |paths: &Vec<(u32, Event)>, mut at: Option<u32>| {
        let mut events = Vec::new();
        while let Some(i) = at {
            let (parent, event) = paths[i as usize];
            events.push(event);
            at = (parent != u32::MAX).then_some(parent);
        }
        events.reverse();
        events
    };
    for level in 1..=depth {
        let mut next = Vec::new();
        for (world, at) in &layer {
            for event in world.enabled(cfg) {
                let mut after = world.clone();
                if let Err(violation) = after.apply(event) {
                    let mut events = cfg.prefix.clone();
                    events.extend(path_of(&paths, *at));
                    events.push(event);
                    return Err(Counterexample { events, violation });
                }
                if !seen.insert(fingerprint(&after)) {
                    continue;
                }
                stats.most_issued = stats.most_issued.max(after.issued.len());
                stats.handed_over |= handed_over(&after);
                stats.states += 1;
                if level < depth {
                    // The last level is only checked: nothing is searched from it.
                    paths.push((at.unwrap_or(u32::MAX), event));
                    next.push((after, Some(paths.len() as u32 - 1)));
                }
            }
        }
        stats.depth = level;
        eprintln!(
            "{}: depth {level}, {} states in all, {:.1} s",
            cfg.name,
            stats.states,
            started.elapsed().as_secs_f64()
        );
        if next.is_empty() {
            break;
        }
        layer = next;
    }
    Ok(stats)
}

fn handed_over(world: &World) -> bool {
    world
        .issued
        .windows(2)
        .any(|w| w[0].0 == w[1].0 && w[0].2 != w[1].2)
}

/// The counterexample replayed: each event, then the clocks, the records, each holder's
/// keeper and generator, and the ticks issued.
pub fn trace(cfg: &Config, example: &Counterexample) -> String {
    let mut world = World::new(cfg);
    let mut out = String::new();
    let _ = writeln!(out, "start\n{}", world.describe());
    for (n, event) in example.events.iter().enumerate() {
        let result = world.apply(*event);
        let _ = writeln!(out, "{}. {event:?}\n{}", n + 1, world.describe());
        if let Err(violation) = result {
            let _ = writeln!(out, "VIOLATED: {violation}");
        }
    }
    out
}

impl World {
    fn describe(&self) -> String {
        let mut out = format!("   t={} ms", self.now);
        for (i, slot) in self.records.slots.iter().enumerate() {
            let holder = match slot.holder {
                Some((h, expires)) if expires > self.records.expiry_ms => format!("holder {h}"),
                Some((h, _)) => format!("expired ({h})"),
                None => "free".into(),
            };
            let mark = slot.mark.map_or("none".into(), rel);
            let _ = write!(out, " | index {i}: {holder}, mark {mark}");
        }
        for holder in &self.holders {
            let keeper = &holder.keeper;
            let claim = keeper.claim().map_or("-".into(), |c| {
                format!(
                    "index {} floor {}",
                    c.index,
                    c.floor_ms.map_or("none".into(), rel)
                )
            });
            let grant = holder.published.map_or("-".into(), |g| {
                format!(
                    "node {} ({}, {}]",
                    g.node.worker_id,
                    rel(g.floor_ms),
                    rel(g.until_ms)
                )
            });
            let _ = write!(
                out,
                "\n   holder {}: clock {}, {:?} {claim}, deadline {:?}, published {grant}, \
                 last tick {}, {} out, {} answers",
                holder.id,
                rel(self.now + holder.wall_offset),
                keeper.state(),
                keeper.deadline(),
                holder.last_tick.map_or("-".into(), rel),
                holder.outbox.len(),
                holder.inbox.len(),
            );
        }
        let issued: Vec<String> = (self.issued.iter())
            .map(|(i, tick, h)| format!("{}@{i} by {h}", rel(*tick)))
            .collect();
        let _ = write!(out, "\n   issued: {}", issued.join(", "));
        out
    }
}

/// Unix ms shown from the model's origin (`WALL0` reads `W+0`).
fn rel(ms: i64) -> String {
    match ms {
        i64::MIN => "min".into(),
        i64::MAX => "max".into(),
        ms => format!("W{:+}", ms - crate::coordinator::WALL0),
    }
}

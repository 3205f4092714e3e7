//! What the keeper publishes into the generator's fence: a busy generator that takes only the
//! published grant when the one it holds runs out finds the next one there, across many
//! renewals and mark writes, and never has to ask.

use super::*;

/// A generator that wants a new tick every millisecond for `run_ms`, as the real one does with
/// a lease that publishes: when its grant runs out it takes the published one if that covers
/// the tick (and tells the keeper, which learns that it is busy), else it asks (`grant`) and
/// waits for a publication. The coordinator answers each request `rtt_ms` after it was sent.
/// Returns when the generator had to ask (ms since the start), the grants it took, and the
/// renewals and writes the keeper sent.
fn run_published(run_ms: i64, rtt_ms: i64) -> (Vec<i64>, usize, usize) {
    let sim = sim();
    let mut a = sim.holder();
    let fence = Fence::default();
    a.keeper.attach(fence.clone());
    a.settle(&sim);
    let start = sim.now();
    let mut until = i64::MIN;
    let mut asks = Vec::new();
    let mut waiting = false;
    let mut taken = 0;
    let mut link = Link::new(&sim);
    while sim.now() - start < run_ms {
        let now = sim.now();
        let mut poll = link.answer_due(&mut a, now);
        let wall = a.wall(&sim);
        if wall > until {
            match fence.published().grant.filter(|g| g.until_ms >= wall) {
                Some(grant) => {
                    until = grant.until_ms;
                    taken += 1;
                    if !std::mem::take(&mut waiting) {
                        // The note the generator's slow path sends when it takes a grant.
                        a.keeper
                            .grant(wall, wall, now)
                            .expect("the published grant");
                        poll = true;
                    }
                }
                None if !waiting => {
                    asks.push(now - start);
                    waiting = true;
                    if let Err(Refusal::Lost(err)) = a.keeper.grant(wall, wall, now) {
                        panic!("lost at {}: {err}", now - start);
                    }
                    poll = true;
                }
                None => {}
            }
        }
        if poll {
            link.poll(&mut a, now, rtt_ms);
        }
        sim.clock.advance(1);
    }
    (asks, taken, link.sent)
}

#[test]
fn a_busy_generator_finds_each_next_grant_published_before_it_needs_it() {
    for rtt in [1, 300, 600] {
        // Twelve renewals' worth of the term, and a mark write every few hundred ms.
        let run_ms = 3 * TERM;
        let (asks, taken, sent) = run_published(run_ms, rtt);
        // A slow link may cost an ask while the keeper learns its round trip (as it may cost
        // a wait for the mark: `busy.rs`); none after.
        assert!(
            asks.iter().all(|&at| at < 2_000),
            "round trip {rtt} ms: the generator found no grant published and asked at {asks:?}"
        );
        assert!(
            taken as i64 >= run_ms / AHEAD_MS && sent as i64 >= run_ms / AHEAD_MS,
            "round trip {rtt} ms: {taken} grants taken, {sent} requests: not a busy run"
        );
    }
}

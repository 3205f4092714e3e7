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

/// A want within the confirmed mark but past the deadline (a tick borrowed further ahead than
/// half a term) is answered at once with the grant that does not cover it, and not kept for
/// a renewal, which moves the deadline by at most half a term and so might never reach it:
/// the generator refuses it at once ("covers IDs only up to"), as before grants were
/// published. A generator that waits on such a want is woken to ask again, although the grant
/// published (up to the deadline) did not change. Caught when the keeper kept every want its
/// grant did not cover, and (the epoch) when it dropped the want without waking the waiter.
#[test]
fn a_want_past_the_deadline_within_the_mark_is_answered_not_kept() {
    let sim = sim();
    let mut a = sim.holder();
    let fence = Fence::default();
    a.keeper.attach(fence.clone());
    a.settle(&sim);
    let wall = a.wall(&sim);
    // A first want brings the mark past the deadline: the grant published ends there.
    let near = wall + TERM / 2 - 500;
    assert!(matches!(
        a.keeper.grant(near, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    a.settle(&sim);
    let deadline_grant = a.keeper.grant(near, wall, sim.now()).expect("covered");
    assert!(deadline_grant.until_ms >= near && deadline_grant.until_ms < near + AHEAD_MS);
    // A want past the mark: kept while the mark is written.
    let far = wall + TERM / 2 + 1000;
    assert!(matches!(
        a.keeper.grant(far, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    assert!(a.keeper.is_wanted(), "kept while its mark is written");
    let epoch = fence.published().epoch;
    a.settle(&sim);
    // The mark now covers the far tick; the deadline does not, and the grant published is
    // the same. The want is dropped, and a generator waiting on it woken to ask again.
    assert_eq!(fence.published().grant, Some(deadline_grant));
    assert!(
        !a.keeper.is_wanted(),
        "a want no renewal may reach was kept"
    );
    assert!(
        fence.published().epoch > epoch,
        "the waiting generator was not woken"
    );
    let grant = a
        .keeper
        .grant(far, wall, sim.now())
        .expect("the mark covers it");
    assert_eq!(grant, deadline_grant);
    assert!(
        !a.keeper.is_wanted(),
        "a want no renewal may reach was kept"
    );
}

//! A busy generator against a coordinator whose round trip varies: how long it waits for its
//! mark and how many writes it costs.

use super::*;

/// A generator that wants a new tick every millisecond for `run_ms`, against a coordinator
/// that answers each request `rtt(sent)` ms after it was sent; the keeper driven as its
/// thread drives it (at the instant `poll` names, after each answer, after a refused grant).
/// Returns each wait of the generator for its mark (when it began, how long) and the number
/// of requests sent.
fn run_busy(run_ms: i64, rtt: impl Fn(i64) -> i64) -> (Vec<(i64, i64)>, usize) {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    let start = sim.now();
    let mut until = i64::MIN;
    let mut waiting_since = None;
    let mut waits = Vec::new();
    let mut link = Link::new(&sim);
    while sim.now() - start < run_ms {
        let now = sim.now();
        let mut poll = link.answer_due(&mut a, now);
        let wall = a.wall(&sim);
        if waiting_since.is_some() || wall > until {
            match a.keeper.grant(wall, wall, now) {
                Ok(grant) => {
                    until = grant.until_ms;
                    if let Some(since) = waiting_since.take() {
                        waits.push((since - start, now - since));
                    }
                }
                Err(Refusal::NeedMark) => {
                    waiting_since.get_or_insert(now);
                    poll = true;
                }
                Err(Refusal::Lost(err)) => panic!("lost at {}: {err}", now - start),
                Err(Refusal::Wait(floor)) => panic!("waits for the floor {floor}"),
                Err(Refusal::Unconfirmed) => panic!("suspect at {}", now - start),
            }
        }
        if poll {
            link.poll(&mut a, now, rtt(now - start));
        }
        sim.clock.advance(1);
    }
    (waits, link.sent)
}

#[test]
fn a_busy_generator_never_waits_for_its_mark_on_a_slow_link() {
    // Once the keeper has measured the round trip (the first grant waits for the first
    // mark, and a slow link may cost a short wait or two while the keeper learns it), none.
    for rtt in [1, 100, 300, 500, 600, 750] {
        let (waits, _) = run_busy(20_000, |_| rtt);
        assert!(
            waits.iter().all(|&(at, _)| at < 2_000),
            "round trip {rtt} ms: the generator waited for its mark {waits:?}"
        );
    }
}

#[test]
fn a_round_trip_that_grows_suddenly_to_the_lead_costs_nothing() {
    let jump = AHEAD_MS / 2;
    let (waits, _) = run_busy(20_000, |t| if t < 5_000 { 2 } else { jump });
    assert!(
        waits.iter().all(|&(at, _)| at == 0),
        "waited for the mark after the round trip grew to {jump} ms: {waits:?}"
    );
    // Longer: one wait (the second write comes back two round trips after the first was
    // sent, which the old look-ahead did not cover), then none.
    let (waits, _) = run_busy(20_000, |t| if t < 5_000 { 2 } else { 750 });
    let later: Vec<_> = waits.iter().filter(|w| w.0 > 0).collect();
    assert!(
        later.len() <= 1
            && later
                .iter()
                .all(|w| w.0 < 7_000 && w.1 <= 2 * 750 - AHEAD_MS),
        "{later:?}"
    );
}

#[test]
fn a_busy_generator_costs_a_few_writes_a_second() {
    let (_, sent) = run_busy(10_000, |_| 1);
    // Written AHEAD_MS ahead when MIN_LEAD_MS short of it: one write per 300 ms.
    let per_second = sent as f64 / 10.0;
    assert!(
        (2.0..=4.0).contains(&per_second),
        "{per_second} requests a second"
    );
}

#[test]
fn slow_answers_write_the_mark_sooner_but_never_further_ahead() {
    let sim = sim();
    let mut a = sim.holder();
    a.settle(&sim);
    assert_eq!(a.keeper.lead_ms(), MIN_LEAD_MS);
    // A renewal answered 700 ms after it was sent: the next write goes out 800 ms short.
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    sim.clock.advance(700);
    let outcome = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert_eq!(a.keeper.lead_ms(), MIN_LEAD_MS.max(800));
    let wall = a.wall(&sim);
    assert!(matches!(
        a.keeper.grant(wall, wall, sim.now()),
        Err(Refusal::NeedMark)
    ));
    a.settle(&sim);
    let grant = a.keeper.grant(wall, wall, sim.now()).unwrap();
    assert_eq!(grant.until_ms, wall + MAX_AHEAD_MS.min(AHEAD_MS + 700));
    // Very slow answers: the lead reaches the look-ahead (writes follow one another), and
    // the look-ahead stays below the generator's backwards tolerance.
    sim.clock.advance(TERM / 4);
    let renewal = a.take(&sim);
    sim.clock.advance(2000);
    let outcome = a.deliver(&renewal).unwrap();
    a.keeper.answer(renewal.seq, outcome, sim.now());
    assert_eq!(a.keeper.ahead_ms(), MAX_AHEAD_MS);
    assert_eq!(a.keeper.lead_ms(), MAX_AHEAD_MS);
}

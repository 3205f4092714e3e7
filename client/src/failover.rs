//! Which server to ask next: the one that answered last, else the others in turn; a server
//! that fails is skipped until its backoff ends (doubling from `BASE_MS` to `MAX_MS` with each
//! failure in a row), and one success clears it.
//!
//! When every server is backing off, a call waits for the retry only while some server is in
//! its first backoff (a blip: a restart, a coordinator stalled past one renewal, which makes
//! every server refuse at once; the retry is `BASE_MS` away); once each has failed twice in a
//! row, a call fails at once (an outage: the caller, or its fallback, learns it now, not after
//! a wait of up to `MAX_MS` per call). docs/client.md, "Failover and deadlines".

use crate::failure::Failure;

/// The backoff after a first failure.
pub const BASE_MS: u64 = 100;
/// The longest backoff: a server back from a restart is asked again within this.
pub const MAX_MS: u64 = 3000;

/// The backoff after `failures` failures in a row.
pub fn backoff_ms(failures: u32) -> u64 {
    if failures == 0 {
        return 0;
    }
    BASE_MS
        .saturating_mul(1u64 << (failures - 1).min(20))
        .min(MAX_MS)
}

#[derive(Debug, Clone, Default)]
struct Health {
    failures: u32,
    retry_at_ms: u64,
    last: Option<Failure>,
}

#[derive(Debug)]
pub struct Failover {
    health: Vec<Health>,
    preferred: usize,
}

impl Failover {
    /// `servers` servers (at least one); `start` spreads the processes of a host over them.
    pub fn new(servers: usize, start: usize) -> Self {
        let servers = servers.max(1);
        Failover {
            health: vec![Health::default(); servers],
            preferred: start % servers,
        }
    }

    /// The servers to try now, in order: the preferred one first, each not backing off.
    pub fn order(&self, now_ms: u64) -> Vec<usize> {
        let n = self.health.len();
        (0..n)
            .map(|i| (self.preferred + i) % n)
            .filter(|&i| self.health[i].retry_at_ms <= now_ms)
            .collect()
    }

    pub fn succeeded(&mut self, server: usize) {
        self.health[server] = Health::default();
        self.preferred = server;
    }

    pub fn failed(&mut self, server: usize, now_ms: u64, failure: Failure) {
        let health = &mut self.health[server];
        health.failures = health.failures.saturating_add(1);
        health.retry_at_ms = now_ms + backoff_ms(health.failures);
        health.last = Some(failure);
    }

    /// When the first server's backoff ends.
    pub fn next_retry_ms(&self) -> u64 {
        self.health.iter().map(|h| h.retry_at_ms).min().unwrap_or(0)
    }

    /// Every server failed last time it was asked and is backing off, none of them after a
    /// first failure (whose retry a call waits for): a call fails now.
    pub fn all_backing_off(&self, now_ms: u64) -> bool {
        self.health
            .iter()
            .all(|h| h.last.is_some() && h.retry_at_ms > now_ms && h.failures > 1)
    }

    /// Each server's last failure since it last answered.
    pub fn failures(&self) -> impl Iterator<Item = (usize, Option<&Failure>)> {
        self.health
            .iter()
            .enumerate()
            .map(|(i, h)| (i, h.last.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn down() -> Failure {
        Failure::unavailable("connection refused")
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let schedule: Vec<_> = (0..8).map(backoff_ms).collect();
        assert_eq!(schedule, [0, 100, 200, 400, 800, 1600, 3000, 3000]);
        assert_eq!(backoff_ms(u32::MAX), MAX_MS);
    }

    #[test]
    fn a_failed_server_is_skipped_until_its_backoff_ends() {
        let mut failover = Failover::new(3, 1);
        assert_eq!(failover.order(0), [1, 2, 0], "starts at the process's own");
        failover.failed(1, 0, down());
        assert_eq!(failover.order(0), [2, 0]);
        assert_eq!(failover.order(99), [2, 0]);
        assert_eq!(
            failover.order(100),
            [1, 2, 0],
            "tried again when the backoff ends"
        );
        failover.failed(1, 100, down());
        assert_eq!(failover.next_retry_ms(), 0, "the others need no wait");
        assert_eq!(failover.order(299), [2, 0], "second failure: 200 ms");
        failover.succeeded(2);
        assert_eq!(
            failover.order(299),
            [2, 0],
            "the one that answered comes first"
        );
        assert_eq!(failover.order(300), [2, 0, 1]);
    }

    #[test]
    fn every_server_down_is_seen_and_ends_with_the_first_backoff() {
        let mut failover = Failover::new(2, 0);
        assert!(!failover.all_backing_off(0));
        failover.failed(0, 0, down());
        failover.failed(1, 50, down());
        assert!(failover.order(60).is_empty());
        assert!(
            !failover.all_backing_off(60),
            "a first failure of each: calls wait for the retry"
        );
        failover.failed(0, 100, down());
        assert!(
            !failover.all_backing_off(110),
            "one server is still in its first backoff"
        );
        failover.failed(1, 150, down());
        assert!(failover.all_backing_off(160), "each failed twice: fail now");
        assert_eq!(failover.next_retry_ms(), 300);
        assert!(!failover.all_backing_off(300));
        assert_eq!(failover.failures().filter(|(_, f)| f.is_some()).count(), 2);
        failover.succeeded(0);
        assert_eq!(failover.failures().filter(|(_, f)| f.is_some()).count(), 1);
    }
}

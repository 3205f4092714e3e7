//! Node IDs leased from ZooKeeper: see `lease::zookeeper`. This path stays for callers of
//! `flakery::zookeeper_lease::ZooKeeperLease`.

pub use crate::lease::kept::MAX_CLOCK_BEHIND_MS;
pub use crate::lease::zookeeper::{ZooKeeperLease, MIN_SESSION_TIMEOUT_MS};

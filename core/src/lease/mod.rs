//! Leased node identity from a shared coordinator.
//!
//! - `coordinator`: the trait each backend implements (claim the lowest free node index,
//!   renew, compare-and-set the high-water mark, release) and the contract it keeps.
//! - `memory`: a backend in memory, for tests.
//! - `keeper`: the one state machine every coordinator lease runs (acquiring, held, renewing,
//!   suspect, lost, released), driven step by step with an injected clock.
//! - `kept`: the keeper on its threads, as a `NodeLease` over any backend.
//! - `zookeeper`: the ZooKeeper backend (settings, a transport that no request can hold up,
//!   the protocol) and `ZooKeeperLease`.

pub mod coordinator;
#[cfg(unix)]
pub mod host;
pub mod memory;
pub mod node;
pub mod resolve;

pub use coordinator::{Alarm, Claim, Coordinator, Failure, Token};
pub use memory::{Board, MemoryCoordinator};
pub mod keeper;
pub mod kept;
pub mod requests;
pub mod sql;
#[cfg(all(unix, feature = "zookeeper"))]
pub mod zookeeper;

//! Node identity: which node ID a generator stamps into its IDs, where it comes from, and
//! how it is held so that no two live generators ever share one (docs/spec.md#node-identity).
//!
//! ```text
//! lease/
//! ├── node.rs         the seam the generator sees: NodeLease, Grant (a node ID and the time
//! │                   it may use), Fence (refuses IDs once a lease may have passed on)
//! ├── resolve.rs      which source gives the node ID: explicit values, ZooKeeper, a database,
//! │                   the environment, the host lease, in that order (reads Options)
//! ├── host/           the zero-configuration lease: one locked file per node index
//! │   ├── mod.rs      HostLease: flock, the high-water mark written ahead, fork
//! │   ├── secure_dir.rs   a directory shared with other local users, trusted no further
//! │   └── container.rs    why the implicit directory is refused in a container
//! │
//! │   coordinator leases: one keeper, many backends
//! ├── keeper.rs       the state machine (acquiring, held, renewing, suspect, lost,
//! │                   released), stepped with an injected clock; no threads, no I/O
//! ├── requests.rs     what the keeper asks a backend, matched to the answers
//! ├── kept.rs         the keeper on its threads, as a NodeLease over any Coordinator
//! ├── status.rs       what a lease says of itself, lock-free (state, losses, round trip)
//! ├── coordinator.rs  the trait a backend implements (claim the lowest free node index,
//! │                   renew, compare-and-set the mark, release, server time) and its rules
//! ├── memory.rs       a backend in memory, for deterministic tests of the keeper
//! ├── zookeeper/      the ZooKeeper backend: settings, a transport with deadlines, protocol
//! └── sql/            the PostgreSQL and MySQL backends and uid-generator's WORKER_NODE
//! ```
//!
//! Dependencies point one way: `lease` uses `layout`, `clock`, `error`, `fork`, `timestamp`
//! and reads `options` as data; outside it, `codec` and the generator use `node`'s types and
//! the generator asks `resolve` for its `NodeLease`. `options` names two types of `sql` (the database URL, which
//! hides its password, and the mode) for its fields, and re-exports `resolve`'s functions at
//! their old paths; none of its code calls into `lease`.

pub mod connector;
pub mod coordinator;
pub mod environment;
#[cfg(unix)]
pub mod host;
pub mod keeper;
pub mod kept;
pub mod memory;
pub mod node;
pub mod requests;
pub mod resolve;
pub mod status;

pub use coordinator::{Alarm, Claim, Coordinator, Failure, Token};
pub use memory::{Board, MemoryCoordinator};

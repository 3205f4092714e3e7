//! Node identity: which node ID a generator stamps into its IDs, where it comes from, and
//! how it is held so that no two live generators ever share one (docs/spec.md#node-identity).
//!
//! ```text
//! lease/
//! ├── node.rs         the seam the generator sees: NodeLease, Grant (a node ID and the time
//! │                   it may use), Fence (refuses IDs once a lease may have passed on)
//! ├── resolve.rs      which source gives the node ID: explicit values, ZooKeeper, a database,
//! │                   the environment, the host lease, in that order: `plan` (pure: Options,
//! │                   layout, Environment) then `open`
//! ├── environment.rs  the snapshot of the FLAKERY_* variables and the host name plan reads
//! ├── connector.rs    a coordinator plan, and the Connector a program installs to open it
//! ├── host/           the zero-configuration lease: one locked file per node index
//! │   ├── mod.rs      HostLease: flock, the high-water mark written ahead, fork
//! │   ├── secure_dir.rs   a directory shared with other local users, trusted no further
//! │   └── container.rs    why the implicit directory is refused in a container
//! │
//! │   coordinator leases: one keeper, many backends
//! ├── shared_mark.rs a fixed node ID for processes that share one state word, with one
//! │                   high-water mark file they write ahead (PostgreSQL's backends)
//! ├── keeper/         the state machine (acquiring, held, renewing, suspect, lost,
//! │                   released), stepped with an injected clock; no threads, no I/O
//! ├── requests.rs     what the keeper asks a backend, matched to the answers
//! ├── kept.rs         the keeper on its threads, as a NodeLease over any Coordinator
//! ├── status.rs       what a lease says of itself, lock-free (state, losses, round trip)
//! ├── coordinator.rs  the trait a backend implements (claim the lowest free node index,
//! │                   renew, compare-and-set the mark, release, server time) and its rules
//! └── memory.rs       a backend in memory, for deterministic tests of the keeper
//!
//!     the backends are crates of their own (docs/spec.md#coordinator-crates):
//!     coordinators/zookeeper (flakery-zookeeper), coordinators/sql (flakery-sql: PostgreSQL,
//!     MySQL, uid-generator's WORKER_NODE), coordinators/all (flakery-coordinators: install())
//! ```
//!
//! Dependencies point one way: `lease` uses `layout`, `clock`, `error`, `fork`, `timestamp`
//! and reads `options` as data; outside it, `codec` and the generator use `node`'s types and
//! the generator asks `resolve` for its `NodeLease`. The core names no coordinator: a
//! coordinator plan reaches one only through the installed `connector`. `options` holds the
//! database options' types itself (`options/database.rs`) and re-exports `resolve`'s functions
//! at their old paths; none of its code calls into `lease`.

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
#[cfg(unix)]
pub mod shared_mark;
pub mod status;

pub use coordinator::{Alarm, Claim, Coordinator, Failure, Token};
pub use memory::{Board, MemoryCoordinator};

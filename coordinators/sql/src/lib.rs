//! Node IDs for flakery from a table in PostgreSQL or MySQL/MariaDB (`FLAKERY_DATABASE_URL`):
//! the database backend of the core's `Coordinator` trait, and the connector that opens a
//! database plan (`install()`, or `flakery-coordinators`, which opens ZooKeeper too). The
//! database URL (which holds a password, and is never shown unmasked) and the mode are the
//! core's options (`flakery::DatabaseUrl`, `flakery::DatabaseMode`).
//!
//! - `link`: one connection on a thread of its own, so that every request has a deadline
//!   (a paused server accepts TCP connections and never answers).
//! - `dialect`: the statements a lease needs, which `postgres` and `mysql` write in their SQL
//!   (`statements`: those they write alike).
//! - `census`: a namespace's node IDs counted for `flakery doctor`, without a lease.
//! - `claim`: the transaction that claims a node index.
//! - `coordinator`: the lease protocol on a dialect (the `Coordinator` the keeper drives).
//! - `baidu`: uid-generator's `WORKER_NODE` table and its disposable worker IDs.
//! - `tls`: the TLS a URL asks for (`sslmode`, `ssl-mode`, the CA file).
//! - `tls_config`: that request as PostgreSQL's rustls client configuration (no OpenSSL).
//! - `open`: a database plan (the URL, the mode, the namespace, the term) to a `NodeLease`.
//!
//! The clients compile only with the `postgres` and `mysql` features.

#[cfg(any(feature = "postgres", feature = "mysql"))]
mod baidu;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod census;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod claim;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod coordinator;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod dialect;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod link;
#[cfg(feature = "mysql")]
mod mysql;
mod open;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod statements;
#[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
mod tls;
#[cfg(feature = "postgres")]
mod tls_config;

#[cfg(any(feature = "postgres", feature = "mysql"))]
pub use baidu::BaiduWorkerNode;
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub use coordinator::SqlCoordinator;
pub use flakery::{DatabaseKind, DatabaseMode, DatabaseUrl};
pub use open::{census, install, open, SqlConnector};

/// The table of leased node IDs; its DDL for each database is in docs/databases.md.
pub const LEASE_TABLE: &str = "flakery_node_leases";

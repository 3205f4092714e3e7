//! Node IDs from a table in PostgreSQL or MySQL/MariaDB (`FLAKERY_DATABASE_URL`).
//!
//! - `url`: the database URL, which holds a password: parsed for its kind and host, and never
//!   shown without the password masked.
//! - `link`: one connection on a thread of its own, so that every request has a deadline
//!   (a paused server accepts TCP connections and never answers).
//! - `dialect`: the statements a lease needs, which `postgres` and `mysql` write in their SQL
//!   (`statements`: those they write alike).
//! - `claim`: the transaction that claims a node index.
//! - `coordinator`: the lease protocol on a dialect (the `Coordinator` the keeper drives).
//! - `baidu`: uid-generator's `WORKER_NODE` table and its disposable worker IDs.
//! - `tls`: the TLS a URL asks for (`sslmode`, `ssl-mode`, the CA file).
//! - `tls_config`: that request as PostgreSQL's rustls client configuration (no OpenSSL).
//! - `resolve`: `database_url` / `FLAKERY_DATABASE_URL` and the mode, to a `NodeLease`.
//!
//! The URL and the options compile in every build; the clients only with the `postgres` and
//! `mysql` features.

#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod baidu;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod claim;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod coordinator;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod dialect;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod link;
#[cfg(all(unix, feature = "mysql"))]
mod mysql;
#[cfg(all(unix, feature = "postgres"))]
mod postgres;
mod resolve;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
mod statements;
mod tls;
#[cfg(all(unix, feature = "postgres"))]
mod tls_config;
mod url;

#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
pub use baidu::BaiduWorkerNode;
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
pub use coordinator::SqlCoordinator;
pub use resolve::{database_lease, resolved_database_mode, resolved_database_url};
pub use url::{DatabaseKind, DatabaseUrl};

use std::str::FromStr;

use crate::error::{Error, Result};

/// How node IDs are taken from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatabaseMode {
    /// Leased rows of flakery's own table, renewed, with a high-water mark (the default).
    #[default]
    Lease,
    /// uid-generator's `WORKER_NODE`: one new row per start, its `ID` the worker ID.
    Baidu,
}

impl DatabaseMode {
    pub const fn as_str(self) -> &'static str {
        match self {
            DatabaseMode::Lease => "lease",
            DatabaseMode::Baidu => "baidu",
        }
    }
}

impl FromStr for DatabaseMode {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text.trim() {
            "lease" => Ok(DatabaseMode::Lease),
            "baidu" => Ok(DatabaseMode::Baidu),
            other => Err(Error::invalid_argument(format!(
                "database mode '{other}' is not 'lease' (flakery's table, the default) or \
                 'baidu' (uid-generator's WORKER_NODE table)"
            ))),
        }
    }
}

/// The table of leased node IDs; its DDL for each database is in docs/databases.md.
pub const LEASE_TABLE: &str = "flakery_node_leases";

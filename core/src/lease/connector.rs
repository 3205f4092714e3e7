//! How a coordinator plan becomes a lease. The core knows no coordinator's protocol: a
//! program that leases node IDs from ZooKeeper or a database installs, once, a `Connector`
//! that opens them (the `flakery-coordinators` crate's `install()` does, and the bindings,
//! the CLI and the server call it). Without one a coordinator plan is refused with a message
//! that names the crate to add (docs/spec.md#coordinator-crates), never a silent fall back
//! to another source of node IDs.

use std::fmt;
use std::sync::OnceLock;

use crate::doctor::census::Census;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::lease::node::NodeLease;
use crate::options::{zookeeper_shown, DatabaseKind, DatabaseMode, DatabaseUrl};

/// A lease of node IDs from a coordinator, as the options and the environment ask for it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CoordinatorPlan {
    pub kind: CoordinatorKind,
    /// Validated: 1 to 64 letters, digits, '-', '_' or '.'.
    pub namespace: String,
    /// The session timeout (ZooKeeper) or lease term (databases), as given: the coordinator
    /// checks its own bounds.
    pub session_timeout_ms: u64,
}

/// Which coordinator, and what it needs of its own.
#[derive(Clone, PartialEq, Eq)]
pub enum CoordinatorKind {
    /// `[user:password@]host:port[,...][/chroot]`.
    ZooKeeper { connect: String },
    /// A PostgreSQL or MySQL/MariaDB database; `datacenter_id`: fixed alone, checked against
    /// the layout, the worker leased under it.
    Database {
        url: DatabaseUrl,
        mode: DatabaseMode,
        datacenter_id: Option<u64>,
    },
}

impl fmt::Debug for CoordinatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorKind::ZooKeeper { connect } => f
                .debug_struct("ZooKeeper")
                .field("connect", &zookeeper_shown(connect))
                .finish(),
            CoordinatorKind::Database {
                url,
                mode,
                datacenter_id,
            } => f
                .debug_struct("Database")
                .field("url", url)
                .field("mode", mode)
                .field("datacenter_id", datacenter_id)
                .finish(),
        }
    }
}

impl CoordinatorKind {
    /// What was asked for, for messages (credentials and passwords masked), and the cargo
    /// feature of `flakery-coordinators` that opens it.
    pub fn describe(&self) -> (String, &'static str) {
        match self {
            CoordinatorKind::ZooKeeper { connect } => (
                format!("a ZooKeeper lease ('{}')", zookeeper_shown(connect)),
                "zookeeper",
            ),
            CoordinatorKind::Database { url, .. } => (
                format!("a {} lease ({url})", url.kind().name()),
                match url.kind() {
                    DatabaseKind::Postgres => "postgres",
                    DatabaseKind::MySql => "mysql",
                },
            ),
        }
    }
}

/// Opens coordinator plans: installed once per process with `install_connector`.
pub trait Connector: Send + Sync {
    /// The lease `plan` asks for, for generators of `layout`; it blocks until the first
    /// grant (or its refusal).
    fn open(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>>;

    /// Counts the node IDs of `plan`'s namespace (held, free, the oldest holder, how fast
    /// they are taken) without taking a lease, within `timeout` (`flakery doctor`). Default:
    /// a connector that cannot count says so.
    fn census(
        &self,
        plan: &CoordinatorPlan,
        layout: &Layout,
        timeout: std::time::Duration,
    ) -> Result<Census> {
        let _ = (layout, timeout);
        let (what, _) = plan.kind.describe();
        Err(Error::invalid_argument(format!(
            "this program's connector cannot count the node IDs of {what}"
        )))
    }

    /// The refusal `open` would give `plan` before connecting (its connect string read as a
    /// start reads it), marked as an option's (`Error::about`): `flakery doctor` says it
    /// before probing addresses that a refused string may not even name. Default: none.
    fn check(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
        let _ = (plan, layout);
        Ok(())
    }
}

static CONNECTOR: OnceLock<Box<dyn Connector>> = OnceLock::new();

/// Makes `connector` the process's way to open coordinator plans. Set once: a second call
/// gives its connector back, and the first stays (as rustls's `install_default`).
pub fn install_connector(
    connector: Box<dyn Connector>,
) -> std::result::Result<(), Box<dyn Connector>> {
    CONNECTOR.set(connector)
}

/// Whether a connector is installed.
pub fn connector_installed() -> bool {
    CONNECTOR.get().is_some()
}

/// `plan` opened by the installed connector, or the refusal that names what to add.
pub(crate) fn open_coordinator(
    plan: &CoordinatorPlan,
    layout: &Layout,
) -> Result<Box<dyn NodeLease>> {
    match CONNECTOR.get() {
        Some(connector) => connector.open(plan, layout),
        None => Err(not_installed(&plan.kind)),
    }
}

/// `plan`'s namespace counted by the installed connector (see `Connector::census`).
pub fn census_coordinator(
    plan: &CoordinatorPlan,
    layout: &Layout,
    timeout: std::time::Duration,
) -> Result<Census> {
    match CONNECTOR.get() {
        Some(connector) => connector.census(plan, layout, timeout),
        None => Err(not_installed(&plan.kind)),
    }
}

/// The installed connector's refusal of `plan` before connecting (see `Connector::check`);
/// none without a connector (the census says that).
pub fn check_coordinator(plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
    CONNECTOR
        .get()
        .map_or(Ok(()), |connector| connector.check(plan, layout))
}

/// The refusal of a coordinator plan in a program that installed no connector.
pub fn not_installed(kind: &CoordinatorKind) -> Error {
    let (what, feature) = kind.describe();
    Error::invalid_argument(format!(
        "{what} was asked for, but this program installed no coordinator connector: the \
         flakery crate leases node IDs only on this host; add the crate flakery-coordinators \
         (feature '{feature}') and call flakery_coordinators::install() before making a \
         generator (docs/spec.md#coordinator-crates)"
    ))
}

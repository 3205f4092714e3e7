//! Every coordinator of flakery's node IDs behind one connector: a program that ships them
//! (the bindings, the CLI, the server) calls `install()` once at start, and a generator
//! whose options or environment name ZooKeeper or a database leases from it
//! (docs/spec.md#coordinator-crates). Each backend is a feature (`zookeeper`, `postgres`,
//! `mysql`, all on by default); a plan for one left out is refused with a message naming it.
//!
//! ```
//! flakery_coordinators::install();
//! let generator = flakery::Generator::builder().worker_id(3).build()?;
//! # Ok::<(), flakery::Error>(())
//! ```

use std::time::Duration;

use flakery::doctor::census::Census;
use flakery::error::{Error, Result};
use flakery::{Connector, CoordinatorKind, CoordinatorPlan, DatabaseKind, Layout, NodeLease};

/// Opens ZooKeeper and database plans with the backends compiled in.
#[derive(Debug, Default, Clone, Copy)]
pub struct Coordinators;

impl Connector for Coordinators {
    fn open(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
        match &plan.kind {
            CoordinatorKind::ZooKeeper { .. } => open_zookeeper(plan, layout),
            CoordinatorKind::Database { url, .. } => match url.kind() {
                DatabaseKind::Postgres if cfg!(feature = "postgres") => open_sql(plan, layout),
                DatabaseKind::MySql if cfg!(feature = "mysql") => open_sql(plan, layout),
                _ => Err(left_out(&plan.kind)),
            },
        }
    }

    fn census(&self, plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
        match &plan.kind {
            CoordinatorKind::ZooKeeper { .. } => census_zookeeper(plan, layout, timeout),
            CoordinatorKind::Database { url, .. } => match url.kind() {
                DatabaseKind::Postgres if cfg!(feature = "postgres") => {
                    census_sql(plan, layout, timeout)
                }
                DatabaseKind::MySql if cfg!(feature = "mysql") => census_sql(plan, layout, timeout),
                _ => Err(left_out(&plan.kind)),
            },
        }
    }

    fn check(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
        match &plan.kind {
            CoordinatorKind::ZooKeeper { .. } => check_zookeeper(plan, layout),
            CoordinatorKind::Database { .. } => Ok(()),
        }
    }
}

/// Installs `Coordinators` as the process's connector, unless one is installed already
/// (which stays: see `flakery::install_connector`); returns whether this call installed it.
/// Calling it again is harmless.
pub fn install() -> bool {
    flakery::install_connector(Box::new(Coordinators)).is_ok()
}

#[cfg(feature = "zookeeper")]
fn open_zookeeper(plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    flakery_zookeeper::open(plan, layout)
}

#[cfg(not(feature = "zookeeper"))]
fn open_zookeeper(plan: &CoordinatorPlan, _: &Layout) -> Result<Box<dyn NodeLease>> {
    Err(left_out(&plan.kind))
}

#[cfg(feature = "zookeeper")]
fn census_zookeeper(plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
    flakery_zookeeper::census(plan, layout, timeout)
}

#[cfg(not(feature = "zookeeper"))]
fn census_zookeeper(plan: &CoordinatorPlan, _: &Layout, _: Duration) -> Result<Census> {
    Err(left_out(&plan.kind))
}

#[cfg(feature = "zookeeper")]
fn check_zookeeper(plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
    flakery_zookeeper::check(plan, layout)
}

#[cfg(not(feature = "zookeeper"))]
fn check_zookeeper(_: &CoordinatorPlan, _: &Layout) -> Result<()> {
    Ok(())
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
fn census_sql(plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
    flakery_sql::census(plan, layout, timeout)
}

#[cfg(not(any(feature = "postgres", feature = "mysql")))]
fn census_sql(plan: &CoordinatorPlan, _: &Layout, _: Duration) -> Result<Census> {
    Err(left_out(&plan.kind))
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
fn open_sql(plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    flakery_sql::open(plan, layout)
}

#[cfg(not(any(feature = "postgres", feature = "mysql")))]
fn open_sql(plan: &CoordinatorPlan, _: &Layout) -> Result<Box<dyn NodeLease>> {
    Err(left_out(&plan.kind))
}

fn left_out(kind: &CoordinatorKind) -> Error {
    let (what, feature) = kind.describe();
    Error::invalid_argument(format!(
        "{what} was asked for, but this program's flakery-coordinators was built without its \
         '{feature}' feature"
    ))
}

//! A database plan of the core (`flakery::CoordinatorPlan`: the URL, the mode, the namespace,
//! the term, a datacenter fixed alone) opened as a lease, and the connector that does it.
//! Which source gives the node ID, and the checks of the options, are the core's
//! (`flakery::lease::resolve::plan`).

use std::time::Duration;

use flakery::doctor::census::Census;
use flakery::error::Result;
use flakery::{Connector, CoordinatorKind, CoordinatorPlan, Layout, NodeLease};

/// The lease a database plan asks for; any other plan is not this crate's to open.
pub fn open(plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    match &plan.kind {
        CoordinatorKind::Database {
            url,
            mode,
            datacenter_id,
        } => {
            // The TLS parameters are refused here, before anything is sent, as the other
            // options are by the plan.
            super::tls::split(url.kind(), url.expose_secret())?;
            database_lease(plan, url, *mode, *datacenter_id, layout)
        }
        other => Err(flakery::lease::connector::not_installed(other)),
    }
}

/// Opens database plans (only).
#[derive(Debug, Default, Clone, Copy)]
pub struct SqlConnector;

impl Connector for SqlConnector {
    fn open(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
        open(plan, layout)
    }

    fn census(&self, plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
        census(plan, layout, timeout)
    }
}

/// The node IDs of a database plan's namespace, counted without a lease (`flakery doctor`).
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub fn census(plan: &CoordinatorPlan, layout: &Layout, timeout: Duration) -> Result<Census> {
    super::census::census(plan, layout, timeout)
}

#[cfg(not(any(feature = "postgres", feature = "mysql")))]
pub fn census(plan: &CoordinatorPlan, _: &Layout, _: Duration) -> Result<Census> {
    Err(flakery::lease::connector::not_installed(&plan.kind))
}

/// Installs `SqlConnector` as the process's connector, unless one is installed already
/// (which stays: see `flakery::install_connector`); returns whether this call installed it.
pub fn install() -> bool {
    flakery::install_connector(Box::new(SqlConnector)).is_ok()
}

#[cfg(any(feature = "postgres", feature = "mysql"))]
fn database_lease(
    plan: &CoordinatorPlan,
    url: &flakery::DatabaseUrl,
    mode: flakery::DatabaseMode,
    datacenter: Option<u64>,
    layout: &Layout,
) -> Result<Box<dyn NodeLease>> {
    use std::sync::Arc;
    use std::time::Duration;

    use flakery::lease::kept::MonotonicClock;
    use flakery::{Clock, DatabaseMode, KeptLease};

    use super::{BaiduWorkerNode, SqlCoordinator};

    let term_ms = plan.session_timeout_ms;
    match mode {
        // The plan refuses a datacenter fixed alone in this mode.
        DatabaseMode::Baidu => Ok(Box::new(BaiduWorkerNode::acquire(
            url.clone(),
            layout,
            Duration::from_millis(term_ms),
        )?)),
        DatabaseMode::Lease => {
            // The keeper's deadlines and the requests' are instants of one monotonic clock.
            let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
            let mut coordinator = SqlCoordinator::new(
                url.clone(),
                &plan.namespace,
                i64::try_from(term_ms).unwrap_or(i64::MAX),
                Arc::clone(&clock),
            )?;
            if let Some(id) = datacenter {
                coordinator = coordinator.within_datacenter(id, layout);
            }
            Ok(Box::new(KeptLease::start(
                Box::new(coordinator),
                layout,
                clock,
            )?))
        }
    }
}

#[cfg(not(any(feature = "postgres", feature = "mysql")))]
fn database_lease(
    _plan: &CoordinatorPlan,
    url: &flakery::DatabaseUrl,
    _mode: flakery::DatabaseMode,
    _datacenter: Option<u64>,
    _layout: &Layout,
) -> Result<Box<dyn NodeLease>> {
    Err(flakery::error::Error::invalid_argument(format!(
        "a database lease was asked for ({url}), but this flakery-sql was built without its \
         'postgres' and 'mysql' features"
    )))
}

#[cfg(all(test, feature = "postgres"))]
mod tests {
    use flakery::{CoordinatorKind, CoordinatorPlan, DatabaseMode, DatabaseUrl, ErrorCode, Layout};

    /// A TLS parameter the URL gets wrong is refused before anything is sent (the port is
    /// closed: a connection attempt would be `coordinator_unavailable`).
    #[test]
    fn bad_tls_parameters_are_refused_before_connecting() {
        let plan = CoordinatorPlan {
            kind: CoordinatorKind::Database {
                url: DatabaseUrl::parse("postgres://u:pw@127.0.0.1:1/ids?sslmode=sometimes")
                    .unwrap(),
                mode: DatabaseMode::Lease,
                datacenter_id: None,
            },
            namespace: "default".into(),
            session_timeout_ms: 2000,
        };
        let err = super::open(&plan, &Layout::twitter()).err().unwrap();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
        assert!(err.message().contains("sslmode"), "{err}");
        assert!(!err.message().contains("pw"), "{err}");
    }
}

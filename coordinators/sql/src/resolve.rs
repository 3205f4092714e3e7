//! The database source of node IDs, from the options and the environment: `database_url`
//! else `FLAKERY_DATABASE_URL`, `database_mode` else `FLAKERY_DATABASE_MODE` (`lease`, the
//! default, or `baidu`), the namespace and the session timeout (the lease term) as for
//! ZooKeeper. The source order (explicit IDs, ZooKeeper, database, environment, host lease)
//! is `lease::resolve::resolve_node`'s.

use crate::error::Result;
use crate::layout::Layout;
use crate::lease::node::NodeLease;
use crate::options::{env_var, Options};

use super::{DatabaseMode, DatabaseUrl};

/// `database_url`, else `FLAKERY_DATABASE_URL`.
pub fn resolved_database_url(options: &Options) -> Result<Option<DatabaseUrl>> {
    match &options.database_url {
        Some(url) => Ok(Some(url.clone())),
        None => env_var("FLAKERY_DATABASE_URL")?
            .map(|text| DatabaseUrl::parse(&text))
            .transpose(),
    }
}

/// `database_mode`, else `FLAKERY_DATABASE_MODE`, else `lease`.
pub fn resolved_database_mode(options: &Options) -> Result<DatabaseMode> {
    match options.database_mode {
        Some(mode) => Ok(mode),
        None => {
            env_var("FLAKERY_DATABASE_MODE")?.map_or(Ok(DatabaseMode::Lease), |text| text.parse())
        }
    }
}

/// The node ID of a generator with `layout`, from the database at `url`: a whole node ID,
/// or with `datacenter` (fixed alone, and checked against the layout) a worker ID of it.
#[cfg(all(unix, any(feature = "postgres", feature = "mysql")))]
pub fn database_lease(
    options: &Options,
    url: DatabaseUrl,
    layout: &Layout,
    datacenter: Option<u64>,
) -> Result<Box<dyn NodeLease>> {
    use std::sync::Arc;
    use std::time::Duration;

    use crate::clock::Clock;
    use crate::lease::kept::{KeptLease, MonotonicClock};
    use crate::lease::resolve::{resolved_namespace, resolved_session_timeout_ms};

    use super::{BaiduWorkerNode, SqlCoordinator};

    let term_ms = resolved_session_timeout_ms(options)?;
    match resolved_database_mode(options)? {
        DatabaseMode::Baidu if datacenter.is_some() => Err(crate::error::Error::invalid_argument(
            "a datacenter ID was fixed alone, but the database mode 'baidu' takes whole node \
             IDs from WORKER_NODE's ID: pass both the datacenter and the worker ID, or neither, \
             or use the mode 'lease'",
        )),
        DatabaseMode::Baidu => Ok(Box::new(BaiduWorkerNode::acquire(
            url,
            layout,
            Duration::from_millis(term_ms),
        )?)),
        DatabaseMode::Lease => {
            // The keeper's deadlines and the requests' are instants of one monotonic clock.
            let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
            let mut coordinator = SqlCoordinator::new(
                url,
                &resolved_namespace(options)?,
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

#[cfg(not(all(unix, any(feature = "postgres", feature = "mysql"))))]
pub fn database_lease(
    _options: &Options,
    url: DatabaseUrl,
    _layout: &Layout,
    _datacenter: Option<u64>,
) -> Result<Box<dyn NodeLease>> {
    Err(crate::error::Error::invalid_argument(format!(
        "a database lease was asked for ({url}), but this flakery was built without its \
         'postgres' and 'mysql' features (or not for Unix)"
    )))
}

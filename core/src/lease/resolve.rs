//! Which node ID a generator runs under, in the order of docs/spec.md#node-identity: explicit
//! values, ZooKeeper, a database, the environment, the host-local lease.
//!
//! `plan` is a pure function of the options, the layout and a snapshot of the environment
//! (`Environment`): it decides, and refuses what cannot be right, without I/O. `open` then
//! makes the lease: a fixed node, the host lease, or a coordinator's lease through the
//! connector the program installed (`connector`). `resolve_node` is the two in a row, with
//! the process's environment, and is what the generator's builder calls.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::lease::connector::{open_coordinator, CoordinatorKind, CoordinatorPlan};
use crate::lease::environment::Environment;
use crate::lease::node::{FixedNode, NodeId, NodeLease, NodeSource};
use crate::option_table::Surface;
use crate::options::{
    DatabaseMode, DatabaseUrl, Options, DEFAULT_NAMESPACE, DEFAULT_SESSION_TIMEOUT_MS,
};

/// The trailing number of a host name: `ids-7` is 7.
pub fn hostname_ordinal(hostname: &str) -> Result<u64> {
    let digits: String = hostname
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().map_err(|_| {
        Error::invalid_argument(format!(
            "FLAKERY_WORKER_ID=hostname-ordinal, but host name '{hostname}' does not end in a \
             number (a StatefulSet pod such as 'ids-7' does)"
        ))
    })
}

/// What the configuration fixes of a node ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeConfig {
    /// Nothing: lease it whole.
    Unset,
    /// Both fields (a missing worker is 0 only in that `worker_id` was given without a
    /// datacenter, the classic single-field configuration).
    Fixed(NodeId, NodeSource),
    /// Only the datacenter: the worker is leased under it.
    Datacenter(u64),
}

/// Where a generator's node ID comes from, decided; `open` makes it a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A node ID given (explicitly, by the environment or by the host name's ordinal).
    Fixed(NodeId, NodeSource),
    /// One locked file per node index in `dir` (`None`: the implicit directory, checked when
    /// opened), under `namespace`, the worker leased under `datacenter_id` when it is fixed.
    HostLease {
        dir: Option<PathBuf>,
        namespace: String,
        datacenter_id: Option<u64>,
    },
    /// A coordinator's lease, opened by the program's connector.
    Coordinator(CoordinatorPlan),
}

fn node_config(
    datacenter_id: Option<u64>,
    worker_id: Option<u64>,
    source: NodeSource,
) -> NodeConfig {
    match (datacenter_id, worker_id) {
        (None, None) => NodeConfig::Unset,
        (Some(datacenter_id), None) => NodeConfig::Datacenter(datacenter_id),
        (datacenter_id, Some(worker_id)) => NodeConfig::Fixed(
            NodeId {
                datacenter_id: datacenter_id.unwrap_or(0),
                worker_id,
            },
            source,
        ),
    }
}

/// `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID` of `env`.
pub fn node_config_in(env: &Environment) -> Result<NodeConfig> {
    let datacenter_id = env.u64("FLAKERY_DATACENTER_ID")?;
    let (worker_id, source) = match env.var("FLAKERY_WORKER_ID")? {
        Some(text) if text == "hostname-ordinal" => (
            Some(hostname_ordinal(env.host_name()?)?),
            NodeSource::Hostname,
        ),
        Some(_) => (env.u64("FLAKERY_WORKER_ID")?, NodeSource::Environment),
        None => (None, NodeSource::Environment),
    };
    Ok(node_config(datacenter_id, worker_id, source))
}

/// The order of sources: explicit values, ZooKeeper, a database, the environment, the
/// host-local lease.
/// A datacenter fixed alone (explicitly or by the environment) is kept, and the worker is
/// leased under it from the database when one is configured, else on this host (beside
/// ZooKeeper, which leases whole node IDs, it is refused, from either place).
pub fn plan(options: &Options, layout: &Layout, env: &Environment) -> Result<Plan> {
    plan_noting(options, layout, env, &mut |_| {})
}

/// `plan`, with each step it took in words (`flakery doctor`): the steps are noted where
/// `plan` decides them, so that the explanation cannot drift from the rules.
pub fn explain(
    options: &Options,
    layout: &Layout,
    env: &Environment,
) -> (Result<Plan>, Vec<String>) {
    let mut steps = Vec::new();
    let plan = plan_noting(options, layout, env, &mut |step| steps.push(step));
    (plan, steps)
}

fn plan_noting(
    options: &Options,
    layout: &Layout,
    env: &Environment,
    note: &mut dyn FnMut(String),
) -> Result<Plan> {
    // Refused whether or not a coordinator reads it, as every other option out of range is;
    // checked here once, and handed to the coordinator's plan.
    let session_timeout_ms = explicit_session_timeout_ms(options)?;
    let explicit = node_config(
        options.datacenter_id,
        options.worker_id,
        NodeSource::Explicit,
    );
    note(match explicit {
        NodeConfig::Unset => "explicit values: none given (datacenter_id, worker_id)".into(),
        NodeConfig::Fixed(node, _) => format!(
            "explicit values: datacenter_id={} worker_id={}: the node ID is fixed",
            node.datacenter_id, node.worker_id
        ),
        NodeConfig::Datacenter(id) => {
            format!("explicit values: datacenter_id={id} alone: the worker is leased under it")
        }
    });
    let config = match explicit {
        NodeConfig::Unset => {
            if let Some(connect) = zookeeper_in(options, env)? {
                note(format!(
                    "ZooKeeper: '{}' (zookeeper or FLAKERY_ZOOKEEPER): node IDs are leased \
                     from it",
                    crate::options::zookeeper_shown(&connect)
                ));
                if env.var("FLAKERY_WORKER_ID")?.is_none() {
                    if let Some(id) = env.u64("FLAKERY_DATACENTER_ID")? {
                        // It would not stay fixed: ZooKeeper leases whole node IDs.
                        return Err(Error::invalid_argument(format!(
                            "FLAKERY_DATACENTER_ID={id} is set without FLAKERY_WORKER_ID while \
                             a ZooKeeper lease is configured ('{}'), which leases whole \
                             node IDs and would not keep the datacenter: unset \
                             FLAKERY_DATACENTER_ID, or lease from a database \
                             (FLAKERY_DATABASE_URL), which leases workers under it",
                            crate::options::zookeeper_shown(&connect)
                        )));
                    }
                }
                let kind = CoordinatorKind::ZooKeeper { connect };
                return coordinator_plan(options, env, session_timeout_ms, kind);
            }
            note("ZooKeeper: not configured (zookeeper, FLAKERY_ZOOKEEPER)".into());
            if let Some(url) = database_url_in(options, env)? {
                note(format!(
                    "database: {url} (database_url or FLAKERY_DATABASE_URL): node IDs are \
                     leased from it"
                ));
                // FLAKERY_DATACENTER_ID alone stays fixed under the database lease too.
                let datacenter = match env.var("FLAKERY_WORKER_ID")? {
                    Some(_) => None,
                    None => env
                        .u64("FLAKERY_DATACENTER_ID")?
                        .map(|id| check_datacenter(layout, id, &explicit))
                        .transpose()?,
                };
                return database_plan(options, env, session_timeout_ms, url, datacenter);
            }
            note("database: not configured (database_url, FLAKERY_DATABASE_URL)".into());
            let config = node_config_in(env)?;
            note(match config {
                NodeConfig::Unset => {
                    "environment: FLAKERY_WORKER_ID and FLAKERY_DATACENTER_ID unset".into()
                }
                NodeConfig::Fixed(node, source) => format!(
                    "environment: datacenter {} worker {} ({}): the node ID is fixed",
                    node.datacenter_id,
                    node.worker_id,
                    if source == NodeSource::Hostname {
                        "FLAKERY_WORKER_ID=hostname-ordinal, the host name's number"
                    } else {
                        "FLAKERY_WORKER_ID / FLAKERY_DATACENTER_ID"
                    }
                ),
                NodeConfig::Datacenter(id) => format!(
                    "environment: FLAKERY_DATACENTER_ID={id} alone: the worker is leased under it"
                ),
            });
            config
        }
        config => config,
    };
    let datacenter_id = match config {
        NodeConfig::Fixed(node, source) => {
            if source != NodeSource::Explicit {
                // Named as the variable the value came from, not as an argument.
                crate::codec::node_bits(layout, node)
                    .map_err(crate::option_table::from_environment)?;
            }
            return Ok(Plan::Fixed(node, source));
        }
        NodeConfig::Datacenter(id) => {
            if let (NodeConfig::Datacenter(_), Some(connect)) =
                (explicit, zookeeper_in(options, env)?)
            {
                // Leasing the worker on this host alone would be a silent step down from a
                // lease that spans hosts.
                return Err(Error::invalid_argument(format!(
                    "datacenter_id was given without worker_id while a ZooKeeper lease is \
                     configured ('{}'), which leases whole node IDs: pass both \
                     datacenter_id and worker_id, or neither",
                    crate::options::zookeeper_shown(&connect)
                )));
            }
            let id = check_datacenter(layout, id, &explicit)?;
            if let NodeConfig::Datacenter(_) = explicit {
                // The worker is leased under it from the database, as it would be on this host.
                if let Some(url) = database_url_in(options, env)? {
                    return database_plan(options, env, session_timeout_ms, url, Some(id));
                }
            }
            Some(id)
        }
        NodeConfig::Unset => None,
    };
    let dir = match (&options.lease_dir, env.var("FLAKERY_LEASE_DIR")?) {
        (Some(dir), _) => Some(dir.clone()),
        (None, Some(dir)) => Some(PathBuf::from(dir)),
        (None, None) => None,
    };
    note(match &dir {
        Some(dir) => format!(
            "host lease: in {} (lease_dir or FLAKERY_LEASE_DIR)",
            dir.display()
        ),
        None => "host lease: in the implicit directory, checked when opened".into(),
    });
    Ok(Plan::HostLease {
        dir,
        namespace: namespace_in(options, env)?,
        datacenter_id,
    })
}

/// `session_timeout_ms`: the explicit value, already checked (`explicit_session_timeout_ms`).
fn coordinator_plan(
    options: &Options,
    env: &Environment,
    session_timeout_ms: Option<u64>,
    kind: CoordinatorKind,
) -> Result<Plan> {
    Ok(Plan::Coordinator(CoordinatorPlan {
        kind,
        namespace: namespace_in(options, env)?,
        session_timeout_ms: session_timeout_ms_in(session_timeout_ms, env)?,
    }))
}

fn database_plan(
    options: &Options,
    env: &Environment,
    session_timeout_ms: Option<u64>,
    url: DatabaseUrl,
    datacenter_id: Option<u64>,
) -> Result<Plan> {
    let mode = database_mode_in(options, env)?;
    if mode == DatabaseMode::Baidu && datacenter_id.is_some() {
        return Err(Error::invalid_argument(
            "a datacenter ID was fixed alone, but the database mode 'baidu' takes whole node \
             IDs from WORKER_NODE's ID: pass both the datacenter and the worker ID, or neither, \
             or use the mode 'lease'",
        ));
    }
    coordinator_plan(
        options,
        env,
        session_timeout_ms,
        CoordinatorKind::Database {
            url,
            mode,
            datacenter_id,
        },
    )
}

/// The lease `plan` asks for: blocks until a coordinator's first grant (or its refusal).
pub fn open(plan: &Plan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    match plan {
        Plan::Fixed(node, source) => Ok(Box::new(FixedNode::new(*node, *source))),
        Plan::HostLease {
            dir,
            namespace,
            datacenter_id,
        } => {
            let dir = match dir {
                Some(dir) => dir.clone(),
                None => crate::lease::host::implicit_lease_dir()?,
            };
            let scope = crate::lease::host::Scope {
                namespace: namespace.clone(),
                datacenter_id: *datacenter_id,
                worker_id: None,
            };
            Ok(Box::new(crate::lease::host::HostLease::acquire_in(
                &dir, &scope, layout,
            )?))
        }
        Plan::Coordinator(plan) => open_coordinator(plan, layout),
    }
}

/// `plan` with this process's environment, opened: the generator's source of node IDs.
pub fn resolve_node(options: &Options, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    open(&plan(options, layout, &Environment::capture())?, layout)
}

/// A datacenter fixed alone must be one the layout can hold, or no worker could be leased.
fn check_datacenter(layout: &Layout, id: u64, explicit: &NodeConfig) -> Result<u64> {
    let max = layout.datacenter().map_or(0, |slot| slot.max());
    if layout.datacenter().is_none() || id > max {
        // The same words as a datacenter ID given with a worker ID.
        crate::codec::node_bits(
            layout,
            NodeId {
                datacenter_id: id,
                worker_id: 0,
            },
        )?;
        let name = if *explicit == NodeConfig::Unset {
            "FLAKERY_DATACENTER_ID"
        } else {
            "datacenter_id"
        };
        return Err(Error::invalid_argument(format!(
            "{name}={id} does not fit layout '{layout}', whose datacenter IDs go up to {max}"
        )));
    }
    Ok(id)
}

/// `zookeeper`, else `FLAKERY_ZOOKEEPER`: the connect string to lease node IDs from.
fn zookeeper_in(options: &Options, env: &Environment) -> Result<Option<String>> {
    match &options.zookeeper {
        Some(connect) if !connect.trim().is_empty() => Ok(Some(connect.trim().to_string())),
        _ => env.var("FLAKERY_ZOOKEEPER"),
    }
}

/// The `session_timeout_ms` option, in its range.
fn explicit_session_timeout_ms(options: &Options) -> Result<Option<u64>> {
    options
        .session_timeout_ms
        .map(|ms| crate::option_table::SESSION_TIMEOUT_MS.optional_millis(Surface::Rust, ms))
        .transpose()
}

/// `explicit` (the option, checked), else `FLAKERY_SESSION_TIMEOUT_MS`, else 10000.
fn session_timeout_ms_in(explicit: Option<u64>, env: &Environment) -> Result<u64> {
    match explicit {
        Some(ms) => Ok(ms),
        None => match env.u64("FLAKERY_SESSION_TIMEOUT_MS")? {
            Some(ms) => {
                crate::option_table::SESSION_TIMEOUT_MS.optional_millis(Surface::Environment, ms)
            }
            None => Ok(DEFAULT_SESSION_TIMEOUT_MS),
        },
    }
}

/// `database_url`, else `FLAKERY_DATABASE_URL`.
fn database_url_in(options: &Options, env: &Environment) -> Result<Option<DatabaseUrl>> {
    match &options.database_url {
        Some(url) => Ok(Some(url.clone())),
        None => env
            .var("FLAKERY_DATABASE_URL")?
            .map(|text| DatabaseUrl::parse(&text))
            .transpose(),
    }
}

/// `database_mode`, else `FLAKERY_DATABASE_MODE`, else `lease`.
fn database_mode_in(options: &Options, env: &Environment) -> Result<DatabaseMode> {
    match options.database_mode {
        Some(mode) => Ok(mode),
        None => env
            .var("FLAKERY_DATABASE_MODE")?
            .map_or(Ok(DatabaseMode::Lease), |text| text.parse()),
    }
}

/// `namespace`, else `FLAKERY_NAMESPACE`, else `default`; a single path segment.
fn namespace_in(options: &Options, env: &Environment) -> Result<String> {
    let namespace = match &options.namespace {
        Some(namespace) => namespace.clone(),
        None => env
            .var("FLAKERY_NAMESPACE")?
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
    };
    check_namespace(namespace)
}

/// A namespace is 1 to 64 letters, digits, '-', '_' or '.' (a path segment of every
/// coordinator's records, and of the host lease's file names).
pub fn check_namespace(namespace: String) -> Result<String> {
    let valid = !namespace.is_empty()
        && namespace.len() <= 64
        && namespace != "."
        && namespace != ".."
        && namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !valid {
        return Err(Error::invalid_argument(format!(
            "namespace '{namespace}' must be 1 to 64 letters, digits, '-', '_' or '.'"
        )));
    }
    Ok(namespace)
}

// The same, read from this process's environment now: paths the bindings, the CLI and the
// fuzz targets call.

/// The node ID from `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID`, if both are set or the
/// layout has no datacenter field; `FLAKERY_DATACENTER_ID` alone is `node_config_from_env`'s
/// partial case.
pub fn node_from_env() -> Result<Option<(NodeId, NodeSource)>> {
    match node_config_from_env()? {
        NodeConfig::Fixed(node, source) => Ok(Some((node, source))),
        _ => Ok(None),
    }
}

/// `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID`.
pub fn node_config_from_env() -> Result<NodeConfig> {
    node_config_in(&Environment::capture())
}

/// `zookeeper`, else `FLAKERY_ZOOKEEPER`.
pub fn resolved_zookeeper(options: &Options) -> Result<Option<String>> {
    zookeeper_in(options, &Environment::capture())
}

/// `session_timeout_ms`, else `FLAKERY_SESSION_TIMEOUT_MS`, else 10000.
pub fn resolved_session_timeout_ms(options: &Options) -> Result<u64> {
    session_timeout_ms_in(
        explicit_session_timeout_ms(options)?,
        &Environment::capture(),
    )
}

/// `namespace`, else `FLAKERY_NAMESPACE`, else `default`; a single path segment.
pub fn resolved_namespace(options: &Options) -> Result<String> {
    namespace_in(options, &Environment::capture())
}

/// `database_url`, else `FLAKERY_DATABASE_URL`.
pub fn resolved_database_url(options: &Options) -> Result<Option<DatabaseUrl>> {
    database_url_in(options, &Environment::capture())
}

/// `database_mode`, else `FLAKERY_DATABASE_MODE`, else `lease`.
pub fn resolved_database_mode(options: &Options) -> Result<DatabaseMode> {
    database_mode_in(options, &Environment::capture())
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;

//! Which node ID a generator runs under, in the order of docs/spec.md#node-identity: explicit
//! values, ZooKeeper, a database, the environment, the host-local lease. The options are data
//! (`crate::options`); this module reads them with the environment and builds the lease.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::lease::node::{FixedNode, NodeId, NodeLease, NodeSource};
use crate::options::{env_u64, env_var, Options, DEFAULT_NAMESPACE, DEFAULT_SESSION_TIMEOUT_MS};

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

pub(crate) fn hostname() -> Result<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length, which is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return Err(Error::invalid_argument("cannot read the host name"));
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// The node ID from `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID`, if both are set or the
/// layout has no datacenter field; `FLAKERY_DATACENTER_ID` alone is `node_config_from_env`'s
/// partial case.
pub fn node_from_env() -> Result<Option<(NodeId, NodeSource)>> {
    match node_config_from_env()? {
        NodeConfig::Fixed(node, source) => Ok(Some((node, source))),
        _ => Ok(None),
    }
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

/// `FLAKERY_WORKER_ID` / `FLAKERY_DATACENTER_ID`.
pub fn node_config_from_env() -> Result<NodeConfig> {
    let datacenter_id = env_u64("FLAKERY_DATACENTER_ID")?;
    let (worker_id, source) = match env_var("FLAKERY_WORKER_ID")? {
        Some(text) if text == "hostname-ordinal" => {
            (Some(hostname_ordinal(&hostname()?)?), NodeSource::Hostname)
        }
        Some(_) => (env_u64("FLAKERY_WORKER_ID")?, NodeSource::Environment),
        None => (None, NodeSource::Environment),
    };
    Ok(node_config(datacenter_id, worker_id, source))
}

/// The order of sources: explicit values, ZooKeeper, a database, the environment, the
/// host-local lease.
/// A datacenter fixed alone (explicitly or by the environment) is kept, and the worker is
/// leased under it from the database when one is configured, else on this host (beside
/// ZooKeeper, which leases whole node IDs, it is refused, from either place).
pub fn resolve_node(options: &Options, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    let explicit = node_config(
        options.datacenter_id,
        options.worker_id,
        NodeSource::Explicit,
    );
    let config = match explicit {
        NodeConfig::Unset => {
            if let Some(connect) = resolved_zookeeper(options)? {
                if env_var("FLAKERY_WORKER_ID")?.is_none() {
                    if let Some(id) = env_u64("FLAKERY_DATACENTER_ID")? {
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
                return zookeeper_lease(options, &connect, layout);
            }
            if let Some(url) = crate::lease::sql::resolved_database_url(options)? {
                // FLAKERY_DATACENTER_ID alone stays fixed under the database lease too.
                let datacenter = match env_var("FLAKERY_WORKER_ID")? {
                    Some(_) => None,
                    None => env_u64("FLAKERY_DATACENTER_ID")?
                        .map(|id| check_datacenter(layout, id, &explicit))
                        .transpose()?,
                };
                return crate::lease::sql::database_lease(options, url, layout, datacenter);
            }
            node_config_from_env()?
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
            return Ok(Box::new(FixedNode::new(node, source)));
        }
        NodeConfig::Datacenter(id) => {
            if let (NodeConfig::Datacenter(_), Some(connect)) =
                (explicit, resolved_zookeeper(options)?)
            {
                // Leasing the worker on this host alone would be a silent step down from a
                // lease that spans hosts.
                return Err(Error::invalid_argument(format!(
                    "datacenter_id was given without worker_id while a ZooKeeper lease is \
                     configured ('{connect}'), which leases whole node IDs: pass both \
                     datacenter_id and worker_id, or neither"
                )));
            }
            let id = check_datacenter(layout, id, &explicit)?;
            if let NodeConfig::Datacenter(_) = explicit {
                // The worker is leased under it from the database, as it would be on this host.
                if let Some(url) = crate::lease::sql::resolved_database_url(options)? {
                    return crate::lease::sql::database_lease(options, url, layout, Some(id));
                }
            }
            Some(id)
        }
        NodeConfig::Unset => None,
    };
    let dir = match (&options.lease_dir, env_var("FLAKERY_LEASE_DIR")?) {
        (Some(dir), _) => dir.clone(),
        (None, Some(dir)) => PathBuf::from(dir),
        (None, None) => crate::lease::host::implicit_lease_dir()?,
    };
    let scope = crate::lease::host::Scope {
        namespace: resolved_namespace(options)?,
        datacenter_id,
        worker_id: None,
    };
    Ok(Box::new(crate::lease::host::HostLease::acquire_in(
        &dir, &scope, layout,
    )?))
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
pub fn resolved_zookeeper(options: &Options) -> Result<Option<String>> {
    match &options.zookeeper {
        Some(connect) if !connect.trim().is_empty() => Ok(Some(connect.trim().to_string())),
        _ => env_var("FLAKERY_ZOOKEEPER"),
    }
}

/// `session_timeout_ms`, else `FLAKERY_SESSION_TIMEOUT_MS`, else 10000.
pub fn resolved_session_timeout_ms(options: &Options) -> Result<u64> {
    match options.session_timeout_ms {
        Some(ms) => Ok(ms),
        None => Ok(env_u64("FLAKERY_SESSION_TIMEOUT_MS")?.unwrap_or(DEFAULT_SESSION_TIMEOUT_MS)),
    }
}

#[cfg(all(unix, feature = "zookeeper"))]
fn zookeeper_lease(
    options: &Options,
    connect: &str,
    layout: &Layout,
) -> Result<Box<dyn NodeLease>> {
    let namespace = resolved_namespace(options)?;
    let timeout = resolved_session_timeout_ms(options)?;
    Ok(Box::new(crate::zookeeper_lease::ZooKeeperLease::acquire(
        connect, &namespace, timeout, layout,
    )?))
}

#[cfg(not(all(unix, feature = "zookeeper")))]
fn zookeeper_lease(_: &Options, connect: &str, _: &Layout) -> Result<Box<dyn NodeLease>> {
    Err(Error::invalid_argument(format!(
        "a ZooKeeper lease was asked for ('{connect}'), but this flakery was built without its \
         'zookeeper' feature (or not for Unix)"
    )))
}

/// `namespace`, else `FLAKERY_NAMESPACE`, else `default`; a single path segment.
pub fn resolved_namespace(options: &Options) -> Result<String> {
    let namespace = match &options.namespace {
        Some(namespace) => namespace.clone(),
        None => env_var("FLAKERY_NAMESPACE")?.unwrap_or_else(|| DEFAULT_NAMESPACE.to_string()),
    };
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

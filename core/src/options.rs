//! A generator's options, spelled as docs/spec.md#generator-options spells them, and how a
//! variable of the environment is read. Every binding fills one `Options` and calls
//! `Generator::new`, so the rules live here once. Which node ID the options come to (the
//! explicit values, the environment, a coordinator, the host lease) is `lease::resolve`'s.

use std::path::PathBuf;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::layout::Layout;

mod database;
pub use database::{percent_decoded, DatabaseKind, DatabaseMode, DatabaseUrl};

/// What a generator does when a tick's sequence numbers are used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SequencePolicy {
    /// Wait for the next tick.
    #[default]
    Wait,
    /// Use the next tick before the clock reaches it, at most `max_borrow_ms` ahead; then wait.
    Borrow,
}

impl SequencePolicy {
    pub const fn as_str(self) -> &'static str {
        match self {
            SequencePolicy::Wait => "wait",
            SequencePolicy::Borrow => "borrow",
        }
    }
}

impl FromStr for SequencePolicy {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "wait" => Ok(SequencePolicy::Wait),
            "borrow" => Ok(SequencePolicy::Borrow),
            _ => Err(Error::invalid_argument(format!(
                "sequence_policy '{text}' is not 'wait' or 'borrow'"
            ))),
        }
    }
}

pub const DEFAULT_MAX_BORROW_MS: u64 = 1000;
pub const DEFAULT_BACKWARDS_TOLERANCE_MS: u64 = 1000;
pub const DEFAULT_SESSION_TIMEOUT_MS: u64 = 10_000;
pub const DEFAULT_NAMESPACE: &str = "default";

/// Every option of docs/spec.md#generator-options. `None` means "not given": the environment
/// or the documented default applies. `Debug` never shows a password (of `zookeeper` or
/// `database_url`).
#[derive(Clone, PartialEq, Eq)]
pub struct Options {
    pub layout: Option<Layout>,
    pub datacenter_id: Option<u64>,
    pub worker_id: Option<u64>,
    pub sequence_policy: SequencePolicy,
    pub max_borrow_ms: u64,
    pub backwards_tolerance_ms: u64,
    pub random_sequence_start: bool,
    /// Values of constant fields by name.
    pub fields: Vec<(String, u64)>,
    /// `[user:password@]host:port[,...][/chroot]`; its credentials never show
    /// (`zookeeper_shown`).
    pub zookeeper: Option<String>,
    /// `postgres://...` or `mysql://...`; its password never shows (see `DatabaseUrl`).
    pub database_url: Option<DatabaseUrl>,
    pub database_mode: Option<DatabaseMode>,
    pub namespace: Option<String>,
    pub session_timeout_ms: Option<u64>,
    pub lease_dir: Option<PathBuf>,
}

/// A ZooKeeper connect string as messages and `Debug` show it: the credentials before its
/// last `@` (docs/security.md#zookeeper) replaced by `<credentials>`.
pub fn zookeeper_shown(connect: &str) -> String {
    match connect.rsplit_once('@') {
        Some((_, rest)) => format!("<credentials>@{rest}"),
        None => connect.to_string(),
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every field, so that a new one cannot be forgotten here.
        let Options {
            layout,
            datacenter_id,
            worker_id,
            sequence_policy,
            max_borrow_ms,
            backwards_tolerance_ms,
            random_sequence_start,
            fields,
            zookeeper,
            database_url,
            database_mode,
            namespace,
            session_timeout_ms,
            lease_dir,
        } = self;
        f.debug_struct("Options")
            .field("layout", layout)
            .field("datacenter_id", datacenter_id)
            .field("worker_id", worker_id)
            .field("sequence_policy", sequence_policy)
            .field("max_borrow_ms", max_borrow_ms)
            .field("backwards_tolerance_ms", backwards_tolerance_ms)
            .field("random_sequence_start", random_sequence_start)
            .field("fields", fields)
            .field("zookeeper", &zookeeper.as_deref().map(zookeeper_shown))
            .field("database_url", database_url)
            .field("database_mode", database_mode)
            .field("namespace", namespace)
            .field("session_timeout_ms", session_timeout_ms)
            .field("lease_dir", lease_dir)
            .finish()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            layout: None,
            datacenter_id: None,
            worker_id: None,
            sequence_policy: SequencePolicy::Wait,
            max_borrow_ms: DEFAULT_MAX_BORROW_MS,
            backwards_tolerance_ms: DEFAULT_BACKWARDS_TOLERANCE_MS,
            random_sequence_start: false,
            fields: Vec::new(),
            zookeeper: None,
            database_url: None,
            database_mode: None,
            namespace: None,
            session_timeout_ms: None,
            lease_dir: None,
        }
    }
}

impl Options {
    /// The layout given, else `FLAKERY_LAYOUT`, else `twitter`.
    pub fn resolved_layout(&self) -> Result<Layout> {
        match &self.layout {
            Some(layout) => Ok(layout.clone()),
            None => match env_var("FLAKERY_LAYOUT")? {
                Some(spec) => Layout::parse(&spec),
                None => Ok(Layout::twitter()),
            },
        }
    }
}

/// Reads a variable; unset and empty are the same, and a value that is not Unicode is an error.
pub fn env_var(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(value) if value.trim().is_empty() => Ok(None),
        Ok(value) => Ok(Some(value.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(Error::invalid_argument(format!(
            "{name} is not valid UTF-8"
        ))),
    }
}

// Paths the bindings, the CLI and the fuzz targets have called since before the lease wing.
// A re-export only: nothing in this module uses them.
pub use crate::lease::resolve::{
    hostname_ordinal, node_config_from_env, node_from_env, resolve_node, resolved_database_mode,
    resolved_database_url, resolved_namespace, resolved_session_timeout_ms, resolved_zookeeper,
    NodeConfig,
};

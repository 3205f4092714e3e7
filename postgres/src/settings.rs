//! The settings that name the cluster's layout and node (postmaster context: read as the
//! server starts, the same in every backend and in the lease worker), and what they decide:
//! a node ID fixed in postgresql.conf, or one leased from a coordinator by the background
//! worker (`worker.rs`). The choice is the core's (`flakery::lease::resolve::plan`, on an
//! empty environment: only postgresql.conf counts); here the settings are named as the DBA
//! writes them, and a refusal says which to set.

use std::ffi::CString;

use flakery::lease::resolve::{plan, Plan};
use flakery::{CoordinatorPlan, DatabaseUrl, Environment, Error, ErrorCode, Layout, NodeId};
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"twitter"));
/// -1: not set. No node ID is ever assumed.
static DATACENTER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER_ID: GucSetting<i32> = GucSetting::<i32>::new(-1);
static ZOOKEEPER: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static DATABASE_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static NAMESPACE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
/// Whether each new mark waits for the synchronous standby (PGC_SIGHUP: the server's, never a
/// session's, so that no `SET synchronous_commit = local` skips it).
static SYNCHRONOUS_MARK: GucSetting<bool> = GucSetting::<bool>::new(true);
static SESSION_TIMEOUT_MS: GucSetting<i32> =
    GucSetting::<i32>::new(flakery::options::DEFAULT_SESSION_TIMEOUT_MS as i32);

const RESTART: &str = "in postgresql.conf and restart the server";

/// Defines the settings (only while the server loads shared_preload_libraries).
pub fn define() {
    GucRegistry::define_string_guc(
        c"flakery.layout",
        c"The layout of the IDs next_id makes: a preset name or a spec string.",
        c"Read when the server starts; every backend uses the same layout.",
        &LAYOUT,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"flakery.datacenter_id",
        c"The datacenter of this cluster's node ID (-1: not set).",
        c"Required with flakery.worker_id when the layout has a datacenter field; with \
          flakery.database_url alone, the worker is leased under it.",
        &DATACENTER_ID,
        -1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"flakery.worker_id",
        c"The worker of this cluster's node ID (-1: not set).",
        c"No other generator of the same IDs may use the same node ID. Exclusive with \
          flakery.zookeeper and flakery.database_url, which lease one.",
        &WORKER_ID,
        -1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    // The two coordinators' settings may hold a password: only superusers (and members of
    // pg_read_all_settings) may read them, and no message shows it.
    GucRegistry::define_string_guc(
        c"flakery.zookeeper",
        c"A ZooKeeper connect string ([user:password@]host:port[,...][/chroot]) to lease the \
          node ID from.",
        c"The lease is held by the flakery lease worker, a background worker.",
        &ZOOKEEPER,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"flakery.database_url",
        c"A postgres:// or mysql:// URL of a database whose lease table the node ID is leased \
          from.",
        c"The lease is held by the flakery lease worker, a background worker.",
        &DATABASE_URL,
        GucContext::Postmaster,
        GucFlags::SUPERUSER_ONLY,
    );
    GucRegistry::define_string_guc(
        c"flakery.namespace",
        c"The namespace of the leased node IDs (default: default).",
        c"Generators that share a namespace and a coordinator never share a node ID.",
        &NAMESPACE,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"flakery.synchronous_mark",
        c"Whether each new high-water mark waits for the synchronous standbys to flush it.",
        c"On (the default): when synchronous_standby_names names standbys, no ID is issued \
          under a mark they have not confirmed, whatever a session's synchronous_commit.",
        &SYNCHRONOUS_MARK,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"flakery.session_timeout_ms",
        c"The ZooKeeper session timeout or the lease table's term, in ms.",
        c"The node ID is used until half of it past the coordinator's last answer.",
        &SESSION_TIMEOUT_MS,
        1,
        3_600_000,
        GucContext::Postmaster,
        GucFlags::UNIT_MS,
    );
}

fn text(setting: &GucSetting<Option<CString>>) -> Option<String> {
    setting
        .get()
        .map(|s| s.to_string_lossy().trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `flakery.layout`, parsed.
pub fn layout() -> flakery::Result<Layout> {
    let spec = text(&LAYOUT).unwrap_or_default();
    Layout::parse(&spec).map_err(|e| {
        Error::new(
            e.code(),
            format!("flakery.layout in postgresql.conf: {}", e.message()),
        )
    })
}

/// Whether a new mark waits for the synchronous standbys (`flakery.synchronous_mark`).
pub fn synchronous_mark() -> bool {
    SYNCHRONOUS_MARK.get()
}

/// The term the lease keeps (its coordinator checks its own bounds).
pub fn session_timeout_ms() -> i64 {
    i64::from(SESSION_TIMEOUT_MS.get())
}

/// Where the node ID comes from.
#[derive(Debug)]
pub enum Node {
    Fixed(NodeId),
    /// Leased by the worker; `describe` names the coordinator, its password masked.
    Leased {
        plan: CoordinatorPlan,
        describe: String,
    },
}

/// Whether a coordinator is set: the lease worker is registered only then.
pub fn lease_configured() -> bool {
    text(&ZOOKEEPER).is_some() || text(&DATABASE_URL).is_some()
}

/// The node the settings name, or a refusal that names what to set: none is assumed.
pub fn node(layout: &Layout) -> flakery::Result<Node> {
    let worker_id = WORKER_ID.get();
    let datacenter_id = DATACENTER_ID.get();
    let zookeeper = text(&ZOOKEEPER);
    let database_url = text(&DATABASE_URL);
    if worker_id >= 0 {
        if let Some(coordinator) = coordinator_setting(&zookeeper, &database_url) {
            return Err(Error::invalid_argument(format!(
                "flakery.worker_id and {coordinator} are both set: the node ID is either fixed \
                 or leased; remove one of them {RESTART}"
            )));
        }
        if datacenter_id < 0 && layout.datacenter().is_some() {
            return Err(Error::invalid_argument(format!(
                "flakery.worker_id is set but flakery.datacenter_id is not, and layout \
                 '{layout}' has a datacenter field: set flakery.datacenter_id {RESTART}"
            )));
        }
        return Ok(Node::Fixed(NodeId {
            datacenter_id: datacenter_id.max(0) as u64,
            worker_id: worker_id as u64,
        }));
    }
    if zookeeper.is_none() && database_url.is_none() {
        return Err(Error::invalid_argument(format!(
            "no node ID: set flakery.worker_id{} {RESTART}, to a node ID that no other \
             generator of these IDs uses (flakery never assumes node 0), or lease one with \
             flakery.zookeeper or flakery.database_url",
            if layout.datacenter().is_some() {
                " and flakery.datacenter_id"
            } else {
                ""
            }
        )));
    }
    if zookeeper.is_some() && database_url.is_some() {
        return Err(Error::invalid_argument(format!(
            "flakery.zookeeper and flakery.database_url are both set: the node ID is leased \
             from one coordinator; remove one of them {RESTART}"
        )));
    }
    let database_url = database_url
        .map(|url| DatabaseUrl::parse(&url))
        .transpose()
        .map_err(|e| in_setting("flakery.database_url", e))?;
    let options = flakery::Options {
        datacenter_id: u64::try_from(datacenter_id).ok(),
        zookeeper,
        database_url,
        namespace: text(&NAMESPACE),
        session_timeout_ms: Some(SESSION_TIMEOUT_MS.get() as u64),
        ..flakery::Options::default()
    };
    let no_environment = Environment::from_vars(Vec::<(String, String)>::new());
    match plan(&options, layout, &no_environment) {
        Ok(Plan::Coordinator(plan)) => {
            let describe = plan.kind.describe().0;
            Ok(Node::Leased { plan, describe })
        }
        Ok(other) => Err(Error::invalid_argument(format!(
            "flakery's settings name no coordinator lease ({other:?})"
        ))),
        Err(e) => Err(in_setting(
            "flakery.zookeeper, flakery.database_url, flakery.namespace, flakery.datacenter_id",
            e,
        )),
    }
}

fn coordinator_setting(
    zookeeper: &Option<String>,
    database_url: &Option<String>,
) -> Option<&'static str> {
    match (zookeeper, database_url) {
        (Some(_), _) => Some("flakery.zookeeper"),
        (None, Some(_)) => Some("flakery.database_url"),
        (None, None) => None,
    }
}

/// The core's refusal, prefixed with the settings it is about. The core masks passwords in
/// every message of a URL or connect string.
fn in_setting(settings: &str, e: Error) -> Error {
    Error::new(
        e.code(),
        format!("{settings} in postgresql.conf: {}", e.message()),
    )
}

/// The code of a refusal the worker stored, back from its index.
pub fn code_of(index: u32) -> ErrorCode {
    ErrorCode::ALL
        .get(index as usize)
        .copied()
        .unwrap_or(ErrorCode::CoordinatorUnavailable)
}

pub fn index_of(code: ErrorCode) -> u32 {
    ErrorCode::ALL.iter().position(|c| *c == code).unwrap_or(0) as u32
}

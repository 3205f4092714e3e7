//! `flakery serve`'s settings: each a flag and a `FLAKERY_*` variable (the flag wins).

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

/// What `--help` says of the node identity, which comes from the environment as for every
/// flakery generator.
pub const IDENTITY_HELP: &str = "\
Node identity, the first source configured wins:
  --datacenter-id/--worker-id     fixed values
  FLAKERY_ZOOKEEPER=host:2181/chroot   lease from ZooKeeper (FLAKERY_NAMESPACE,
                                  FLAKERY_SESSION_TIMEOUT_MS); ID routes answer 503 and
                                  /readyz 503 while the lease may be lost
  FLAKERY_DATABASE_URL            lease from PostgreSQL/MySQL
  FLAKERY_WORKER_ID, FLAKERY_DATACENTER_ID   fixed by the environment
                                  (FLAKERY_WORKER_ID=hostname-ordinal: the host name's number)
  otherwise                       a host-local lease under FLAKERY_LEASE_DIR
Logs go to stderr (FLAKERY_LOG=info|debug|...); the token is never logged.";

/// `flakery serve`'s flags; each also reads the `FLAKERY_*` variable shown.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on (HTTP/1.1, h2c and gRPC share it).
    #[arg(long, env = "FLAKERY_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Layout spec or preset name (default: twitter).
    #[arg(long, env = "FLAKERY_LAYOUT")]
    pub layout: Option<String>,

    /// Datacenter ID, fixed (give --worker-id too; FLAKERY_DATACENTER_ID alone leases the
    /// worker ID under it instead).
    #[arg(long)]
    pub datacenter_id: Option<u64>,

    /// Worker ID, fixed (FLAKERY_WORKER_ID also takes `hostname-ordinal`).
    #[arg(long)]
    pub worker_id: Option<u64>,

    /// Warn at start (one log line) when the layout has fewer days than this left.
    #[arg(long, env = "FLAKERY_EXHAUSTION_WARNING_DAYS", default_value_t = flakery::layout::DEFAULT_EXHAUSTION_WARNING_DAYS)]
    pub exhaustion_warning_days: u64,

    /// A constant field's value, NAME=VALUE (repeatable; Vesta's version, type, method).
    #[arg(long = "field", value_name = "NAME=VALUE")]
    pub fields: Vec<String>,

    /// What to do when a millisecond's sequence is used up: wait or borrow.
    #[arg(long, env = "FLAKERY_SEQUENCE_POLICY", default_value = "wait")]
    pub sequence_policy: String,

    /// How far ahead of the clock the borrow policy may run, in ms.
    #[arg(long, env = "FLAKERY_MAX_BORROW_MS", default_value_t = 1000)]
    pub max_borrow_ms: u64,

    /// A clock step back up to this long (ms) is waited out; a longer one is an error.
    #[arg(long, env = "FLAKERY_BACKWARDS_TOLERANCE_MS", default_value_t = 1000)]
    pub backwards_tolerance_ms: u64,

    /// Bearer token every route but /healthz, /readyz and gRPC health requires. Prefer the
    /// variable: a flag is visible to other users in the process list.
    #[arg(long, env = "FLAKERY_SERVER_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Most connections open at once; more are closed as soon as they are accepted.
    #[arg(long, env = "FLAKERY_MAX_CONNECTIONS", default_value_t = 4096)]
    pub max_connections: usize,

    /// Most requests being answered at once; more get 503 with Retry-After.
    #[arg(long, env = "FLAKERY_MAX_IN_FLIGHT", default_value_t = 1024)]
    pub max_in_flight: usize,

    /// Largest request body in bytes (only POST /v1/compose has one).
    #[arg(long, env = "FLAKERY_MAX_BODY_BYTES", default_value_t = 16 * 1024)]
    pub max_body_bytes: usize,

    /// Seconds a client may take to send a request's headers, and a connection may sit idle.
    #[arg(long, env = "FLAKERY_HEADER_TIMEOUT_S", default_value_t = 10)]
    pub header_timeout_s: u64,

    /// Seconds a request may take in all (reading its body included).
    #[arg(long, env = "FLAKERY_REQUEST_TIMEOUT_S", default_value_t = 30)]
    pub request_timeout_s: u64,

    /// Seconds in-flight requests get to finish after SIGTERM/SIGINT.
    #[arg(long, env = "FLAKERY_SHUTDOWN_GRACE_S", default_value_t = 30)]
    pub shutdown_grace_s: u64,

    /// Log format: text or json.
    #[arg(long, env = "FLAKERY_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
}

impl ServeArgs {
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_s.max(1))
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_s.max(1))
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_s)
    }
}

//! `ZooKeeperLease`: a node index leased from ZooKeeper, kept by the core's keeper on the
//! `ZooKeeperCoordinator`.

use std::fmt;
use std::sync::Arc;

use flakery::clock::Clock;
use flakery::error::Result;
use flakery::lease::kept::MonotonicClock;
use flakery::{Fence, Grant, KeptLease, Layout, NodeLease, NodeSource};

use crate::settings::Settings;
use crate::ZooKeeperCoordinator;

/// A node index leased from ZooKeeper and kept by the keeper.
pub struct ZooKeeperLease {
    kept: KeptLease,
    settings: Settings,
}

impl ZooKeeperLease {
    /// Connects to `connect` (`host:port[,host:port...][/chroot][?secure=true...]`) and takes the lowest free
    /// node index of `layout` in `namespace`. Fails with `invalid_argument` for a bad connect
    /// string or a session timeout too short to hold a lease, `coordinator_unavailable` when
    /// no session is established within the session timeout, `worker_ids_exhausted` when
    /// every index is held (or unreadable), and `clock_moved_backwards` when the local clock
    /// is far behind the server's.
    pub fn acquire(
        connect: &str,
        namespace: &str,
        session_timeout_ms: u64,
        layout: &Layout,
    ) -> Result<ZooKeeperLease> {
        let settings = Settings::parse(connect, namespace, session_timeout_ms, layout)?;
        if let Some(warning) = crate::settings::exposure_warning(&settings) {
            tracing::warn!("{warning}");
        }
        let clock: Arc<dyn Clock> = Arc::new(MonotonicClock::new());
        let coordinator = ZooKeeperCoordinator::new(settings.clone(), Arc::clone(&clock));
        let kept = KeptLease::start(Box::new(coordinator), layout, clock)?;
        Ok(ZooKeeperLease { kept, settings })
    }

    /// The node index held now (`None` while leasing anew).
    pub fn index(&self) -> Option<u64> {
        self.kept.index()
    }

    /// The server's clock minus the local clock, in ms, measured when the lease was taken.
    pub fn clock_offset_ms(&self) -> Option<i64> {
        self.kept.clock_offset_ms()
    }

    /// The previous holder's high-water mark: IDs use time after it.
    pub fn floor_ms(&self) -> Option<i64> {
        self.kept.index()?;
        Some(self.kept.floor_ms().unwrap_or(i64::MIN))
    }

    /// The ephemeral znode of the index held now, as the server names it (chroot included).
    pub fn node_path(&self) -> Option<String> {
        Some(self.settings.node_path(self.index()?))
    }
}

impl fmt::Debug for ZooKeeperLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZooKeeperLease")
            .field("connect", &self.settings.connect)
            .field("namespace", &self.settings.namespace)
            .field("session_timeout_ms", &self.settings.session_timeout_ms)
            .finish()
    }
}

impl NodeLease for ZooKeeperLease {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        self.kept.grant(want_ms, now_ms)
    }

    fn publishes(&self) -> bool {
        self.kept.publishes()
    }

    fn ask(&self, want_ms: i64, now_ms: i64) -> flakery::Asked {
        self.kept.ask(want_ms, now_ms)
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        self.kept.after_fork()
    }

    fn attach(&self, fence: Fence) {
        self.kept.attach(fence)
    }

    fn release(&self, last_used_ms: i64) {
        self.kept.release(last_used_ms)
    }

    fn signal_release(&self, last_used_ms: i64) {
        self.kept.signal_release(last_used_ms)
    }
}

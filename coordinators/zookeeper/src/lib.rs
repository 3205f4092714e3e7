//! Node IDs for flakery leased from ZooKeeper: the ZooKeeper backend of the core's
//! `Coordinator` trait, `ZooKeeperLease` (the core's keeper on it), and the connector that
//! opens a ZooKeeper plan (`install()`, or `flakery-coordinators`, which opens databases too).
//!
//! Under `<chroot>/flakery/<namespace>`:
//!
//! - `nodes/<index>`: an EPHEMERAL znode per held node index (data: host name and pid, for
//!   operators). Creating it is what claims the index; the server deletes it when the session
//!   ends, so a crashed holder's index frees itself after the session timeout (the term).
//! - `hwm/<index>`: a PERSISTENT znode per index with the high-water mark (decimal Unix ms),
//!   always written with a version check (compare-and-set). A claim overwrites it with itself
//!   under a version check, so a previous holder's next write fails on the version.
//!
//! With credentials (`user:password@` in the connect string) every znode flakery creates lets
//! only that digest identity write, and others read; without, any client that reaches the
//! ensemble can change a mark or a node, which can make two holders share a node ID: a lease
//! without credentials says so once in the log (docs/security.md#zookeeper).
//!
//! The client is flakery's own (`transport`): a session per client, its own threads and
//! socket, no process-wide state, so a forked child can make a client of its own (the
//! `zookeeper-client` crate's global async-io reactor hangs every new client in a forked
//! child). A child never touches its parent's client.

mod census;
mod claim_order;
mod connect;
mod lease;
mod link;
mod proto;
mod settings;
#[cfg(test)]
mod start_timeout_tests;
mod tls;
mod transport;

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use connect::{Backoff, KeeperTime, Time};
use flakery::clock::{Clock, SystemClock};
use flakery::error::{Error, ErrorCode, Result};
use flakery::lease::kept::MonotonicClock;
use flakery::lease::node::{mark_ahead, read_mark};
use flakery::{
    Alarm, Claim, Connector, Coordinator, CoordinatorKind, CoordinatorPlan, Failure, Layout,
    NodeLease, NodeSource, Token,
};
use proto::{CreateMode, Stat, ZkError};
use settings::Settings;
use transport::Client;

pub use census::{census, check};
pub use lease::ZooKeeperLease;
pub use settings::MIN_SESSION_TIMEOUT_MS;

/// The lease a ZooKeeper plan asks for; any other plan is not this crate's to open.
pub fn open(plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
    match &plan.kind {
        CoordinatorKind::ZooKeeper { connect } => Ok(Box::new(ZooKeeperLease::acquire(
            connect,
            &plan.namespace,
            plan.session_timeout_ms,
            layout,
        )?)),
        other => Err(flakery::lease::connector::not_installed(other)),
    }
}

/// Opens ZooKeeper plans (only).
#[derive(Debug, Default, Clone, Copy)]
pub struct ZooKeeperConnector;

impl Connector for ZooKeeperConnector {
    fn open(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<Box<dyn NodeLease>> {
        open(plan, layout)
    }

    fn census(
        &self,
        plan: &CoordinatorPlan,
        layout: &Layout,
        timeout: Duration,
    ) -> Result<flakery::doctor::census::Census> {
        census(plan, layout, timeout)
    }

    fn check(&self, plan: &CoordinatorPlan, layout: &Layout) -> Result<()> {
        check(plan, layout)
    }
}

/// Installs `ZooKeeperConnector` as the process's connector, unless one is installed already
/// (which stays: see `flakery::install_connector`); returns whether this call installed it.
pub fn install() -> bool {
    flakery::install_connector(Box::new(ZooKeeperConnector)).is_ok()
}

/// One holder's connection to ZooKeeper.
pub struct ZooKeeperCoordinator {
    settings: Settings,
    /// The keeper's clock, which a claim's deadline is an instant of.
    time: Arc<dyn Time>,
    client: Option<Client>,
    /// The pause before the next connection attempt, kept across claims.
    backoff: Backoff,
    /// Why the last client was given up on, for the lease's message.
    broken_cause: Option<String>,
    /// Our ephemeral node of a client given up on (index, session): deleted at the next claim.
    stale: Option<(u64, i64)>,
    alarm: Arc<Mutex<Option<Alarm>>>,
}

impl fmt::Debug for ZooKeeperCoordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZooKeeperCoordinator")
            .field("connect", &self.settings.connect)
            .field("namespace", &self.settings.namespace)
            .finish()
    }
}

fn is_session_gone(err: ZkError) -> bool {
    matches!(
        err,
        ZkError::SessionExpired | ZkError::SessionMoved | ZkError::AuthFailed
    )
}

fn mark_text(ms: i64) -> Vec<u8> {
    ms.to_string().into_bytes()
}

/// A mark as a floor, the stat of its overwrite and the server's time then; `Ok(Err(why))`
/// when the stored mark cannot be read as a time.
type TakenMark = std::result::Result<(Option<i64>, Stat, i64), String>;

impl ZooKeeperCoordinator {
    fn new(settings: Settings, clock: Arc<dyn Clock>) -> ZooKeeperCoordinator {
        ZooKeeperCoordinator::with_time(settings, Arc::new(KeeperTime(clock)))
    }

    fn with_time(settings: Settings, time: Arc<dyn Time>) -> ZooKeeperCoordinator {
        ZooKeeperCoordinator {
            settings,
            time,
            client: None,
            backoff: Backoff::default(),
            broken_cause: None,
            stale: None,
            alarm: Arc::default(),
        }
    }

    /// `deadline_ms` of the keeper's clock as an instant.
    fn instant(&self, deadline_ms: i64) -> Instant {
        let left = deadline_ms.saturating_sub(self.time.now_ms()).max(0);
        Instant::now() + Duration::from_millis(left as u64)
    }

    /// The client, if its connection is up; a broken one is dropped (and why remembered for
    /// the lease's message).
    fn live_client(&mut self) -> Option<&Client> {
        if let Some(client) = self.client.take_if(|c| !c.connected()) {
            self.broken_cause = client.broken_cause();
        }
        self.client.as_ref()
    }

    /// `Failure::Lost` for a request with no live client, with the connection's real cause.
    fn broken(&self) -> Failure {
        Failure::Lost(match &self.broken_cause {
            Some(cause) => format!("the connection to ZooKeeper broke ({cause})"),
            None => "the connection to ZooKeeper broke".into(),
        })
    }

    fn failure(&self, err: ZkError) -> Failure {
        if is_session_gone(err) {
            Failure::Lost(format!("the ZooKeeper session ended ({err:?})"))
        } else {
            Failure::Unanswered(format!("ZooKeeper did not answer ({err:?})"))
        }
    }

    fn take_mark(&self, zk: &Client, by: Instant, index: u64) -> Result<TakenMark> {
        let settings = &self.settings;
        let hwm_path = settings.hwm_path(index);
        for _ in 0..20 {
            let (data, stat) = match zk.get_data(by, &hwm_path) {
                Ok(found) => found,
                Err(ZkError::NoNode) => {
                    match zk.create(by, &hwm_path, Vec::new(), CreateMode::Persistent) {
                        Ok(_) | Err(ZkError::NodeExists) => continue,
                        Err(err) => return Err(settings.failed(&format!("create {hwm_path}"), err)),
                    }
                }
                Err(err) => return Err(settings.failed(&format!("read {hwm_path}"), err)),
            };
            let floor_ms = match read_mark(&data) {
                Ok(mark) => mark,
                Err(why) => return Ok(Err(why)),
            };
            let before = SystemClock.now_ms();
            match zk.set_data(by, &hwm_path, data, stat.version) {
                Ok(written) => {
                    // The server's clock as of now: its mtime plus the half round trip since.
                    let after = SystemClock.now_ms();
                    let server_ms = written.mtime + (after - before) / 2;
                    return Ok(Ok((floor_ms, written, server_ms)));
                }
                Err(ZkError::BadVersion) => continue,
                Err(err) => return Err(settings.failed(&format!("write {hwm_path}"), err)),
            }
        }
        Err(settings.failed(&format!("write {hwm_path}"), ZkError::BadVersion))
    }
}

impl Coordinator for ZooKeeperCoordinator {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn describe(&self) -> String {
        format!(
            "ZooKeeper namespace '{}' at {}",
            self.settings.namespace,
            self.settings.address()
        )
    }

    fn term_ms(&self) -> i64 {
        self.settings.session_timeout_ms as i64
    }

    fn claim_within(&mut self, count: u64, mark_limit_ms: i64, deadline_ms: i64) -> Result<Claim> {
        let by = self.instant(deadline_ms);
        let settings = self.settings.clone();
        // Connecting gets the session timeout (the start's own timeout: no session within it
        // fails the start); the few requests of a claim the rest of the claim's deadline.
        let connect_by_ms = deadline_ms.min(
            self.time
                .now_ms()
                .saturating_add(settings.session_timeout_ms as i64),
        );
        if self.live_client().is_none() {
            let alarm = Arc::clone(&self.alarm);
            let on_broken: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
                if let Some(alarm) = alarm.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                    alarm.raise();
                }
            });
            self.client = Some(connect::connect(
                &settings,
                connect_by_ms,
                self.time.as_ref(),
                &mut self.backoff,
                on_broken,
            )?);
        }
        let Some(zk) = self.client.as_ref() else {
            return Err(settings.unavailable("no session"));
        };
        for dir in [settings.nodes_dir(), settings.hwm_dir()] {
            zk.create_parents(by, &dir, &settings.root())
                .map_err(|e| settings.failed(&format!("create {dir}"), e))?;
        }
        if let Some((index, session_id)) = self.stale.take() {
            // Our own ephemeral node of a client given up on: free it.
            let path = settings.node_path(index);
            if let Ok(Some(stat)) = zk.exists(by, &path) {
                if stat.ephemeral_owner == session_id {
                    let _ = zk.delete(by, &path, stat.version);
                }
            }
        }
        let taken: HashSet<u64> = zk
            .get_children(by, &settings.nodes_dir())
            .map_err(|e| settings.failed(&format!("list {}", settings.nodes_dir()), e))?
            .iter()
            .filter_map(|name| name.parse().ok())
            .collect();
        let about = format!(
            "{} {}",
            flakery::lease::environment::host_name().unwrap_or_default(),
            std::process::id()
        );
        // Every free index with a mark node, listed once: the order's probes read only those.
        let marked: HashSet<u64> = match zk.get_children(by, &settings.hwm_dir()) {
            Ok(names) => names.iter().filter_map(|name| name.parse().ok()).collect(),
            Err(err) => return Err(settings.failed(&format!("list {}", settings.hwm_dir()), err)),
        };
        let free = (0..count).filter(|i| !taken.contains(i));
        let order = claim_order::claim_order(free, &marked, SystemClock.now_ms(), |index| {
            let (data, _) = zk.get_data(by, &settings.hwm_path(index)).ok()?;
            read_mark(&data).ok()
        });
        // The first free index in that order whose mark can be read and is not past the
        // keeper's limit; an unreadable mark is never "no mark": that index is given back and
        // skipped.
        let mut unreadable = Vec::new();
        for index in order {
            let path = settings.node_path(index);
            match zk.create(by, &path, about.clone().into_bytes(), CreateMode::Ephemeral) {
                Ok(_) => {}
                Err(ZkError::NodeExists) => continue,
                Err(err) => return Err(settings.failed(&format!("create {path}"), err)),
            }
            let session_id = match zk.exists(by, &path) {
                Ok(Some(stat)) => stat.ephemeral_owner,
                Ok(None) => return Err(settings.failed(&format!("read {path}"), ZkError::NoNode)),
                Err(err) => return Err(settings.failed(&format!("read {path}"), err)),
            };
            // A mark made before credentials were configured becomes ours alone.
            zk.secure(by, &settings.hwm_path(index)).map_err(|e| {
                settings.failed(&format!("protect {}", settings.hwm_path(index)), e)
            })?;
            let taken = self
                .take_mark(zk, by, index)?
                .and_then(|taken| match taken.0 {
                    Some(mark) if mark > mark_limit_ms => Err(mark_ahead(mark, mark_limit_ms)),
                    _ => Ok(taken),
                });
            match taken {
                Ok((floor_ms, stat, server_ms)) => {
                    return Ok(Claim {
                        index,
                        floor_ms,
                        server_ms: Some(server_ms),
                        token: Token {
                            holder: session_id,
                            version: stat.version.into(),
                        },
                    })
                }
                Err(why) => {
                    unreadable.push(format!("{} ({why})", settings.hwm_path(index)));
                    if let Ok(Some(stat)) = zk.exists(by, &path) {
                        let _ = zk.delete(by, &path, stat.version);
                    }
                }
            }
        }
        let mut message = format!(
            "all {count} node IDs of layout '{}' are held in ZooKeeper namespace '{}' ({} at {})",
            settings.layout,
            settings.namespace,
            settings.nodes_dir(),
            settings.address()
        );
        if !unreadable.is_empty() {
            message.push_str(&format!(
                "; these free ones are not used because their high-water marks cannot be read \
                 as a time or are too far ahead (fix or delete the znodes only if no generator \
                 can have used those node IDs since): {}",
                unreadable.join(", ")
            ));
        }
        Err(Error::new(ErrorCode::WorkerIdsExhausted, message))
    }

    fn renew(&mut self, claim: &mut Claim, deadline_ms: i64) -> std::result::Result<(), Failure> {
        let by = self.instant(deadline_ms);
        let path = self.settings.node_path(claim.index);
        if self.live_client().is_none() {
            return Err(self.broken());
        }
        let Some(zk) = self.client.as_ref() else {
            return Err(self.broken());
        };
        match zk.exists(by, &path) {
            Ok(Some(stat)) if stat.ephemeral_owner == claim.token.holder => Ok(()),
            Ok(Some(_)) => Err(Failure::Lost(
                "its ephemeral node is held by another session".into(),
            )),
            Ok(None) => Err(Failure::Lost(
                "its ephemeral node is gone (session expired)".into(),
            )),
            Err(err) => Err(self.failure(err)),
        }
    }

    fn write_mark(
        &mut self,
        claim: &mut Claim,
        _expected_ms: Option<i64>,
        new_ms: i64,
        deadline_ms: i64,
    ) -> std::result::Result<(), Failure> {
        let by = self.instant(deadline_ms);
        let path = self.settings.hwm_path(claim.index);
        if self.live_client().is_none() {
            return Err(self.broken());
        }
        let Some(zk) = self.client.as_ref() else {
            return Err(self.broken());
        };
        let version = claim.token.version as i32;
        let lost = || Failure::Lost("its high-water mark was written by another holder".into());
        match zk.set_data(by, &path, mark_text(new_ms), version) {
            Ok(stat) => {
                claim.token.version = stat.version.into();
                Ok(())
            }
            // The version is ours: a write that moved it once to exactly this mark was ours,
            // applied with its answer lost.
            Err(ZkError::BadVersion) => match zk.get_data(by, &path) {
                Ok((data, stat))
                    if stat.version == version.wrapping_add(1)
                        && read_mark(&data) == Ok(Some(new_ms)) =>
                {
                    claim.token.version = stat.version.into();
                    Ok(())
                }
                Ok(_) | Err(ZkError::NoNode) => Err(lost()),
                Err(err) => Err(self.failure(err)),
            },
            Err(ZkError::NoNode) => Err(lost()),
            Err(err) => Err(self.failure(err)),
        }
    }

    fn release(&mut self, claim: Claim, mark_ms: Option<i64>, deadline_ms: i64) {
        let by = self.instant(deadline_ms);
        let path = self.settings.hwm_path(claim.index);
        let Some(zk) = self.client.take() else { return };
        if let Some(mark) = mark_ms {
            let _ = zk.set_data(by, &path, mark_text(mark), claim.token.version as i32);
        }
        // Closing the session deletes the ephemeral node at once.
        let _ = zk.close(by);
    }

    fn abandon(&mut self, claim: &Claim) {
        self.stale = Some((claim.index, claim.token.holder));
        self.client = None;
    }

    fn set_alarm(&mut self, alarm: Alarm) {
        *self.alarm.lock().unwrap_or_else(|e| e.into_inner()) = Some(alarm);
    }

    fn reopen(&self) -> Result<Box<dyn Coordinator>> {
        Ok(Box::new(ZooKeeperCoordinator::new(
            self.settings.clone(),
            Arc::new(MonotonicClock::new()),
        )))
    }
}

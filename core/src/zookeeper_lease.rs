//! Node IDs leased from ZooKeeper, for generators on many hosts.
//!
//! Under `<chroot>/flakery/<namespace>`:
//!
//! - `nodes/<index>`: an EPHEMERAL znode per held node index (data: host name and pid, for
//!   operators). Creating it is what takes the index; the server deletes it when the session
//!   ends, so a crashed holder's index frees itself after the session timeout.
//! - `hwm/<index>`: a PERSISTENT znode per index with the high-water mark (decimal Unix ms):
//!   the latest time the holder may use. It is written before the generator goes past it,
//!   always with a version check (compare-and-set), and a new holder starts after it.
//!
//! Uniqueness rests on the mark alone: a holder only uses time up to a mark it wrote, and a
//! successor reads the mark with the version it then overwrites, so it starts above every time
//! its predecessor could use, and the predecessor's next write fails on the version. The
//! ephemeral node makes indexes exclusive while sessions live, and the local deadline (half
//! the session timeout after the last request the server answered) and the fence closed on any
//! disconnect make a generator refuse (`lease_lost`) from the moment its lease may be lost.
//!
//! One background thread per lease does all the writing (ahead of use while the generator is
//! busy, a read now and then while it is idle, to prove the session alive) and takes a new lease
//! by itself when the session is gone, the connection breaks, or the server stops answering:
//! a new client, a new session, the lowest free index (usually the same one, since its own old
//! ephemeral node is deleted first) and that index's mark as the new floor. `grant` never does
//! I/O: it reads what the thread has confirmed, and waits a bounded time when it needs the mark
//! moved.
//!
//! The client is the synchronous `zookeeper` crate: each client has its own threads and no
//! process-wide reactor, so a forked child can make a client of its own (the `zookeeper-client`
//! crate's global async-io reactor hangs every new client in a forked child). A child never
//! touches its parent's client: it forgets it. The crate's requests have no time limit, so
//! they run on a request thread per client that the lease can walk away from (`Client`).

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::mem::ManuallyDrop;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use zookeeper::{Acl, CreateMode, Stat, WatchedEvent, ZkError, ZkResult, ZkState, ZooKeeper};

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, ErrorCode, Result};
use crate::layout::Layout;
use crate::node::{read_mark, Fence, Grant, NodeId, NodeLease, NodeSource, LOOKAHEAD_MS};
use crate::options::Options;
use crate::timestamp::format_rfc3339_ms;

/// The shortest session timeout that can hold a lease: IDs are issued for half of it after
/// each answer, and the mark is written `LOOKAHEAD_MS` ahead of use.
pub const MIN_SESSION_TIMEOUT_MS: u64 = 2 * LOOKAHEAD_MS as u64;

/// How far the local clock may be behind the ZooKeeper server's at lease time.
pub const MAX_CLOCK_BEHIND_MS: i64 = 1000;

/// The longest `grant` waits for the background thread to move the mark.
const GRANT_WAIT: Duration = Duration::from_millis(1000);

/// The longest `release` (and drop) waits for the mark to be written and the session closed.
const RELEASE_WAIT_MAX: Duration = Duration::from_millis(2000);

/// How long the requests of a lease may take past the connection's deadline.
const LEASE_REQUESTS_TIME: Duration = Duration::from_millis(1500);

/// The pause between attempts to lease again, and after a failed request.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

// The client's last reported session state, for the listener. Before the first report a
// client is CONNECTING.
const CONNECTING: u8 = 0;
const CONNECTED: u8 = 1;
const CLOSED: u8 = 2;
/// Reported once the connection broke. The crate then reconnects in a loop that retries a
/// refused connection without pause until a session timeout has passed since its last ping
/// (a core busy for seconds during an outage); its listener runs on that thread just before
/// the loop, so the listener parks the thread there for a session timeout, after which the
/// loop ends at once. The lease does not wait for that client: it leases anew with a new one.
const DISCONNECTED: u8 = 3;

/// What a lease was made with; a forked child leases anew with the same.
#[derive(Debug, Clone)]
struct Settings {
    /// The connect string as given, for messages.
    connect: String,
    /// `host:port` of each server.
    hosts: Vec<String>,
    /// The chroot suffix of the connect string (`""` or `/a/b`), prefixed to every path here.
    chroot: String,
    namespace: String,
    session_timeout_ms: u64,
    layout: Layout,
}

impl Settings {
    fn parse(
        connect: &str,
        namespace: &str,
        session_timeout_ms: u64,
        layout: &Layout,
    ) -> Result<Settings> {
        let text = connect.trim();
        let (hosts_part, chroot) = match text.find('/') {
            Some(at) => (&text[..at], text[at..].trim_end_matches('/')),
            None => (text, ""),
        };
        if chroot
            .split('/')
            .skip(1)
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
        {
            return Err(Error::invalid_argument(format!(
                "ZooKeeper connect string '{connect}': the chroot '{chroot}' is not a valid path"
            )));
        }
        let mut hosts = Vec::new();
        for host in hosts_part
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
        {
            let has_port = match host.rfind(':') {
                Some(at) => !host[at..].contains(']') && host[at + 1..].parse::<u16>().is_ok(),
                None => false,
            };
            let bare_v6 = host.matches(':').count() > 1 && !host.starts_with('[');
            if bare_v6 {
                return Err(Error::invalid_argument(format!(
                    "ZooKeeper connect string '{connect}': write an IPv6 address in brackets, \
                     as [::1]:2181"
                )));
            }
            hosts.push(if has_port {
                host.to_string()
            } else if host.contains(':') && !host.ends_with(']') {
                return Err(Error::invalid_argument(format!(
                    "ZooKeeper connect string '{connect}': '{host}' has no valid port"
                )));
            } else {
                format!("{host}:2181")
            });
        }
        if hosts.is_empty() {
            return Err(Error::invalid_argument(format!(
                "ZooKeeper connect string '{connect}' names no server (expected \
                 host:port[,host:port...][/chroot])"
            )));
        }
        if !(MIN_SESSION_TIMEOUT_MS..=3_600_000).contains(&session_timeout_ms) {
            return Err(Error::invalid_argument(format!(
                "session timeout {session_timeout_ms} ms is not between {MIN_SESSION_TIMEOUT_MS} \
                 ms and one hour: flakery issues IDs for half the session timeout after each \
                 answer of the server and keeps its high-water mark {LOOKAHEAD_MS} ms ahead, so \
                 a shorter session could never hold a lease; set session_timeout_ms \
                 (FLAKERY_SESSION_TIMEOUT_MS) to at least {MIN_SESSION_TIMEOUT_MS}"
            )));
        }
        let namespace = crate::options::resolved_namespace(&Options {
            namespace: Some(namespace.to_string()),
            ..Options::default()
        })?;
        Ok(Settings {
            connect: text.to_string(),
            hosts,
            chroot: chroot.to_string(),
            namespace,
            session_timeout_ms,
            layout: layout.clone(),
        })
    }

    fn timeout(&self) -> Duration {
        Duration::from_millis(self.session_timeout_ms)
    }

    fn root(&self) -> String {
        format!("{}/flakery/{}", self.chroot, self.namespace)
    }

    fn nodes_dir(&self) -> String {
        format!("{}/nodes", self.root())
    }

    fn hwm_dir(&self) -> String {
        format!("{}/hwm", self.root())
    }

    fn node_path(&self, index: u64) -> String {
        format!("{}/nodes/{index}", self.root())
    }

    fn hwm_path(&self, index: u64) -> String {
        format!("{}/hwm/{index}", self.root())
    }

    fn address(&self) -> String {
        self.hosts.join(",")
    }

    fn unavailable(&self, detail: &str) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!(
                "ZooKeeper at {} did not answer within {} ms: {detail}",
                self.address(),
                self.session_timeout_ms
            ),
        )
    }

    fn failed(&self, what: &str, err: ZkError) -> Error {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!("ZooKeeper at {}: {what} failed: {err:?}", self.address()),
        )
    }
}

/// A node index leased from ZooKeeper, kept by a background thread.
pub struct ZooKeeperLease {
    /// Never dropped in a forked child: the parent's thread and client are not there, and the
    /// parent's locks may be held by its vanished threads.
    shared: ManuallyDrop<Arc<Shared>>,
    owner_pid: u32,
}

struct Shared {
    settings: Settings,
    /// Set with `State::stop`, for requests to give up on without taking the lock.
    stopping: Arc<AtomicBool>,
    state: Mutex<State>,
    /// Wakes the background thread.
    wake: Condvar,
    /// Tells waiters in `grant`, `release` and `drop` that the state changed.
    changed: Condvar,
}

/// What the background thread has confirmed, as `grant` sees it.
#[derive(Debug, Clone, Copy)]
struct View {
    index: u64,
    node: NodeId,
    floor_ms: i64,
    /// The high-water mark the server confirmed.
    mark_ms: i64,
    clock_offset_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// `release(last_used_ms)`: bring the mark down to what was used, then close.
    Release(i64),
    /// Drop: close, keeping the written mark.
    Drop,
}

struct State {
    /// The holding `grant` answers for; `epoch` names it.
    view: Option<View>,
    epoch: u64,
    next_epoch: u64,
    /// The current client's session is connected (a listener clears it at once on anything
    /// else).
    connected: bool,
    /// When the request last answered under the current connection was sent.
    confirmed_at: Option<Instant>,
    disconnected_at: Option<i64>,
    /// The client was closed for good: lease anew.
    dead: bool,
    /// Since when (Unix ms) and why no lease is held.
    lost: Option<(i64, String)>,
    /// A grant asks for the mark to reach this.
    want_mark_ms: i64,
    last_grant: Option<Instant>,
    /// The generator's clock minus the system clock, at the last grant: the mark is written in
    /// the generator's time.
    gen_offset_ms: i64,
    fence: Option<Fence>,
    stop: Option<Stop>,
    finished: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Called by a client's listener (on the client's I/O thread): closes the fence at once on
    /// anything but a connected session.
    fn on_state(&self, epoch: u64, state: u8) {
        let mut st = self.lock();
        if st.epoch != epoch || st.view.is_none() {
            return;
        }
        match state {
            CONNECTED => {
                st.connected = true;
                st.disconnected_at = None;
            }
            _ => {
                st.connected = false;
                st.confirmed_at = None;
                if st.disconnected_at.is_none() {
                    st.disconnected_at = Some(SystemClock.now_ms());
                }
                st.dead = true; // a new lease with a new client
                if let Some(fence) = &st.fence {
                    fence.close();
                }
            }
        }
        self.wake.notify_all();
        self.changed.notify_all();
    }
}

/// One session holding one index; owned by the background thread.
struct Holding {
    client: Client,
    epoch: u64,
    session_id: i64,
    index: u64,
    node: NodeId,
    floor_ms: i64,
    mark_ms: i64,
    hwm_version: i32,
    /// A write whose answer was lost: it may or may not have been applied.
    pending_mark: Option<i64>,
    /// Since when requests fail while the session is said to be connected.
    failing_since: Option<Instant>,
    clock_offset_ms: i64,
    /// When the last request of the lease was sent.
    leased_at: Instant,
}

impl Holding {
    fn view(&self) -> View {
        View {
            index: self.index,
            node: self.node,
            floor_ms: self.floor_ms,
            mark_ms: self.mark_ms,
            clock_offset_ms: self.clock_offset_ms,
        }
    }
}

type Job = Box<dyn FnOnce(&ZooKeeper) + Send>;

/// A client of the crate, driven through a thread of its own so that no request can hold up
/// the lease: the crate waits for an answer without a time limit (and for as long as a paused
/// server keeps the connection open). A call gives up when the session is disconnected, the
/// lease stops, or the call's deadline passes; the request thread then ends with its request,
/// and drops the crate's client (whose drop closes the session and waits for the answer).
struct Client {
    jobs: mpsc::Sender<Job>,
    /// The crate's last reported session state.
    state: Arc<AtomicU8>,
    stopping: Arc<AtomicBool>,
    /// Calls give up at this instant.
    deadline: Cell<Option<Instant>>,
    /// Calls give up when the lease stops (not while it gives the index back).
    honour_stop: Cell<bool>,
    /// The last call gave up at its deadline.
    timed_out: Cell<bool>,
}

impl Client {
    fn new(zk: ZooKeeper, state: Arc<AtomicU8>, stopping: Arc<AtomicBool>) -> Result<Client> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("flakery-zk-request".into())
            .spawn(move || {
                for job in queue {
                    job(&zk);
                }
            })
            .map_err(|e| {
                Error::new(
                    ErrorCode::CoordinatorUnavailable,
                    format!("cannot start a ZooKeeper request thread: {e}"),
                )
            })?;
        Ok(Client {
            jobs,
            state,
            stopping,
            deadline: Cell::new(None),
            honour_stop: Cell::new(true),
            timed_out: Cell::new(false),
        })
    }

    /// Runs `request`, or answers `ConnectionLoss` when it gives up.
    fn call<T: Send + 'static>(
        &self,
        request: impl FnOnce(&ZooKeeper) -> ZkResult<T> + Send + 'static,
    ) -> ZkResult<T> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |zk| {
            let _ = reply.send(request(zk));
        });
        self.timed_out.set(false);
        self.jobs.send(job).map_err(|_| ZkError::ConnectionLoss)?;
        loop {
            match answer.recv_timeout(Duration::from_millis(10)) {
                Ok(result) => return result,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(ZkError::ConnectionLoss),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let state = self.state.load(Ordering::SeqCst);
                    if self.deadline.get().is_some_and(|d| Instant::now() >= d) {
                        self.timed_out.set(true);
                        return Err(ZkError::ConnectionLoss);
                    }
                    if state == DISCONNECTED
                        || state == CLOSED
                        || (self.honour_stop.get() && self.stopping.load(Ordering::SeqCst))
                    {
                        return Err(ZkError::ConnectionLoss);
                    }
                }
            }
        }
    }

    fn exists(&self, path: &str) -> ZkResult<Option<Stat>> {
        let path = path.to_string();
        self.call(move |zk| zk.exists(&path, false))
    }

    fn get_data(&self, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let path = path.to_string();
        self.call(move |zk| zk.get_data(&path, false))
    }

    fn set_data(&self, path: &str, data: Vec<u8>, version: i32) -> ZkResult<Stat> {
        let path = path.to_string();
        self.call(move |zk| zk.set_data(&path, data, Some(version)))
    }

    fn create(&self, path: &str, data: Vec<u8>, mode: CreateMode) -> ZkResult<String> {
        let path = path.to_string();
        self.call(move |zk| zk.create(&path, data, Acl::open_unsafe().clone(), mode))
    }

    fn delete(&self, path: &str, version: i32) -> ZkResult<()> {
        let path = path.to_string();
        self.call(move |zk| zk.delete(&path, Some(version)))
    }

    fn get_children(&self, path: &str) -> ZkResult<Vec<String>> {
        let path = path.to_string();
        self.call(move |zk| zk.get_children(&path, false))
    }

    fn close(&self) -> ZkResult<()> {
        self.call(|zk| zk.close())
    }
}

fn state_code(state: ZkState) -> u8 {
    #[allow(deprecated)]
    match state {
        ZkState::Connected => CONNECTED,
        ZkState::Closed | ZkState::AuthFailed => CLOSED,
        _ => DISCONNECTED,
    }
}

impl ZooKeeperLease {
    /// Connects to `connect` (`host:port[,host:port...][/chroot]`) and takes the lowest free
    /// node index of `layout` in `namespace`. Fails with `coordinator_unavailable` when no
    /// session is established within the session timeout, `worker_ids_exhausted` when every
    /// index is held, and `clock_moved_backwards` when the local clock is more than
    /// `MAX_CLOCK_BEHIND_MS` behind the server's.
    pub fn acquire(
        connect: &str,
        namespace: &str,
        session_timeout_ms: u64,
        layout: &Layout,
    ) -> Result<ZooKeeperLease> {
        Self::start(Settings::parse(
            connect,
            namespace,
            session_timeout_ms,
            layout,
        )?)
    }

    fn start(settings: Settings) -> Result<ZooKeeperLease> {
        let timeout = settings.timeout();
        let shared = Arc::new(Shared {
            settings,
            stopping: Arc::default(),
            state: Mutex::new(State {
                view: None,
                epoch: 0,
                next_epoch: 0,
                connected: false,
                confirmed_at: None,
                disconnected_at: None,
                dead: false,
                lost: None,
                want_mark_ms: i64::MIN,
                last_grant: None,
                gen_offset_ms: 0,
                fence: None,
                stop: None,
                finished: false,
            }),
            wake: Condvar::new(),
            changed: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel();
        let background = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("flakery-zk".into())
            .spawn(move || run(background, tx))
            .map_err(|e| {
                Error::new(
                    ErrorCode::CoordinatorUnavailable,
                    format!("cannot start the ZooKeeper lease thread: {e}"),
                )
            })?;
        // The connection phase gives up at the timeout by itself; the rest takes a few
        // round trips.
        match rx.recv_timeout(timeout + LEASE_REQUESTS_TIME + Duration::from_millis(500)) {
            Ok(Ok(())) => Ok(ZooKeeperLease {
                shared: ManuallyDrop::new(shared),
                owner_pid: std::process::id(),
            }),
            Ok(Err(err)) => Err(err),
            Err(_) => {
                // The thread cleans up (closing its session) whenever its request returns.
                shared.lock().stop.get_or_insert(Stop::Drop);
                shared.stopping.store(true, Ordering::SeqCst);
                shared.wake.notify_all();
                Err(shared
                    .settings
                    .unavailable("connected, but the lease requests got no answer"))
            }
        }
    }

    /// The node index held now (`None` while leasing anew).
    pub fn index(&self) -> Option<u64> {
        self.shared.lock().view.map(|v| v.index)
    }

    /// The server's clock minus the local clock, in ms, measured when the lease was taken.
    pub fn clock_offset_ms(&self) -> Option<i64> {
        self.shared.lock().view.map(|v| v.clock_offset_ms)
    }

    /// The previous holder's high-water mark: IDs use time after it.
    pub fn floor_ms(&self) -> Option<i64> {
        self.shared.lock().view.map(|v| v.floor_ms)
    }

    /// The ephemeral znode of the index held now, as the server names it (chroot included).
    pub fn node_path(&self) -> Option<String> {
        let index = self.index()?;
        Some(self.shared.settings.node_path(index))
    }

    fn is_owner(&self) -> bool {
        std::process::id() == self.owner_pid
    }

    /// Asks the background thread to stop and waits a bounded time for it.
    fn stop(&self, stop: Stop) {
        let shared = &self.shared;
        let wait = shared.settings.timeout().min(RELEASE_WAIT_MAX);
        let until = Instant::now() + wait;
        let mut st = shared.lock();
        st.stop.get_or_insert(stop);
        shared.stopping.store(true, Ordering::SeqCst);
        shared.wake.notify_all();
        while !st.finished {
            let now = Instant::now();
            if now >= until {
                return; // the session expires by itself; the written mark stays
            }
            st = shared
                .changed
                .wait_timeout(st, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn lost_error(&self, st: &State) -> Error {
        let settings = &self.shared.settings;
        let (since, why) = match &st.lost {
            Some((since, why)) => (*since, why.as_str()),
            None => (SystemClock.now_ms(), "leasing a node ID"),
        };
        Error::new(
            ErrorCode::LeaseLost,
            format!(
                "no ZooKeeper lease of a node ID (namespace '{}' at {}) since {}: {why}; \
                 flakery leases one again by itself and issues no IDs until it holds one",
                settings.namespace,
                settings.address(),
                format_rfc3339_ms(since)
            ),
        )
    }
}

impl fmt::Debug for ZooKeeperLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.shared.settings;
        f.debug_struct("ZooKeeperLease")
            .field("connect", &settings.connect)
            .field("namespace", &settings.namespace)
            .field("session_timeout_ms", &settings.session_timeout_ms)
            .field("owner_pid", &self.owner_pid)
            .finish()
    }
}

impl NodeLease for ZooKeeperLease {
    fn source(&self) -> NodeSource {
        NodeSource::ZooKeeper
    }

    fn grant(&self, want_ms: i64, now_ms: i64) -> Result<Grant> {
        let shared = &self.shared;
        let timeout = shared.settings.timeout();
        let started = Instant::now();
        let mut st = shared.lock();
        st.last_grant = Some(started);
        st.gen_offset_ms = now_ms.saturating_sub(SystemClock.now_ms());
        loop {
            if st.stop.is_some() {
                return Err(Error::new(
                    ErrorCode::LeaseLost,
                    "the ZooKeeper lease was released",
                ));
            }
            let Some(view) = st.view else {
                return Err(self.lost_error(&st));
            };
            if !st.connected {
                let since = st.disconnected_at.unwrap_or_else(|| SystemClock.now_ms());
                return Err(Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "disconnected from ZooKeeper at {} since {}, so the lease of node index \
                         {} may be lost; flakery leases anew by itself and issues no IDs until \
                         then",
                        shared.settings.address(),
                        format_rfc3339_ms(since),
                        view.index
                    ),
                ));
            }
            let Some(confirmed) = st.confirmed_at else {
                return Err(Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "reconnected to ZooKeeper at {}; the session that holds node index {} \
                         is not confirmed yet",
                        shared.settings.address(),
                        view.index
                    ),
                ));
            };
            let deadline = confirmed + timeout / 2;
            let now = Instant::now();
            if now >= deadline {
                let silent = now.duration_since(confirmed).as_millis() as i64;
                return Err(Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "ZooKeeper at {} has not answered for {silent} ms (since {}), half the \
                         session timeout of {} ms: the session holding node index {} may have \
                         expired; flakery re-leases by itself and issues no IDs until then",
                        shared.settings.address(),
                        format_rfc3339_ms(SystemClock.now_ms() - silent),
                        shared.settings.session_timeout_ms,
                        view.index
                    ),
                ));
            }
            if want_ms <= view.mark_ms {
                let left = deadline.duration_since(now).as_millis() as i64;
                return Ok(Grant {
                    node: view.node,
                    floor_ms: view.floor_ms,
                    until_ms: view.mark_ms.min(now_ms.saturating_add(left)),
                });
            }
            let target = want_ms.max(now_ms).saturating_add(LOOKAHEAD_MS);
            st.want_mark_ms = st.want_mark_ms.max(target);
            shared.wake.notify_all();
            let limit = deadline.min(started + GRANT_WAIT);
            if now >= limit {
                return Err(Error::new(
                    ErrorCode::LeaseLost,
                    format!(
                        "ZooKeeper at {} did not confirm the high-water mark of node index {} \
                         within {} ms",
                        shared.settings.address(),
                        view.index,
                        limit.duration_since(started).as_millis()
                    ),
                ));
            }
            st = shared
                .changed
                .wait_timeout(st, limit - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn after_fork(&self) -> Result<Box<dyn NodeLease>> {
        // Only the settings are read: nothing of the parent's client or thread.
        Ok(Box::new(ZooKeeperLease::start(
            self.shared.settings.clone(),
        )?))
    }

    fn attach(&self, fence: Fence) {
        let mut st = self.shared.lock();
        if !st.connected || st.view.is_none() {
            fence.close();
        }
        st.fence = Some(fence);
    }

    fn release(&self, last_used_ms: i64) {
        if self.is_owner() {
            self.stop(Stop::Release(last_used_ms));
        }
    }
}

impl Drop for ZooKeeperLease {
    fn drop(&mut self) {
        if !self.is_owner() {
            // A forked child: the client, its threads and the session are the parent's.
            return;
        }
        self.stop(Stop::Drop);
        // SAFETY: dropped once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut self.shared) };
    }
}

/// The background thread: takes the first lease (reporting to `acquire`), then keeps the
/// mark ahead, proves the session alive, and leases anew when it is gone.
fn run(shared: Arc<Shared>, initial: mpsc::Sender<Result<()>>) {
    let settings = &shared.settings;
    let first = take_lease(&shared, Instant::now() + settings.timeout(), None);
    let mut holding = match first {
        Ok(holding) => {
            install(&shared, &holding);
            let _ = initial.send(Ok(()));
            Some(holding)
        }
        Err(err) => {
            shared.lock().finished = true;
            shared.changed.notify_all();
            let _ = initial.send(Err(err));
            return;
        }
    };
    drop(initial);
    // The index and session of a holding whose client died: its ephemeral node is deleted
    // before leasing again, so the index is not held by our own dead session.
    let mut stale: Option<(u64, i64)> = None;
    loop {
        let action = next_action(&shared, holding.as_ref());
        let action_target = match action {
            Action::Write(target) => Some(target),
            _ => None,
        };
        match action {
            Action::Stop(stop) => {
                if let Some(held) = holding.take() {
                    finish(settings, held, stop);
                }
                let mut st = shared.lock();
                st.finished = true;
                st.view = None;
                st.connected = false;
                shared.changed.notify_all();
                return;
            }
            Action::Lease => {
                match take_lease(&shared, Instant::now() + settings.timeout(), stale) {
                    Ok(held) => {
                        stale = None;
                        install(&shared, &held);
                        holding = Some(held);
                    }
                    Err(err) => {
                        let mut st = shared.lock();
                        let since = st.lost.as_ref().map_or(SystemClock.now_ms(), |l| l.0);
                        st.lost = Some((since, format!("leasing again failed: {}", err.message())));
                        pause(&shared, st, RETRY_PAUSE.max(settings.timeout() / 8));
                    }
                }
            }
            Action::Discard(why) => {
                if let Some(held) = holding.take() {
                    stale = Some((held.index, held.session_id));
                    lose(&shared, format!("node index {}: {why}", held.index));
                    drop(held); // its request thread closes the session and ends
                }
            }
            Action::Verify | Action::Write(_) => {
                let Some(held) = holding.as_mut() else {
                    continue;
                };
                // A request the server leaves unanswered for a session timeout (a stalled
                // server, a connection into the void) gives this client up.
                held.client
                    .deadline
                    .set(Some(Instant::now() + settings.timeout()));
                let mut outcome = match action_target {
                    Some(target) => write_mark(&shared, held, target),
                    None => verify(&shared, held),
                };
                held.client.deadline.set(None);
                if let Err(Failure::Retry) = outcome {
                    let since = *held.failing_since.get_or_insert_with(Instant::now);
                    if held.client.timed_out.get() || since.elapsed() > settings.timeout() {
                        outcome = Err(Failure::Lost(format!(
                            "ZooKeeper did not answer within the session timeout ({} ms)",
                            settings.session_timeout_ms
                        )));
                    }
                } else {
                    held.failing_since = None;
                }
                match outcome {
                    Ok(()) => {}
                    Err(Failure::Retry) => pause(&shared, shared.lock(), RETRY_PAUSE),
                    Err(Failure::Lost(why)) => {
                        stale = Some((held.index, held.session_id));
                        lose(&shared, format!("node index {}: {why}", held.index));
                        holding = None;
                    }
                }
            }
        }
    }
}

enum Action {
    Stop(Stop),
    Lease,
    Discard(String),
    Verify,
    Write(i64),
}

enum Failure {
    /// The lease is gone (another holder wrote the mark, the node or session is gone).
    Lost(String),
    /// The request failed for a reason the connection explains; try again.
    Retry,
}

fn next_action(shared: &Shared, holding: Option<&Holding>) -> Action {
    let settings = &shared.settings;
    let timeout = settings.timeout();
    let verify_every = (timeout / 4).max(Duration::from_millis(20));
    let busy_every = Duration::from_millis(LOOKAHEAD_MS as u64 / 4);
    let mut st = shared.lock();
    loop {
        if let Some(stop) = st.stop {
            return Action::Stop(stop);
        }
        let Some(held) = holding else {
            return Action::Lease;
        };
        if st.dead || !st.connected {
            return Action::Discard(match held.client.state.load(Ordering::SeqCst) {
                CLOSED => "the ZooKeeper session was closed".into(),
                _ => "the connection to ZooKeeper broke".into(),
            });
        }
        let now = Instant::now();
        let Some(confirmed) = st.confirmed_at else {
            return Action::Verify;
        };
        if held.pending_mark.is_some() {
            return Action::Verify; // learn whether the lost write was applied first
        }
        if st.want_mark_ms > held.mark_ms {
            return Action::Write(st.want_mark_ms);
        }
        let busy = st.last_grant.is_some_and(|t| {
            now.duration_since(t) < Duration::from_millis(2 * LOOKAHEAD_MS as u64)
        });
        if busy {
            let gen_now = SystemClock.now_ms().saturating_add(st.gen_offset_ms);
            if held.mark_ms.saturating_sub(gen_now) <= LOOKAHEAD_MS / 2 {
                return Action::Write(held.mark_ms.max(gen_now.saturating_add(LOOKAHEAD_MS)));
            }
        }
        let since = now.duration_since(confirmed);
        if since >= verify_every {
            return Action::Verify;
        }
        let sleep = if busy {
            busy_every.min(verify_every - since)
        } else {
            verify_every - since
        };
        st = wait(shared, st, sleep);
    }
}

fn wait<'a>(
    shared: &'a Shared,
    st: MutexGuard<'a, State>,
    for_: Duration,
) -> MutexGuard<'a, State> {
    shared
        .wake
        .wait_timeout(st, for_)
        .unwrap_or_else(|e| e.into_inner())
        .0
}

/// Waits, waking early only to stop.
fn pause<'a>(shared: &'a Shared, mut st: MutexGuard<'a, State>, for_: Duration) {
    let until = Instant::now() + for_;
    while st.stop.is_none() {
        let now = Instant::now();
        if now >= until {
            return;
        }
        st = wait(shared, st, until - now);
    }
}

fn install(shared: &Shared, held: &Holding) {
    let mut st = shared.lock();
    let state = held.client.state.load(Ordering::SeqCst);
    st.epoch = held.epoch;
    st.view = Some(held.view());
    st.connected = state == CONNECTED;
    st.dead = state == CLOSED;
    st.confirmed_at = st.connected.then_some(held.leased_at);
    st.disconnected_at = None;
    st.lost = None;
    st.want_mark_ms = i64::MIN;
    shared.changed.notify_all();
}

fn lose(shared: &Shared, why: String) {
    let mut st = shared.lock();
    st.view = None;
    st.connected = false;
    st.confirmed_at = None;
    st.dead = false;
    st.lost = Some((SystemClock.now_ms(), why));
    if let Some(fence) = &st.fence {
        fence.close();
    }
    shared.changed.notify_all();
}

/// Records a confirmation sent at `sent`, if the holding is still the current one and its
/// session connected.
fn confirm(shared: &Shared, held: &Holding, sent: Instant) {
    let mut st = shared.lock();
    if st.epoch == held.epoch && st.connected {
        st.confirmed_at = Some(st.confirmed_at.map_or(sent, |c| c.max(sent)));
    }
    if st.epoch == held.epoch {
        st.view = Some(held.view());
    }
    shared.changed.notify_all();
}

fn is_session_gone(err: ZkError) -> bool {
    matches!(
        err,
        ZkError::SessionExpired | ZkError::SessionMoved | ZkError::AuthFailed
    )
}

/// Proves the session alive and the index still ours; settles a write whose answer was lost.
fn verify(shared: &Shared, held: &mut Holding) -> std::result::Result<(), Failure> {
    let settings = &shared.settings;
    let zk = &held.client;
    let sent = Instant::now();
    match zk.exists(&settings.node_path(held.index)) {
        Ok(Some(stat)) if stat.ephemeral_owner == held.session_id => {}
        Ok(Some(_)) => {
            return Err(Failure::Lost(
                "its ephemeral node is held by another session".into(),
            ))
        }
        Ok(None) => {
            return Err(Failure::Lost(
                "its ephemeral node is gone (session expired)".into(),
            ))
        }
        Err(err) if is_session_gone(err) => {
            return Err(Failure::Lost(format!("the session ended ({err:?})")))
        }
        Err(_) => return Err(Failure::Retry),
    }
    if let Some(pending) = held.pending_mark {
        match zk.get_data(&settings.hwm_path(held.index)) {
            Ok((_, stat)) if stat.version == held.hwm_version => held.pending_mark = None,
            Ok((data, stat))
                if stat.version == held.hwm_version.wrapping_add(1)
                    && read_mark(&data) == Ok(Some(pending)) =>
            {
                held.mark_ms = pending;
                held.hwm_version = stat.version;
                held.pending_mark = None;
            }
            Ok(_) | Err(ZkError::NoNode) => {
                return Err(Failure::Lost(
                    "its high-water mark was written by another holder".into(),
                ))
            }
            Err(err) if is_session_gone(err) => {
                return Err(Failure::Lost(format!("the session ended ({err:?})")))
            }
            Err(_) => return Err(Failure::Retry),
        }
    }
    confirm(shared, held, sent);
    Ok(())
}

/// Writes the mark (compare-and-set on its version).
fn write_mark(
    shared: &Shared,
    held: &mut Holding,
    target: i64,
) -> std::result::Result<(), Failure> {
    let settings = &shared.settings;
    let sent = Instant::now();
    held.pending_mark = Some(target);
    match held.client.set_data(
        &settings.hwm_path(held.index),
        target.to_string().into_bytes(),
        held.hwm_version,
    ) {
        Ok(stat) => {
            held.mark_ms = target;
            held.hwm_version = stat.version;
            held.pending_mark = None;
            confirm(shared, held, sent);
            Ok(())
        }
        Err(ZkError::BadVersion) | Err(ZkError::NoNode) => Err(Failure::Lost(
            "its high-water mark was written by another holder".into(),
        )),
        Err(err) if is_session_gone(err) => {
            Err(Failure::Lost(format!("the session ended ({err:?})")))
        }
        Err(_) => Err(Failure::Retry),
    }
}

/// Gives the index back: the mark down to what was used (never below the previous holder's),
/// then the session closed, which deletes the ephemeral node at once.
fn finish(settings: &Settings, held: Holding, stop: Stop) {
    let zk = &held.client;
    zk.honour_stop.set(false);
    zk.deadline.set(Some(Instant::now() + RELEASE_WAIT_MAX));
    if let Stop::Release(last_used_ms) = stop {
        let target = last_used_ms.max(held.floor_ms);
        if held.pending_mark.is_none() && target < held.mark_ms {
            let _ = zk.set_data(
                &settings.hwm_path(held.index),
                mark_text(target),
                held.hwm_version,
            );
        }
    }
    let _ = zk.close();
}

fn mark_text(ms: i64) -> Vec<u8> {
    if ms == i64::MIN {
        Vec::new()
    } else {
        ms.to_string().into_bytes()
    }
}

/// Connects and takes the lowest free index, all within `deadline` for the connection.
fn take_lease(
    shared: &Arc<Shared>,
    deadline: Instant,
    stale: Option<(u64, i64)>,
) -> Result<Holding> {
    let settings = &shared.settings;
    let epoch = {
        let mut st = shared.lock();
        st.next_epoch += 1;
        st.next_epoch
    };
    let client = connect(shared, epoch, deadline)?;
    // The few requests of a lease get a little time beyond the connection's.
    client
        .deadline
        .set(Some(deadline.max(Instant::now()) + LEASE_REQUESTS_TIME));
    let zk = &client;

    for dir in [settings.nodes_dir(), settings.hwm_dir()] {
        create_parents(zk, &dir).map_err(|e| settings.failed(&format!("create {dir}"), e))?;
    }
    if let Some((index, session_id)) = stale {
        // Our own ephemeral node from a client given up on: free it. Its session can do
        // nothing more: that client's threads are parked or gone, its requests abandoned.
        let path = settings.node_path(index);
        if let Ok(Some(stat)) = zk.exists(&path) {
            if stat.ephemeral_owner == session_id {
                let _ = zk.delete(&path, stat.version);
            }
        }
    }
    let count = settings.layout.capacity().node_ids;
    let taken: HashSet<u64> = zk
        .get_children(&settings.nodes_dir())
        .map_err(|e| settings.failed(&format!("list {}", settings.nodes_dir()), e))?
        .iter()
        .filter_map(|name| name.parse().ok())
        .collect();
    let about = format!(
        "{} {}",
        crate::options::hostname().unwrap_or_default(),
        std::process::id()
    );
    // The lowest free index whose mark can be read; an unreadable mark is never "no mark":
    // that index is given back and skipped.
    let mut unreadable = Vec::new();
    let mut claimed = None;
    for candidate in (0..count).filter(|i| !taken.contains(i)) {
        let path = settings.node_path(candidate);
        match zk.create(&path, about.clone().into_bytes(), CreateMode::Ephemeral) {
            Ok(_) => {}
            Err(ZkError::NodeExists) => continue,
            Err(err) => return Err(settings.failed(&format!("create {path}"), err)),
        }
        match take_mark(settings, zk, candidate)? {
            Ok(found) => {
                claimed = Some((candidate, found));
                break;
            }
            Err(why) => {
                unreadable.push(format!("{} ({why})", settings.hwm_path(candidate)));
                if let Ok(Some(stat)) = zk.exists(&path) {
                    let _ = zk.delete(&path, stat.version);
                }
            }
        }
    }
    let Some((index, (floor_ms, stat, sent, offset))) = claimed else {
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
                 as a time (fix or delete the znodes only if no generator can have used those \
                 node IDs since): {}",
                unreadable.join(", ")
            ));
        }
        return Err(Error::new(ErrorCode::WorkerIdsExhausted, message));
    };
    let node_path = settings.node_path(index);
    let session_id = match zk.exists(&node_path) {
        Ok(Some(stat)) => stat.ephemeral_owner,
        Ok(None) => return Err(settings.failed(&format!("read {node_path}"), ZkError::NoNode)),
        Err(err) => return Err(settings.failed(&format!("read {node_path}"), err)),
    };
    if offset > MAX_CLOCK_BEHIND_MS {
        return Err(Error::new(
            ErrorCode::ClockMovedBackwards,
            format!(
                "the local clock is {offset} ms behind ZooKeeper's (server at {}, more than \
                 the {MAX_CLOCK_BEHIND_MS} ms allowed): IDs stamped with it could reuse time of \
                 another host; fix the clock (NTP) and start again",
                settings.address()
            ),
        ));
    }
    client.deadline.set(None);
    let (datacenter_id, worker_id) = settings.layout.node_of_index(index);
    Ok(Holding {
        client,
        epoch,
        session_id,
        index,
        node: NodeId {
            datacenter_id,
            worker_id,
        },
        floor_ms,
        mark_ms: floor_ms,
        hwm_version: stat.version,
        pending_mark: None,
        failing_since: None,
        clock_offset_ms: offset,
        leased_at: sent,
    })
}

/// The mark of `index` as a floor, with the stat of its overwrite, when that was sent, and the
/// server's clock minus ours; `Ok(Err(why))` when the stored mark cannot be read as a time.
#[allow(clippy::type_complexity)]
fn take_mark(
    settings: &Settings,
    zk: &Client,
    index: u64,
) -> Result<std::result::Result<(i64, Stat, Instant, i64), String>> {
    // The previous holder's mark, overwritten with itself under a version check: the answer
    // tells the server's time (for the clock check) and proves no holder wrote in between.
    let hwm_path = settings.hwm_path(index);
    for _ in 0..20 {
        let (data, stat) = match zk.get_data(&hwm_path) {
            Ok(found) => found,
            Err(ZkError::NoNode) => {
                match zk.create(&hwm_path, Vec::new(), CreateMode::Persistent) {
                    Ok(_) | Err(ZkError::NodeExists) => continue,
                    Err(err) => return Err(settings.failed(&format!("create {hwm_path}"), err)),
                }
            }
            Err(err) => return Err(settings.failed(&format!("read {hwm_path}"), err)),
        };
        let floor_ms = match read_mark(&data) {
            Ok(mark) => mark.unwrap_or(i64::MIN),
            Err(why) => return Ok(Err(why)),
        };
        let before = SystemClock.now_ms();
        let sent = Instant::now();
        match zk.set_data(&hwm_path, data, stat.version) {
            Ok(written) => {
                let after = SystemClock.now_ms();
                let local = before + (after - before) / 2;
                let offset = written.mtime - local;
                return Ok(Ok((floor_ms, written, sent, offset)));
            }
            Err(ZkError::BadVersion) => continue,
            Err(err) => return Err(settings.failed(&format!("write {hwm_path}"), err)),
        }
    }
    Err(settings.failed(&format!("write {hwm_path}"), ZkError::BadVersion))
}

/// Creates `path` and its parents as persistent nodes (existing ones are fine).
fn create_parents(zk: &Client, path: &str) -> ZkResult<()> {
    let mut prefix = String::new();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        prefix.push('/');
        prefix.push_str(segment);
        match zk.create(&prefix, Vec::new(), CreateMode::Persistent) {
            Ok(_) | Err(ZkError::NodeExists) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// A client with an established session, or `coordinator_unavailable` at `deadline`.
fn connect(shared: &Arc<Shared>, epoch: u64, deadline: Instant) -> Result<Client> {
    let settings = &shared.settings;
    loop {
        // The crate's client connects to its first address without a timeout and panics on a
        // refused connection, so find one that accepts first and put it first.
        let first = reachable(settings, deadline)?;
        let mut addresses = vec![first.to_string()];
        for host in &settings.hosts {
            if let Ok(found) = host.to_socket_addrs() {
                addresses.extend(found.filter(|a| *a != first).map(|a| a.to_string()));
            }
        }
        let state = Arc::new(AtomicU8::new(CONNECTING));
        let listener_state = Arc::clone(&state);
        let weak: Weak<Shared> = Arc::downgrade(shared);
        let connected = catch_unwind(AssertUnwindSafe(|| {
            ZooKeeper::connect(
                &addresses.join(","),
                settings.timeout(),
                |_: WatchedEvent| {},
            )
        }));
        let zk = match connected {
            Ok(Ok(zk)) => zk,
            Ok(Err(err)) => return Err(settings.unavailable(&format!("{err:?}"))),
            Err(_) => return Err(settings.unavailable("the client failed to connect")),
        };
        let park = settings.timeout() + Duration::from_millis(100);
        zk.add_listener(move |zk_state| {
            let code = state_code(zk_state);
            let before = listener_state.swap(code, Ordering::SeqCst);
            if let Some(shared) = weak.upgrade() {
                shared.on_state(epoch, code);
            }
            if code == DISCONNECTED && before != DISCONNECTED {
                // See DISCONNECTED: keeps the crate's reconnect loop from spinning.
                std::thread::sleep(park);
            }
        });
        let client = Client::new(zk, state, Arc::clone(&shared.stopping))?;
        client.deadline.set(Some(deadline));
        // A request waits for the session, so its answer shows the session established, even
        // if the listener was added too late to hear of it.
        match client.exists("/") {
            Ok(_) => {
                let _ = client.state.compare_exchange(
                    CONNECTING,
                    CONNECTED,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                if client.state.load(Ordering::SeqCst) == CONNECTED {
                    client.deadline.set(None);
                    return Ok(client);
                }
            }
            Err(err) if Instant::now() >= deadline => {
                return Err(settings.unavailable(&format!("no session ({err:?})")))
            }
            Err(_) => {}
        }
        if shared.stopping.load(Ordering::SeqCst) {
            return Err(settings.unavailable("stopped while connecting"));
        }
        if Instant::now() >= deadline {
            return Err(settings.unavailable("no session established"));
        }
        // This client lost its connection before it had a session: try a new one.
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first server address that accepts a TCP connection, trying until `deadline`.
fn reachable(settings: &Settings, deadline: Instant) -> Result<SocketAddr> {
    let mut last = String::from("no address to try");
    loop {
        for host in &settings.hosts {
            let addresses = match host.to_socket_addrs() {
                Ok(found) => found.collect::<Vec<_>>(),
                Err(err) => {
                    last = format!("{host}: {err}");
                    continue;
                }
            };
            for address in addresses {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(settings.unavailable(&last));
                }
                match TcpStream::connect_timeout(&address, left.min(Duration::from_secs(2))) {
                    Ok(_) => return Ok(address),
                    Err(err) => last = format!("{address}: {err}"),
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(settings.unavailable(&last));
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(connect: &str) -> Result<Settings> {
        Settings::parse(connect, "default", 10_000, &Layout::twitter())
    }

    #[test]
    fn connect_strings() {
        let s = parse("127.0.0.1:2181").unwrap();
        assert_eq!(s.hosts, ["127.0.0.1:2181"]);
        assert_eq!(s.chroot, "");
        assert_eq!(s.node_path(3), "/flakery/default/nodes/3");
        let s = parse(" zk1:2181, zk2 ,[::1]:2182/apps/ids/ ").unwrap();
        assert_eq!(s.hosts, ["zk1:2181", "zk2:2181", "[::1]:2182"]);
        assert_eq!(s.chroot, "/apps/ids");
        assert_eq!(s.hwm_path(0), "/apps/ids/flakery/default/hwm/0");
        let s = parse("h:1/").unwrap();
        assert_eq!(s.chroot, "");
        for bad in ["", "/x", "h:1/a//b", "h:1/a/../b", "::1:2181", "h:notaport"] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad}: {err}");
        }
        let err = Settings::parse("h:1", "a/b", 10_000, &Layout::twitter()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        let err = Settings::parse("h:1", "a", 0, &Layout::twitter()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn marks() {
        assert_eq!(mark_text(i64::MIN), b"");
        assert_eq!(read_mark(&mark_text(i64::MIN)), Ok(None));
        assert_eq!(read_mark(&mark_text(42)), Ok(Some(42)));
    }

    #[test]
    fn a_session_timeout_too_short_to_hold_a_lease_is_refused() {
        for short in [0, 1, MIN_SESSION_TIMEOUT_MS - 1] {
            let err = Settings::parse("h:1", "a", short, &Layout::twitter()).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument);
            assert!(err.message().contains("at least 1000"), "{err}");
        }
        assert!(Settings::parse("h:1", "a", MIN_SESSION_TIMEOUT_MS, &Layout::twitter()).is_ok());
    }
}

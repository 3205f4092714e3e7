//! A client of the `zookeeper` crate that no request can hold up. The crate waits for an
//! answer without a time limit (and for as long as a paused server keeps the connection
//! open), connects to its first address without a timeout, and panics on a refused
//! connection. So: a TCP probe finds an address that accepts first; the crate's `connect` runs
//! under `catch_unwind`; and every request runs on a request thread of the client's own, which
//! the caller walks away from at the call's deadline (passed as an argument) or when the
//! session is reported broken. A client given up on ends with its request, and its drop
//! closes its session.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use zookeeper::{Acl, CreateMode, Stat, WatchedEvent, ZkError, ZkResult, ZkState, ZooKeeper};

use crate::error::{Error, ErrorCode, Result};
use crate::lease::zookeeper::settings::Settings;

// The client's last reported session state. Before the first report a client is CONNECTING.
const CONNECTING: u8 = 0;
const CONNECTED: u8 = 1;
const CLOSED: u8 = 2;
/// Reported once the connection broke. The crate then reconnects in a loop that retries a
/// refused connection without pause until a session timeout has passed since its last ping
/// (a core busy for seconds during an outage); its listener runs on that thread just before
/// the loop, so the listener parks the thread there for a session timeout, after which the
/// loop ends at once. The lease does not wait for that client: it leases anew with a new one.
const DISCONNECTED: u8 = 3;

type Job = Box<dyn FnOnce(&ZooKeeper) + Send>;

pub(crate) struct Client {
    jobs: mpsc::Sender<Job>,
    state: Arc<AtomicU8>,
}

impl Client {
    /// Whether the session is connected now (as the crate last reported).
    pub(crate) fn connected(&self) -> bool {
        self.state.load(Ordering::SeqCst) == CONNECTED
    }

    /// Runs `request`, or answers `ConnectionLoss` when it gives up: at `deadline`, or when
    /// the session is reported broken.
    fn call<T: Send + 'static>(
        &self,
        deadline: Instant,
        request: impl FnOnce(&ZooKeeper) -> ZkResult<T> + Send + 'static,
    ) -> ZkResult<T> {
        let (reply, answer) = mpsc::channel();
        let job: Job = Box::new(move |zk| {
            let _ = reply.send(request(zk));
        });
        self.jobs.send(job).map_err(|_| ZkError::ConnectionLoss)?;
        loop {
            match answer.recv_timeout(Duration::from_millis(10)) {
                Ok(result) => return result,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(ZkError::ConnectionLoss),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let state = self.state.load(Ordering::SeqCst);
                    if Instant::now() >= deadline || state == DISCONNECTED || state == CLOSED {
                        return Err(ZkError::ConnectionLoss);
                    }
                }
            }
        }
    }

    pub(crate) fn exists(&self, by: Instant, path: &str) -> ZkResult<Option<Stat>> {
        let path = path.to_string();
        self.call(by, move |zk| zk.exists(&path, false))
    }

    pub(crate) fn get_data(&self, by: Instant, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let path = path.to_string();
        self.call(by, move |zk| zk.get_data(&path, false))
    }

    pub(crate) fn set_data(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        version: i32,
    ) -> ZkResult<Stat> {
        let path = path.to_string();
        self.call(by, move |zk| zk.set_data(&path, data, Some(version)))
    }

    pub(crate) fn create(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        mode: CreateMode,
    ) -> ZkResult<String> {
        let path = path.to_string();
        self.call(by, move |zk| {
            zk.create(&path, data, Acl::open_unsafe().clone(), mode)
        })
    }

    pub(crate) fn delete(&self, by: Instant, path: &str, version: i32) -> ZkResult<()> {
        let path = path.to_string();
        self.call(by, move |zk| zk.delete(&path, Some(version)))
    }

    pub(crate) fn get_children(&self, by: Instant, path: &str) -> ZkResult<Vec<String>> {
        let path = path.to_string();
        self.call(by, move |zk| zk.get_children(&path, false))
    }

    pub(crate) fn close(&self, by: Instant) -> ZkResult<()> {
        self.call(by, |zk| zk.close())
    }

    /// Creates `path` and its parents as persistent nodes (existing ones are fine).
    pub(crate) fn create_parents(&self, by: Instant, path: &str) -> ZkResult<()> {
        let mut prefix = String::new();
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(segment);
            match self.create(by, &prefix, Vec::new(), CreateMode::Persistent) {
                Ok(_) | Err(ZkError::NodeExists) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
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

/// A client with an established session, or `coordinator_unavailable` at `deadline`.
/// `on_broken` is called (on the crate's thread) when the session is reported anything but
/// connected.
pub(crate) fn connect(
    settings: &Settings,
    deadline: Instant,
    on_broken: Arc<dyn Fn() + Send + Sync>,
) -> Result<Client> {
    loop {
        let first = reachable(settings, deadline)?;
        let mut addresses = vec![first.to_string()];
        for host in &settings.hosts {
            if let Ok(found) = host.to_socket_addrs() {
                addresses.extend(found.filter(|a| *a != first).map(|a| a.to_string()));
            }
        }
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
        let state = Arc::new(AtomicU8::new(CONNECTING));
        let listener_state = Arc::clone(&state);
        let park = settings.timeout() + Duration::from_millis(100);
        let broken = Arc::clone(&on_broken);
        zk.add_listener(move |zk_state| {
            let code = state_code(zk_state);
            let before = listener_state.swap(code, Ordering::SeqCst);
            if code != CONNECTED {
                broken();
            }
            if code == DISCONNECTED && before != DISCONNECTED {
                // See DISCONNECTED: keeps the crate's reconnect loop from spinning.
                std::thread::sleep(park);
            }
        });
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
        let client = Client { jobs, state };
        // A request waits for the session, so its answer shows the session established, even
        // if the listener was added too late to hear of it.
        match client.exists(deadline, "/") {
            Ok(_) => {
                let _ = client.state.compare_exchange(
                    CONNECTING,
                    CONNECTED,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                );
                if client.connected() {
                    return Ok(client);
                }
            }
            Err(err) if Instant::now() >= deadline => {
                return Err(settings.unavailable(&format!("no session ({err:?})")))
            }
            Err(_) => {}
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

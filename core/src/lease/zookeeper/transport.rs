//! flakery's own ZooKeeper client: one TCP connection and one session, nothing more. It
//! replaced the `zookeeper` crate (0.8), whose hidden reconnect loop retried a refused or
//! closed connection without pause (74,649 connections in 3 s against a server that was
//! still starting), panicked on a refused connection, waited without time limits, and logged
//! an error on every clean stop (docs/keeper.md#zookeeper-connections).
//!
//! - **No reconnect inside.** A client whose connection breaks is done: it reports why (once),
//!   and the lease claims anew with a new client. Connecting (`connect`) is the only loop, and
//!   it waits a capped, jittered backoff between attempts, kept across claims by the caller.
//! - **Deadlines everywhere.** Connecting, every read and write, and every request has one.
//! - **Per client, nothing process-wide.** Each client has its socket and two threads (a
//!   writer that also pings, a reader); a forked child makes a client of its own.
//! - **Nothing blocks in Drop.** Dropping a client ends its writer, which sends the session's
//!   close (best effort) and shuts the socket; a client given up on raises no alarm.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode, Result};
use crate::lease::zookeeper::proto::{
    self, op, reply_header, Acl, CreateMode, Reader, Stat, Writer, ZkError, ZkResult,
};
use crate::lease::zookeeper::settings::Settings;

/// The first pause after a failed connection attempt; it doubles up to `BACKOFF_CAP`.
pub(crate) const BACKOFF_FIRST: Duration = Duration::from_millis(50);
/// The longest pause between connection attempts: short beside a ZooKeeper's restart, long
/// enough that a server still loading sees a few connections a second from each client.
pub(crate) const BACKOFF_CAP: Duration = Duration::from_secs(1);

/// The pause between connection attempts, kept across claims: each failure doubles it up to
/// `BACKOFF_CAP`, and each pause is drawn between half of it and all of it, so clients that
/// lost the same server do not come back in step. It also reports a failing streak once.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    delay: Option<Duration>,
    not_before: Option<Instant>,
    failures: u64,
}

impl Backoff {
    fn failed(&mut self) {
        let delay = self
            .delay
            .map_or(BACKOFF_FIRST, |d| (d * 2).min(BACKOFF_CAP));
        self.delay = Some(delay);
        self.failures += 1;
        let half = delay / 2;
        let jitter = Duration::from_nanos(random() % (half.as_nanos() as u64).max(1));
        self.not_before = Some(Instant::now() + half + jitter);
    }

    /// A session was established: the next failure starts from the first pause again.
    fn succeeded(&mut self) -> u64 {
        let failures = self.failures;
        *self = Backoff::default();
        failures
    }
}

/// A random number (the standard library's per-process random hash keys, stirred with the
/// time), for jitter only.
fn random() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// A request for the writer thread: its operation, its body, and where its reply goes.
struct Pending {
    op: i32,
    body: Vec<u8>,
    reply: mpsc::Sender<ZkResult<Vec<u8>>>,
}

type Waiting = VecDeque<(i32, mpsc::Sender<ZkResult<Vec<u8>>>)>;

/// What a client's threads and handle share.
struct Shared {
    /// The connection broke (or the session ended): every request answers `ConnectionLoss`.
    broken: AtomicBool,
    /// The handle was dropped or closed the session: the connection's end raises no alarm.
    closing: AtomicBool,
    /// Why the connection broke, for the lease's message.
    cause: Mutex<Option<String>>,
    /// Requests sent and not yet answered, in order (ZooKeeper answers in order).
    waiting: Mutex<Waiting>,
}

impl Shared {
    fn lock_waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the connection broken for `cause` (the first cause wins) and answers every
    /// waiting request; true the first time.
    fn break_with(&self, cause: String) -> bool {
        let first = !self.broken.swap(true, Ordering::SeqCst);
        if first {
            *self.cause.lock().unwrap_or_else(|e| e.into_inner()) = Some(cause);
        }
        let waiting = std::mem::take(&mut *self.lock_waiting());
        for (_, reply) in waiting {
            let _ = reply.send(Err(ZkError::ConnectionLoss));
        }
        first
    }
}

/// One session with a ZooKeeper server.
pub(crate) struct Client {
    requests: Option<mpsc::Sender<Pending>>,
    shared: Arc<Shared>,
    acl: Vec<Acl>,
}

impl Client {
    /// Whether the connection is up and the session not known to be over.
    pub(crate) fn connected(&self) -> bool {
        !self.shared.broken.load(Ordering::SeqCst) && !self.shared.closing.load(Ordering::SeqCst)
    }

    /// Why the connection broke, if it did.
    pub(crate) fn broken_cause(&self) -> Option<String> {
        self.shared
            .cause
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends a request and waits for its reply's body until `deadline` (then
    /// `ConnectionLoss`: the request may or may not have been applied).
    fn call(&self, deadline: Instant, op: i32, body: Vec<u8>) -> ZkResult<Vec<u8>> {
        if !self.connected() {
            return Err(ZkError::ConnectionLoss);
        }
        let (reply, answer) = mpsc::channel();
        let requests = self.requests.as_ref().ok_or(ZkError::ConnectionLoss)?;
        requests
            .send(Pending { op, body, reply })
            .map_err(|_| ZkError::ConnectionLoss)?;
        let left = deadline.saturating_duration_since(Instant::now());
        match answer.recv_timeout(left) {
            Ok(result) => result,
            Err(_) => Err(ZkError::ConnectionLoss),
        }
    }

    fn body() -> Writer {
        Writer::bare()
    }

    pub(crate) fn exists(&self, by: Instant, path: &str) -> ZkResult<Option<Stat>> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        match self.call(by, op::EXISTS, strip(w)) {
            Ok(reply) => Ok(Some(Reader::new(&reply).stat()?)),
            Err(ZkError::NoNode) => Ok(None),
            Err(err) => Err(err),
        }
    }

    pub(crate) fn get_data(&self, by: Instant, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        let reply = self.call(by, op::GET_DATA, strip(w))?;
        let mut r = Reader::new(&reply);
        Ok((r.buffer()?, r.stat()?))
    }

    pub(crate) fn set_data(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        version: i32,
    ) -> ZkResult<Stat> {
        let mut w = Self::body();
        w.string(path).buffer(&data).int(version);
        let reply = self.call(by, op::SET_DATA, strip(w))?;
        Reader::new(&reply).stat()
    }

    /// Creates `path` with the client's ACL (see `Settings::acl`).
    pub(crate) fn create(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        mode: CreateMode,
    ) -> ZkResult<String> {
        self.create_with(by, path, data, mode, &self.acl)
    }

    fn create_with(
        &self,
        by: Instant,
        path: &str,
        data: Vec<u8>,
        mode: CreateMode,
        acl: &[Acl],
    ) -> ZkResult<String> {
        let flags = match mode {
            CreateMode::Persistent => 0,
            CreateMode::Ephemeral => 1,
        };
        let mut w = Self::body();
        w.string(path).buffer(&data).acl(acl).int(flags);
        let reply = self.call(by, op::CREATE, strip(w))?;
        Reader::new(&reply).string()
    }

    pub(crate) fn delete(&self, by: Instant, path: &str, version: i32) -> ZkResult<()> {
        let mut w = Self::body();
        w.string(path).int(version);
        self.call(by, op::DELETE, strip(w)).map(drop)
    }

    pub(crate) fn get_children(&self, by: Instant, path: &str) -> ZkResult<Vec<String>> {
        let mut w = Self::body();
        w.string(path).boolean(false);
        let reply = self.call(by, op::GET_CHILDREN, strip(w))?;
        Reader::new(&reply).strings()
    }

    pub(crate) fn get_acl(&self, by: Instant, path: &str) -> ZkResult<(Vec<Acl>, Stat)> {
        let mut w = Self::body();
        w.string(path);
        let reply = self.call(by, op::GET_ACL, strip(w))?;
        let mut r = Reader::new(&reply);
        Ok((r.acl()?, r.stat()?))
    }

    fn set_acl(&self, by: Instant, path: &str, acl: &[Acl], aversion: i32) -> ZkResult<Stat> {
        let mut w = Self::body();
        w.string(path).acl(acl).int(aversion);
        let reply = self.call(by, op::SET_ACL, strip(w))?;
        Reader::new(&reply).stat()
    }

    /// Ends the session (its ephemeral nodes go at once), waiting for the answer until `by`.
    pub(crate) fn close(&self, by: Instant) -> ZkResult<()> {
        // Before sending: the connection's end that follows is expected, not an alarm.
        let (reply, answer) = mpsc::channel();
        let requests = self.requests.as_ref().ok_or(ZkError::ConnectionLoss)?;
        self.shared.closing.store(true, Ordering::SeqCst);
        requests
            .send(Pending {
                op: op::CLOSE_SESSION,
                body: Vec::new(),
                reply,
            })
            .map_err(|_| ZkError::ConnectionLoss)?;
        let left = by.saturating_duration_since(Instant::now());
        answer
            .recv_timeout(left)
            .unwrap_or(Err(ZkError::ConnectionLoss))
            .map(drop)
    }

    /// Creates `path` and its parents as persistent nodes (existing ones are fine). From
    /// `root` down they have the client's ACL (an existing one is given it: `secure`); the
    /// parents above `root` (`/flakery`, a chroot) are left open to every client, so that
    /// namespaces of other credentials, or of none, can live beside this one: what protects a
    /// namespace is that its own znodes cannot be changed or deleted, and a znode with
    /// children cannot be deleted at all.
    pub(crate) fn create_parents(&self, by: Instant, path: &str, root: &str) -> ZkResult<()> {
        let mut prefix = String::new();
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            prefix.push('/');
            prefix.push_str(segment);
            let own = prefix.len() >= root.len();
            let acl = if own { self.acl.clone() } else { Acl::open() };
            match self.create_with(by, &prefix, Vec::new(), CreateMode::Persistent, &acl) {
                Ok(_) => {}
                Err(ZkError::NodeExists) if own => self.secure(by, &prefix)?,
                Err(ZkError::NodeExists) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Gives the existing znode `path` this client's ACL when it has another: a znode made
    /// before credentials were configured (open to everyone) becomes writable by this identity
    /// only. Fails with `NoAuth` when another identity controls it: flakery does not take a
    /// znode it cannot administer (see docs/security.md#zookeeper). Without credentials the
    /// ACL is left as it is.
    pub(crate) fn secure(&self, by: Instant, path: &str) -> ZkResult<()> {
        if self.acl == Acl::open() {
            return Ok(());
        }
        let (acl, stat) = match self.get_acl(by, path) {
            Ok(found) => found,
            Err(ZkError::NoNode) => return Ok(()),
            Err(err) => return Err(err),
        };
        if same_entries(&acl, &self.acl) {
            return Ok(());
        }
        match self.set_acl(by, path, &self.acl.clone(), stat.aversion) {
            Ok(_) => Ok(()),
            // Changed at the same time by another holder with the same credentials.
            Err(ZkError::BadVersion) => Ok(()),
            Err(err) => Err(err),
        }
    }
}

fn same_entries(a: &[Acl], b: &[Acl]) -> bool {
    a.len() == b.len() && a.iter().all(|entry| b.contains(entry))
}

/// The body of a request built with `Client::body` (without the length prefix).
fn strip(w: Writer) -> Vec<u8> {
    w.finish().split_off(4)
}

impl Drop for Client {
    fn drop(&mut self) {
        // A client given up on reports nothing more; its writer closes the session.
        self.shared.closing.store(true, Ordering::SeqCst);
        self.requests = None;
    }
}

/// A session established with the server at `address`.
struct Session {
    stream: TcpStream,
    id: i64,
    timeout: Duration,
}

/// Why an attempt to connect failed: worth another try, or not.
enum Refused {
    Retry(String),
    Fatal(Error),
}

/// A client with an established session, or an error at `deadline`: `coordinator_unavailable`
/// naming the last failure, or `invalid_argument` when the servers grant a shorter session
/// than asked for. Attempts wait `backoff`'s pauses; the first failure of a streak and the
/// connection after one are logged, not each attempt. `on_broken` is called (on the client's
/// reader thread) when the connection of a client still in use breaks.
pub(crate) fn connect(
    settings: &Settings,
    deadline: Instant,
    backoff: &mut Backoff,
    on_broken: Arc<dyn Fn() + Send + Sync>,
) -> Result<Client> {
    let mut last = String::from("no attempt before the deadline");
    let mut turn = 0usize;
    loop {
        if let Some(at) = backoff.not_before {
            if at >= deadline {
                return Err(settings.unavailable(&last));
            }
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
        }
        let addresses = addresses(settings);
        let attempt = match addresses.get(turn % addresses.len().max(1)) {
            Some(address) => handshake(settings, *address, deadline),
            None => Err(Refused::Retry(format!(
                "no address of {} could be resolved",
                settings.address()
            ))),
        };
        turn += 1;
        match attempt {
            Ok(session) => {
                let failures = backoff.succeeded();
                if failures > 0 {
                    tracing::info!(
                        "connected to ZooKeeper at {} after {failures} failed attempts \
                         (session 0x{:x}, timeout {} ms)",
                        settings.address(),
                        session.id,
                        session.timeout.as_millis()
                    );
                }
                return start(settings, session, on_broken);
            }
            Err(Refused::Fatal(err)) => return Err(err),
            Err(Refused::Retry(why)) => {
                if backoff.failures == 0 {
                    tracing::warn!(
                        "cannot connect to ZooKeeper at {}: {why}; retrying with a backoff of \
                         up to {} ms (logged once until connected)",
                        settings.address(),
                        BACKOFF_CAP.as_millis()
                    );
                }
                last = why;
                backoff.failed();
                if Instant::now() >= deadline {
                    return Err(settings.unavailable(&last));
                }
            }
        }
    }
}

fn addresses(settings: &Settings) -> Vec<SocketAddr> {
    settings
        .hosts
        .iter()
        .filter_map(|host| host.to_socket_addrs().ok())
        .flatten()
        .collect()
}

fn write_frame(stream: &mut TcpStream, frame: &[u8]) -> std::io::Result<()> {
    stream.write_all(frame)
}

fn read_frame(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = i32::from_be_bytes(len);
    if len < 0 || len as usize > proto::MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes"),
        ));
    }
    let mut frame = vec![0; len as usize];
    stream.read_exact(&mut frame)?;
    Ok(frame)
}

fn io_cause(address: SocketAddr, err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::UnexpectedEof => format!("{address} closed the connection"),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("{address} did not answer in time")
        }
        _ => format!("{address}: {err}"),
    }
}

/// Connects to `address`, establishes a session and adds the credentials.
fn handshake(
    settings: &Settings,
    address: SocketAddr,
    deadline: Instant,
) -> std::result::Result<Session, Refused> {
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    let io = |err: std::io::Error| Refused::Retry(io_cause(address, &err));
    let mut stream =
        TcpStream::connect_timeout(&address, left().min(settings.timeout())).map_err(io)?;
    let _ = stream.set_nodelay(true);
    stream.set_read_timeout(Some(left())).map_err(io)?;
    stream.set_write_timeout(Some(left())).map_err(io)?;
    let requested = settings.session_timeout_ms as i32;
    let mut w = Writer::bare();
    w.int(0)
        .long(0)
        .int(requested)
        .long(0)
        .buffer(&[0; 16])
        .boolean(false);
    write_frame(&mut stream, &w.finish()).map_err(io)?;
    let reply = read_frame(&mut stream).map_err(io)?;
    let mut r = Reader::new(&reply);
    let parsed = (|| Ok::<_, ZkError>((r.int()?, r.int()?, r.long()?)))();
    let Ok((_protocol, granted, id)) = parsed else {
        return Err(Refused::Retry(format!(
            "{address} sent a malformed session"
        )));
    };
    if granted <= 0 {
        return Err(Refused::Retry(format!("{address} refused the session")));
    }
    if granted < requested {
        return Err(Refused::Fatal(Error::invalid_argument(format!(
            "ZooKeeper at {} grants sessions of at most {granted} ms, shorter than the session \
             timeout of {requested} ms that flakery's lease relies on: set session_timeout_ms \
             (FLAKERY_SESSION_TIMEOUT_MS) to at most {granted}, or raise the servers' \
             maxSessionTimeout",
            settings.address()
        ))));
    }
    if let Some(credentials) = &settings.credentials {
        let mut w = Writer::request(proto::AUTH_XID, op::AUTH);
        w.int(0)
            .string("digest")
            .buffer(credentials.secret().as_bytes());
        write_frame(&mut stream, &w.finish()).map_err(io)?;
        let reply = read_frame(&mut stream).map_err(io)?;
        let header = reply_header(&mut Reader::new(&reply))
            .map_err(|_| Refused::Retry(format!("{address} sent a malformed answer")))?;
        if header.err != 0 {
            return Err(Refused::Fatal(Error::new(
                ErrorCode::CoordinatorUnavailable,
                format!(
                    "ZooKeeper at {} refused the digest credentials of user '{}' ({}): check \
                     the user:password@ part of the connect string",
                    settings.address(),
                    credentials.user(),
                    ZkError::from_code(header.err)
                ),
            )));
        }
    }
    Ok(Session {
        stream,
        id,
        timeout: Duration::from_millis(granted as u64),
    })
}

/// Starts the writer and reader threads of an established session.
fn start(
    settings: &Settings,
    session: Session,
    on_broken: Arc<dyn Fn() + Send + Sync>,
) -> Result<Client> {
    let thread_error = |e: std::io::Error| {
        Error::new(
            ErrorCode::CoordinatorUnavailable,
            format!("cannot start a ZooKeeper client thread: {e}"),
        )
    };
    let Session {
        stream,
        id,
        timeout,
    } = session;
    let address = stream
        .peer_addr()
        .map_or_else(|_| settings.address(), |a| a.to_string());
    // The server hears from us at least every third of the session; we from it as often
    // (its answers to the pings), so silence for two thirds of it is a dead connection.
    let ping_every = timeout / 3;
    let silence = timeout * 2 / 3;
    let _ = stream.set_read_timeout(Some(silence));
    let _ = stream.set_write_timeout(Some(silence));
    let reader_stream = stream.try_clone().map_err(thread_error)?;
    let shared = Arc::new(Shared {
        broken: AtomicBool::new(false),
        closing: AtomicBool::new(false),
        cause: Mutex::new(None),
        waiting: Mutex::new(VecDeque::new()),
    });
    let (requests, queue) = mpsc::channel::<Pending>();
    let writer_shared = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("flakery-zk-writer".into())
        .spawn(move || write_loop(stream, queue, &writer_shared, ping_every))
        .map_err(thread_error)?;
    let reader_shared = Arc::clone(&shared);
    std::thread::Builder::new()
        .name("flakery-zk-reader".into())
        .spawn(move || read_loop(reader_stream, &reader_shared, &address, id, &on_broken))
        .map_err(thread_error)?;
    Ok(Client {
        requests: Some(requests),
        shared,
        acl: settings.acl(),
    })
}

/// Sends requests in order, pings when idle, and ends the session when the handle is gone.
fn write_loop(
    mut stream: TcpStream,
    queue: mpsc::Receiver<Pending>,
    shared: &Shared,
    ping_every: Duration,
) {
    let mut xid: i32 = 0;
    let mut closed = false;
    loop {
        let frame = match queue.recv_timeout(ping_every) {
            Ok(pending) => {
                if shared.broken.load(Ordering::SeqCst) {
                    let _ = pending.reply.send(Err(ZkError::ConnectionLoss));
                    continue;
                }
                xid = if xid == i32::MAX { 1 } else { xid + 1 };
                closed |= pending.op == op::CLOSE_SESSION;
                let mut w = Writer::request(xid, pending.op);
                w.raw(&pending.body);
                let frame = w.finish();
                shared.lock_waiting().push_back((xid, pending.reply));
                frame
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if shared.broken.load(Ordering::SeqCst) {
                    break;
                }
                Writer::request(proto::PING_XID, op::PING).finish()
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if !closed && !shared.broken.load(Ordering::SeqCst) {
                    let frame = Writer::request(xid.wrapping_add(1), op::CLOSE_SESSION).finish();
                    let _ = write_frame(&mut stream, &frame);
                }
                break;
            }
        };
        if let Err(err) = write_frame(&mut stream, &frame) {
            let address = stream
                .peer_addr()
                .map_or_else(|_| "?".into(), |a| a.to_string());
            shared.break_with(format!("writing to {address} failed: {err}"));
            // Wakes the reader too.
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    }
    // The reader reads on until the server closes: the answer to the session's close.
    let _ = stream.shutdown(Shutdown::Write);
}

/// Hands each reply to its request; on the connection's end, answers every waiting request,
/// records why, and (for a client still in use) logs it once and raises the alarm.
fn read_loop(
    mut stream: TcpStream,
    shared: &Shared,
    address: &str,
    session_id: i64,
    on_broken: &Arc<dyn Fn() + Send + Sync>,
) {
    let cause = loop {
        let frame = match read_frame(&mut stream) {
            Ok(frame) => frame,
            Err(err) => {
                break match err.kind() {
                    std::io::ErrorKind::UnexpectedEof => {
                        format!("ZooKeeper at {address} closed the connection")
                    }
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => format!(
                        "ZooKeeper at {address} sent nothing for two thirds of the session \
                         timeout"
                    ),
                    _ => format!("the connection to ZooKeeper at {address} failed: {err}"),
                }
            }
        };
        let mut r = Reader::new(&frame);
        let Ok(header) = reply_header(&mut r) else {
            break format!("ZooKeeper at {address} sent a malformed answer");
        };
        if header.xid == proto::PING_XID
            || header.xid == proto::NOTIFICATION_XID
            || header.xid == proto::AUTH_XID
        {
            continue;
        }
        let Some((xid, reply)) = shared.lock_waiting().pop_front() else {
            break format!("ZooKeeper at {address} answered a request never sent");
        };
        if xid != header.xid {
            break format!("ZooKeeper at {address} answered out of order");
        }
        let err = ZkError::from_code(header.err);
        let _ = reply.send(if header.err == 0 {
            Ok(frame[16..].to_vec())
        } else {
            Err(err)
        });
        if matches!(err, ZkError::SessionExpired | ZkError::SessionMoved) && header.err != 0 {
            break format!("ZooKeeper at {address} ended the session ({err})");
        }
    };
    let closing = shared.closing.load(Ordering::SeqCst);
    let cause = format!("session 0x{session_id:x}: {cause}");
    if shared.break_with(cause.clone()) && !closing {
        tracing::warn!("the ZooKeeper connection broke ({cause}); leasing again");
        on_broken();
    }
    let _ = stream.shutdown(Shutdown::Both);
}
